"""syncwise's models in PyTorch, from their descriptions alone: `sim --help`'s model list and
include/syncwise/ckpt.h's parameter layout (each layer's weights row-major [outputs x inputs],
then its biases; activations channels-last; 5x5 convolutions without padding; 2x2 max pooling
rounding down; leaky ReLU's slope 0.01). Every computation here is in float64."""
import re

import torch
import torch.nn.functional as F


def parse_spec(spec):
    name, _, rest = spec.partition(":")
    keys = dict(kv.split("=") for kv in rest.split(",") if kv)
    return name, keys


class Net:
    """A model's layers over a flat parameter vector (a leaf tensor, so autograd gives its
    gradient in the same layout)."""

    def __init__(self, spec, shape, classes, params):
        self.name, self.keys = parse_spec(spec)
        self.shape, self.classes = shape, classes  # (height, width, channels)
        self.theta = torch.tensor(params, dtype=torch.float64, requires_grad=True)
        self.at = 0

    def take(self, *dims):
        n = 1
        for d in dims:
            n *= d
        t = self.theta[self.at:self.at + n].reshape(*dims)
        self.at += n
        return t

    def dense(self, x, outputs):
        w = self.take(outputs, x.shape[1])
        return x @ w.T + self.take(outputs)

    def conv(self, x, filters):  # x: [N, C, H, W]
        w = self.take(filters, 5, 5, x.shape[1]).permute(0, 3, 1, 2)
        return F.conv2d(x, w, self.take(filters))

    def forward(self, x):  # x: [N, features] in the data's channels-last order
        self.at = 0
        act = F.relu
        if self.name == "mlp" and self.keys.get("act") == "leaky":
            act = lambda t: F.leaky_relu(t, 0.01)  # noqa: E731
        if self.name == "softmax":
            out = self.dense(x, self.classes)
        elif self.name == "mlp":
            units = [int(u) for u in re.split("/", self.keys.get("u", "256"))]
            layers = int(self.keys.get("h", "1"))
            units = units * layers if len(units) == 1 else units
            for u in units:
                x = act(self.dense(x, u))
            out = self.dense(x, self.classes)
        elif self.name == "cnn":
            h, w, c = self.shape
            x = x.reshape(-1, h, w, c).permute(0, 3, 1, 2)
            for filters in (int(self.keys["c1"]), int(self.keys["c2"])):
                x = F.max_pool2d(F.relu(self.conv(x, filters)), 2)
            x = x.permute(0, 2, 3, 1).reshape(x.shape[0], -1)  # (row, column, channel)
            out = self.dense(F.relu(self.dense(x, int(self.keys["f"]))), self.classes)
        else:
            raise ValueError("no reference for model '%s'" % self.name)
        if self.at != self.theta.numel():
            raise ValueError("%s: the layers take %d of %d parameters"
                             % (self.name, self.at, self.theta.numel()))
        return out

    def loss(self, x, y):
        return F.cross_entropy(self.forward(x), y)

    def accuracy(self, x, y):
        with torch.no_grad():
            return (self.forward(x).argmax(1) == y).double().mean().item()
