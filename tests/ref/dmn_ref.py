"""Reference for src/models/baselines/dmn*.c: the Dynamic Memory Network
(Kumar et al. 2016) from torch ops (torch.gru_cell, PyTorch's GRUCell), one
row at a time, on the weights the C test wrote as <name>.f32. Dropout off.

Inputs: every parameter; ids (R, T) word ids, lens (R) (a text's words are
ids[j, :lens[j]]), fpos (N, T) each row's fact positions into its text a
(-1 after the last), r (N, K). R = N texts, or 2N for pairs (rows [0, N)
text a, [N, 2N) text b, the question).
Outputs: logits (N, K), and grad.<name>: the gradient of sum(logits * r)
w.r.t. every parameter.
usage: dmn_ref.py DIR V D H A P K PAIR N T"""
import sys

from torchref import load, save, torch

d = sys.argv[1]
V, D, H, A, P, K, PAIR, N, T = (int(a) for a in sys.argv[2:11])
R = 2 * N if PAIR else N
shapes = [("emb", (V, D))]
if not PAIR:
    shapes.append(("query", (H,)))


def gru_shapes(name, C):
    return [(name + ".w_ih", (3 * H, C)), (name + ".w_hh", (3 * H, H)), (name + ".b_ih", (3 * H,)),
            (name + ".b_hh", (3 * H,))]


shapes += gru_shapes("in", D)
shapes += [("gate.w1", (A, 4 * H)), ("gate.b1", (A,)), ("gate.w2", (1, A)), ("gate.b2", (1,))]
shapes += gru_shapes("episode", H) + gru_shapes("memory", H)
shapes += [("out.w", (K, 2 * H)), ("out.b", (K,))]
Pm = {n: load(d, n, s).requires_grad_() for n, s in shapes}
ids = load(d, "ids", (R, T)).long()
lens = load(d, "lens", (R,)).long()
fpos = load(d, "fpos", (N, T)).long()
r = load(d, "r", (N, K))


def cell(name, x, h):
    return torch.gru_cell(x[None], h[None], Pm[name + ".w_ih"], Pm[name + ".w_hh"], Pm[name + ".b_ih"],
                          Pm[name + ".b_hh"])[0]


def encode(j):
    """The input GRU's states over text j, from zero."""
    h, out = torch.zeros(H), []
    for t in range(lens[j]):
        h = cell("in", Pm["emb"][ids[j, t]], h)
        out.append(h)
    return out


logits = []
for n in range(N):
    states = encode(n)
    c = torch.stack([states[p] for p in fpos[n] if p >= 0])
    if PAIR:
        qs = encode(N + n)
        q = qs[-1] if qs else torch.zeros(H)
    else:
        q = Pm["query"]
    m = q
    for _ in range(P):
        z = torch.cat([c * q, c * m, (c - q).abs(), (c - m).abs()], dim=1)
        g = torch.sigmoid(torch.tanh(z @ Pm["gate.w1"].t() + Pm["gate.b1"]) @ Pm["gate.w2"].t() + Pm["gate.b2"])
        h = torch.zeros(H)
        for t in range(c.shape[0]):
            h = g[t] * cell("episode", c[t], h) + (1 - g[t]) * h
        m = cell("memory", h, m)
    logits.append(torch.cat([m, q]) @ Pm["out.w"].t() + Pm["out.b"])
logits = torch.stack(logits)
(logits * r).sum().backward()
save(d, "logits", logits)
for n, _ in shapes:
    save(d, "grad." + n, Pm[n].grad)
