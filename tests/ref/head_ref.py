"""Reference for src/train/head.c: the loss of logits and its gradient with
PyTorch's own modules, and what is reported from logits.
  softmax:    F.cross_entropy(logits, labels, ignore_index=-1) (mean over the
              labelled rows); probs = softmax(logits)
  regression: F.mse_loss(logits[:, 0], targets / scale); scores = logits * scale
Inputs logits (N, K) and targets (N) (labels as floats for softmax); outputs
loss (1), dlogits (N, K) and out (N, K).
usage: head_ref.py DIR KIND N K SCALE"""
import sys

from torchref import load, save, torch

d, kind = sys.argv[1], sys.argv[2]
N, K = int(sys.argv[3]), int(sys.argv[4])
scale = float(sys.argv[5])
F = torch.nn.functional

logits = load(d, "logits", (N, K)).double().requires_grad_()
targets = load(d, "targets", (N,)).double()
if kind == "softmax":
    loss = F.cross_entropy(logits, targets.long(), ignore_index=-1)
    out = torch.softmax(logits, dim=1)
elif kind == "regression":
    loss = F.mse_loss(logits[:, 0], targets / scale)
    out = logits * scale
else:
    sys.exit("unknown head " + kind)
loss.backward()
save(d, "loss", loss.reshape(1).float())
save(d, "dlogits", logits.grad.float())
save(d, "out", out.float())
