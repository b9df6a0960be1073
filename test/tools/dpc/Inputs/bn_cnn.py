"""A small CNN with batch norm: the PyTorch module of bn_cnn_*.onnx."""
from torch import nn


class BnCnn(nn.Module):
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
