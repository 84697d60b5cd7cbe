"""Reference for src/models/baselines/entnet*.c: the Recurrent Entity Network
(Henaff et al. 2017) from torch ops (F.prelu), one row at a time, on the
weights the C test wrote as <name>.f32.

Inputs: every parameter; ids (N, T) each row's words, text a's then text
b's; la, lb (N) their counts; sents (N, T) the words of each sentence of
text a (0 after the last); r (N, K).
Outputs: logits (N, K), and grad.<name>: the gradient of sum(logits * r)
w.r.t. every parameter.
usage: entnet_ref.py DIR V H M L K PAIR N T"""
import sys

from torchref import load, save, torch

F_ = torch.nn.functional
d = sys.argv[1]
V, H, M, L, K, PAIR, N, T = (int(a) for a in sys.argv[2:10])
shapes = [("emb", (V, H)), ("mask", (L, H)), ("keys", (M, H)), ("mem.U", (H, H)), ("mem.V", (H, H)),
          ("mem.W", (H, H)), ("mem.slope", (H,))]
if not PAIR:
    shapes.append(("query", (H,)))
shapes += [("out.H", (H, H)), ("out.slope", (H,)), ("out.w", (K, H)), ("out.b", (K,))]
P = {n: load(d, n, s).requires_grad_() for n, s in shapes}
ids = load(d, "ids", (N, T)).long()
la = load(d, "la", (N,)).long()
lb = load(d, "lb", (N,)).long()
sents = load(d, "sents", (N, T)).long()
r = load(d, "r", (N, K))


def bag(words):
    """sum_i f_i * e_i over the words, by their position."""
    if len(words) == 0:
        return torch.zeros(H)
    return (P["mask"][: len(words)] * P["emb"][words]).sum(0)


logits = []
for n in range(N):
    h = P["keys"]
    start = 0
    for k in sents[n]:
        if k == 0:
            break
        s = bag(ids[n, start:start + k])
        start += k
        g = torch.sigmoid(h @ s + P["keys"] @ s)
        cand = F_.prelu(h @ P["mem.U"].t() + P["keys"] @ P["mem.V"].t() + P["mem.W"] @ s, P["mem.slope"])
        u = h + g[:, None] * cand
        h = u / u.norm(dim=1, keepdim=True)
    q = bag(ids[n, la[n]:la[n] + lb[n]]) if PAIR else P["query"]
    p = torch.softmax(h @ q, dim=0)
    o = F_.prelu((q + P["out.H"] @ (p @ h))[None], P["out.slope"])[0]
    logits.append(P["out.w"] @ o + P["out.b"])
logits = torch.stack(logits)
(logits * r).sum().backward()
save(d, "logits", logits)
for n, _ in shapes:
    save(d, "grad." + n, P[n].grad)
