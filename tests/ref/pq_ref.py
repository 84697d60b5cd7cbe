"""Reference for src/models/baselines/fasttext_pq.c, in numpy: product
quantization's encode and decode with given centroids, and the k-means
fixed point of well separated groups (their means).
  encode:  x (N, DIM) cut into sub-vectors of DSUB values (the last one
           DIM % DSUB when that is not 0); each sub-vector's code is its
           nearest centroid (squared L2, lowest index on ties) among KSUB of
           that subspace; centroids are stored subspace after subspace
           (KSUB * d values each, d that subspace's width). Outputs codes
           (N, NSUB) as floats and decoded (N, DIM) = ALPHA * the centroids.
  means:   points (N, D) with group (N) in 0..KSUB-1: means (KSUB, D).
usage: pq_ref.py DIR encode N DIM DSUB KSUB ALPHA | pq_ref.py DIR means N D KSUB"""
import sys

import numpy as np
from torchref import load, save, torch

d, kind = sys.argv[1], sys.argv[2]
if kind == "encode":
    N, DIM, DSUB, KSUB = map(int, sys.argv[3:7])
    alpha = float(sys.argv[7])
    x = load(d, "x", (N, DIM)).numpy().astype(np.float64)
    widths = [DSUB] * (DIM // DSUB) + ([DIM % DSUB] if DIM % DSUB else [])
    cents = load(d, "centroids", (KSUB * DIM,)).numpy().astype(np.float64)
    codes = np.zeros((N, len(widths)))
    out = np.zeros((N, DIM))
    off, col = 0, 0
    for m, w in enumerate(widths):
        c = cents[off:off + KSUB * w].reshape(KSUB, w)
        sub = x[:, col:col + w]
        dist = ((sub[:, None, :] - c[None, :, :]) ** 2).sum(-1)
        k = dist.argmin(1)   # first minimum: the lowest index on ties
        codes[:, m] = k
        out[:, col:col + w] = alpha * c[k]
        off += KSUB * w
        col += w
    save(d, "codes", torch.from_numpy(codes.astype(np.float32)))
    save(d, "decoded", torch.from_numpy(out.astype(np.float32)))
elif kind == "means":
    N, D, KSUB = map(int, sys.argv[3:6])
    p = load(d, "points", (N, D)).numpy().astype(np.float64)
    g = load(d, "group", (N,)).numpy().astype(np.int64)
    means = np.stack([p[g == k].mean(0) for k in range(KSUB)])
    save(d, "means", torch.from_numpy(means.astype(np.float32)))
else:
    sys.exit("unknown kind " + kind)
