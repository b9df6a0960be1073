#!/usr/bin/env python3
"""Models trained end to end: a GPT-2 language model and a U-Net segmenter.

Writes, as make_zoo.py writes a zoo model (both exports with their
parameters stripped and hash:0 initial weights; images.npy, labels.npy,
loss.npy and reference/: PyTorch's float64 SGD step at lr 0.1 with
PyTorch's float32 spread and the allowances), into ZOO/NAME:

  gpt2_lm  Transformers' own GPT2LMHeadModel (2 layers of width 32, 2
           heads, 32 positions, vocabulary 100, dropout off, the LM head
           tied to the token embedding) returning every position's logits
           [N, 32, 100], trained with the per-token cross-entropy and
           ignore_index -100 on the first 8 samples of
           tokenize_text.py's characters of /usr/share/common-licenses/GPL-3
           (Debian's base-files), padding included.
  unet     a small U-Net: two down blocks (two 3x3 convolutions with ReLU,
           2x2 max-pool), a bottleneck, two up blocks (one
           ConvTranspose2d, one bilinear Upsample, each concatenated with
           its skip), a 1x1 convolution to 3 classes: logits
           [N, 3, 16, 16], the per-pixel cross-entropy against
           make_shapes.py's masks [N, 16, 16].

The tests (test/reference/zoo/gpt2-lm.test and unet.test) check one dpc
step against these references and train both models on the data
tokenize_text.py and make_shapes.py make at test time.

Run from PyTorch 2's virtual environment (../shared/TOOLCHAIN.md), never CI:
  V/bin/python tools/reference/make_e2e.py --out test/reference/zoo \\
      [gpt2_lm] [unet]
"""
import argparse
import os
import sys

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_shapes  # noqa: E402
import make_zoo  # noqa: E402
import zoo_hf  # noqa: E402
import tokenize_text  # noqa: E402
from zoo_allowance import allowance  # noqa: E402

CORPUS = "/usr/share/common-licenses/GPL-3"
SEQ, VOCAB = 32, 100


def gpt2_lm():
    import transformers
    config = transformers.GPT2Config(
        vocab_size=VOCAB, n_positions=SEQ, n_embd=32, n_layer=2, n_head=2,
        resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
        bos_token_id=None, eos_token_id=None)
    return zoo_hf.TokenLogits(transformers.GPT2LMHeadModel(config))


def block(inputs, outputs):
    return nn.Sequential(nn.Conv2d(inputs, outputs, 3, padding=1), nn.ReLU(),
                         nn.Conv2d(outputs, outputs, 3, padding=1), nn.ReLU())


class UNet(nn.Module):
    def __init__(self, classes=make_shapes.CLASSES, width=8):
        super().__init__()
        self.down1 = block(1, width)
        self.down2 = block(width, 2 * width)
        self.bottom = block(2 * width, 4 * width)
        self.up2 = nn.ConvTranspose2d(4 * width, 2 * width, 2, stride=2)
        self.dec2 = block(4 * width, 2 * width)
        self.up1 = nn.Upsample(scale_factor=2, mode="bilinear",
                               align_corners=False)
        self.dec1 = block(3 * width, width)
        self.head = nn.Conv2d(width, classes, 1)

    def forward(self, x):
        skip1 = self.down1(x)
        skip2 = self.down2(F.max_pool2d(skip1, 2))
        y = self.bottom(F.max_pool2d(skip2, 2))
        y = self.dec2(torch.cat([self.up2(y), skip2], 1))
        y = self.dec1(torch.cat([self.up1(y), skip1], 1))
        return self.head(y)


def lm_loss(logits, targets):
    return F.cross_entropy(logits.permute(0, 2, 1), targets,
                           ignore_index=tokenize_text.IGNORE)


def lm_batch():
    with open(CORPUS, "rb") as f:
        x, y = tokenize_text.samples(f.read(), SEQ)
    return torch.from_numpy(x[:make_zoo.BATCH]), \
        torch.from_numpy(y[:make_zoo.BATCH].astype(np.int64))


def unet_batch():
    images, masks = make_shapes.shapes(make_zoo.BATCH, 16, seed=1)
    return torch.from_numpy(images), torch.from_numpy(masks.astype(np.int64))


# name: (constructor, batch, loss, input kind)
MODELS = {
    "gpt2_lm": (gpt2_lm, lm_batch, lm_loss, "tokens"),
    "unet": (UNet, unet_batch, F.cross_entropy, "images"),
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("models", nargs="*", default=list(MODELS))
    args = parser.parse_args()
    torch.set_num_threads(2)
    for name in args.models:
        make, make_batch, loss_fn, kind = MODELS[name]
        make_zoo.ZOO[name] = (make, kind)  # make_zoo.build's hash weights
        model = make_zoo.build(name)
        x, y = make_batch()
        f32 = make_zoo.step(model, x, y, torch.float32, loss_fn)
        f64 = make_zoo.step(model, x, y, torch.float64, loss_fn)
        allowances, note = allowance(model, x, y, loss_fn)
        directory = os.path.join(args.out, name)
        os.makedirs(directory, exist_ok=True)
        make_zoo.write_reference(directory, name, x, y, f32, f64, allowances)
        make_zoo.export_both(model, x[:2], directory, kind)
        print(f"{name}: loss {f32[0]:.6f} (float64 {f64[0]:.6f}); {note}",
              flush=True)


if __name__ == "__main__":
    main()
