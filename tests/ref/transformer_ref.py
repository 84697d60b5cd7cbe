"""Reference for src/models/baselines/transformer_clf*.c: a post-LN Transformer
encoder classifier written from torch ops on the weights the C test wrote as
<name>.f32 (glue's names; Linear layout (out, in); the attention's q, k, v
projections are the rows [0, C), [C, 2C), [2C, 3C) of one (3C, C) matrix;
GELU is the erf form). Dropout off (evaluation).

Inputs: every parameter; ids (B, T) word ids (position 0 is the [CLS] slot
when POOL is 1), lengths (B) tokens of each sentence (keys past it are
padding), r (N, K). B = N sentences, or 2N for pairs (rows [0, N) text a,
[N, 2N) text b).
Outputs: logits (N, K), and grad.<name>: the gradient of sum(logits * r)
w.r.t. every parameter.
usage: transformer_ref.py DIR V C NH FF L K POOL PAIR N T EPS"""
import math
import sys

from torchref import gelu, layer_norm, load, save, torch

d = sys.argv[1]
V, C, NH, FF, L, K, POOL, PAIR, N, T = (int(a) for a in sys.argv[2:12])
EPS = float(sys.argv[12])
B = 2 * N if PAIR else N
FC = 4 * C if PAIR else C
HS = C // NH
shapes = [("emb", (V, C))] + ([("cls", (C,))] if POOL else [])
for l in range(L):
    p = "layer%d." % l
    shapes += [(p + "attn.qkv.w", (3 * C, C)), (p + "attn.qkv.b", (3 * C,)), (p + "attn.o.w", (C, C)),
               (p + "attn.o.b", (C,)), (p + "attn.ln.g", (C,)), (p + "attn.ln.b", (C,)),
               (p + "ffn.in.w", (FF, C)), (p + "ffn.in.b", (FF,)), (p + "ffn.out.w", (C, FF)),
               (p + "ffn.out.b", (C,)), (p + "ffn.ln.g", (C,)), (p + "ffn.ln.b", (C,))]
shapes += [("out.w", (K, FC)), ("out.b", (K,))]
P = {n: load(d, n, s).requires_grad_() for n, s in shapes}
ids = load(d, "ids", (B, T)).long()
lengths = load(d, "lengths", (B,)).long()
r = load(d, "r", (N, K))


def linear(x, name):
    return x @ P[name + ".w"].t() + P[name + ".b"]


def sinusoids():
    pos = torch.zeros(T, C, dtype=torch.float64)
    for t in range(T):
        for i in range(0, C, 2):
            a = t / math.pow(10000.0, i / C)
            pos[t, i] = math.sin(a)
            if i + 1 < C:
                pos[t, i + 1] = math.cos(a)
    return pos.float()


x = P["emb"][ids] * math.sqrt(C)
if POOL:
    x = torch.cat([P["cls"].expand(B, 1, C), x[:, 1:]], dim=1)
h = x + sinusoids()[None]
keys = (torch.arange(T)[None, :] < lengths[:, None])[:, None, None, :]
for l in range(L):
    p = "layer%d." % l
    qkv = linear(h, p + "attn.qkv")
    q, k, v = (qkv[..., i * C:(i + 1) * C].reshape(B, T, NH, HS).transpose(1, 2) for i in range(3))
    s = (q @ k.transpose(-1, -2) / math.sqrt(HS)).masked_fill(~keys, float("-inf"))
    ctx = (torch.softmax(s, dim=-1) @ v).transpose(1, 2).reshape(B, T, C)
    h = layer_norm(h + linear(ctx, p + "attn.o"), P[p + "attn.ln.g"], P[p + "attn.ln.b"], EPS)
    f = linear(gelu(linear(h, p + "ffn.in")), p + "ffn.out")
    h = layer_norm(h + f, P[p + "ffn.ln.g"], P[p + "ffn.ln.b"], EPS)
if POOL:
    enc = h[:, 0]
else:
    real = (torch.arange(T)[None, :] < lengths[:, None]).float()[..., None]
    enc = (h * real).sum(1) / lengths[:, None].float()
if PAIR:
    u, v = enc[:N], enc[N:]
    feat = torch.cat([u, v, (u - v).abs(), u * v], dim=1)
else:
    feat = enc
logits = linear(feat, "out")
(logits * r).sum().backward()
save(d, "logits", logits)
for n, _ in shapes:
    save(d, "grad." + n, P[n].grad)
