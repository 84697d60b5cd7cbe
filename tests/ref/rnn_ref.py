"""Reference for src/nn/gru.c and src/nn/lstm.c: torch.nn.GRU or torch.nn.LSTM
(batch_first, packed variable lengths, optionally bidirectional) with the
weights the C test wrote; saves the output (B, T, D*H) and the gradients of
sum(out * R) w.r.t. x and every weight. Both cells keep PyTorch's layout, so
only the module and the gate count (GRU 3: r, z, n; LSTM 4: i, f, g, o) differ.
usage: rnn_ref.py DIR CELL B T C H BIDIRECTIONAL    (CELL: gru or lstm)"""
import sys

from torchref import load, save, torch

d, cell = sys.argv[1], sys.argv[2]
B, T, C, H, bi = (int(a) for a in sys.argv[3:8])
D = 2 if bi else 1
G = {"gru": 3, "lstm": 4}[cell]
x = load(d, "x", (B, T, C)).requires_grad_()
lengths = load(d, "lengths", (B,)).long()
r = load(d, "r", (B, T, D * H))
rnn = getattr(torch.nn, cell.upper())(C, H, batch_first=True, bidirectional=bool(bi))
suffixes = ["", "_reverse"][:D]
shapes = (("w_ih", (G * H, C)), ("w_hh", (G * H, H)), ("b_ih", (G * H,)), ("b_hh", (G * H,)))


def param(name, sfx):
    return getattr(rnn, name.replace("w_", "weight_").replace("b_", "bias_") + "_l0" + sfx)


with torch.no_grad():
    for k, sfx in enumerate(suffixes):
        for name, shape in shapes:
            param(name, sfx).copy_(load(d, "%s%d" % (name, k), shape))
packed = torch.nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
out, _ = rnn(packed)
out, _ = torch.nn.utils.rnn.pad_packed_sequence(out, batch_first=True, total_length=T)
(out * r).sum().backward()
save(d, "out", out)
save(d, "dx", x.grad)
for k, sfx in enumerate(suffixes):
    for name, _ in shapes:
        save(d, "d%s%d" % (name, k), param(name, sfx).grad)
