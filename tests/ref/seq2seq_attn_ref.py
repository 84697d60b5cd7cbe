"""Reference for src/models/baselines/seq2seq_attn*.c: the label decoder
written from torch ops (torch.nn.GRU for the encoder, torch.nn.GRUCell for the
decoder), one row at a time, on the weights the C test wrote as <name>.f32.
Dropout off.

Inputs: every parameter; ids (RS, T) padded word ids and lengths (RS) (RS = N
texts, or 2N for pairs: rows [0, N) text a, [N, 2N) text b); y_in, y_out
(TD, N) the decoder's input tokens and targets (-1: no loss).
Outputs: logits (TD, N, K + 1), loss (1) the mean cross-entropy over the
targets, and grad.<name>: the gradient of loss w.r.t. every parameter.
usage: seq2seq_attn_ref.py DIR V D H E A K PAIR N T TD"""
import sys

from torchref import load, save, torch

F_ = torch.nn.functional
d = sys.argv[1]
V, D, H, E, A, K, PAIR, N, T, TD = (int(a) for a in sys.argv[2:12])
S, VO = 2 * H, K + 1
RS = 2 * N if PAIR else N
shapes = [("emb", (V, D))]
for name, i, h in (("enc.fwd", D, H), ("enc.bwd", D, H), ("dec", E + 2 * H, S)):
    shapes += [(name + ".w_ih", (3 * h, i)), (name + ".w_hh", (3 * h, h)), (name + ".b_ih", (3 * h,)),
               (name + ".b_hh", (3 * h,))]
shapes += [("init.w", (S, H)), ("init.b", (S,)), ("att.q", (A, S)), ("att.k", (A, 2 * H)), ("att.b", (A,)),
           ("att.v", (A,)), ("label_emb", (VO, E)), ("out.w", (VO, S)), ("out.b", (VO,))]
P = {n: load(d, n, s).requires_grad_() for n, s in shapes}
ids = load(d, "ids", (RS, T)).long()
lengths = load(d, "lengths", (RS,)).long()
y_in = load(d, "y_in", (TD, N)).long()
y_out = load(d, "y_out", (TD, N)).long()


enc = torch.nn.GRU(D, H, batch_first=True, bidirectional=True)
dec = torch.nn.GRUCell(E + 2 * H, S)
MODULE = {}   # glue's name -> the module parameter that takes its place
for name, mod, sfx in (("enc.fwd", enc, "_l0"), ("enc.bwd", enc, "_l0_reverse"), ("dec", dec, "")):
    for k in ("w_ih", "w_hh", "b_ih", "b_hh"):
        p = getattr(mod, k.replace("w_", "weight_").replace("b_", "bias_") + sfx)
        with torch.no_grad():
            p.copy_(P[name + "." + k])
        MODULE[name + "." + k] = p


def encode(j):
    """Text j alone (no padding), both directions: (L, 2H)."""
    out, _ = enc(P["emb"][ids[j, :lengths[j]]][None])
    return out[0]


logits = []
for i in range(N):
    ha = encode(i)
    mem = torch.cat([ha, encode(N + i)], dim=0) if PAIR else ha
    keys = mem @ P["att.k"].t() + P["att.b"]
    s = torch.tanh(P["init.w"] @ ha[0, H:] + P["init.b"])
    row = []
    for t in range(TD):
        q = P["att.q"] @ s
        e = torch.tanh(q[None] + keys) @ P["att.v"]
        ctx = torch.softmax(e, 0) @ mem
        s = dec(torch.cat([P["label_emb"][y_in[t, i]], ctx])[None], s[None])[0]
        row.append(P["out.w"] @ s + P["out.b"])
    logits.append(torch.stack(row))
logits = torch.stack(logits, 1)   # (TD, N, VO)
loss = F_.cross_entropy(logits.reshape(-1, VO), y_out.reshape(-1), ignore_index=-1)
loss.backward()
save(d, "logits", logits)
save(d, "loss", loss.reshape(1))
for n, _ in shapes:
    save(d, "grad." + n, MODULE[n].grad if n in MODULE else P[n].grad)
