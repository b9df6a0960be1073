#!/usr/bin/env python3
"""dpc's sharding stages against PyTorch 2's, N ranks over Gloo on the CPU.

For a model of the zoo (AdamW, lr 1e-3, global batch B split over N ranks,
random Fashion-MNIST-shaped data), every round runs each system once, one
after the other:

  dpc-none       `dpc launch` of the replicated plan (--shard none)
  dpc-optimizer  --shard optimizer (ZeRO-1)
  dpc-gradients  --shard gradients (ZeRO-2)
  dpc-parameters --shard parameters (ZeRO-3)
  ddp            PyTorch DistributedDataParallel
  zero1          DDP with ZeroRedundancyOptimizer(AdamW) (ZeRO-1)
  fsdp-grad      FSDP2 fully_shard, reshard_after_forward=False (ZeRO-2,
                 FSDP1's SHARD_GRAD_OP)
  fsdp-full      FSDP2 fully_shard per block (ZeRO-3, FULL_SHARD)

Each system reports images/s over STEPS timed steps (dpc: its second
epoch of STEPS steps; PyTorch: after 2 warm-up steps) and each rank's peak
resident memory (VmHWM; the largest rank's; for dpc, rank 0's, from its
metrics, with the bytes the plan allocated on its device beside it).
Printed: per system the median images/s and peak RSS over the rounds, and
the median per-round ratios of each dpc stage to its PyTorch counterpart
(dpc-gradients against FSDP's ZeRO-2, dpc-parameters against its ZeRO-3),
with the load the rest of the
machine put on it (others, cores).

  tools/bench/shard_peers.py --python /work/torchvenv/bin/python \\
      [--build build] [--model resnet18] [--ranks 2] [--batch 64] \\
      [--steps 5] [--rounds 3] [--json FILE]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from peers import WORKER, busy_seconds, children_cpu, environment  # noqa

RANKS = r'''
import resource, socket
import torch.distributed as dist

def rank_main(rank, world, port, name, mode, batch, steps, results):
    torch.set_num_threads(1)
    os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.manual_seed(0)
    net = build(name)
    if mode in ("ddp", "zero1"):
        net = nn.parallel.DistributedDataParallel(net)
    elif mode in ("fsdp-grad", "fsdp-full"):
        from torch.distributed.fsdp import fully_shard
        full = mode == "fsdp-full"
        for module in net.modules():  # the blocks, then the root
            if module is not net and len(list(module.children())) > 0:
                fully_shard(module, reshard_after_forward=full)
        fully_shard(net, reshard_after_forward=full)
    if mode == "zero1":
        from torch.distributed.optim import ZeroRedundancyOptimizer
        optimizer = ZeroRedundancyOptimizer(
            net.parameters(), optimizer_class=torch.optim.AdamW, lr=1e-3)
    else:
        optimizer = torch.optim.AdamW(net.parameters(), lr=1e-3)
    rows = batch // world
    x, y = torch.rand(rows, 1, 28, 28), torch.randint(0, 10, (rows,))
    loss_fn = nn.CrossEntropyLoss()
    def step():
        optimizer.zero_grad(set_to_none=True)
        loss_fn(net(x), y).backward()
        optimizer.step()
    for _ in range(2):
        step()
    dist.barrier()
    start = time.perf_counter()
    for _ in range(steps):
        step()
    dist.barrier()
    results[rank] = (time.perf_counter() - start,
                     resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
    dist.destroy_process_group()

if __name__ == "__main__":
    import torch.multiprocessing as mp
    name, mode, batch, steps, world = (sys.argv[1], sys.argv[2],
                                       int(sys.argv[3]), int(sys.argv[4]),
                                       int(sys.argv[5]))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    results = mp.Manager().dict()
    mp.spawn(rank_main, args=(world, port, name, mode, batch, steps, results),
             nprocs=world)
    print(max(r[0] for r in results.values()),
          max(r[1] for r in results.values()))
'''


class Sample:
    def __init__(self, rate, rss, allocated, others):
        self.rate, self.rss, self.allocated = rate, rss, allocated
        self.others = others


def measured(run):
    """Runs run() -> (images/s, peak RSS, allocated, own CPU, wall) and
    samples the rest of the machine's load around it."""
    busy = busy_seconds()
    rate, rss, allocated, own, wall = run()
    others = max(0.0, (busy_seconds() - busy - own) / wall)
    return Sample(rate, rss, allocated, others)


class DpcLaunch:
    def __init__(self, args, stage, workdir, data):
        self.dpc = os.path.join(args.build, "bin", "dpc")
        self.args, self.data = args, data
        self.plan = os.path.join(workdir, f"{stage}.plan")
        self.metrics = os.path.join(workdir, f"{stage}.jsonl")
        devices = ",".join(f"cpu:{d}" for d in range(args.ranks))
        subprocess.run([self.dpc, "compile",
                        os.path.join(args.build, "models",
                                     args.model + ".onnx"),
                        "--batch", str(args.batch), "--devices", devices,
                        "--optimizer", "adamw", "--shard", stage,
                        "-o", self.plan], check=True)

    def __call__(self):
        if os.path.exists(self.metrics):
            os.remove(self.metrics)
        cpu, start = children_cpu(), time.perf_counter()
        subprocess.run(
            [self.dpc, "launch", "--nproc-per-node", str(self.args.ranks),
             "--master-port", "0", "--", self.dpc, "run", self.plan,
             "--data", self.data, "--epochs", "2", "--lr", "1e-3",
             "--metrics", self.metrics, "--quiet"],
            check=True, env=environment(threads=1))
        wall = time.perf_counter() - start
        with open(self.metrics) as f:
            last = json.loads(f.readlines()[-1])
        memory = last["memory"][0]
        return (last["images_per_second"], last["peak_rss_bytes"],
                memory["allocated_peak_bytes"], children_cpu() - cpu, wall)


class TorchRanks:
    def __init__(self, args, mode, script):
        self.command = [args.python, script, args.model, mode,
                        str(args.batch), str(args.steps), str(args.ranks)]
        self.images = args.batch * args.steps

    def __call__(self):
        cpu, start = children_cpu(), time.perf_counter()
        run = subprocess.run(self.command, check=True, capture_output=True,
                             text=True, env=environment(threads=1))
        wall = time.perf_counter() - start
        seconds, rss = run.stdout.split()[-2:]
        return (self.images / float(seconds), int(rss), None,
                children_cpu() - cpu, wall)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--python", required=True,
                        help="an interpreter with PyTorch 2")
    parser.add_argument("--model", default="resnet18")
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    with open("/proc/loadavg") as f:
        print(f"{os.cpu_count()} cores, load average {f.read().strip()}; "
              f"{args.model}, {args.ranks} ranks, batch {args.batch}, "
              f"{args.steps} steps per sample, AdamW", flush=True)
    with tempfile.TemporaryDirectory() as workdir:
        script = os.path.join(workdir, "ranks.py")
        with open(script, "w") as f:  # spawned ranks re-import a file
            f.write(WORKER.split('if __name__ == "__main__":')[0] + RANKS)
        # One epoch is `steps` steps of random images.
        data = subprocess.run(
            [sys.executable, "-c",
             "import numpy as n, sys; r = n.random.default_rng(0); "
             f"n.save(sys.argv[1], r.random(({args.batch * args.steps}, 1, "
             "28, 28), dtype=n.float32)); "
             f"n.save(sys.argv[2], r.integers(0, 10, {args.batch * args.steps})"
             ".astype(n.int32))",
             os.path.join(workdir, "x.npy"), os.path.join(workdir, "y.npy")],
            check=True)
        npy = ("npy:" + os.path.join(workdir, "x.npy") + "," +
               os.path.join(workdir, "y.npy"))
        systems = {f"dpc-{stage}": DpcLaunch(args, stage, workdir, npy)
                   for stage in ("none", "optimizer", "gradients",
                                 "parameters")}
        for mode in ("ddp", "zero1", "fsdp-grad", "fsdp-full"):
            systems[mode] = TorchRanks(args, mode, script)
        rounds = []
        for index in range(args.rounds):
            samples = {name: measured(run) for name, run in systems.items()}
            rounds.append(samples)
            print(f"round {index + 1}: " + ", ".join(
                f"{name} {s.rate:.0f} img/s {s.rss / 2**20:.0f} MiB "
                f"({s.others:.2f})" for name, s in samples.items()),
                flush=True)
    print(f"{'system':16} {'images/s':>9} {'peak RSS/rank':>14} "
          f"{'plan bytes/rank':>16}")
    summary = {}
    for name in systems:
        rate = statistics.median(r[name].rate for r in rounds)
        rss = statistics.median(r[name].rss for r in rounds)
        allocated = rounds[-1][name].allocated
        summary[name] = {"images_per_second": rate, "peak_rss_bytes": rss,
                         "allocated_bytes": allocated}
        print(f"{name:16} {rate:9.0f} {rss / 2**20:10.0f} MiB "
              + (f"{allocated / 2**20:12.1f} MiB" if allocated else ""))
    pairs = [("dpc-none", "ddp"), ("dpc-optimizer", "zero1"),
             ("dpc-gradients", "fsdp-grad"), ("dpc-parameters", "fsdp-full")]
    for a, b in pairs:
        speed = statistics.median(r[a].rate / r[b].rate for r in rounds)
        memory = statistics.median(r[a].rss / r[b].rss for r in rounds)
        others = max(max(r[a].others, r[b].others) for r in rounds)
        print(f"{a} / {b}: {speed:.2f}x images/s, {memory:.2f}x peak RSS "
              f"(others up to {others:.2f} cores)")
        summary[f"{a}/{b}"] = {"speed": speed, "memory": memory,
                               "others": others}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(summary, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
