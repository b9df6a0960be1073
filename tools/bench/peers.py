#!/usr/bin/env python3
"""dpc against PyTorch 2, interleaved by rounds, on a shared machine.

For each model of the zoo (the MLP, LeNet with ReLU and the d2l ResNet-18,
Fashion-MNIST shapes, batch 256, SGD lr 0.1), every round times each system
once, one after the other:

  dpc          `dpc run` of a one-device plan (2 epochs of STEPS steps on
               Fashion-MNIST; the second epoch's images/s, so that primitive
               creation and first touches are not counted)
  eager        PyTorch 2 eager, f32
  compile      torch.compile (inductor), f32
  bf16         eager under torch.autocast("cpu", torch.bfloat16)

with --precision bf16,auto also

  dpc-P        `dpc run` of the plan compiled with --precision P (bf16:
               every convolution and matmul; auto: per layer and pass),
               beside PyTorch's bf16 autocast

and with --ddp N also

  dpc-N        dpc with N devices in one process
  launch-N     `dpc launch --nproc-per-node N` (Gloo, one process per device)
  ddp-N        PyTorch DistributedDataParallel (gloo, N processes, batch/N
               rows and 1 thread each)

PyTorch's single-process systems are long-lived workers (the model built
and compiled once, warmed up) that time STEPS steps on random in-memory
data when asked, so a round costs no compilation; dpc reads and shuffles
the real dataset through its data loader. Every process runs with
OMP_WAIT_POLICY=passive (see ../shared/TOOLCHAIN.md: a spinning OpenMP
barrier collapses when another job takes a core) and all cores.

Printed per model: each system's median images/s over the rounds, and the
medians of the per-round ratios dpc / system (launch-N / ddp-N and
launch-N / dpc-N with --ddp) and, between two dpc systems, of the CPU
time per image (dpc's over its whole run, data loading included), each
with the machine's load while it ran:
"others" is the CPU the rest of the machine used (cores, from /proc/stat
minus the measured processes' own CPU time). Ratios of the same round
share the same weather; rounds with others > --quiet cores are also
summarised apart when any round was quiet.

  tools/bench/peers.py --install [--venv DIR]       # PyTorch 2 from PyPI
  tools/bench/peers.py [--venv DIR | --python PY] [--build build]
      [--models mlp,lenet_relu,resnet18] [--rounds 5] [--steps 20]
      [--batch 256] [--precision bf16,auto] [--ddp 2] [--json FILE]
  tools/bench/peers.py --smoke [--build build]      # dpc only, tiny: CI

--baseline BUILD also times that build's dpc (e.g. before a change) in
the same rounds, as dpc-base, with the ratio dpc / dpc-base (with --ddp N
also its `dpc launch` as launch-N-base, beside this build's launch-N and
dpc-N);
--baseline-flags "--no-fusion" compiles dpc-base's plans with those flags
(this build's dpc when --baseline is not given). --no-torch leaves
PyTorch out.

--install makes the virtual environment DIR (default build/bench-venv) and
pip-installs torch, numpy and torchvision into it (several GB: never CI).
--python points at any interpreter with PyTorch 2 (e.g. /work/venv/bin/
python). --smoke runs only dpc, one round of the MLP at batch 32, and checks
that it reports a positive throughput.
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))

WORKER = r'''
import os, sys, time, torch
from torch import nn

def residual(cin, cout, stride):
    class Residual(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, padding=1, stride=stride,
                                   bias=False)
            self.conv2 = nn.Conv2d(cout, cout, 3, padding=1, bias=False)
            self.conv3 = (nn.Conv2d(cin, cout, 1, stride=stride, bias=False)
                          if stride != 1 or cin != cout else None)
            self.bn1, self.bn2 = nn.BatchNorm2d(cout), nn.BatchNorm2d(cout)
        def forward(self, x):
            y = torch.relu(self.bn1(self.conv1(x)))
            y = self.bn2(self.conv2(y))
            return torch.relu(y + (self.conv3(x) if self.conv3 is not None
                                   else x))
    return Residual()

def build(name):
    """The zoo's models (tools/models/make_models.py), layer for layer."""
    if name == "mlp":
        return nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(),
                             nn.Linear(256, 10))
    if name in ("lenet", "lenet_relu"):
        act = nn.Sigmoid if name == "lenet" else nn.ReLU
        return nn.Sequential(
            nn.Conv2d(1, 6, 5, padding=2), act(), nn.AvgPool2d(2, 2),
            nn.Conv2d(6, 16, 5), act(), nn.AvgPool2d(2, 2), nn.Flatten(),
            nn.Linear(400, 120), act(), nn.Linear(120, 84), act(),
            nn.Linear(84, 10))
    if name == "resnet18":
        layers = [nn.Conv2d(1, 64, 3, padding=1, bias=False),
                  nn.BatchNorm2d(64),
                  nn.ReLU()]
        cin = 64
        for i, cout in enumerate((64, 128, 256, 512)):
            layers += [residual(cin, cout, 1 if i == 0 else 2),
                       residual(cout, cout, 1)]
            cin = cout
        layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(512, 10)]
        return nn.Sequential(*layers)
    raise SystemExit("unknown model " + name)

def make_step(net, mode, rows):
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    loss_fn = nn.CrossEntropyLoss()
    x, y = torch.rand(rows, 1, 28, 28), torch.randint(0, 10, (rows,))
    def step():
        optimizer.zero_grad(set_to_none=True)
        if mode == "bf16":
            with torch.autocast("cpu", dtype=torch.bfloat16):
                loss = loss_fn(net(x), y)
        else:
            loss = loss_fn(net(x), y)
        loss.backward()
        optimizer.step()
    return step

def serve(name, mode, batch, threads):
    """Answers each "STEPS" line with "seconds cpu_seconds"."""
    torch.set_num_threads(threads)
    net = build(name)
    if mode == "compile":
        net = torch.compile(net)
    step = make_step(net, mode, batch)
    for _ in range(3):
        step()
    print("ready", flush=True)
    for line in sys.stdin:
        steps = int(line)
        cpu, start = time.process_time(), time.perf_counter()
        for _ in range(steps):
            step()
        print(time.perf_counter() - start, time.process_time() - cpu,
              flush=True)

def ddp_rank(rank, world, port, name, batch, steps, results):
    import torch.distributed as dist
    torch.set_num_threads(1)
    os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    net = nn.parallel.DistributedDataParallel(build(name))
    step = make_step(net, "eager", batch // world)
    for _ in range(3):
        step()
    dist.barrier()
    cpu, start = time.process_time(), time.perf_counter()
    for _ in range(steps):
        step()
    dist.barrier()
    results[rank] = (time.perf_counter() - start, time.process_time() - cpu)
    dist.destroy_process_group()

if __name__ == "__main__":
    if sys.argv[1] == "serve":
        serve(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
    else:  # ddp NAME BATCH STEPS WORLD
        import socket, torch.multiprocessing as mp
        name, batch, steps, world = (sys.argv[2], int(sys.argv[3]),
                                     int(sys.argv[4]), int(sys.argv[5]))
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        results = mp.Manager().dict()
        mp.spawn(ddp_rank, args=(world, port, name, batch, steps, results),
                 nprocs=world)
        print(max(r[0] for r in results.values()),
              sum(r[1] for r in results.values()))
'''


def busy_seconds():
    """CPU seconds the whole machine has spent busy (all cores)."""
    with open("/proc/stat") as f:
        fields = [int(v) for v in f.readline().split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


class Sample:
    """One timed run: images/s, the CPU the rest of the machine used
    (cores) over the measured process's lifetime, and the measured
    processes' own CPU microseconds per image (work done, which contention
    inflates much less than wall time)."""

    def __init__(self, rate, own_cpu, wall, images, busy):
        self.rate = rate
        self.others = max(0.0, (busy - own_cpu) / wall)
        self.cpu_per_image = 1e6 * own_cpu / images


def timed(measure):
    """Runs measure() -> (images/s, own CPU seconds, wall seconds, images
    in that CPU time) and samples the machine's busy time around it."""
    busy = busy_seconds()
    rate, own_cpu, wall, images = measure()
    return Sample(rate, own_cpu, wall, images, busy_seconds() - busy)


def environment(threads=None):
    env = dict(os.environ, OMP_WAIT_POLICY="passive")
    if threads:
        env["OMP_NUM_THREADS"] = str(threads)
    return env


class Dpc:
    """dpc run (or dpc launch) of a plan compiled once per model."""

    def __init__(self, build, model, batch, steps, workdir, devices=1,
                 launch=False, tag="", flags=()):
        self.dpc = os.path.join(build, "bin", "dpc")
        self.batch, self.steps, self.launch = batch, steps, launch
        self.devices = devices
        tag = f"{model}-{devices}{tag}"
        self.plan = os.path.join(workdir, tag + ".plan")
        self.metrics = os.path.join(workdir, tag + ".jsonl")
        onnx = os.path.join(build, "models", model + ".onnx")
        device_list = ",".join(f"cpu:{d}" for d in range(devices))
        if not os.path.exists(self.plan):
            subprocess.run([self.dpc, "compile", onnx, "--batch", str(batch),
                            "--devices", device_list, "-o", self.plan,
                            *flags],
                           check=True)

    def measure(self):
        if os.path.exists(self.metrics):
            os.remove(self.metrics)
        prefix = ([self.dpc, "launch", "--nproc-per-node", str(self.devices),
                   "--master-port", "0", "--"] if self.launch else [])
        # Two epochs of `steps` steps: the second is timed.
        command = prefix + [
            self.dpc, "run", self.plan, "--data", "fashion-mnist",
            "--train-subset", str(self.batch * self.steps), "--epochs", "2",
            "--test-subset", str(self.batch), "--metrics", self.metrics,
            "--quiet"]
        cpu = children_cpu()
        start = time.perf_counter()
        subprocess.run(command, check=True, env=environment())
        wall = time.perf_counter() - start
        with open(self.metrics) as f:
            last = json.loads(f.readlines()[-1])
        rate = last["images_per_second"]
        if not rate > 0:
            raise SystemExit(f"dpc reported {rate} images/s for {self.plan}")
        # The CPU time covers both epochs (and the small evaluations).
        return rate, children_cpu() - cpu, wall, 2 * self.batch * self.steps


class TorchWorker:
    """A long-lived PyTorch process that times STEPS steps when asked."""

    def __init__(self, python, script, model, mode, batch, steps):
        self.batch, self.steps = batch, steps
        self.process = subprocess.Popen(
            [python, script, "serve", model, mode, str(batch),
             str(os.cpu_count())],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
            env=environment())
        if self.process.stdout.readline().strip() != "ready":
            raise SystemExit(f"PyTorch worker {model}/{mode} failed")

    def measure(self):
        self.process.stdin.write(f"{self.steps}\n")
        self.process.stdin.flush()
        seconds, cpu = map(float, self.process.stdout.readline().split())
        images = self.batch * self.steps
        return images / seconds, cpu, seconds, images

    def close(self):
        self.process.stdin.close()
        self.process.wait()


class TorchDdp:
    def __init__(self, python, script, model, batch, steps, world):
        self.command = [python, script, "ddp", model, str(batch), str(steps),
                        str(world)]
        self.images = batch * steps

    def measure(self):
        before = children_cpu()
        start = time.perf_counter()
        run = subprocess.run(self.command, check=True, capture_output=True,
                             text=True, env=environment(threads=1))
        seconds = float(run.stdout.split()[-2])
        # The CPU time covers start-up and warm-up steps too.
        return (self.images / seconds, children_cpu() - before,
                time.perf_counter() - start, self.images)


def median_ratio(samples, a, b):
    """Median over rounds of a's rate / b's rate, and the worst load."""
    ratios = [r[a].rate / r[b].rate for r in samples]
    others = max(max(r[a].others, r[b].others) for r in samples)
    return statistics.median(ratios), others


def report(model, rounds, comparisons, quiet):
    systems = list(rounds[0])
    print(f"\n{model}: images/s, median of {len(rounds)} rounds "
          f"(others: median CPU cores used by the rest of the machine)")
    for name in systems:
        rates = [r[name].rate for r in rounds]
        others = statistics.median(r[name].others for r in rounds)
        cpu = statistics.median(r[name].cpu_per_image for r in rounds)
        print(f"  {name:<10} {statistics.median(rates):12.1f}   "
              f"min {min(rates):10.1f} max {max(rates):10.1f}   "
              f"others {others:4.2f}   CPU us/image {cpu:8.1f}")
    summary = {"model": model, "systems": {
        name: [{"images_per_second": r[name].rate, "others": r[name].others,
                "cpu_us_per_image": r[name].cpu_per_image}
               for r in rounds] for name in systems}, "ratios": {}}
    calm = [r for r in rounds
            if all(sample.others <= quiet for sample in r.values())]
    for a, b in comparisons:
        if a not in systems or b not in systems:
            continue
        ratio, worst = median_ratio(rounds, a, b)
        line = (f"  {a + ' / ' + b:<22} {ratio:6.2f}  "
                f"(worst others {worst:4.2f})")
        if calm and len(calm) < len(rounds):
            line += f"; quiet rounds ({len(calm)}): " \
                    f"{median_ratio(calm, a, b)[0]:.2f}"
        # dpc's CPU time covers its whole run (data loading included), so
        # it compares with another dpc only.
        if b.startswith(("dpc", "launch")):
            work = statistics.median(r[b].cpu_per_image / r[a].cpu_per_image
                                     for r in rounds)
            line += f"; CPU per image {b} / {a}: {work:.2f}"
        print(line, flush=True)
        summary["ratios"][f"{a}/{b}"] = ratio
    return summary


def bench_model(args, model, workdir, script):
    systems = {"dpc": Dpc(args.build, model, args.batch, args.steps, workdir)}
    if args.baseline or args.baseline_flags:
        systems["dpc-base"] = Dpc(args.baseline or args.build, model,
                                  args.batch, args.steps, workdir,
                                  tag="-base",
                                  flags=args.baseline_flags.split())
    for precision in filter(None, args.precision.split(",")):
        systems[f"dpc-{precision}"] = Dpc(
            args.build, model, args.batch, args.steps, workdir,
            tag=f"-{precision}", flags=["--precision", precision])
    workers = []
    try:
        if args.python:
            for mode in ("eager", "compile", "bf16"):
                worker = TorchWorker(args.python, script, model, mode,
                                     args.batch, args.steps)
                workers.append(worker)
                systems[mode] = worker
        if args.ddp:
            n = args.ddp
            systems[f"dpc-{n}"] = Dpc(args.build, model, args.batch,
                                      args.steps, workdir, devices=n)
            systems[f"launch-{n}"] = Dpc(args.build, model, args.batch,
                                         args.steps, workdir, devices=n,
                                         launch=True)
            if args.baseline:
                # The baseline build's rank mode, on its own plan.
                systems[f"launch-{n}-base"] = Dpc(
                    args.baseline, model, args.batch, args.steps, workdir,
                    devices=n, launch=True, tag="-base",
                    flags=args.baseline_flags.split())
            if args.python:
                systems[f"ddp-{n}"] = TorchDdp(args.python, script, model,
                                               args.batch, args.steps, n)
        rounds = []
        for index in range(args.rounds):
            results = {name: timed(system.measure)
                       for name, system in systems.items()}
            rounds.append(results)
            print(f"{model} round {index + 1}: " + ", ".join(
                f"{name} {s.rate:.0f} ({s.others:.2f})"
                for name, s in results.items()), flush=True)
    finally:
        for worker in workers:
            worker.close()
    n = args.ddp
    comparisons = [("dpc", "dpc-base"), ("dpc", "eager"), ("dpc", "compile"), ("dpc", "bf16"),
                   *[(f"dpc-{p}", peer) for p in args.precision.split(",")
                     if p for peer in ("bf16", "compile", "dpc", "dpc-base")],
                   (f"launch-{n}", f"ddp-{n}"), (f"launch-{n}", f"dpc-{n}"),
                   (f"launch-{n}-base", f"dpc-{n}"),
                   (f"launch-{n}", f"launch-{n}-base"),
                   (f"dpc-{n}", f"ddp-{n}")]
    return report(model, rounds, comparisons, args.quiet)


def install(venv):
    subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    pip = [os.path.join(venv, "bin", "python"), "-m", "pip", "install"]
    subprocess.run(pip + ["torch", "numpy"], check=True)
    # PyPI's torchvision may lag torch: its models need no compiled ops.
    subprocess.run(pip + ["--no-deps", "torchvision"], check=True)
    print(f"installed PyTorch 2 into {venv}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--venv", default=None,
                        help="virtual environment with PyTorch 2 "
                        "(default build/bench-venv)")
    parser.add_argument("--python", default=None,
                        help="an interpreter with PyTorch 2 instead")
    parser.add_argument("--install", action="store_true")
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--no-torch", action="store_true")
    parser.add_argument("--models", default="mlp,lenet_relu,resnet18")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--ddp", type=int, default=0, metavar="N")
    parser.add_argument("--precision", default="", metavar="P,P",
                        help="also time dpc plans compiled with --precision "
                        "P (bf16, auto), as dpc-P")
    parser.add_argument("--quiet", type=float, default=0.25,
                        help="others' cores below which a round is quiet")
    parser.add_argument("--json", default=None, help="write the samples")
    parser.add_argument("--baseline", default=None, metavar="BUILD",
                        help="also time the dpc of another build (before "
                        "a change) as dpc-base")
    parser.add_argument("--baseline-flags", default="", metavar="FLAGS",
                        help="dpc compile flags of dpc-base (e.g. "
                        "--no-fusion; of this build without --baseline)")
    args = parser.parse_args()
    venv = args.venv or os.path.join(args.build, "bench-venv")
    if args.install:
        install(venv)
        return 0
    if args.smoke:
        args.python, args.models, args.rounds = None, "mlp", 1
        args.steps, args.batch, args.ddp = 2, 32, 0
    elif args.no_torch:
        args.python = None
    elif not args.python:
        args.python = os.path.join(venv, "bin", "python")
        if not os.path.exists(args.python):
            sys.exit(f"peers.py: no PyTorch 2 at {venv}: run with --install, "
                     "or give --python")
    if args.python:
        print(subprocess.run([args.python, "-c",
                              "import torch; print('PyTorch', "
                              "torch.__version__, end='')"],
                             capture_output=True, text=True,
                             check=True).stdout)
    with open("/proc/loadavg") as f:
        print(f"{os.cpu_count()} cores, load average {f.read().strip()}; "
              f"batch {args.batch}, {args.steps} steps per sample, "
              f"OMP_WAIT_POLICY=passive", flush=True)
    summaries = []
    with tempfile.TemporaryDirectory() as workdir:
        script = os.path.join(workdir, "torch_worker.py")
        with open(script, "w") as f:  # spawned DDP ranks re-import a file
            f.write(WORKER)
        for model in args.models.split(","):
            summaries.append(bench_model(args, model, workdir, script))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(summaries, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
