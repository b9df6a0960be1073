"""Ends the workers of a stopped `dpc launch` in a chosen order, so that
the launcher finds them all ended at once (as on a loaded machine, where
it wakes after several ranks have ended).

  end_together.py --dir DIR --order R1,R2,... -- LAUNCH_COMMAND...

LAUNCH_COMMAND's workers wait for the file DIR/go$RANK, then end as they
please (exit with a status, kill themselves). Once every worker has
started, the launcher gets SIGSTOP; then, for each rank of --order in
turn, the file appears and the worker is waited for until it is a zombie;
then the launcher gets SIGCONT. Prints the launcher's stderr, then
"launcher: exit STATUS". Exits 0: the test checks the lines."""
import argparse
import os
import signal
import subprocess
import sys
import time

from procs import children, command_after_dashes, environment, state


def wait_until(predicate, what, timeout=60):
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            sys.exit(f"end_together.py: timed out waiting for {what}")
        time.sleep(0.02)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dir", required=True)
    parser.add_argument("--order", required=True)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    order = [int(r) for r in args.order.split(",")]
    launcher = subprocess.Popen(command_after_dashes(args.command),
                                stderr=subprocess.PIPE, text=True)

    def workers():
        return {int(environment(pid).get("RANK", -1)): pid
                for pid in children(launcher.pid)}

    wait_until(lambda: set(order) <= set(workers()), "the workers")
    pids = workers()
    os.kill(launcher.pid, signal.SIGSTOP)
    try:
        for rank in order:
            open(os.path.join(args.dir, f"go{rank}"), "w").close()
            wait_until(lambda: state(pids[rank]) == "Z", f"rank {rank} to end")
    finally:
        os.kill(launcher.pid, signal.SIGCONT)
    _, stderr = launcher.communicate(timeout=120)
    sys.stdout.write(stderr)
    print(f"launcher: exit {launcher.returncode}")


if __name__ == "__main__":
    main()
