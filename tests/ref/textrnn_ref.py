"""Reference for the recurrent classifiers on TextRNN's network
(src/models/baselines/textrnn*): the whole network in PyTorch from the C
model's tensors (their checkpoint names), word ids and lengths; saves the
logits and the gradients of sum(logits * R) w.r.t. every tensor.
usage: textrnn_ref.py DIR MODEL N PAIR T D H M K CELL POOL V CTX"""
import sys

from torchref import load, save, torch

d = sys.argv[1]
model = sys.argv[2]
N, PAIR, T, D, H, M, K = (int(a) for a in sys.argv[3:10])
CELL, POOL, V, CTX = sys.argv[10], sys.argv[11], int(sys.argv[12]), int(sys.argv[13])
R = N * (2 if PAIR else 1)
ids = load(d, "ids", (R, T)).long()
lengths = load(d, "lengths", (R,)).long()
r = load(d, "r", (N, K))
G = 3 if CELL == "gru" else 4
P = H if model == "rcnn" else 2 * H
F = 4 * P if PAIR else P
shapes = {"emb": (V, D), "mlp.w2": (K, M if M else F), "mlp.b2": (K,)}
if model == "rcnn":
    for side in ("left", "right"):
        shapes.update({"rcnn.%s.w_s" % side: (CTX, D), "rcnn.%s.w" % side: (CTX, CTX), "rcnn.%s.c0" % side: (CTX,)})
    shapes.update({"rcnn.y.w": (H, 2 * CTX + D), "rcnn.y.b": (H,)})
for sfx in ("", "_reverse") if model != "rcnn" else ():
    shapes.update({"%s.w_ih%s" % (CELL, sfx): (G * H, D), "%s.w_hh%s" % (CELL, sfx): (G * H, H),
                   "%s.b_ih%s" % (CELL, sfx): (G * H,), "%s.b_hh%s" % (CELL, sfx): (G * H,)})
if M:
    shapes.update({"mlp.w1": (M, F), "mlp.b1": (M,)})
if POOL == "attention":
    shapes["attn.w"] = (P,)
t = {name: load(d, name, shape).requires_grad_() for name, shape in shapes.items()}

valid = torch.arange(T)[None, :] < lengths[:, None]          # (R, T)
x = t["emb"][ids]


def rcnn_pool():
    """Lai et al. eq. 1-7, word by word: c_l(w_i) = tanh(W_l c_l(w_{i-1}) + W_sl e(w_{i-1}))."""
    rows = []
    for b in range(R):
        n, e = int(lengths[b]), x[b]
        left, c = [], t["rcnn.left.c0"]
        for i in range(n):
            left.append(c)
            c = torch.tanh(t["rcnn.left.w"] @ c + t["rcnn.left.w_s"] @ e[i])
        right, c = [None] * n, t["rcnn.right.c0"]
        for i in reversed(range(n)):
            right[i] = c
            c = torch.tanh(t["rcnn.right.w"] @ c + t["rcnn.right.w_s"] @ e[i])
        ys = [torch.tanh(t["rcnn.y.w"] @ torch.cat([left[i], e[i], right[i]]) + t["rcnn.y.b"]) for i in range(n)]
        rows.append(torch.stack(ys).max(0).values)
    return torch.stack(rows)


def birnn_pool():
    rnn = (torch.nn.GRU if CELL == "gru" else torch.nn.LSTM)(D, H, batch_first=True, bidirectional=True)
    for sfx in ("", "_reverse"):
        for w in ("w_ih", "w_hh", "b_ih", "b_hh"):
            attr = w.replace("w_", "weight_").replace("b_", "bias_") + "_l0" + sfx
            delattr(rnn, attr)
            setattr(rnn, attr, t["%s.%s%s" % (CELL, w, sfx)])   # the leaf itself, so its .grad fills

    packed = torch.nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
    out, _ = rnn(packed)
    h, _ = torch.nn.utils.rnn.pad_packed_sequence(out, batch_first=True, total_length=T)
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
    return pooled


pooled = rcnn_pool() if model == "rcnn" else birnn_pool()
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
