"""Kills `dpc launch` with SIGKILL and checks that its workers die with it.

  kill_launcher.py [--after SECONDS] [--within SECONDS] [--peer "CMD"]
                   -- LAUNCH_COMMAND...

Starts LAUNCH_COMMAND (a `dpc launch ...`), waits until it has started its
workers and SECONDS more, records its workers and their descendants, kills
the launcher with SIGKILL and waits up to --within seconds for every one of
them to be gone (a zombie counts as gone: its parent is no longer ours to
reap it). --peer starts another command first (e.g. the launcher of the
other node), and prints its exit status and stderr once it ends. "{port}"
in either command becomes a free port. Prints
"workers: N", then "no orphans within SECONDS s" or "ORPHANS: pid...".
Exits 0: the test checks the lines."""
import argparse
import os
import signal
import socket
import subprocess
import sys
import time


def children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(p) for p in f.read().split()]
    except OSError:
        return []


def descendants(pid):
    found = []
    for child in children(pid):
        found += [child] + descendants(child)
    return found


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def free_port():
    with socket.socket() as s:
        s.bind(("", 0))
        return s.getsockname()[1]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--after", type=float, default=2)
    parser.add_argument("--within", type=float, default=10)
    parser.add_argument("--peer", default=None)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    port = str(free_port())
    command = [word.replace("{port}", port) for word in command]
    peer = None
    if args.peer:
        peer = subprocess.Popen(args.peer.replace("{port}", port), shell=True,
                                stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True)
    launcher = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not children(launcher.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(args.after)
    workers = descendants(launcher.pid)
    print(f"workers: {len(children(launcher.pid))}")
    os.kill(launcher.pid, signal.SIGKILL)
    launcher.wait()
    killed = time.monotonic()
    while any(alive(p) for p in workers) and \
            time.monotonic() - killed < args.within:
        time.sleep(0.05)
    orphans = [p for p in workers if alive(p)]
    if orphans:
        print("ORPHANS: " + " ".join(map(str, orphans)))
        for p in orphans:
            os.kill(p, signal.SIGKILL)
    else:
        print(f"no orphans within {args.within:g} s")
    if peer:
        try:
            _, stderr = peer.communicate(timeout=120)
            sys.stdout.write(stderr)
            print(f"peer: exit {peer.returncode} within "
                  f"{time.monotonic() - killed:.0f} s")
        except subprocess.TimeoutExpired:
            peer.kill()
            print("peer: NOT done within 120 s")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
