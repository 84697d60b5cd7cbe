"""torchref.py — helpers shared by the PyTorch reference scripts: tensors travel as raw
float32 files <dir>/<name>.f32 (see tests/torchref.h). Exit status 77 means torch
is missing, so the C test skips instead of failing."""
import os
import sys

try:
    import numpy as np
    import torch
except ImportError:
    sys.exit(77)

torch.set_num_threads(1)


def load(d, name, shape):
    a = np.fromfile(os.path.join(d, name + ".f32"), dtype="<f4")
    return torch.from_numpy(a.reshape(shape).copy())


def save(d, name, t):
    t.detach().contiguous().numpy().astype("<f4").tofile(os.path.join(d, name + ".f32"))


def layer_norm(x, g, b, eps=1e-12):
    """BERT's LayerNorm over the last dimension (biased variance, eps 1e-12)."""
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)
    return (x - mean) / torch.sqrt(var + eps) * g + b


def gelu(x):
    """The exact (erf) GELU."""
    return 0.5 * x * (1.0 + torch.erf(x / 1.4142135623730951))
