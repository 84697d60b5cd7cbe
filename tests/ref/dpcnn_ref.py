"""Reference for src/models/baselines/dpcnn*.c: DPCNN (Johnson & Zhang 2017)
written from torch ops, one sentence at a time, on the weights the C test wrote
as <name>.f32 (glue's conv weights are (F, W, C): PyTorch's Conv1d weight
(F, C, W) with the last two axes swapped). Dropout off (evaluation).

Inputs: every parameter; ids (B, MAXL) padded word ids, lengths (B) (a
sentence's words are ids[b, :lengths[b]]), r (N, K). B = N sentences, or 2N
for pairs (rows [0, N) text a, [N, 2N) text b).
Outputs: logits (N, K), and grad.<name>: the gradient of sum(logits * r)
w.r.t. every parameter.
usage: dpcnn_ref.py DIR V D F K LEVELS PAIR N MAXL"""
import sys

from torchref import load, save, torch

F_ = torch.nn.functional
d = sys.argv[1]
V, D, F, K, LEVELS, PAIR, N, MAXL = (int(a) for a in sys.argv[2:10])
B = 2 * N if PAIR else N
FC = 4 * F if PAIR else F
shapes = [("emb", (V, D)), ("region.w", (F, 3, D)), ("region.b", (F,))]
for l in range(LEVELS):
    for k in (1, 2):
        shapes += [("level%d.conv%d.w" % (l, k), (F, 3, F)), ("level%d.conv%d.b" % (l, k), (F,))]
shapes += [("out.w", (K, FC)), ("out.b", (K,))]
P = {n: load(d, n, s).requires_grad_() for n, s in shapes}
ids = load(d, "ids", (B, MAXL)).long()
lengths = load(d, "lengths", (B,)).long()
r = load(d, "r", (N, K))


def conv(x, name):
    """A width-3 'same' convolution of x (1, C, L)."""
    return F_.conv1d(x, P[name + ".w"].permute(0, 2, 1), P[name + ".b"], padding=1)


def encode(words):
    x = P["emb"][words].t()[None]                      # (1, D, L)
    a = conv(x, "region")
    for l in range(LEVELS):
        if l > 0:
            a = F_.max_pool1d(out, 3, stride=2, padding=1)
        out = a + conv(torch.relu(conv(torch.relu(a), "level%d.conv1" % l)), "level%d.conv2" % l)
    assert out.shape[2] == 1, out.shape
    return out[0, :, 0]


enc = torch.stack([encode(ids[b, :lengths[b]]) for b in range(B)])
if PAIR:
    u, v = enc[:N], enc[N:]
    feat = torch.cat([u, v, (u - v).abs(), u * v], dim=1)
else:
    feat = enc
logits = feat @ P["out.w"].t() + P["out.b"]
(logits * r).sum().backward()
save(d, "logits", logits)
for n, _ in shapes:
    save(d, "grad." + n, P[n].grad)
