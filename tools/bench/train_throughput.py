#!/usr/bin/env python3
"""Training throughput of dpc beside PyTorch, same models, same machine.

For each model (the zoo's MLP, LeNet and d2l ResNet-18), compiles a plan at
batch 256, trains it for a fixed number of steps on Fashion-MNIST with
`dpc run`, and times the same model, batch and optimizer in PyTorch (when
Debian's python3-torch is installed), in the same run. Prints images/s and
the ratio.

  /usr/bin/python3 tools/bench/train_throughput.py [--build build]
      [--models mlp,lenet,resnet18] [--steps 30] [--batch 256]
      [--devices N | --launch N]

With --devices N (data parallel), dpc trains on N CPU devices in one
process (cores shared among them) and PyTorch runs DistributedDataParallel
(gloo) with N processes of one thread each, each on batch/N rows.
PyTorch runs with all cores and, where libopenblas0-openmp is installed,
OpenBLAS instead of Debian's reference BLAS (see TOOLCHAIN.md).

  /usr/bin/python3 tools/bench/train_throughput.py --gpu [--build build]
      [--epochs 10]

With --gpu, the seed's GPU experiment instead: the d2l ResNet-18 on
Fashion-MNIST, batch 256 on cuda:0 and batch 512 on cuda:0,cuda:1 (SGD,
lr 0.05 as in d2l), 10 epochs each; prints the final test accuracy and the
mean seconds per epoch. Without the CUDA backend or a usable GPU it says it
is skipped, and why, and exits 0.

With --launch N (one process per device), the same N-device plan runs
three ways in the same run: dpc in one process, `dpc launch
--nproc-per-node N` (Gloo, N processes sharing the cores) and PyTorch DDP
(gloo, N processes); dpc's processes idle with OMP_WAIT_POLICY=passive, in
both dpc columns.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

OPENBLAS = "/usr/lib/x86_64-linux-gnu/openblas-openmp"

TORCH_SCRIPT = r'''
import sys, time, torch
from torch import nn
name, batch, steps, threads, world = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
torch.set_num_threads(threads)

def residual(cin, cout, stride):
    class Residual(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, padding=1, stride=stride, bias=False)
            self.conv2 = nn.Conv2d(cout, cout, 3, padding=1, bias=False)
            self.conv3 = nn.Conv2d(cin, cout, 1, stride=stride, bias=False) if stride != 1 or cin != cout else None
            self.bn1, self.bn2 = nn.BatchNorm2d(cout), nn.BatchNorm2d(cout)
        def forward(self, x):
            y = torch.relu(self.bn1(self.conv1(x)))
            y = self.bn2(self.conv2(y))
            return torch.relu(y + (self.conv3(x) if self.conv3 is not None else x))
    return Residual()

def model():
    if name == "mlp":
        return nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))
    if name in ("lenet", "lenet_relu"):
        act = nn.Sigmoid if name == "lenet" else nn.ReLU
        return nn.Sequential(nn.Conv2d(1, 6, 5, padding=2), act(), nn.AvgPool2d(2, 2),
                             nn.Conv2d(6, 16, 5), act(), nn.AvgPool2d(2, 2), nn.Flatten(),
                             nn.Linear(400, 120), act(), nn.Linear(120, 84), act(), nn.Linear(84, 10))
    if name == "resnet18":
        layers = [nn.Conv2d(1, 64, 3, padding=1, bias=False), nn.BatchNorm2d(64), nn.ReLU()]
        cin = 64
        for i, cout in enumerate((64, 128, 256, 512)):
            layers += [residual(cin, cout, 1 if i == 0 else 2), residual(cout, cout, 1)]
            cin = cout
        layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(512, 10)]
        return nn.Sequential(*layers)
    raise SystemExit("unknown model " + name)

def measure(net, rows):
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    loss_fn = nn.CrossEntropyLoss()
    x, y = torch.rand(rows, 1, 28, 28), torch.randint(0, 10, (rows,))
    def step():
        optimizer.zero_grad()
        loss_fn(net(x), y).backward()
        optimizer.step()
    for _ in range(3):
        step()
    start = time.perf_counter()
    for _ in range(steps):
        step()
    return time.perf_counter() - start

def ddp_worker(rank, world, port, results):
    import os, torch.distributed as dist
    torch.set_num_threads(1)
    os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    seconds = measure(nn.parallel.DistributedDataParallel(model()), batch // world)
    results[rank] = seconds
    dist.barrier()
    dist.destroy_process_group()  # torch 1.13's gloo may hang at exit otherwise

if __name__ == "__main__":
    if world == 1:
        print(batch * steps / measure(model(), batch))
    else:
        import socket, torch.multiprocessing as mp
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        results = mp.Manager().dict()
        mp.spawn(ddp_worker, args=(world, port, results), nprocs=world)
        print(batch * steps / max(results.values()))
'''


def dpc_images_per_second(build, model, batch, steps, workdir, devices,
                          launch=False, env=None):
    plan = os.path.join(workdir, model + ".plan")
    metrics = os.path.join(workdir, model + ".jsonl")
    device_list = ",".join(f"cpu:{d}" for d in range(devices))
    subprocess.run([os.path.join(build, "bin", "dpc"), "compile",
                    os.path.join(build, "models", model + ".onnx"),
                    "--batch", str(batch), "--devices", device_list,
                    "-o", plan], check=True)
    dpc = os.path.join(build, "bin", "dpc")
    prefix = [dpc, "launch", "--nproc-per-node", str(devices),
              "--master-port", "0", "--"] if launch else []
    subprocess.run(prefix + [dpc, "run", plan,
                             "--data", "fashion-mnist", "--steps", str(steps),
                             "--test-subset", str(batch), "--metrics", metrics,
                             "--quiet"], check=True, env=env)
    with open(metrics) as f:
        return json.loads(f.readlines()[-1])["images_per_second"]


def torch_images_per_second(model, batch, steps, devices):
    env = dict(os.environ)
    if os.path.isdir(OPENBLAS):
        env["LD_LIBRARY_PATH"] = OPENBLAS
    script = os.path.join(tempfile.gettempdir(), "dpc_bench_torch.py")
    with open(script, "w") as f:  # spawned DDP workers re-import a file
        f.write(TORCH_SCRIPT)
    try:
        run = subprocess.run(["/usr/bin/python3", script, model, str(batch),
                              str(steps), str(os.cpu_count()), str(devices)],
                             env=env, capture_output=True, text=True,
                             check=True)
    except (subprocess.CalledProcessError, FileNotFoundError) as error:
        stderr = getattr(error, "stderr", "") or ""
        if "No module named 'torch'" in stderr or isinstance(
                error, FileNotFoundError):
            return None
        raise
    return float(run.stdout.strip().splitlines()[-1])


def probe_gpus(build):
    """The number of usable GPUs, or (0, why not)."""
    probe = os.path.join(build, "bin", "dpc-cuda-probe")
    if not os.path.exists(probe):
        return 0, "dpc was built without the CUDA backend (no " + probe + ")"
    run = subprocess.run([probe], capture_output=True, text=True)
    line = run.stdout.strip()
    if run.returncode != 0:
        return 0, line
    return int(line.split()[0]), ""


def gpu_benchmark(build, epochs):
    gpus, why = probe_gpus(build)
    if gpus == 0:
        print(f"GPU benchmark skipped: {why}")
        return 0
    print(f"d2l ResNet-18 on Fashion-MNIST, {epochs} epochs, SGD lr 0.05")
    print(f"{'devices':<18} {'batch':>6} {'test acc':>9} {'s/epoch':>9}")
    with tempfile.TemporaryDirectory() as workdir:
        for count, batch in ((1, 256), (2, 512)):
            devices = ",".join(f"cuda:{d}" for d in range(count))
            if count > gpus:
                print(f"{devices:<18} {batch:>6} skipped: {gpus} GPU(s)")
                continue
            plan = os.path.join(workdir, f"resnet18-{count}.plan")
            metrics = os.path.join(workdir, f"resnet18-{count}.jsonl")
            subprocess.run([os.path.join(build, "bin", "dpc"), "compile",
                            os.path.join(build, "models", "resnet18.onnx"),
                            "--batch", str(batch), "--devices", devices,
                            "-o", plan], check=True)
            subprocess.run([os.path.join(build, "bin", "dpc"), "run", plan,
                            "--data", "fashion-mnist", "--epochs", str(epochs),
                            "--lr", "0.05", "--metrics", metrics, "--quiet"],
                           check=True)
            with open(metrics) as f:
                rows = [json.loads(line) for line in f if line.strip()]
            seconds = sum(r["epoch_seconds"] for r in rows) / len(rows)
            print(f"{devices:<18} {batch:>6} {rows[-1]['test_acc']:>9.4f} "
                  f"{seconds:>9.2f}", flush=True)
    return 0


def compare_launch(args):
    n = args.launch
    env = dict(os.environ, OMP_WAIT_POLICY="passive")
    print(f"{n} devices, batch {args.batch}, {args.steps} steps; images/s")
    print(f"{'model':<10} {'dpc 1 proc':>12} {'dpc launch':>12} "
          f"{'torch DDP':>12} {'launch/DDP':>12}")
    with tempfile.TemporaryDirectory() as workdir:
        for model in args.models.split(","):
            single = dpc_images_per_second(args.build, model, args.batch,
                                           args.steps, workdir, n, env=env)
            launched = dpc_images_per_second(args.build, model, args.batch,
                                             args.steps, workdir, n,
                                             launch=True, env=env)
            theirs = torch_images_per_second(model, args.batch, args.steps, n)
            ratio = f"{launched / theirs:12.2f}" if theirs else f"{'-':>12}"
            theirs_text = f"{theirs:12.1f}" if theirs else f"{'n/a':>12}"
            print(f"{model:<10} {single:12.1f} {launched:12.1f} "
                  f"{theirs_text} {ratio}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--models", default="mlp,lenet,resnet18")
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--devices", type=int, default=1)
    parser.add_argument("--gpu", action="store_true",
                        help="the ResNet-18 GPU experiment (see above)")
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--launch", type=int, default=0,
                        help="N: dpc in one process, dpc launch with N "
                        "processes and torch DDP with N processes")
    args = parser.parse_args()
    if args.gpu:
        return gpu_benchmark(args.build, args.epochs)
    if args.launch:
        return compare_launch(args)
    peer = "torch" if args.devices == 1 else "torch DDP"
    print(f"{args.devices} device(s), batch {args.batch}, {args.steps} steps")
    print(f"{'model':<10} {'dpc img/s':>12} {peer + ' img/s':>16} "
          f"{'dpc/' + peer:>14}")
    with tempfile.TemporaryDirectory() as workdir:
        for model in args.models.split(","):
            ours = dpc_images_per_second(args.build, model, args.batch,
                                         args.steps, workdir, args.devices)
            theirs = torch_images_per_second(model, args.batch, args.steps,
                                             args.devices)
            ratio = f"{ours / theirs:14.2f}" if theirs else f"{'-':>14}"
            theirs_text = f"{theirs:16.1f}" if theirs else f"{'n/a':>16}"
            print(f"{model:<10} {ours:12.1f} {theirs_text} {ratio}",
                  flush=True)


if __name__ == "__main__":
    sys.exit(main())
