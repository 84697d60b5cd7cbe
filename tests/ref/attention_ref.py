"""Reference for src/nn/attention.c with explicit torch ops: multi-head
softmax(q k^T / sqrt(HS) + mask) v with key lengths, a 0/1 key mask and causal
masking (query i sees keys j <= i + Tk - Tq), and with USE_ALIBI the ALiBi
penalty -alibi[h] * |i + Tk - Tq - j| on the scores (slopes read from DIR).
Saves out (B, Tq, C), the probabilities (B, NH, Tq, Tk) and the gradients of
sum(out * R) w.r.t. q, k, v.
usage: attention_ref.py DIR B TQ TK NH HS CAUSAL USE_LENGTHS USE_MASK USE_ALIBI"""
import math
import sys

from torchref import load, save, torch

d = sys.argv[1]
B, Tq, Tk, NH, HS, causal, use_len, use_mask, use_alibi = (int(a) for a in sys.argv[2:11])
C = NH * HS
q = load(d, "q", (B, Tq, C)).requires_grad_()
k = load(d, "k", (B, Tk, C)).requires_grad_()
v = load(d, "v", (B, Tk, C)).requires_grad_()
r = load(d, "r", (B, Tq, C))

allowed = torch.ones(B, 1, Tq, Tk, dtype=torch.bool)
j = torch.arange(Tk)
if use_len:
    lengths = load(d, "key_lengths", (B,)).long()
    allowed &= (j[None, :] < lengths[:, None])[:, None, None, :]
if use_mask:
    allowed &= (load(d, "key_mask", (B, Tk)) != 0)[:, None, None, :]
if causal:
    i = torch.arange(Tq)
    allowed &= (j[None, :] <= i[:, None] + Tk - Tq)[None, None]

heads = lambda t, T: t.view(B, T, NH, HS).transpose(1, 2)
scores = heads(q, Tq) @ heads(k, Tk).transpose(-1, -2) / math.sqrt(HS)
if use_alibi:
    dist = (torch.arange(Tq)[:, None] + Tk - Tq - torch.arange(Tk)[None, :]).abs()     # (Tq, Tk)
    scores = scores - load(d, "alibi", (NH,))[None, :, None, None] * dist[None, None]
p = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
out = (p @ heads(v, Tk)).transpose(1, 2).reshape(B, Tq, C)
(out * r).sum().backward()
save(d, "out", out)
save(d, "att", p)
save(d, "dq", q.grad)
save(d, "dk", k.grad)
save(d, "dv", v.grad)
