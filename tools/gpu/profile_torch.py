#!/usr/bin/env python3
"""Where PyTorch's training step spends its GPU time, kernel by kernel.

Runs on the GPU machine (tools/gpu/run.sh with PROFILE=1): for one model of
tools/gpu/bench.py and each PyTorch mode given, a few steps under
torch.profiler, then the kernels by total GPU time per step and the step's
wall and GPU-busy time. Set beside dpc's own trace and its cuDNN algorithm
ranking (DPC_CUDA_LOG_ALGORITHMS=1), it says which kernels dpc should reach.

  tools/gpu/profile_torch.py [--model resnet18] [--modes eager,eager-tf32]
      [--batch 256] [--steps 5] [--top 15]
"""
import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))


def build(name):
    sys.path.insert(0, os.path.join(SRC, "tools", "bench"))
    import peers
    scope = {}
    exec(peers.WORKER.split("def make_step")[0], scope)
    return scope["build"](name)


def profile(name, mode, batch, steps, top):
    import torch
    from torch import nn
    tf32 = mode == "eager-tf32"
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    torch.backends.cudnn.benchmark = True
    device = torch.device("cuda:0")
    net = build(name).to(device)
    x = torch.rand(batch, 1, 28, 28, device=device)
    y = torch.randint(0, 10, (batch,), device=device)
    bf16 = mode == "eager-bf16-cl"
    if bf16:
        net = net.to(memory_format=torch.channels_last)
        x = x.contiguous(memory_format=torch.channels_last)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()

    def step():
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=bf16):
            loss = loss_fn(net(x), y)
        loss.backward()
        optimizer.step()

    for _ in range(5):
        step()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(steps):
        step()
    torch.cuda.synchronize()
    wall = (time.perf_counter() - start) / steps
    from torch.profiler import ProfilerActivity, profile as torch_profile
    with torch_profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(steps):
            step()
        torch.cuda.synchronize()
    def self_time(e):  # microseconds; named self_cuda_time_total before 2.4
        return getattr(e, "self_device_time_total",
                       getattr(e, "self_cuda_time_total", 0))
    events = [e for e in prof.key_averages() if self_time(e) > 0]
    busy = sum(map(self_time, events)) / steps / 1000
    print(f"\n{name} {mode}, batch {batch}: {wall * 1000:.2f} ms/step wall, "
          f"{busy:.2f} ms GPU kernels", flush=True)
    events.sort(key=lambda e: -self_time(e))
    for e in events[:top]:
        print(f"  {self_time(e) / steps / 1000:7.3f} ms "
              f"{e.count // steps:4d}x  {e.key[:110]}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="resnet18")
    parser.add_argument("--modes", default="eager,eager-tf32,eager-bf16-cl")
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--top", type=int, default=15)
    args = parser.parse_args()
    for mode in args.modes.split(","):
        profile(args.model, mode, args.batch, args.steps, args.top)


if __name__ == "__main__":
    main()
