"""Stops one rank of `dpc launch` with SIGSTOP (a hung process: alive, its
sockets open, answering nothing) and checks that the run ends anyway.

  stop_rank.py --rank R [--after SECONDS] [--within SECONDS]
               -- LAUNCH_COMMAND...

Starts LAUNCH_COMMAND, waits until it has started the worker whose RANK is
R and SECONDS more, records every worker and their descendants, sends the
worker SIGSTOP and waits up to --within seconds for the launcher to exit.
Prints the launcher's stderr, then "launcher: exit STATUS within N s" (or
"launcher: NOT done within SECONDS s"), then "no orphans" or
"ORPHANS: pid...". The stopped worker is never continued: the launcher
must kill it. Exits 0: the test checks the lines."""
import argparse
import os
import signal
import subprocess
import sys
import time

from procs import (children, command_after_dashes, descendants, environment,
                   wait_for_children, wait_gone)


def find_rank(launcher, rank, timeout=60):
    """The worker of `launcher` whose environment says RANK=rank."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for pid in children(launcher):
            if environment(pid).get("RANK") == str(rank):
                return pid
        time.sleep(0.05)
    return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rank", type=int, required=True)
    parser.add_argument("--after", type=float, default=2)
    parser.add_argument("--within", type=float, default=60)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    launcher = subprocess.Popen(command_after_dashes(args.command),
                                stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True)
    wait_for_children(launcher.pid)
    victim = find_rank(launcher.pid, args.rank)
    if victim is None:
        launcher.kill()
        print(f"no worker with RANK={args.rank}")
        return
    time.sleep(args.after)
    workers = descendants(launcher.pid)
    os.kill(victim, signal.SIGSTOP)
    stopped = time.monotonic()
    try:
        _, stderr = launcher.communicate(timeout=args.within)
        sys.stdout.write(stderr)
        print(f"launcher: exit {launcher.returncode} within "
              f"{time.monotonic() - stopped:.0f} s")
    except subprocess.TimeoutExpired:
        print(f"launcher: NOT done within {args.within:g} s")
        launcher.kill()
        launcher.communicate()
    orphans = wait_gone(workers, 5)
    if orphans:
        print("ORPHANS: " + " ".join(map(str, orphans)))
        for pid in orphans:
            os.kill(pid, signal.SIGKILL)
    else:
        print("no orphans")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
