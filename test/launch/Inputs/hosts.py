"""Runs one command per "host" of a multi-host run on this machine: each
host is a network namespace of its own, joined to the others by veth pairs
(needs root, or CAP_NET_ADMIN, and iproute2's `ip`).

  hosts.py [--interfaces N] [--absent H] [--kill H | --power-off H]
           [--when REGEX] [--env H:NAME=VALUE]... [--traffic]
           [--within SECONDS] [--probe] -- COMMAND...

Two hosts, 0 and 1. Interface i of host h is `eth<i>`, with the address
10.<200+i>.0.<h+1>/24, on a veth pair of its own to the other host's
`eth<i>`: with --interfaces 2, each host has two, on two subnets. In the
command, "{host}" becomes the host's number and "{addr}" its eth0
address. Every host's command starts at once (`ip netns exec NS ...`);
--absent H leaves host H's unstarted (mpirun on host 0 starts
host 1's ranks itself, through Open MPI's rsh agent netns-rsh.sh, which
finds the namespaces in DPC_NETNS_HOSTS).

--kill H kills every process of host H (SIGKILL: the kernel closes their
connections, as when a host's processes crash); --power-off H takes host
H's links down first, so that nothing more leaves or reaches it, then
kills them (a host that loses power: the others hear nothing). Either
happens once host 0's output matches --when (default: at once).

Prints every host's stdout, then its stderr (host order), then "host H:
exit STATUS" per host, with --traffic "host H: ethI busy|quiet" per
interface (busy: it sent at least 256 KiB, the training's collectives),
then "done within SECONDS (ACTUAL s)" or "NOT done within ..." (since the
kill, or the start). Hosts still running after 3 x --within are killed.
Exits 0: the test checks the lines.

The namespaces are named dpc<pid>h<H> and are removed on the way out,
whatever happens (leftovers of a killed hosts.py, whose pid is gone, are
removed at the next start). --probe only checks that namespaces can be
made: exit 0, or 1 with the reason on stdout."""
import argparse
import os
import re
import signal
import subprocess
import sys
import threading
import time

HOSTS = 2
PREFIX = "dpc"
BUSY_BYTES = 256 * 1024


def ip(*args, check=True):
    result = subprocess.run(["ip", *args], capture_output=True, text=True)
    if check and result.returncode != 0:
        raise RuntimeError("ip " + " ".join(args) + ": " +
                           result.stderr.strip())
    return result


def namespace(pid, host):
    return f"{PREFIX}{pid}h{host}"


def remove_namespace(name):
    """Kills what still runs in `name`, then removes it."""
    kill_processes(name)
    ip("netns", "del", name, check=False)


def kill_processes(name):
    for pid in ip("netns", "pids", name, check=False).stdout.split():
        try:
            os.kill(int(pid), signal.SIGKILL)
        except (ProcessLookupError, ValueError):
            pass


def remove_stale():
    """Namespaces of hosts.py runs that died before removing theirs."""
    listing = ip("netns", "list", check=False).stdout
    for match in re.finditer(rf"^{PREFIX}(\d+)h\d+", listing, re.M):
        owner = int(match.group(1))
        if owner != os.getpid() and not os.path.exists(f"/proc/{owner}"):
            remove_namespace(match.group(0))


def address(interface, host):
    return f"10.{200 + interface}.0.{host + 1}"


def make_hosts(interfaces):
    names = [namespace(os.getpid(), h) for h in range(HOSTS)]
    for name in names:
        ip("netns", "add", name)
        ip("-n", name, "link", "set", "lo", "up")
    for i in range(interfaces):
        ip("link", "add", f"eth{i}", "netns", names[0], "type", "veth",
           "peer", "name", f"eth{i}", "netns", names[1])
        for h, name in enumerate(names):
            ip("-n", name, "addr", "add", address(i, h) + "/24", "dev",
               f"eth{i}")
            ip("-n", name, "link", "set", f"eth{i}", "up")
    return names


def sent_bytes(name, interface):
    result = subprocess.run(
        ["ip", "netns", "exec", name, "cat",
         f"/sys/class/net/eth{interface}/statistics/tx_bytes"],
        capture_output=True, text=True)
    return int(result.stdout.strip() or 0)


def probe():
    name = namespace(os.getpid(), "probe")
    try:
        ip("netns", "add", name)
        return 0
    except (RuntimeError, OSError) as error:
        print(str(error).splitlines()[0] if str(error) else "ip failed")
        return 1
    finally:
        ip("netns", "del", name, check=False)


class Host:
    """One host's command, its output collected by threads."""

    def __init__(self, name, command, env, watch=None):
        self.name = name
        self.proc = subprocess.Popen(["ip", "netns", "exec", name, *command],
                                     env=env, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        self.out, self.err = [], []
        self.watch = watch  # (regex, threading.Event), matched on stdout
        self.threads = [
            threading.Thread(target=self.read, args=(self.proc.stdout,
                                                     self.out, True)),
            threading.Thread(target=self.read, args=(self.proc.stderr,
                                                     self.err, False)),
        ]
        for thread in self.threads:
            thread.start()

    def read(self, stream, lines, watched):
        for line in stream:
            lines.append(line)
            if watched and self.watch and self.watch[0].search(line):
                self.watch[1].set()

    def wait(self, seconds):
        try:
            self.proc.wait(timeout=max(1.0, seconds))
        except subprocess.TimeoutExpired:
            kill_processes(self.name)
            self.proc.wait()
        for thread in self.threads:
            thread.join()


def run(args, command, names):
    # For Open MPI's rsh agent (netns-rsh.sh): which namespace each host is.
    hosts_env = " ".join(f"{address(i, h)}={name}"
                         for i in range(args.interfaces)
                         for h, name in enumerate(names))
    env_by_host = {
        h: dict(os.environ, DPC_NETNS_HOSTS=hosts_env)
        for h in range(HOSTS)
    }
    for item in args.env:
        host, assignment = item.split(":", 1)
        key, value = assignment.split("=", 1)
        env_by_host[int(host)][key] = value
    victim = args.kill if args.kill is not None else args.power_off
    matched = threading.Event()
    if not args.when:
        matched.set()
    hosts = {}
    for h, name in enumerate(names):
        if h == args.absent:
            continue
        words = [
            w.replace("{host}", str(h)).replace("{addr}", address(0, h))
            for w in command
        ]
        watch = (re.compile(args.when), matched) if h == 0 and args.when else None
        hosts[h] = Host(name, words, env_by_host[h], watch)
    start = time.monotonic()
    if victim is not None:
        # Until host 0 says the moment has come (or ends without saying so).
        while not matched.wait(0.05):
            if hosts[0].proc.poll() is not None:
                break
        if args.power_off is not None:
            for i in range(args.interfaces):
                ip("-n", names[victim], "link", "set", f"eth{i}", "down",
                   check=False)
        kill_processes(names[victim])
        start = time.monotonic()
    for host in hosts.values():
        host.wait(args.within * 3 - (time.monotonic() - start))
    elapsed = time.monotonic() - start
    for host in hosts.values():
        sys.stdout.write("".join(host.out))
    for host in hosts.values():
        sys.stdout.write("".join(host.err))
    for h, host in hosts.items():
        print(f"host {h}: exit {host.proc.returncode}")
    if args.traffic:
        for h, name in enumerate(names):
            state = [
                f"eth{i} " +
                ("busy" if sent_bytes(name, i) >= BUSY_BYTES else "quiet")
                for i in range(args.interfaces)
            ]
            print(f"host {h}: " + ", ".join(state))
    verdict = "done" if elapsed <= args.within else "NOT done"
    print(f"{verdict} within {args.within:g} s ({elapsed:.1f} s)")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--interfaces", type=int, default=1, choices=[1, 2])
    parser.add_argument("--absent", type=int, default=-1)
    parser.add_argument("--kill", type=int, default=None)
    parser.add_argument("--power-off", type=int, default=None)
    parser.add_argument("--when", default=None)
    parser.add_argument("--env", action="append", default=[])
    parser.add_argument("--traffic", action="store_true")
    parser.add_argument("--within", type=float, default=120)
    parser.add_argument("--probe", action="store_true")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    if args.probe:
        return probe()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    # SIGTERM and SIGINT (lit's timeout, ^C) unwind through `finally`.
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda number, _: sys.exit(128 + number))
    remove_stale()
    names = []
    try:
        names = make_hosts(args.interfaces)
        run(args, command, names)
    finally:
        for name in names or [namespace(os.getpid(), h)
                              for h in range(HOSTS)]:
            remove_namespace(name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
