"""The PyTorch modules of the export tests' models (make_export_models.py)."""
import torch
from torch import nn


class BnCnn(nn.Module):
    """A small CNN with batch norm: bn_cnn_*.onnx."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(16)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(16 * 7 * 7, 10)

    def forward(self, x):
        x = self.pool(self.bn1(self.conv1(x)).relu())
        x = self.pool(self.bn2(self.conv2(x)).relu())
        return self.fc(x.flatten(1))


class DropMlp(nn.Module):
    """An MLP with dropout: drop_mlp_*.onnx. In place, PyTorch 2's exporter
    writes the dropout as random ops instead of a Dropout node."""

    def __init__(self, inplace=False):
        super().__init__()
        self.fc1 = nn.Linear(784, 32)
        self.drop = nn.Dropout(0.2, inplace=inplace)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        return self.fc2(self.drop(self.fc1(x.flatten(1)).relu()))


class OpsNet(nn.Module):
    """Operators whose ONNX form changes with the opset: ops_net_*.onnx
    (make_opset_models.py)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 8, 3, padding=1)
        self.pool = nn.MaxPool2d(4)
        self.fc1 = nn.Linear(4 * 7 * 7, 24)
        self.drop = nn.Dropout(0.1)
        self.fc2 = nn.Linear(24, 10)

    def forward(self, x):
        a, b = self.conv(x).split([4, 4], dim=1)  # Split
        h = self.pool(a * torch.sigmoid(b))
        h = h - h.mean(dim=(2, 3), keepdim=True)  # ReduceMean
        h = nn.functional.gelu(self.fc1(h.flatten(1)))
        h = self.drop(h).unsqueeze(1).squeeze(1)
        return torch.log_softmax(self.fc2(h), dim=-1)
