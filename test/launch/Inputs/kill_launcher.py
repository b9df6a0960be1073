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
import subprocess
import sys
import time

from procs import (children, command_after_dashes, descendants, free_port,
                   wait_for_children, wait_gone)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--after", type=float, default=2)
    parser.add_argument("--within", type=float, default=10)
    parser.add_argument("--peer", default=None)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    port = str(free_port())
    command = command_after_dashes(args.command, port=port)
    peer = None
    if args.peer:
        peer = subprocess.Popen(args.peer.replace("{port}", port), shell=True,
                                stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True)
    launcher = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    wait_for_children(launcher.pid)
    time.sleep(args.after)
    workers = descendants(launcher.pid)
    print(f"workers: {len(children(launcher.pid))}")
    os.kill(launcher.pid, signal.SIGKILL)
    launcher.wait()
    killed = time.monotonic()
    orphans = wait_gone(workers, args.within)
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
