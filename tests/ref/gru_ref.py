"""Reference for src/nn/gru.c: torch.nn.GRU (batch_first, packed variable
lengths, optionally bidirectional) with the weights the C test wrote; saves the
output (B, T, D*H) and the gradients of sum(out * R) w.r.t. x and every weight.
usage: gru_ref.py DIR B T C H BIDIRECTIONAL"""
import sys

from torchref import load, save, torch

d = sys.argv[1]
B, T, C, H, bi = (int(a) for a in sys.argv[2:7])
D = 2 if bi else 1
x = load(d, "x", (B, T, C)).requires_grad_()
lengths = load(d, "lengths", (B,)).long()
r = load(d, "r", (B, T, D * H))
gru = torch.nn.GRU(C, H, batch_first=True, bidirectional=bool(bi))
suffixes = ["", "_reverse"][:D]
with torch.no_grad():
    for k, sfx in enumerate(suffixes):
        for name, shape in (("w_ih", (3 * H, C)), ("w_hh", (3 * H, H)), ("b_ih", (3 * H,)), ("b_hh", (3 * H,))):
            getattr(gru, name.replace("w_", "weight_").replace("b_", "bias_") + "_l0" + sfx).copy_(
                load(d, "%s%d" % (name, k), shape))
packed = torch.nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
out, _ = gru(packed)
out, _ = torch.nn.utils.rnn.pad_packed_sequence(out, batch_first=True, total_length=T)
(out * r).sum().backward()
save(d, "out", out)
save(d, "dx", x.grad)
for k, sfx in enumerate(suffixes):
    for name in ("w_ih", "w_hh", "b_ih", "b_hh"):
        p = getattr(gru, name.replace("w_", "weight_").replace("b_", "bias_") + "_l0" + sfx)
        save(d, "d%s%d" % (name, k), p.grad)
