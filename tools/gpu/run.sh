#!/usr/bin/env bash
# One visit to a GPU machine: the side-by-side benchmark (bench.py), a trace
# of ResNet-18's first steps on cuda:0, then the checks (check.sh), from
# tools/gpu/pack.sh's bundle; logs go to OUT (the device tool's $OUT).
# PROFILE=1 adds PyTorch's kernels per ResNet-18 step (profile_torch.py)
# and dpc's cuDNN algorithm ranking for each of its convolutions, FMA and
# TF32 math (PROFILE=dpc: the rankings only).
#
#   tools/gpu/run.sh [BUNDLE] [BENCH_ARGS...]   # default .gpu
set -uo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
bundle=$(cd "${1:-$src/.gpu}" && pwd)
shift || true
out=${OUT:-$(mktemp -d)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tar -C "$work" -xJf "$bundle/runtime.tar.xz"
tar -C "$work" -xJf "$bundle/plans.tar.xz"
ln -s "$bundle/data" "$work/data"
source "$src/tools/gpu/libs.sh"
export PATH=$work/bin:$PATH PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm --format=csv,noheader
t0=$SECONDS
python3 "$src/tools/gpu/bench.py" "$work" --json "$out/bench.json" "$@" 2>&1 | tee "$out/bench.log"
echo "bench: $((SECONDS - t0)) s"
trace() { # PLAN INIT DATA: a Chrome trace of the plan's first 20 steps
  dpc-run "$work/plans/$1-cuda.plan" --data "$3" --steps 20 --init "$2" \
    --trace "$out/trace-$1.json" --quiet || echo "trace of $1 failed"
}
d=$work/data fm="idx:$d/t10k-images-idx3-ubyte.gz,$d/t10k-labels-idx1-ubyte.gz"
trace r18b256 kaiming "$fm"
trace lenet256 model "$fm"
trace gpt256 hash:0 "npy:$d/tokens.npy,$d/token-labels.npy"
gzip "$out"/trace-*.json
if [[ -n ${PROFILE:-} ]]; then
  { [[ $PROFILE == dpc ]] || python3 "$src/tools/gpu/profile_torch.py"
    for plan in r18b256-cuda r18b256-cuda-tf32; do
      echo "dpc's cuDNN algorithms for ResNet-18 ($plan):"
      DPC_CUDA_LOG_ALGORITHMS=1 dpc-run "$work/plans/$plan.plan" \
        --data "$fm" --steps 2 --epochs 1 --init kaiming --quiet
    done
  } >"$out/profile.log" 2>&1 || echo "profile failed"
  grep -v "^dpc: cuda:0:   " "$out/profile.log" | head -80
fi
mkdir -p "$out/check"
LOG_DIR=$out/check "$src/tools/gpu/check.sh" "$bundle" 2>&1 | tee "$out/check.log"
rc=${PIPESTATUS[0]}
tar -C "$out" -czf "$out/check-logs.tar.gz" check && rm -rf "$out/check"
echo "total: $((SECONDS - t0)) s"
exit "$rc"
