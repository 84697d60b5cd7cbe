"""Reference for src/models/bert/bert*.c: BERT written from plain torch ops (no
`transformers`), with Hugging Face's parameter names, on weights the C side
wrote as <name>.f32. Dropout is off (evaluation), as on the C side.

Inputs: every parameter; ids, segments (B, T), lengths (B), MLM positions and
labels (NM), head labels (B) (class index, or the regression target when K == 1).
Outputs: hidden (B, T, C), mlm_logits (NM, V), head_logits (B, K), losses
[mlm, head], the gradient of mlm + head loss w.r.t. every parameter as
grad.<name>, and `curve`: the total loss before each of STEPS AdamW steps on the
same batch (lr LR, betas 0.9/0.999, eps 1e-6, weight decay 0.01 except biases
and LayerNorm weights, gradient norm clipped to 1.0).
ALIBI = 1: every self-attention also subtracts slope_h * |i - j| from its
scores, slope_h = 2^(-8h / (NH - 1)), 2^-4 for one head (glue's "absolute+alibi" positions).
PRE_LN = 1: each sublayer normalises its input, h = h + f(LN(h)), and
bert.encoder.LayerNorm normalises the last layer's output.
usage: bert_ref.py DIR V C L NH FF P TV B T K NM STEPS LR ALIBI [PRE_LN]"""
import math
import sys

from torchref import gelu, layer_norm, load, save, torch

d = sys.argv[1]
V, C, L, NH, FF, P, TV, B, T, K, NM, STEPS = (int(a) for a in sys.argv[2:14])
LR = float(sys.argv[14])
ALIBI = int(sys.argv[15])
PRE_LN = int(sys.argv[16]) if len(sys.argv) > 16 else 0
HS = C // NH


def param_shapes():
    s = [("bert.embeddings.word_embeddings.weight", (V, C)),
         ("bert.embeddings.position_embeddings.weight", (P, C)),
         ("bert.embeddings.token_type_embeddings.weight", (TV, C)),
         ("bert.embeddings.LayerNorm.weight", (C,)), ("bert.embeddings.LayerNorm.bias", (C,))]
    for l in range(L):
        p = "bert.encoder.layer.%d." % l
        for n in ("query", "key", "value"):
            s += [(p + "attention.self.%s.weight" % n, (C, C)), (p + "attention.self.%s.bias" % n, (C,))]
        s += [(p + "attention.output.dense.weight", (C, C)), (p + "attention.output.dense.bias", (C,)),
              (p + "attention.output.LayerNorm.weight", (C,)), (p + "attention.output.LayerNorm.bias", (C,)),
              (p + "intermediate.dense.weight", (FF, C)), (p + "intermediate.dense.bias", (FF,)),
              (p + "output.dense.weight", (C, FF)), (p + "output.dense.bias", (C,)),
              (p + "output.LayerNorm.weight", (C,)), (p + "output.LayerNorm.bias", (C,))]
    if PRE_LN:
        s += [("bert.encoder.LayerNorm.weight", (C,)), ("bert.encoder.LayerNorm.bias", (C,))]
    if K > 0:
        s += [("bert.pooler.dense.weight", (C, C)), ("bert.pooler.dense.bias", (C,)),
              ("classifier.weight", (K, C)), ("classifier.bias", (K,))]
    if NM > 0:
        s += [("cls.predictions.transform.dense.weight", (C, C)), ("cls.predictions.transform.dense.bias", (C,)),
              ("cls.predictions.transform.LayerNorm.weight", (C,)),
              ("cls.predictions.transform.LayerNorm.bias", (C,)), ("cls.predictions.bias", (V,))]
    return s


shapes = param_shapes()
P_ = {n: load(d, n, s).requires_grad_() for n, s in shapes}
ids = load(d, "ids", (B, T)).long()
seg = load(d, "segments", (B, T)).long()
lengths = load(d, "lengths", (B,)).long()
if NM > 0:
    positions = load(d, "positions", (NM,)).long()
    mlm_labels = load(d, "mlm_labels", (NM,)).long()
head_labels = load(d, "head_labels", (B,))


def linear(x, name):
    return x @ P_[name + ".weight"].t() + P_[name + ".bias"]


def forward():
    e = (P_["bert.embeddings.word_embeddings.weight"][ids]
         + P_["bert.embeddings.position_embeddings.weight"][torch.arange(T)][None]
         + P_["bert.embeddings.token_type_embeddings.weight"][seg])
    h = layer_norm(e, P_["bert.embeddings.LayerNorm.weight"], P_["bert.embeddings.LayerNorm.bias"])
    keys = (torch.arange(T)[None, :] < lengths[:, None])[:, None, None, :]   # (B, 1, 1, T)
    for l in range(L):
        p = "bert.encoder.layer.%d." % l
        heads = lambda t: t.view(B, T, NH, HS).transpose(1, 2)
        ln1 = lambda t: layer_norm(t, P_[p + "attention.output.LayerNorm.weight"],
                                   P_[p + "attention.output.LayerNorm.bias"])
        ln2 = lambda t: layer_norm(t, P_[p + "output.LayerNorm.weight"], P_[p + "output.LayerNorm.bias"])
        xin = ln1(h) if PRE_LN else h
        q = heads(linear(xin, p + "attention.self.query"))
        k = heads(linear(xin, p + "attention.self.key"))
        v = heads(linear(xin, p + "attention.self.value"))
        s = q @ k.transpose(-1, -2) / math.sqrt(HS)
        if ALIBI:
            slopes = torch.tensor([2.0 ** (-8.0 * h / (NH - 1)) if NH > 1 else 2.0 ** -4 for h in range(NH)],
                                  dtype=s.dtype)
            s = s - slopes[None, :, None, None] * (torch.arange(T)[:, None] - torch.arange(T)[None, :]).abs()
        s = s.masked_fill(~keys, float("-inf"))
        ctx = (torch.softmax(s, dim=-1) @ v).transpose(1, 2).reshape(B, T, C)
        if PRE_LN:
            h = h + linear(ctx, p + "attention.output.dense")
            h = h + linear(gelu(linear(ln2(h), p + "intermediate.dense")), p + "output.dense")
            continue
        h = ln1(h + linear(ctx, p + "attention.output.dense"))
        f = linear(gelu(linear(h, p + "intermediate.dense")), p + "output.dense")
        h = ln2(h + f)
    if PRE_LN:
        h = layer_norm(h, P_["bert.encoder.LayerNorm.weight"], P_["bert.encoder.LayerNorm.bias"])
    out = {"hidden": h}
    loss = 0.0
    if NM > 0:
        x = h.reshape(B * T, C)[positions]
        t = layer_norm(gelu(linear(x, "cls.predictions.transform.dense")),
                       P_["cls.predictions.transform.LayerNorm.weight"], P_["cls.predictions.transform.LayerNorm.bias"])
        logits = t @ P_["bert.embeddings.word_embeddings.weight"].t() + P_["cls.predictions.bias"]
        out["mlm_logits"] = logits
        out["mlm_loss"] = torch.nn.functional.cross_entropy(logits, mlm_labels)
        loss = loss + out["mlm_loss"]
    if K > 0:
        pooled = torch.tanh(linear(h[:, 0], "bert.pooler.dense"))
        logits = linear(pooled, "classifier")
        out["head_logits"] = logits
        if K == 1:
            out["head_loss"] = ((logits[:, 0] - head_labels) ** 2).mean()
        else:
            out["head_loss"] = torch.nn.functional.cross_entropy(logits, head_labels.long())
        loss = loss + out["head_loss"]
    out["loss"] = loss
    return out


out = forward()
out["loss"].backward()
save(d, "hidden", out["hidden"])
if NM > 0:
    save(d, "mlm_logits", out["mlm_logits"])
if K > 0:
    save(d, "head_logits", out["head_logits"])
save(d, "losses", torch.tensor([float(out.get("mlm_loss", 0.0)), float(out.get("head_loss", 0.0))]))
for n, _ in shapes:
    save(d, "grad." + n, P_[n].grad)

no_decay = lambda n: n.endswith(".bias") or "LayerNorm" in n
groups = [{"params": [P_[n] for n, _ in shapes if not no_decay(n)], "weight_decay": 0.01},
          {"params": [P_[n] for n, _ in shapes if no_decay(n)], "weight_decay": 0.0}]
opt = torch.optim.AdamW(groups, lr=LR, betas=(0.9, 0.999), eps=1e-6)
curve = []
for step in range(STEPS):
    opt.zero_grad()
    o = forward()
    curve.append(float(o["loss"]))
    o["loss"].backward()
    torch.nn.utils.clip_grad_norm_([P_[n] for n, _ in shapes], 1.0)
    opt.step()
save(d, "curve", torch.tensor(curve))
