#!/usr/bin/env bash
# Writes the fuzz targets' seed corpora (corpus/TARGET) from the repo's own
# small models and data, with plans and checkpoints made by a build's dpc:
#   fuzz/make_seeds.sh BUILD_DIR
# Small files on purpose: libFuzzer mutates every byte of a seed, and a
# seed of a few KB reaches every section of its format.
set -euo pipefail

fuzz=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$fuzz")
dpc=${1:?usage: make_seeds.sh BUILD_DIR}/bin/dpc
ref=$root/test/reference
fmnist=/usr/share/datasets/fashion-mnist
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
corpus=$fuzz/corpus
rm -rf "$corpus"
mkdir -p "$corpus"/{onnx-import,plan-loader,checkpoint,npy,idx}
# The compile target starts from the import target's models.
ln -s onnx-import "$corpus/onnx-compile"

# ONNX: convolution, batch norm, pooling, padding; token inputs with an
# embedding and shape arithmetic; dropout and stochastic depth (random
# ops); slices; and a model whose weights were stripped into an external
# file that is not there.
cp "$ref/convbn/model.onnx" "$corpus/onnx-import/convbn.onnx"
cp "$ref/embedding/model.onnx" "$corpus/onnx-import/embedding.onnx"
cp "$ref/meanpool/model.onnx" "$corpus/onnx-import/meanpool.onnx"
cp "$ref/stochdepth/model.onnx" "$corpus/onnx-import/stochdepth.onnx"
cp "$ref/slice_legacy/model.onnx" "$corpus/onnx-import/slice_legacy.onnx"
cp "$ref/zoo/mlp_layernorm/legacy.onnx" \
  "$corpus/onnx-import/mlp_layernorm_stripped.onnx"

# Plans: one device and two (replicas, collectives), SGD with momentum and
# AdamW (optimizer state), token inputs.
"$dpc" compile "$ref/convbn/model.onnx" --batch 4 --optimizer sgd \
  --momentum 0.9 -o "$corpus/plan-loader/convbn_1dev.plan"
"$dpc" compile "$ref/convbn/model.onnx" --batch 5 --devices cpu:0,cpu:1 \
  --optimizer adamw -o "$corpus/plan-loader/convbn_2dev_adamw.plan"
"$dpc" compile "$ref/meanpool/model.onnx" --batch 4 \
  -o "$corpus/plan-loader/meanpool_tokens.plan"

# Checkpoints: at an epoch's end and mid-epoch (a partial epoch's sums).
python3 - "$ref/convbn" "$work" <<'PY'
import sys
import numpy as np
src, out = sys.argv[1], sys.argv[2]
x = np.load(src + "/images.npy")[:8]
y = np.load(src + "/labels.npy")[:8]
np.save(out + "/x.npy", np.concatenate([x, x]))
np.save(out + "/y.npy", np.concatenate([y, y]).astype(np.int64))
PY
data=npy:$work/x.npy,$work/y.npy
"$dpc" run "$corpus/plan-loader/convbn_1dev.plan" --data "$data" --epochs 1 \
  --checkpoint "$work/epoch" >/dev/null
cp "$work/epoch/checkpoint.dpcckpt" "$corpus/checkpoint/epoch_end.dpcckpt"
"$dpc" run "$corpus/plan-loader/convbn_2dev_adamw.plan" --data "$data" \
  --epochs 2 --steps 3 --checkpoint "$work/mid" >/dev/null
cp "$work/mid/checkpoint.dpcckpt" "$corpus/checkpoint/mid_epoch.dpcckpt"

# Data: the first three Fashion-MNIST images and labels, plain and gzip
# (IDX), and .npy arrays of each kind the loader converts.
python3 - "$fmnist" "$corpus" <<'PY'
import gzip, io, sys
import numpy as np
fmnist, corpus = sys.argv[1], sys.argv[2]
sep = b"\n--dpc-fuzz-next-file--\n"  # fuzz/FuzzInput.h's kFileSeparator
images = gzip.open(fmnist + "/t10k-images-idx3-ubyte.gz").read()
labels = gzip.open(fmnist + "/t10k-labels-idx1-ubyte.gz").read()
n, size = 3, 28 * 28
images = images[:4] + n.to_bytes(4, "big") + images[8:16 + n * size]
labels = labels[:4] + n.to_bytes(4, "big") + labels[8:8 + n]
open(corpus + "/idx/plain", "wb").write(images + sep + labels)
gz = lambda b: gzip.compress(b, mtime=0)
open(corpus + "/idx/gzip", "wb").write(gz(images) + sep + gz(labels))

def npy(array):
    out = io.BytesIO()
    np.save(out, array)
    return out.getvalue()

rng = np.random.default_rng(0)
pixels = np.frombuffer(images[16:], np.uint8).reshape(n, 28, 28)
cases = {  # name: (format selector, images, labels); see NpyFuzzer.cpp
    "u1_nhw": (0, pixels, np.array([9, 2, 1], np.int64)),
    "f4_nchw": (1, pixels[:, None] / np.float32(255), np.arange(3)),
    "f8_nhwc": (2, rng.random((2, 4, 4, 3)), np.array([1, 0], np.int32)),
    "f4_normalized": (3, rng.random((2, 3, 4, 4), np.float32),
                      np.array([3, 4], np.uint8)),
    "i8_tokens": (4, rng.integers(0, 50, (2, 16)), np.array([0, 7])),
}
for name, (selector, x, y) in cases.items():
    open(f"{corpus}/npy/{name}", "wb").write(
        bytes([selector]) + npy(x) + sep + npy(y))
PY
du -sh "$corpus"/*
