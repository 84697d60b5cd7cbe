"""Reference for the recurrent classifiers on TextRNN's network
(src/models/baselines/textrnn*): the whole network in PyTorch from the C
model's tensors (their checkpoint names), word ids and lengths; saves the
logits and the gradients of sum(logits * R) w.r.t. every tensor.
usage: textrnn_ref.py DIR MODEL N PAIR T D H M K CELL POOL V"""
import sys

from torchref import load, save, torch

d = sys.argv[1]
model = sys.argv[2]
N, PAIR, T, D, H, M, K = (int(a) for a in sys.argv[3:10])
CELL, POOL, V = sys.argv[10], sys.argv[11], int(sys.argv[12])
R = N * (2 if PAIR else 1)
ids = load(d, "ids", (R, T)).long()
lengths = load(d, "lengths", (R,)).long()
r = load(d, "r", (N, K))
G = 3 if CELL == "gru" else 4
P = 2 * H
F = 4 * P if PAIR else P
shapes = {"emb": (V, D), "mlp.w2": (K, M if M else F), "mlp.b2": (K,)}
for sfx in ("", "_reverse"):
    shapes.update({"%s.w_ih%s" % (CELL, sfx): (G * H, D), "%s.w_hh%s" % (CELL, sfx): (G * H, H),
                   "%s.b_ih%s" % (CELL, sfx): (G * H,), "%s.b_hh%s" % (CELL, sfx): (G * H,)})
if M:
    shapes.update({"mlp.w1": (M, F), "mlp.b1": (M,)})
if POOL == "attention":
    shapes["attn.w"] = (P,)
t = {name: load(d, name, shape).requires_grad_() for name, shape in shapes.items()}

rnn = (torch.nn.GRU if CELL == "gru" else torch.nn.LSTM)(D, H, batch_first=True, bidirectional=True)
for sfx in ("", "_reverse"):
    for w in ("w_ih", "w_hh", "b_ih", "b_hh"):
        attr = w.replace("w_", "weight_").replace("b_", "bias_") + "_l0" + sfx
        delattr(rnn, attr)
        setattr(rnn, attr, t["%s.%s%s" % (CELL, w, sfx)])   # the leaf itself, so its .grad fills

x = t["emb"][ids]
packed = torch.nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
out, _ = rnn(packed)
h, _ = torch.nn.utils.rnn.pad_packed_sequence(out, batch_first=True, total_length=T)
valid = torch.arange(T)[None, :] < lengths[:, None]          # (R, T)
if POOL == "max":
    pooled = h.masked_fill(~valid[:, :, None], float("-inf")).max(1).values
elif POOL == "mean":
    pooled = h.sum(1) / lengths[:, None].float()
elif POOL == "last":
    idx = torch.arange(R)
    pooled = torch.cat([h[idx, lengths - 1, :H], h[:, 0, H:]], 1)
else:   # Zhou et al.: M = tanh(H), alpha = softmax(w^T M), h* = tanh(H alpha)
    scores = (torch.tanh(h) @ t["attn.w"]).masked_fill(~valid, float("-inf"))
    alpha = torch.softmax(scores, 1)
    pooled = torch.tanh((alpha[:, :, None] * h).sum(1))
if PAIR:
    u, v = pooled[:N], pooled[N:]
    feat = torch.cat([u, v, (u - v).abs(), u * v], 1)
else:
    feat = pooled
if M:
    feat = torch.tanh(feat @ t["mlp.w1"].T + t["mlp.b1"])
logits = feat @ t["mlp.w2"].T + t["mlp.b2"]
(logits * r).sum().backward()
save(d, "logits", logits)
for name, p in t.items():
    save(d, "d." + name, p.grad if p.grad is not None else torch.zeros_like(p))
