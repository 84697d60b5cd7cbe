"""Reference for the recurrent classifiers on TextRNN's network
(src/models/baselines/textrnn*): the whole network in PyTorch from the C
model's tensors (their checkpoint names), word ids and lengths; saves the
logits and the gradients of sum(logits * R) w.r.t. every tensor.
usage: textrnn_ref.py DIR MODEL N PAIR T D H M K CELL POOL V CTX [RS]
(CTX: RCNN's context size, HAN's attention size; RS: HAN's sentences in the
batch, their word counts in sents.f32 and each text's count in nsents.f32)"""
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
if model == "han":
    A = CTX
    for level, inp in (("word", D), ("sent", 2 * H)):
        for sfx in ("", "_reverse"):
            shapes.update({"han.%s.gru.w_ih%s" % (level, sfx): (3 * H, inp), "han.%s.gru.w_hh%s" % (level, sfx): (3 * H, H),
                           "han.%s.gru.b_ih%s" % (level, sfx): (3 * H,), "han.%s.gru.b_hh%s" % (level, sfx): (3 * H,)})
        shapes.update({"han.%s.att.w" % level: (A, 2 * H), "han.%s.att.b" % level: (A,), "han.%s.att.u" % level: (A,)})
for sfx in ("", "_reverse") if model not in ("rcnn", "han") else ():
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


def gru_of(prefix):
    rnn = torch.nn.GRU(t[prefix + ".w_ih"].shape[1], H, batch_first=True, bidirectional=True)
    for sfx in ("", "_reverse"):
        for w in ("w_ih", "w_hh", "b_ih", "b_hh"):
            attr = w.replace("w_", "weight_").replace("b_", "bias_") + "_l0" + sfx
            delattr(rnn, attr)
            setattr(rnn, attr, t["%s.%s%s" % (prefix, w, sfx)])
    return rnn


def han_attend(h, level):
    """Yang et al.: u = tanh(W h + b), alpha = softmax(u . u_w), sum alpha h (h: (steps, 2H))."""
    u = torch.tanh(h @ t["han.%s.att.w" % level].T + t["han.%s.att.b" % level])
    alpha = torch.softmax(u @ t["han.%s.att.u" % level], 0)
    return (alpha[:, None] * h).sum(0)


def han_pool():
    sents = load(d, "sents", (int(sys.argv[14]),)).long().tolist()
    nsents = load(d, "nsents", (R,)).long().tolist()
    words, sentence = gru_of("han.word.gru"), gru_of("han.sent.gru")
    rows, k = [], 0
    for b in range(R):
        vecs, start = [], 0
        for _ in range(nsents[b]):
            n = sents[k]
            k += 1
            h, _ = words(x[b, start:start + n][None])
            vecs.append(han_attend(h[0], "word"))
            start += n
        if not vecs:
            rows.append(torch.zeros(2 * H))
            continue
        h, _ = sentence(torch.stack(vecs)[None])
        rows.append(han_attend(h[0], "sent"))
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


pooled = rcnn_pool() if model == "rcnn" else han_pool() if model == "han" else birnn_pool()
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
