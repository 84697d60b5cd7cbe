"""Reference for the weighted and focal losses (src/nn/sigmoid_bce.c,
src/nn/softmax_focal.c, the class weights of src/train/head.c), with
PyTorch's own modules where it has them:
  bce        F.binary_cross_entropy_with_logits(logits, targets,
             pos_weight=pos_weight) (mean over every cell)
  bce_focal  the same per cell (reduction none) times (1 - p_t)^gamma,
             p_t = p y + (1 - p)(1 - y), mean: torchvision's
             sigmoid_focal_loss without alpha (Lin et al. 2017)
  ce         F.cross_entropy(logits, labels, weight=class_weights,
             ignore_index=-1)
  ce_focal   sum_n w_y (1 - p_y)^gamma (-log p_y) / sum_n w_y over the
             labelled rows (no PyTorch module: written out)
Inputs logits (N, K), targets (N, K) (bce) or labels (N) as floats (ce),
weights (K); outputs loss (1) and dlogits (N, K) by autograd, in double.
usage: loss_weighted_ref.py DIR KIND N K GAMMA"""
import sys

from torchref import load, save, torch

d, kind = sys.argv[1], sys.argv[2]
N, K, gamma = int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
F = torch.nn.functional

logits = load(d, "logits", (N, K)).double().requires_grad_()
weights = load(d, "weights", (K,)).double()
if kind.startswith("bce"):
    y = load(d, "targets", (N, K)).double()
    if kind == "bce":
        loss = F.binary_cross_entropy_with_logits(logits, y, pos_weight=weights)
    else:
        ce = F.binary_cross_entropy_with_logits(logits, y, pos_weight=weights, reduction="none")
        p = torch.sigmoid(logits)
        pt = p * y + (1 - p) * (1 - y)
        loss = (ce * (1 - pt) ** gamma).mean()
else:
    labels = load(d, "targets", (N,)).long()
    if kind == "ce":
        loss = F.cross_entropy(logits, labels, weight=weights, ignore_index=-1)
    else:
        keep = labels >= 0
        logp = torch.log_softmax(logits[keep], dim=1).gather(1, labels[keep].unsqueeze(1)).squeeze(1)
        w = weights[labels[keep]]
        loss = (w * (1 - logp.exp()) ** gamma * -logp).sum() / w.sum()
loss.backward()
save(d, "loss", loss.reshape(1).float())
save(d, "dlogits", logits.grad.float())
