"""Reference for TextCNN's multichannel variant (src/models/baselines/textcnn*.c):
two embedding channels (emb trained, emb_static frozen) stacked as the input
channels of a torch.nn.Conv2d per width (Kim 2014: each filter over both
channels, summed), padded W - 1 on both sides of each sentence (the wide
convolution), max over time, ReLU, concatenation, linear. Saves the logits
(B, K) and the gradients of sum(logits * R) w.r.t. emb, emb_static (stays
zero: frozen), every filter and bias and the linear layer.
Our filters are (F, W, 2D): a window of positions, each [emb; emb_static];
Conv2d's are (F, 2, W, D).
usage: textcnn_ref.py DIR V D F K B L W1 [W2 ...]"""
import sys

from torchref import load, save, torch

d = sys.argv[1]
V, D, F, K, B, L = (int(a) for a in sys.argv[2:8])
widths = [int(a) for a in sys.argv[8:]]
emb = load(d, "emb", (V, D)).requires_grad_()
emb_static = load(d, "emb_static", (V, D)).requires_grad_(False)
ids = load(d, "ids", (B, L)).long()
lengths = load(d, "lengths", (B,)).long()
r = load(d, "r", (B, K))
convs = []
for k, W in enumerate(widths):
    conv = torch.nn.Conv2d(2, F, (W, D), padding=(W - 1, 0))
    with torch.no_grad():
        conv.weight.copy_(load(d, "conv%d_w" % k, (F, W, 2, D)).permute(0, 2, 1, 3))
        conv.bias.copy_(load(d, "conv%d_b" % k, (F,)))
    convs.append(conv)
out = torch.nn.Linear(len(widths) * F, K)
with torch.no_grad():
    out.weight.copy_(load(d, "out_w", (K, len(widths) * F)))
    out.bias.copy_(load(d, "out_b", (K,)))
feats = []
for b in range(B):   # one sentence at a time: its own padding only
    w = ids[b, : lengths[b]]
    x = torch.stack([emb[w], emb_static[w]], 0).unsqueeze(0)   # (1, 2, n, D)
    pooled = [torch.relu(c(x).squeeze(3).max(2).values) for c in convs]   # (1, F) each
    feats.append(torch.cat(pooled, 1))
logits = out(torch.cat(feats, 0))
(logits * r).sum().backward()
save(d, "logits", logits)
save(d, "demb", emb.grad)
for k, c in enumerate(convs):
    save(d, "dconv%d_w" % k, c.weight.grad.permute(0, 2, 1, 3))
    save(d, "dconv%d_b" % k, c.bias.grad)
save(d, "dout_w", out.weight.grad)
save(d, "dout_b", out.bias.grad)
