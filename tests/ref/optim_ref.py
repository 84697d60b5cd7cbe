"""Reference for src/optim: runs torch.optim.{SGD, AdamW, Adadelta} on a weight
w (R, C) with weight decay and a bias b (C) in a second param group without
decay, for STEPS steps with given gradients gw (STEPS, R, C), gb (STEPS, C) and
per-step learning rates lrs (STEPS). Saves the final w, b and the optimizer
state of w (SGD: momentum buffer; AdamW: exp_avg, exp_avg_sq; Adadelta:
square_avg, acc_delta) as s0_w, s1_w.
usage: optim_ref.py DIR KIND STEPS R C WD MOMENTUM BETA1 BETA2 EPS RHO"""
import sys

from torchref import load, save, torch

d, kind = sys.argv[1], sys.argv[2]
steps, R, C = (int(a) for a in sys.argv[3:6])
wd, momentum, beta1, beta2, eps, rho = (float(a) for a in sys.argv[6:12])

w = load(d, "w", (R, C)).requires_grad_()
b = load(d, "b", (C,)).requires_grad_()
gw = load(d, "gw", (steps, R, C))
gb = load(d, "gb", (steps, C))
lrs = load(d, "lrs", (steps,))
groups = [{"params": [w], "weight_decay": wd}, {"params": [b], "weight_decay": 0.0}]
if kind == "sgd":
    opt = torch.optim.SGD(groups, lr=1.0, momentum=momentum)
    names = ["momentum_buffer"]
elif kind == "adamw":
    opt = torch.optim.AdamW(groups, lr=1.0, betas=(beta1, beta2), eps=eps)
    names = ["exp_avg", "exp_avg_sq"]
elif kind == "adadelta":
    opt = torch.optim.Adadelta(groups, lr=1.0, rho=rho, eps=eps)
    names = ["square_avg", "acc_delta"]
else:
    sys.exit("unknown optimizer " + kind)

for t in range(steps):
    for g in opt.param_groups:
        # The C side gets the same float32 value.
        g["lr"] = float(lrs[t])
    w.grad = gw[t].clone()
    b.grad = gb[t].clone()
    opt.step()

save(d, "w_out", w)
save(d, "b_out", b)
for k, name in enumerate(names):
    save(d, "s%d_w" % k, opt.state[w][name])
