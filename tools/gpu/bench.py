#!/usr/bin/env python3
"""dpc against PyTorch 2 on the same GPU, in the same run, interleaved.

Runs on the GPU machine from tools/gpu/pack.sh's unpacked bundle (see
tools/gpu/run.sh), with that machine's python3 (PyTorch 2, Triton). For each
model (the MLP, LeNet with ReLU and the d2l ResNet-18 at 28x28, batch 256, and
the zoo's GPT-like causal language model at batch 256) every round times each
system once, one after the other:

  dpc             `dpc-run` of the cuda:0 plan: two epochs of STEPS steps on
                  Fashion-MNIST (tokens for the GPT), the second epoch's
                  images/s, data loading included; cuDNN's algorithms
                  chosen by timing them; each train step replayed as a
                  CUDA graph
  dpc-streams     the same, kernel by kernel (DPC_CUDA_GRAPHS=0)
  dpc-heuristic   the same with cuDNN's heuristics' choice (no timing)
  dpc-fastest     timed, the fastest algorithm even if non-deterministic
  dpc-tf32        the plan compiled with --precision tf32 (its convolutions
                  and matmuls on tensor cores in TensorFloat-32)
  dpc-bf16        the plan compiled with --precision bf16 (convolutions on
                  bf16 copies, matmuls by cuBLAS from f32, f32 accumulation)
  eager           PyTorch eager, f32 (TF32 off, PyTorch's default)
  eager-tf32      eager with TF32 matmuls and convolutions
  eager-bf16-cl   eager, channels_last, torch.autocast(bfloat16)
  compile         torch.compile (inductor, default mode), f32
  compile-bf16    torch.compile under bf16 autocast
  compile-ro      torch.compile(mode="reduce-overhead"): CUDA graphs
  compile-ma      torch.compile(mode="max-autotune") (with --max-autotune:
                  its compilation takes minutes)

PyTorch's systems are long-lived workers, all (every model's) started at
once so that their compilations overlap; each builds its model on cuda:0, compiles it, warms it
up and then times STEPS steps on a fixed random batch already on the GPU
(no data loading) when asked. Same architectures, same optimizer (SGD, lr
0.1; lr 0.05 and momentum 0.9 for ResNet-18, as the plan), same batch; the GPT starts
from the same hash:0 weights as dpc (tools/reference/make_zoo.py), the
others from their own initialisations (weights do not change the work).

Printed per model: each system's median images/s and peak memory
(PyTorch: max_memory_reserved; dpc: its planned peak, `dpc inspect`), and
the median over rounds of dpc / system. With --seed-epochs E, the seed
experiment: E epochs of ResNet-18 on all of Fashion-MNIST, batch 256, lr
0.05, end to end (seconds per epoch, test accuracy).

  tools/gpu/bench.py WORK [--rounds 3] [--steps 30] [--models ...]
      [--systems ...] [--max-autotune] [--seed-epochs 1] [--json FILE]
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
SRC = os.path.dirname(os.path.dirname(HERE))

# model: (plan in the bundle, dpc-run's data, init, momentum, lr); ResNet-18
# at the seed experiment's lr 0.05 (at 0.1 with momentum 0.9 its first
# epochs can diverge, and dpc-run stops at the first non-finite update)
MODELS = {
    "mlp": ("mlp256-cuda.plan", "fm", "model", 0.0, 0.1),
    "lenet_relu": ("lenet256-cuda.plan", "fm", "model", 0.0, 0.1),
    "resnet18": ("r18b256-cuda.plan", "fm", "kaiming", 0.9, 0.05),
    "gpt_tiny": ("gpt256-cuda.plan", "tokens", "hash:0", 0.0, 0.1),
}
TORCH_SYSTEMS = ["eager", "eager-tf32", "eager-bf16-cl", "compile",
                 "compile-bf16", "compile-ro"]

WORKER = r'''
import os, sys, time, torch
from torch import nn
name, mode, batch = sys.argv[1], sys.argv[2], int(sys.argv[3])
momentum, lr = float(sys.argv[4]), float(sys.argv[6])
sys.path.insert(0, os.path.join(sys.argv[5], "tools", "bench"))
sys.path.insert(0, os.path.join(sys.argv[5], "tools", "reference"))
torch.backends.cuda.matmul.allow_tf32 = mode == "eager-tf32"
torch.backends.cudnn.allow_tf32 = mode == "eager-tf32"
torch.backends.cudnn.benchmark = True
if name == "gpt_tiny":
    import make_zoo
    net = make_zoo.build("gpt_tiny")
    x = torch.randint(0, make_zoo.VOCAB, (batch, make_zoo.TOKENS))
else:
    import peers
    scope = {}
    exec(peers.WORKER.split("def make_step")[0], scope)
    net = scope["build"](name)
    x = torch.rand(batch, 1, 28, 28)
device = torch.device("cuda:0")
net, x = net.to(device), x.to(device)
y = torch.randint(0, 10, (batch,), device=device)
bf16 = mode in ("eager-bf16-cl", "compile-bf16")
if mode == "eager-bf16-cl" and x.dim() == 4:
    net, x = net.to(memory_format=torch.channels_last), x.contiguous(memory_format=torch.channels_last)
optimizer = torch.optim.SGD(net.parameters(), lr=lr, momentum=momentum)
loss_fn = nn.CrossEntropyLoss()
def train():
    optimizer.zero_grad(set_to_none=True)
    with torch.autocast("cuda", dtype=torch.bfloat16, enabled=bf16):
        loss = loss_fn(net(x), y)
    loss.backward()
    optimizer.step()
if mode.startswith("compile"):
    kind = {"compile-ro": "reduce-overhead", "compile-ma": "max-autotune"}
    train = torch.compile(train, mode=kind.get(mode, "default"))
def step():
    if mode in ("compile-ro", "compile-ma"):  # CUDA graphs: a step each
        torch.compiler.cudagraph_mark_step_begin()
    train()
for _ in range(5):
    step()
torch.cuda.synchronize()
print("ready", flush=True)
for line in sys.stdin:
    steps = int(line)
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(steps):
        step()
    torch.cuda.synchronize()
    print(time.perf_counter() - start,
          torch.cuda.max_memory_reserved() / 2**20, flush=True)
'''


class TorchWorker:
    def __init__(self, model, mode, batch):
        self.name = mode
        _, _, _, momentum, lr = MODELS[model]
        self.process = subprocess.Popen(
            [sys.executable, "-c", WORKER, model, mode, str(batch),
             str(momentum), SRC, str(lr)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
            env=dict(os.environ, PYTHONUNBUFFERED="1"))
        self.batch, self.ready, self.failed = batch, False, None

    def wait_ready(self):
        line = self.process.stdout.readline()
        self.ready = line.strip() == "ready"
        if not self.ready:
            self.failed = f"worker exited ({self.process.wait()})"
        return self.ready

    def measure(self, steps):
        self.process.stdin.write(f"{steps}\n")
        self.process.stdin.flush()
        seconds, memory = map(float, self.process.stdout.readline().split())
        return self.batch * steps / seconds, memory

    def close(self):
        if self.process.poll() is None:
            self.process.stdin.close()
            self.process.wait()


# name: (environment, the plan's suffix in the bundle)
DPC_SYSTEMS = {"dpc": ({}, ""),
               "dpc-streams": ({"DPC_CUDA_GRAPHS": "0"}, ""),
               "dpc-heuristic": ({"DPC_CUDNN_ALGORITHMS": "heuristic"}, ""),
               "dpc-fastest": ({"DPC_CUDNN_ALGORITHMS": "fastest"}, ""),
               "dpc-tf32": ({}, "-tf32"),
               "dpc-bf16": ({}, "-bf16")}


class Dpc:
    def __init__(self, work, model, batch, steps, name="dpc"):
        plan, self.data_kind, self.init, _, self.lr = MODELS[model]
        self.work, self.batch, self.steps = work, batch, steps
        env, suffix = DPC_SYSTEMS[name]
        self.name, self.env = name, dict(os.environ, **env)
        plan = plan.replace(".plan", suffix + ".plan")
        self.plan = os.path.join(work, "plans", plan)
        self.memory = planned_peak(work, plan)

    def data(self):
        d = os.path.join(self.work, "data")
        if self.data_kind == "tokens":
            return f"npy:{d}/tokens.npy,{d}/token-labels.npy"
        return fashion_mnist(self.work)

    def measure(self, steps):
        with tempfile.NamedTemporaryFile(suffix=".jsonl") as metrics:
            subprocess.run(
                [os.path.join(self.work, "bin", "dpc-run"), self.plan,
                 "--data", self.data(), "--train-subset",
                 str(self.batch * steps), "--test-subset", str(self.batch),
                 "--lr", str(self.lr),
                 "--epochs", "2", "--init", self.init, "--metrics",
                 metrics.name, "--quiet"], check=True, env=self.env)
            rows = [json.loads(l) for l in open(metrics.name) if l.strip()]
        return rows[-1]["images_per_second"], self.memory


def fashion_mnist(work):
    """dpc-run's --data for Fashion-MNIST; its test set stands in for the
    training set where the bundle leaves the training set out (the device
    tool's size limit)."""
    d = os.path.join(work, "data")
    train = "train" if os.path.exists(f"{d}/train-images-idx3-ubyte.gz") else "t10k"
    return (f"idx:{d}/{train}-images-idx3-ubyte.gz,{d}/{train}-labels-idx1-ubyte.gz,"
            f"{d}/t10k-images-idx3-ubyte.gz,{d}/t10k-labels-idx1-ubyte.gz")


def planned_peak(work, plan):
    """The plan's planned peak on its device, in MiB (dpc inspect at pack
    time wrote it beside the plan)."""
    path = os.path.join(work, "plans", plan + ".inspect.json")
    if not os.path.exists(path):
        return float("nan")
    devices = json.load(open(path)).get("devices", [])
    return max((d.get("peak_bytes", 0) for d in devices), default=0) / 2**20


def start_workers(args):
    """Every model's PyTorch workers at once: their compilations overlap."""
    systems = [s for s in args.systems if s not in DPC_SYSTEMS]
    workers = {m: [TorchWorker(m, s, args.batch)
                   for s in systems] for m in args.models}
    started = time.perf_counter()
    for model, group in workers.items():
        workers[model] = [w for w in group if w.wait_ready() or print(
            f"  {model} {w.name}: {w.failed}", flush=True)]
    print(f"PyTorch workers ready in {time.perf_counter() - started:.0f} s",
          flush=True)
    return workers


def bench_model(args, model, workers):
    everyone = [Dpc(args.work, model, args.batch, args.steps, name)
                for name in DPC_SYSTEMS if name in args.systems] + workers
    samples = {s.name: [] for s in everyone}
    for _ in range(args.rounds):
        for system in everyone:
            try:
                samples[system.name].append(system.measure(args.steps))
            except Exception as error:  # one failure must not lose the rest
                print(f"  {model} {system.name}: {error}", flush=True)
    for w in workers:
        w.close()
    return report(model, samples)


def report(model, samples):
    rows = {}
    print(f"\n{model}, batch {ARGS.batch}: images/s (median of rounds), "
          "peak MiB, dpc / system")
    dpc = [rate for rate, _ in samples.get("dpc", [])]
    for name, values in samples.items():
        if not values:
            continue
        rates = [rate for rate, _ in values]
        median = statistics.median(rates)
        ratio = (statistics.median(d / r for d, r in zip(dpc, rates))
                 if dpc else float("nan"))
        memory = max(m for _, m in values)
        rows[name] = {"images_per_second": median, "peak_mib": memory,
                      "dpc_ratio": ratio}
        print(f"  {name:<15} {median:>11.0f} {memory:>9.0f} {ratio:>7.2f}x",
              flush=True)
    return rows


def seed_experiment(args):
    """ResNet-18 on all of Fashion-MNIST, end to end."""
    with tempfile.NamedTemporaryFile(suffix=".jsonl") as metrics:
        start = time.perf_counter()
        subprocess.run([os.path.join(args.work, "bin", "dpc-run"),
                        os.path.join(args.work, "plans", "r18b256-cuda.plan"),
                        "--data", fashion_mnist(args.work), "--epochs",
                        str(args.seed_epochs), "--lr", "0.05", "--init",
                        "kaiming", "--metrics", metrics.name, "--quiet"],
                       check=True)
        wall = time.perf_counter() - start
        rows = [json.loads(l) for l in open(metrics.name) if l.strip()]
    per_epoch = statistics.mean(r["epoch_seconds"] for r in rows)
    images = "60000" if "train-images" in fashion_mnist(args.work) else "10000"
    print(f"\nseed experiment: ResNet-18, Fashion-MNIST ({images} training "
          "images), batch 256, lr 0.05, "
          f"{len(rows)} epochs: {per_epoch:.2f} s/epoch (training), "
          f"{wall:.1f} s end to end, test accuracy {rows[-1]['test_acc']:.4f}",
          flush=True)
    return {"epochs": len(rows), "epoch_seconds": per_epoch, "wall": wall,
            "test_acc": rows[-1]["test_acc"]}


def main():
    global ARGS
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("work", help="the unpacked bundle (bin, plans, data)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--systems",
                        default=",".join(list(DPC_SYSTEMS) + TORCH_SYSTEMS))
    parser.add_argument("--max-autotune", action="store_true")
    parser.add_argument("--seed-epochs", type=int, default=0)
    parser.add_argument("--json")
    args = ARGS = parser.parse_args()
    args.systems = args.systems.split(",") + (
        ["compile-ma"] if args.max_autotune else [])
    import torch
    print(f"{torch.cuda.get_device_name(0)}, PyTorch {torch.__version__}, "
          f"{args.rounds} rounds of {args.steps} steps", flush=True)
    args.models = args.models.split(",")
    workers = start_workers(args)
    results = {}
    for model in args.models:
        results[model] = bench_model(args, model, workers[model])
    if args.seed_epochs:
        results["seed_experiment"] = seed_experiment(args)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
