"""Starts the ranks of a process-per-device run by hand, as torchrun would
(RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT),
for the failures `dpc launch` would hide by stopping the other workers.

  run_ranks.py --ranks N [--master-port PORT] [--kill R:SECONDS]
               [--skip R] [--within SECONDS] [--torchrun-agent] -- COMMAND...

"{rank}" in the command becomes each rank's number. --kill sends SIGKILL to
rank R after SECONDS; --skip leaves rank R unstarted. Prints every rank's
stderr (rank order), then "rank R: exit STATUS" per rank, then "done within
SECONDS" or "NOT done within SECONDS" (the time after the kill, or after
the start). --torchrun-agent plays torchrun's agent: it listens on
MASTER_PORT itself and tells the ranks so (TORCHELASTIC_USE_AGENT_STORE).
Exits 0: the test checks the lines."""
import argparse
import os
import signal
import socket
import subprocess
import sys
import time

from procs import command_after_dashes, free_port


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ranks", type=int, required=True)
    parser.add_argument("--master-port", type=int, default=0)
    parser.add_argument("--kill", default=None)
    parser.add_argument("--skip", type=int, default=-1)
    parser.add_argument("--within", type=float, default=60)
    parser.add_argument("--torchrun-agent", action="store_true")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    port = args.master_port or free_port()
    agent = None
    if args.torchrun_agent:
        agent = socket.socket()
        agent.bind(("", port))
        agent.listen()
    procs = {}
    for rank in range(args.ranks):
        if rank == args.skip:
            continue
        env = dict(os.environ, RANK=str(rank), WORLD_SIZE=str(args.ranks),
                   LOCAL_RANK=str(rank), LOCAL_WORLD_SIZE=str(args.ranks),
                   MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
        if agent:
            env["TORCHELASTIC_USE_AGENT_STORE"] = "True"
        procs[rank] = subprocess.Popen(
            command_after_dashes(args.command, rank=rank), env=env,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    start = time.monotonic()
    if args.kill:
        victim, delay = args.kill.split(":")
        time.sleep(float(delay))
        procs[int(victim)].send_signal(signal.SIGKILL)
        start = time.monotonic()
    errors = {}
    for rank, proc in procs.items():
        left = max(1.0, args.within * 3 - (time.monotonic() - start))
        try:
            _, errors[rank] = proc.communicate(timeout=left)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, errors[rank] = proc.communicate()
    elapsed = time.monotonic() - start
    for rank in procs:
        sys.stdout.write(errors[rank])
    for rank, proc in procs.items():
        print(f"rank {rank}: exit {proc.returncode}")
    verdict = "done" if elapsed <= args.within else "NOT done"
    print(f"{verdict} within {args.within:g} s")


if __name__ == "__main__":
    main()
