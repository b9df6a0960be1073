"""Writes two_inputs.onnx: a model with two graph inputs, token ids
`tokens` [N, 6] (an nn.Embedding, mean-pooled) and an image `image`
[N, 1, 8, 8] (a convolution), concatenated into a classifier. Exported by
PyTorch 2's legacy exporter in training form, as the README recommends.

usage: /work/venv/bin/python make_two_inputs.py OUT_DIR
"""
import sys

import torch
from torch import nn


class TwoInputs(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(20, 8)
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(8 + 4 * 4 * 4, 10)

    def forward(self, tokens, image):
        words = self.embed(tokens).mean(1)
        pixels = self.pool(self.conv(image).relu()).flatten(1)
        return self.fc(torch.cat([words, pixels], 1))


torch.manual_seed(0)
model = TwoInputs().train()
tokens = torch.zeros(2, 6, dtype=torch.int64)
image = torch.zeros(2, 1, 8, 8)
torch.onnx.export(model, (tokens, image), sys.argv[1] + "/two_inputs.onnx",
                  dynamo=False, opset_version=17,
                  training=torch.onnx.TrainingMode.TRAINING,
                  do_constant_folding=False,
                  input_names=["tokens", "image"], output_names=["logits"],
                  dynamic_axes={"tokens": {0: "batch"}, "image": {0: "batch"},
                                "logits": {0: "batch"}})
