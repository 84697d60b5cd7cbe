"""References for the translation model (src/nn/label_smoothing.c,
src/models/seq2seq*.c) with plain torch ops.

usage: seq2seq_ref.py DIR MODE ARGS...
  lsxent N K EPS IGNORE   label-smoothed cross-entropy, PyTorch's definition
                          (F.cross_entropy(label_smoothing=EPS), summed over
                          rows whose label != IGNORE): saves loss (1), nll (1),
                          dlogits (N, K) = d(sum loss)/dlogits"""
import sys

from torchref import load, save, torch

d, mode = sys.argv[1], sys.argv[2]
args = sys.argv[3:]

if mode == "lsxent":
    N, K = int(args[0]), int(args[1])
    eps, ignore = float(args[2]), int(args[3])
    logits = load(d, "logits", (N, K)).double().requires_grad_()
    labels = load(d, "labels", (N,)).long()
    F = torch.nn.functional
    loss = F.cross_entropy(logits, labels, ignore_index=ignore, label_smoothing=eps, reduction="sum")
    nll = F.cross_entropy(logits, labels, ignore_index=ignore, reduction="sum")
    loss.backward()
    save(d, "loss", loss.reshape(1).float())
    save(d, "nll", nll.reshape(1).float())
    save(d, "dlogits", logits.grad.float())
else:
    sys.exit("unknown mode " + mode)
