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
