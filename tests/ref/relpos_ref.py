"""Reference for src/nn/relpos.c (through nn/attention.c) with explicit torch ops:
Shaw et al. relative attention with log-bucketed distances (Ji & Song's LPR),
written the direct way, with a (Tq, Tk, HS) gather of the tables:
    z_i = sum_j softmax_j((q_i . (k_j + aK[s(i,j)])) / sqrt(HS)) (v_j + aV[s(i,j)])
s(i,j) = sign(j - i') ceil(log_k(|j - i'| + 1)) clipped to [-S, S], i' = i + Tk - Tq.
Saves out (B, Tq, C) and the gradients of sum(out * R) w.r.t. q, k, v, aK, aV.
usage: relpos_ref.py DIR B TQ TK NH HS CAUSAL USE_LENGTHS BASE S USE_K USE_V"""
import math
import sys

from torchref import load, save, torch

d = sys.argv[1]
B, Tq, Tk, NH, HS, causal, use_len, base, S, use_k, use_v = (int(a) for a in sys.argv[2:13])
C = NH * HS
NB = 2 * S + 1


def bucket(dist):
    """Smallest e with base**e >= |dist| + 1, signed, clipped (computed on integers)."""
    if base <= 1 or dist == 0:
        return 0
    e = 0
    while base ** e < abs(dist) + 1 and e < S:
        e += 1
    return e if dist > 0 else -e


q = load(d, "q", (B, Tq, C)).requires_grad_()
k = load(d, "k", (B, Tk, C)).requires_grad_()
v = load(d, "v", (B, Tk, C)).requires_grad_()
ak = load(d, "ak", (NB, HS)).requires_grad_()
av = load(d, "av", (NB, HS)).requires_grad_()
r = load(d, "r", (B, Tq, C))

idx = torch.tensor([[bucket(j - (i + Tk - Tq)) + S for j in range(Tk)] for i in range(Tq)])
AK = ak[idx] if use_k else torch.zeros(Tq, Tk, HS)   # (Tq, Tk, HS)
AV = av[idx] if use_v else torch.zeros(Tq, Tk, HS)

allowed = torch.ones(B, 1, Tq, Tk, dtype=torch.bool)
j = torch.arange(Tk)
if use_len:
    lengths = load(d, "key_lengths", (B,)).long()
    allowed &= (j[None, :] < lengths[:, None])[:, None, None, :]
if causal:
    i = torch.arange(Tq)
    allowed &= (j[None, :] <= i[:, None] + Tk - Tq)[None, None]

heads = lambda t, T: t.view(B, T, NH, HS).transpose(1, 2)
qh, kh, vh = heads(q, Tq), heads(k, Tk), heads(v, Tk)
scores = (qh @ kh.transpose(-1, -2) + torch.einsum("bhid,ijd->bhij", qh, AK)) / math.sqrt(HS)
p = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
p = torch.nan_to_num(p)   # a query with no visible key: output 0, as in C
o = p @ vh + torch.einsum("bhij,ijd->bhid", p, AV)
out = o.transpose(1, 2).reshape(B, Tq, C)
(out * r).sum().backward()
save(d, "out", out)
save(d, "dq", q.grad)
save(d, "dk", k.grad)
save(d, "dv", v.grad)
save(d, "dak", ak.grad if ak.grad is not None else torch.zeros(NB, HS))
save(d, "dav", av.grad if av.grad is not None else torch.zeros(NB, HS))
