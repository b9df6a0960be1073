#!/usr/bin/env bash
# Packs what tools/gpu/check.sh needs on a GPU machine that has the CUDA
# libraries (cuBLAS, cuDNN 9, NCCL 2: a toolkit or PyTorch's pip wheels) but
# no MLIR, no oneDNN and no network: the CUDA build's runtime binaries, the
# non-system libraries they load (compressed), plans compiled here for
# cuda:0 and cpu:0, and small data sets. The zoo's references travel with
# the source tree.
#
#   tools/gpu/pack.sh [OUT]        # default .gpu (ignored by git)
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${DPC_BUILD_DIR:-$src/build}
out=${1:-$src/.gpu}
bin=$build/bin
models=$build/models
[[ -x $bin/dpc-cuda-probe ]] || {
  echo "pack.sh: $bin has no CUDA build (dpc-cuda-probe missing)" >&2; exit 1; }
rm -rf "$out" && mkdir -p "$out/plans" "$out/data" "$out/stage/bin" "$out/stage/lib"

tools=(dpc-run dpc_cuda_test dpc-cuda-probe dpc-check-reference dpc-compare-plans)
for t in "${tools[@]}"; do cp "$bin/$t" "$out/stage/bin/"; done
# Everything they load except glibc's and the C++ runtime (the GPU machine
# has newer ones) and CUDA's large libraries (the GPU machine's own are
# used); the CUDA runtime travels since the binaries were built against it.
for t in "${tools[@]}"; do ldd "$bin/$t"; done | awk '$3 ~ /^\// {print $3}' |
  sort -u | grep -Ev '/(libc|libm|libdl|libpthread|librt|libstdc\+\+|libgcc_s)\.so' |
  grep -Ev '/lib(cublas|cublasLt|cudnn|nccl)\.so' |
  while read -r lib; do cp -L "$lib" "$out/stage/lib/"; done
tar -C "$out/stage" -cJf "$out/runtime.tar.xz" bin lib
rm -rf "$out/stage"/*

dpc=$bin/dpc
compile() { "$dpc" compile "$@"; }
# ResNet-18's 45 MB of weights would not travel: its plans hold zeros for
# the convolution and linear weights (they compress to nothing; batch norm
# keeps its parameters) and the checks start those from --init kaiming.
python=/usr/bin/python3 # Debian's, with python3-onnx and numpy
zeroed=$out/stage/resnet18-zeros.onnx
"$python" - "$models/resnet18.onnx" "$zeroed" <<'PY'
import sys, numpy, onnx
from onnx import numpy_helper
model = onnx.load(sys.argv[1])
for i, t in enumerate(model.graph.initializer):
    a = numpy_helper.to_array(t)
    if a.dtype.kind == "f" and a.ndim >= 2:
        model.graph.initializer[i].CopyFrom(
            numpy_helper.from_array(numpy.zeros_like(a), t.name))
onnx.save(model, sys.argv[2])
PY
# tools/gpu/check.sh runs test/reference/cuda.test's checks with these.
compile "$src/test/reference/mlp/model.onnx" --batch 8 --devices cuda:0 -o "$out/plans/ref-mlp.plan"
compile "$src/test/reference/lenet/model.onnx" --batch 8 --devices cuda:0 -o "$out/plans/ref-lenet.plan"
for d in cpu cuda; do
  compile "$models/lenet.onnx" --batch 12 --momentum 0.9 --devices $d:0 -o "$out/plans/lenet-$d.plan"
  compile "$models/mlp.onnx" --batch 12 --optimizer adamw --devices $d:0 -o "$out/plans/mlp-adamw-$d.plan"
  compile "$zeroed" --batch 12 --momentum 0.9 --devices $d:0 -o "$out/plans/r18-$d.plan"
  # The CPU's two convolution algorithms: how far apart two correct plans
  # of this model are after a step (cancellation in batch norm's gradients).
  [[ $d == cpu ]] && compile "$zeroed" --batch 12 --momentum 0.9 --conv-algorithm direct -o "$out/plans/r18-cpu-direct.plan"
  # Training on Fashion-MNIST, batch 256.
  compile "$models/mlp.onnx" --batch 256 --devices $d:0 -o "$out/plans/mlp256-$d.plan"
  compile "$models/lenet_relu.onnx" --batch 256 --devices $d:0 -o "$out/plans/lenet256-$d.plan"
  compile "$zeroed" --batch 256 --momentum 0.9 --devices $d:0 -o "$out/plans/r18b256-$d.plan"
done
compile "$models/mlp.onnx" --batch 8 --devices cuda:63 -o "$out/plans/far.plan"
# Sharding on two GPUs (check.sh runs them where there are two): every
# stage's NCCL collectives against the replicated plan on two CPU devices.
compile "$models/lenet.onnx" --batch 12 --split 5,7 --optimizer adamw --devices cpu:0,cpu:1 -o "$out/plans/shard-none-cpu.plan"
for s in none optimizer gradients parameters; do
  compile "$models/lenet.onnx" --batch 12 --split 5,7 --optimizer adamw --devices cuda:0,cuda:1 --shard $s --bucket-mb 0.05 -o "$out/plans/shard-$s-cuda.plan"
done
# Every zoo model's one-step reference check, on cuda:0 (their exports keep
# zeros in an external file, as zoo.test has it).
truncate -s 32M "$out/stage/stripped.bin"
for m in "$src"/test/reference/zoo/*/; do
  m=$(basename "$m")
  cp "$src/test/reference/zoo/$m/dynamo.onnx" "$out/stage/$m.onnx"
  compile "$out/stage/$m.onnx" --batch 8 --devices cuda:0 \
    -o "$out/plans/zoo-$m.plan" 2>"$out/plans/zoo-$m.err" ||
    echo "pack.sh: zoo $m does not compile for cuda:0: $(head -1 "$out/plans/zoo-$m.err")" >&2
done
# tools/gpu/bench.py's: the zoo's GPT-like model at batch 256, and each
# benchmark plan's planned peak memory.
compile "$out/stage/gpt_tiny.onnx" --batch 256 --devices cuda:0 -o "$out/plans/gpt256-cuda.plan"
# The same four in TF32 (bench.py's dpc-tf32).
compile "$models/mlp.onnx" --batch 256 --devices cuda:0 --precision tf32 -o "$out/plans/mlp256-cuda-tf32.plan"
compile "$models/lenet_relu.onnx" --batch 256 --devices cuda:0 --precision tf32 -o "$out/plans/lenet256-cuda-tf32.plan"
compile "$zeroed" --batch 256 --momentum 0.9 --devices cuda:0 --precision tf32 -o "$out/plans/r18b256-cuda-tf32.plan"
compile "$out/stage/gpt_tiny.onnx" --batch 256 --devices cuda:0 --precision tf32 -o "$out/plans/gpt256-cuda-tf32.plan"
# And in bf16 (bench.py's dpc-bf16, check.sh's bf16 checks).
compile "$models/mlp.onnx" --batch 256 --devices cuda:0 --precision bf16 -o "$out/plans/mlp256-cuda-bf16.plan"
compile "$models/lenet_relu.onnx" --batch 256 --devices cuda:0 --precision bf16 -o "$out/plans/lenet256-cuda-bf16.plan"
compile "$zeroed" --batch 256 --momentum 0.9 --devices cuda:0 --precision bf16 -o "$out/plans/r18b256-cuda-bf16.plan"
compile "$out/stage/gpt_tiny.onnx" --batch 256 --devices cuda:0 --precision bf16 -o "$out/plans/gpt256-cuda-bf16.plan"
for d in cpu cuda; do
  compile "$models/lenet_relu.onnx" --batch 12 --momentum 0.9 --devices $d:0 --precision bf16 -o "$out/plans/lenet-bf16-$d.plan"
done
for p in mlp256-cuda lenet256-cuda r18b256-cuda gpt256-cuda; do
  for suffix in "" -tf32 -bf16; do
    "$dpc" inspect "$out/plans/$p$suffix.plan" --json >"$out/plans/$p$suffix.plan.inspect.json"
  done
done

"$python" - "$out/data" <<'PY'
import sys, numpy as n
r = n.random.default_rng(0)
n.save(sys.argv[1] + "/images.npy", r.random((30, 1, 28, 28), dtype=n.float32))
n.save(sys.argv[1] + "/labels.npy", r.integers(0, 10, 30).astype(n.int32))
# The GPT's tokens (make_zoo.py: vocabulary 100, 16 positions).
n.save(sys.argv[1] + "/tokens.npy", r.integers(0, 100, (256 * 40, 16)))
n.save(sys.argv[1] + "/token-labels.npy", r.integers(0, 10, 256 * 40).astype(n.int32))
PY
# Fashion-MNIST's test set (10000 images) stands in for the training set:
# with the training set (26 MB) the working tree the device tool sends (the
# repository with its .git) passes its 64 MiB.
cp /usr/share/datasets/fashion-mnist/t10k-*-ubyte.gz "$out/data/"
rm -f "$out"/plans/*.err
tar -C "$out" -cJf "$out/plans.tar.xz" plans
rm -rf "$out/stage" "$out/plans"
du -sh "$out"
