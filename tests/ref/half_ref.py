"""Reference for src/core/half.c: float32 -> fp16 with numpy (round to nearest
even, overflow to inf, subnormals), float32 -> bfloat16 with torch, and every
fp16 bit pattern -> float32 with numpy. Bit patterns travel as float32 values
(all 16-bit integers are exact in float32).
usage: half_ref.py DIR N"""
import sys

from torchref import np, save, torch
import os

d, n = sys.argv[1], int(sys.argv[2])
x = np.fromfile(os.path.join(d, "x.f32"), dtype="<f4")
assert x.size == n
with np.errstate(over="ignore"):
    h16 = x.astype(np.float16).view(np.uint16).astype(np.float32)
b16 = torch.from_numpy(x.copy()).to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16).astype(np.float32)
up = np.arange(65536, dtype=np.uint16).view(np.float16).astype(np.float32)
save(d, "h16", torch.from_numpy(h16))
save(d, "b16", torch.from_numpy(b16))
save(d, "up", torch.from_numpy(up))
