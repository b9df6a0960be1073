"""Kills a training run with SIGKILL at random moments, resuming it each
time, and leaves the state it ends with for comparison with a run never
interrupted.

  kill_resume.py --dir DIR [--kills N] [--seed S] -- COMMAND...

COMMAND is a `dpc run ...` without --checkpoint. The script first runs it
to the end with `--checkpoint DIR/whole`, timing it. Then it starts it with
`--checkpoint DIR/killed` (and --resume once that holds a checkpoint) and
kills it after a random fraction of that time, N times (fewer if a run
ends first), and finally resumes it to the end. With --checkpoint-every 1
in COMMAND, some kills land while a checkpoint is being written: those
leave the temporary file the write had not yet renamed. Prints
"kills: K, W while writing a checkpoint" and "finished: exit STATUS";
compare DIR/whole with DIR/killed afterwards. Exits 0: the test checks
the lines."""
import argparse
import os
import random
import signal
import subprocess
import sys
import time

from procs import command_after_dashes


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dir", required=True)
    parser.add_argument("--kills", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = command_after_dashes(args.command)
    whole = os.path.join(args.dir, "whole")
    killed = os.path.join(args.dir, "killed")
    checkpoint = os.path.join(killed, "checkpoint.dpcckpt")
    temporary = checkpoint + ".tmp"

    start = time.monotonic()
    subprocess.run(command + ["--checkpoint", whole], check=True,
                   stdout=subprocess.DEVNULL)
    duration = time.monotonic() - start

    def start_run():
        resume = ["--resume"] if os.path.exists(checkpoint) else []
        return subprocess.Popen(command + ["--checkpoint", killed] + resume,
                                stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True)

    rng = random.Random(args.seed)
    kills = while_writing = 0
    for _ in range(args.kills):
        run = start_run()
        try:
            run.wait(timeout=rng.uniform(0.05, 0.6) * duration)
        except subprocess.TimeoutExpired:
            run.send_signal(signal.SIGKILL)
            run.wait()
            kills += 1
            while_writing += os.path.exists(temporary)
            continue
        if run.returncode != 0:
            sys.stdout.write(run.stderr.read())
            print(f"a resumed run failed: exit {run.returncode}")
            return
        break  # it finished before its kill: nothing left to interrupt
    print(f"kills: {kills}, {while_writing} while writing a checkpoint")
    final = start_run()
    _, stderr = final.communicate()
    sys.stdout.write(stderr)
    print(f"finished: exit {final.returncode}")


if __name__ == "__main__":
    main()
