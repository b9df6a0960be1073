#!/usr/bin/env python3
"""A language model that does not fit replicated trains sharded.

Transformers' own GPT2LMHeadModel scaled to about 300M parameters (24
layers of width 1024, 16 heads, the 97 characters of tokenize_text.py,
64 positions, dropout off), exported by the legacy exporter with its
weights in an external data file, is compiled for 1, 2 and 4 CPU devices
at every sharding stage (AdamW, per-token cross-entropy), and dpc
inspect's planned peak of device 0 is tabulated by stage and device
count. Then `dpc compile --memory-budget BUDGET` chooses the plan for 4
devices under a per-device budget that replicated training exceeds, and
`dpc run` trains it for a few steps on the characters of
/usr/share/common-licenses/GPL-3, recording each device's planned bytes
beside what the runtime allocated and the process's peak RSS.

Run from PyTorch 2's virtual environment (transformers; never CI), about
20 GiB of memory and a few minutes per step on 2 cores:

  V/bin/python tools/bench/gpt_sharded.py [--build build] [--work DIR]
      [--budget 2GiB] [--steps 2] [--batch 8] [--layers 24] [--width 1024]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CORPUS = "/usr/share/common-licenses/GPL-3"
STAGES = ("none", "optimizer", "gradients", "parameters")
VOCAB, SEQ = 97, 64


def export(args, path):
    import torch
    import transformers
    sys.path.insert(0, os.path.join(ROOT, "tools", "reference"))
    import zoo_hf

    config = transformers.GPT2Config(
        vocab_size=VOCAB, n_positions=SEQ, n_embd=args.width,
        n_layer=args.layers, n_head=args.heads, resid_pdrop=0.0,
        embd_pdrop=0.0, attn_pdrop=0.0, bos_token_id=None, eos_token_id=None)
    torch.manual_seed(0)
    model = zoo_hf.TokenLogits(transformers.GPT2LMHeadModel(config)).eval()
    count = sum(p.numel() for p in model.parameters())
    tokens = torch.zeros(2, SEQ, dtype=torch.int64)
    torch.onnx.export(model, (tokens,), path, dynamo=False,
                      input_names=["tokens"], output_names=["logits"],
                      dynamic_axes={"tokens": {0: "n"}, "logits": {0: "n"}},
                      external_data=True)
    return count


def dpc(args, *command, **kwargs):
    return subprocess.run([os.path.join(args.build, "bin", "dpc"), *command],
                          check=True, text=True, **kwargs)


def devices(n):
    return ",".join(f"cpu:{d}" for d in range(n))


def compile_flags(args, model, n):
    return [model, "--batch", str(args.batch), "--devices", devices(n),
            "--optimizer", "adamw", "--class-axis", "-1", "--ignore-index",
            "-100"]


def planned_peak(args, model, n, stage):
    """Device 0's planned peak (MiB) and its line, from --report-memory."""
    run = dpc(args, "compile", *compile_flags(args, model, n), "--shard",
              stage, "--emit", "exec", "--report-memory",
              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    line = next(l for l in run.stderr.splitlines()
                if l.startswith("device cpu:0:"))
    peak = re.search(r"peak ([0-9.]+) (MiB|GiB)", line)
    mib = float(peak.group(1)) * (1024 if peak.group(2) == "GiB" else 1)
    return mib, line


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--work", default="/tmp/gpt_sharded")
    parser.add_argument("--budget", default="2GiB")
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--layers", type=int, default=24)
    parser.add_argument("--width", type=int, default=1024)
    parser.add_argument("--heads", type=int, default=16)
    parser.add_argument("--counts", default="1,2,4")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    model = os.path.join(args.work, "gpt.onnx")
    if not os.path.exists(model):
        count = export(args, model)
        print(f"exported {count / 1e6:.0f}M parameters to {model}",
              flush=True)
    subprocess.run([sys.executable,
                    os.path.join(ROOT, "tools", "reference",
                                 "tokenize_text.py"),
                    CORPUS, args.work, "--seq", str(SEQ)], check=True)

    counts = [int(c) for c in args.counts.split(",")]
    table = {}
    for n in counts:
        for stage in STAGES if n > 1 else ("none",):
            mib, line = planned_peak(args, model, n, stage)
            table[(n, stage)] = mib
            print(f"N={n} {stage}: {line}", flush=True)
    print("| devices | " + " | ".join(f"`{s}`" for s in STAGES) + " |")
    print("|---|" + "---|" * len(STAGES))
    for n in counts:
        cells = [f"{table[(n, s)] / 1024:.2f} GiB" if (n, s) in table
                 else "" for s in STAGES]
        print(f"| {n} | " + " | ".join(cells) + " |")

    n = counts[-1]
    plan = os.path.join(args.work, "chosen.plan")
    chosen = dpc(args, "compile", *compile_flags(args, model, n),
                 "--memory-budget", args.budget, "-o", plan,
                 stderr=subprocess.PIPE)
    print(chosen.stderr.strip(), flush=True)
    metrics = os.path.join(args.work, "metrics.jsonl")
    if os.path.exists(metrics):
        os.remove(metrics)
    data = ("npy:" + os.path.join(args.work, "tokens.npy") + "," +
            os.path.join(args.work, "targets.npy"))
    start = time.time()
    dpc(args, "run", plan, "--data", data, "--steps", str(args.steps),
        "--lr", "1e-4", "--metrics", metrics)
    elapsed = time.time() - start
    with open(metrics) as f:
        last = [json.loads(line) for line in f][-1]
    print(f"{args.steps} steps of batch {args.batch} in {elapsed:.0f} s; "
          f"peak RSS {last['peak_rss_bytes'] / 2**30:.2f} GiB for {n} "
          "devices")
    for device in last["memory"]:
        print(f"  {device['device']}: planned "
              f"{device['planned_bytes'] / 2**30:.3f} GiB, allocated "
              f"{device['allocated_peak_bytes'] / 2**30:.3f} GiB, library "
              f"{device['library_peak_bytes'] / 2**20:.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
