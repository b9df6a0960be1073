#!/usr/bin/env bash
# Runs the CUDA backend's checks on a GPU machine from tools/gpu/pack.sh's
# bundle: the GPU unit tests, test/reference/cuda.test's checks, every zoo
# model's one-step check against PyTorch's float64 step on cuda:0, training
# on Fashion-MNIST against the CPU, and compute-sanitizer where it works.
# Prints one summary line per check; exit 1 when any failed.
#
#   tools/gpu/check.sh [BUNDLE]     # default .gpu; LOG_DIR=DIR keeps each
#                                   # check's whole log there; QUICK=1 leaves
#                                   # out ResNet-18's training and the
#                                   # sanitizers
set -uo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
bundle=$(cd "${1:-$src/.gpu}" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tar -C "$work" -xJf "$bundle/runtime.tar.xz"
tar -C "$work" -xJf "$bundle/plans.tar.xz"
source "$src/tools/gpu/libs.sh"
export PATH=$work/bin:$PATH
plans=$work/plans data=$bundle/data
failed=0
check() { # NAME TIMEOUT COMMAND...: runs it, prints "ok|FAILED NAME (s)"
  local name=$1 limit=$2; shift 2
  local t0=$SECONDS log=$work/$name.log
  timeout "$limit" "$@" >"$log" 2>&1; local rc=$?
  if ((rc == 0)); then echo "ok      $name ($((SECONDS - t0)) s)"
  else echo "FAILED  $name (exit $rc, $((SECONDS - t0)) s)"; tail -15 "$log" | sed 's/^/    /'; failed=1; fi
}
refuses() { # NAME TIMEOUT PATTERN COMMAND...: exits 1 with PATTERN in its output
  local name=$1 limit=$2 pattern=$3; shift 3
  timeout "$limit" "$@" >"$work/$name.log" 2>&1
  if [[ $? == 1 ]] && grep -q -- "$pattern" "$work/$name.log"; then echo "ok      $name"
  else echo "FAILED  $name"; cat "$work/$name.log"; failed=1; fi
}
expect() { # NAME PATTERN: the check's log holds PATTERN
  grep -q -- "$2" "$work/$1.log" || { echo "FAILED  $1: no '$2'"; failed=1; }
}

nvidia-smi -L
check probe 60 dpc-cuda-probe && cat "$work/probe.log"
check unit-tests 150 dpc_cuda_test --gtest_brief=1
grep -E "PASSED|SKIPPED|FAILED" "$work/unit-tests.log" | head -20

check ref-mlp 120 dpc-check-reference "$plans/ref-mlp.plan" "$src/test/reference/mlp" --lr 0.1 --tolerance 1e-4
expect ref-mlp "4 parameters compared: all match"
check ref-lenet 120 dpc-check-reference "$plans/ref-lenet.plan" "$src/test/reference/lenet" --lr 0.1 --tolerance 1e-4
expect ref-lenet "10 parameters compared: all match"
npy=("$data/images.npy" "$data/labels.npy")
check lenet-5-steps 120 dpc-compare-plans "$plans/lenet-cpu.plan" "$plans/lenet-cuda.plan" "${npy[@]}" --batch 12 --steps 5 --tolerance 1e-4
expect lenet-5-steps "all match"
check mlp-adamw-5-steps 120 dpc-compare-plans "$plans/mlp-adamw-cpu.plan" "$plans/mlp-adamw-cuda.plan" "${npy[@]}" --batch 12 --steps 5 --lr 0.01 --tolerance 1e-3
expect mlp-adamw-5-steps "all match"
echo "    worst $(sort -k4 -g "$work/mlp-adamw-5-steps.log" | grep "relative error" | tail -1)"
# ResNet-18 after a step: batch norm's bias gradients are sums that cancel,
# so correct plans with different convolution algorithms differ by up to
# 2e-2 there (the CPU's direct against its Winograd, printed first).
check resnet18-cpu-algorithms 180 dpc-compare-plans "$plans/r18-cpu-direct.plan" "$plans/r18-cpu.plan" "${npy[@]}" --batch 12 --steps 1 --tolerance 5e-2 --init kaiming
check resnet18-1-step 180 dpc-compare-plans "$plans/r18-cpu.plan" "$plans/r18-cuda.plan" "${npy[@]}" --batch 12 --steps 1 --tolerance 5e-2 --init kaiming
expect resnet18-1-step "90 tensors compared after 1 steps: all match"
for c in resnet18-cpu-algorithms resnet18-1-step; do
  echo "    $c: worst $(sort -k4 -g "$work/$c.log" | grep "relative error" | tail -1)"
done
# bf16 convolutions (bf16 copies in the cuDNN workspace) against the CPU's
# bf16 (oneDNN): both round the operands alike, but accumulate in
# different orders, and the weight gradient comes in bf16 on the GPU.
check lenet-bf16-2-steps 120 dpc-compare-plans "$plans/lenet-bf16-cpu.plan" "$plans/lenet-bf16-cuda.plan" "${npy[@]}" --batch 12 --steps 2 --tolerance 5e-2
expect lenet-bf16-2-steps "all match"
echo "    worst $(sort -k4 -g "$work/lenet-bf16-2-steps.log" | grep "relative error" | tail -1)"
refuses far-device 60 "device 'cuda:63' is not available" dpc-run "$plans/far.plan" --data "idx:$data/t10k-images-idx3-ubyte.gz,$data/t10k-labels-idx1-ubyte.gz"

# Every sharding stage's collectives (NCCL reduce-scatter and all-gather)
# on two GPUs: 4 AdamW steps of LeNet end where the replicated plan on two
# CPU devices does, to NCCL's summation order.
gpus=$(nvidia-smi -L | wc -l)
if ((gpus >= 2)); then
  check shard-cpu 60 dpc-run "$plans/shard-none-cpu.plan" --data "idx:$data/t10k-images-idx3-ubyte.gz,$data/t10k-labels-idx1-ubyte.gz" --steps 4 --epochs 1 --checkpoint "$work/shard-cpu" --quiet
  for s in none optimizer gradients parameters; do
    check "shard-$s-2gpu" 60 dpc-run "$plans/shard-$s-cuda.plan" --data "idx:$data/t10k-images-idx3-ubyte.gz,$data/t10k-labels-idx1-ubyte.gz" --steps 4 --epochs 1 --checkpoint "$work/shard-$s" --quiet
    check "shard-$s-same" 30 python3 "$src/test/launch/Inputs/compare_checkpoints.py" "$work/shard-cpu" "$work/shard-$s" --atol 1e-5
  done
else
  echo "skipped shard-*-2gpu: the sharded collectives need two GPUs, this machine has $gpus"
fi

for p in "$plans"/zoo-*.plan; do
  m=${p##*/zoo-}; m=${m%.plan}
  check "zoo-$m" 60 dpc-check-reference "$p" "$src/test/reference/zoo/$m" --init hash:0 --spread 2
  expect "zoo-$m" "parameters compared: all match"
  grep -h "gradient distance" "$work/zoo-$m.log" | sed 's/^/    /'
done

fm="idx:$data/t10k-images-idx3-ubyte.gz,$data/t10k-labels-idx1-ubyte.gz,$data/t10k-images-idx3-ubyte.gz,$data/t10k-labels-idx1-ubyte.gz"
for m in mlp256 lenet256; do
  for d in cpu cuda; do
    check "train-$m-$d" 90 dpc-run "$plans/$m-$d.plan" --data "$fm" --epochs 2 --seed 5 --metrics "$work/$m-$d.jsonl"
    grep -h "epoch 2/2\|images/s" "$work/train-$m-$d.log" | tail -2 | sed 's/^/    /'
  done
done
# The MLP's epochs equal the CPU's to 1e-3; LeNet's and ResNet-18's
# trajectories part after a few hundred steps (summation orders differ, and
# so do the CPU's own algorithms): they must train.
# A step that writes NaN or infinity stops the run in one line, through
# the optimizer kernels' flag (no copy of the state), and skip-step undoes it.
refuses nonfinite-stops 60 "after the update; stopping\|the loss is .*; stopping" dpc-run "$plans/lenet256-cuda.plan" --data "$fm" --train-subset 1024 --epochs 1 --lr 3e38 --quiet
check nonfinite-skips 60 dpc-run "$plans/lenet256-cuda.plan" --data "$fm" --train-subset 1024 --epochs 1 --lr 3e38 --on-nonfinite skip-step
expect nonfinite-skips "skipped: its update is undone"
check train-mlp256-same 30 python3 "$src/test/tools/dpc/Inputs/check_metrics.py" "$work/mlp256-cuda.jsonl" --epochs 2 --loss-decreases --same-as "$work/mlp256-cpu.jsonl" --rtol 1e-3
check train-lenet256-learns 30 python3 "$src/test/tools/dpc/Inputs/check_metrics.py" "$work/lenet256-cuda.jsonl" --epochs 2 --loss-decreases
for m in lenet256 r18b256; do
  check "train-$m-bf16" 90 dpc-run "$plans/$m-cuda-bf16.plan" --data "$fm" --train-subset 4096 --test-subset 1024 --epochs 2 --seed 5 --init kaiming --metrics "$work/$m-bf16.jsonl"
  grep -h "epoch 2/2\|images/s" "$work/train-$m-bf16.log" | tail -2 | sed 's/^/    /'
  check "train-$m-bf16-learns" 30 python3 "$src/test/tools/dpc/Inputs/check_metrics.py" "$work/$m-bf16.jsonl" --epochs 2 --loss-decreases
done
# Step graphs: dpc-run replays each train step as a CUDA graph; kernel by
# kernel (DPC_CUDA_GRAPHS=0) the same run gives the same bits. cuDNN's
# heuristics choose the convolution algorithms in both runs: choices by
# timing may differ between two processes (on 2026-11-28 LeNet's two runs
# parted in their second epoch, the MLP's were equal).
for m in mlp256 lenet256; do
  for mode in graphs streams; do
    graphs=$([[ $mode == graphs ]] && echo 1 || echo 0)
    check "train-$m-$mode" 90 env DPC_CUDA_GRAPHS=$graphs DPC_CUDNN_ALGORITHMS=heuristic dpc-run "$plans/$m-cuda.plan" --data "$fm" --epochs 2 --seed 5 --metrics "$work/$m-$mode.jsonl"
  done
  check "graphs-$m-same" 30 python3 "$src/test/tools/dpc/Inputs/check_metrics.py" "$work/$m-graphs.jsonl" --epochs 2 --same-as "$work/$m-streams.jsonl" --rtol 0
done
grep -h "not replayed as a graph" "$work"/train-*.log | sort -u | sed 's/^/    /'
if [[ -n ${QUICK:-} ]]; then
  [[ -n ${LOG_DIR:-} ]] && cp "$work"/*.log "$LOG_DIR"/ 2>/dev/null
  exit $failed
fi
for d in cpu cuda; do
  check "train-r18-$d" 120 dpc-run "$plans/r18b256-$d.plan" --data "$fm" --train-subset 2048 --test-subset 512 --epochs 2 --seed 5 --init kaiming --metrics "$work/r18-$d.jsonl"
  grep -h "epoch 2/2\|images/s" "$work/train-r18-$d.log" | tail -2 | sed 's/^/    /'
done
check train-r18-learns 30 python3 "$src/test/tools/dpc/Inputs/check_metrics.py" "$work/r18-cuda.jsonl" --epochs 2 --loss-decreases
check train-r18-cuda-full 90 dpc-run "$plans/r18b256-cuda.plan" --data "$fm" --epochs 3 --seed 5 --init kaiming
grep -h "epoch\|images/s\|accuracy" "$work/train-r18-cuda-full.log" | tail -5 | sed 's/^/    /'

if command -v compute-sanitizer >/dev/null; then
  check sanitize-memcheck 150 compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 9 dpc_cuda_test --gtest_brief=1 --gtest_filter='CudaStream*:CudaPlan*'
  check sanitize-racecheck 90 compute-sanitizer --tool racecheck --error-exitcode 9 dpc-compare-plans "$plans/lenet-cpu.plan" "$plans/lenet-cuda.plan" "${npy[@]}" --batch 12 --steps 2 --tolerance 1e-4
  check sanitize-initcheck 120 compute-sanitizer --tool initcheck --report-api-errors no --error-exitcode 9 dpc-run "$plans/lenet256-cuda.plan" --data "$fm" --steps 3 --epochs 1 --quiet
  check sanitize-train 90 compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 9 dpc-run "$plans/lenet256-cuda.plan" --data "$fm" --steps 3 --epochs 1 --quiet
fi
[[ -n ${LOG_DIR:-} ]] && cp "$work"/*.log "$LOG_DIR"/ 2>/dev/null
exit $failed
