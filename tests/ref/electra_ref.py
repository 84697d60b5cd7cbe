"""Reference for pretrain/electra.c and src/models/bert/bert_rtd.c: one ELECTRA step
(Clark et al. 2020) written from plain torch ops, on weights the C side wrote.

The discriminator is a BERT encoder (names bert.*, embedding width E, projected
to C when E != C by bert.embeddings_project) with the replaced-token detection
head discriminator_predictions.{dense, dense_prediction}. The generator
(names generator.*) is a narrower encoder (width CG, CG / NHG heads, FFN FFG,
LG layers) that reads the DISCRIMINATOR's embedding tables and LayerNorm,
projects them E -> CG, and has an MLM head whose transform maps CG -> E and
whose decoder is the shared word table.

Inputs: every parameter of both, ids (B, T) the masked input, lengths (B),
positions / mlm_labels (NM) the targets and their originals, sampled (NM) the
generator's samples as the C side drew them (sampling is checked apart).
Outputs: gen_logits (NM, V), disc_logits (B, T) (0 at padding), losses
[gen, disc, total], and grad.<name> of total = gen + DW * disc for every
parameter.
usage: electra_ref.py DIR V E C L NH FF CG LG NHG FFG P TV B T NM DW ALIBI"""
import math
import sys

from torchref import gelu, layer_norm, load, save, torch

d = sys.argv[1]
V, E, C, L, NH, FF, CG, LG, NHG, FFG, P, TV, B, T, NM = (int(a) for a in sys.argv[2:17])
DW = float(sys.argv[17])
ALIBI = int(sys.argv[18])


def layer_shapes(prefix, L, C, FF):
    s = []
    for l in range(L):
        p = prefix + "bert.encoder.layer.%d." % l
        for n in ("query", "key", "value"):
            s += [(p + "attention.self.%s.weight" % n, (C, C)), (p + "attention.self.%s.bias" % n, (C,))]
        s += [(p + "attention.output.dense.weight", (C, C)), (p + "attention.output.dense.bias", (C,)),
              (p + "attention.output.LayerNorm.weight", (C,)), (p + "attention.output.LayerNorm.bias", (C,)),
              (p + "intermediate.dense.weight", (FF, C)), (p + "intermediate.dense.bias", (FF,)),
              (p + "output.dense.weight", (C, FF)), (p + "output.dense.bias", (C,)),
              (p + "output.LayerNorm.weight", (C,)), (p + "output.LayerNorm.bias", (C,))]
    if E != C:
        s += [(prefix + "bert.embeddings_project.weight", (C, E)), (prefix + "bert.embeddings_project.bias", (C,))]
    return s


shapes = [("bert.embeddings.word_embeddings.weight", (V, E)),
          ("bert.embeddings.position_embeddings.weight", (P, E)),
          ("bert.embeddings.token_type_embeddings.weight", (TV, E)),
          ("bert.embeddings.LayerNorm.weight", (E,)), ("bert.embeddings.LayerNorm.bias", (E,))]
shapes += layer_shapes("", L, C, FF)
shapes += [("discriminator_predictions.dense.weight", (C, C)), ("discriminator_predictions.dense.bias", (C,)),
           ("discriminator_predictions.dense_prediction.weight", (1, C)),
           ("discriminator_predictions.dense_prediction.bias", (1,))]
shapes += layer_shapes("generator.", LG, CG, FFG)
shapes += [("generator.cls.predictions.transform.dense.weight", (E, CG)),
           ("generator.cls.predictions.transform.dense.bias", (E,)),
           ("generator.cls.predictions.transform.LayerNorm.weight", (E,)),
           ("generator.cls.predictions.transform.LayerNorm.bias", (E,)),
           ("generator.cls.predictions.bias", (V,))]

P_ = {n: load(d, n, s).requires_grad_() for n, s in shapes}
ids = load(d, "ids", (B, T)).long()
lengths = load(d, "lengths", (B,)).long()
positions = load(d, "positions", (NM,)).long()
mlm_labels = load(d, "mlm_labels", (NM,)).long()
sampled = load(d, "sampled", (NM,)).long()


def linear(x, name):
    return x @ P_[name + ".weight"].t() + P_[name + ".bias"]


def encoder(prefix, ids, L, C, NH):
    HS = C // NH
    e = (P_["bert.embeddings.word_embeddings.weight"][ids]
         + P_["bert.embeddings.position_embeddings.weight"][torch.arange(T)][None]
         + P_["bert.embeddings.token_type_embeddings.weight"][torch.zeros_like(ids)])
    h = layer_norm(e, P_["bert.embeddings.LayerNorm.weight"], P_["bert.embeddings.LayerNorm.bias"])
    if E != C:
        h = linear(h, prefix + "bert.embeddings_project")
    keys = (torch.arange(T)[None, :] < lengths[:, None])[:, None, None, :]
    for l in range(L):
        p = prefix + "bert.encoder.layer.%d." % l
        heads = lambda t: t.view(B, T, NH, HS).transpose(1, 2)
        q = heads(linear(h, p + "attention.self.query"))
        k = heads(linear(h, p + "attention.self.key"))
        v = heads(linear(h, p + "attention.self.value"))
        s = q @ k.transpose(-1, -2) / math.sqrt(HS)
        if ALIBI:
            slopes = torch.tensor([2.0 ** (-8.0 * i / (NH - 1)) if NH > 1 else 2.0 ** -4 for i in range(NH)],
                                  dtype=s.dtype)
            s = s - slopes[None, :, None, None] * (torch.arange(T)[:, None] - torch.arange(T)[None, :]).abs()
        s = s.masked_fill(~keys, float("-inf"))
        ctx = (torch.softmax(s, dim=-1) @ v).transpose(1, 2).reshape(B, T, C)
        h = layer_norm(h + linear(ctx, p + "attention.output.dense"),
                       P_[p + "attention.output.LayerNorm.weight"], P_[p + "attention.output.LayerNorm.bias"])
        f = linear(gelu(linear(h, p + "intermediate.dense")), p + "output.dense")
        h = layer_norm(h + f, P_[p + "output.LayerNorm.weight"], P_[p + "output.LayerNorm.bias"])
    return h


# 1. The generator on the masked input: MLM over the targets.
hg = encoder("generator.", ids, LG, CG, NHG)
x = hg.reshape(B * T, CG)[positions]
t = layer_norm(gelu(linear(x, "generator.cls.predictions.transform.dense")),
               P_["generator.cls.predictions.transform.LayerNorm.weight"],
               P_["generator.cls.predictions.transform.LayerNorm.bias"])
gen_logits = t @ P_["bert.embeddings.word_embeddings.weight"].t() + P_["generator.cls.predictions.bias"]
gen_loss = torch.nn.functional.cross_entropy(gen_logits, mlm_labels)

# 2-3. The corrupted input and the discriminator on it (no gradient through the samples).
disc_ids = ids.clone().reshape(-1)
disc_ids[positions] = sampled
disc_ids = disc_ids.reshape(B, T)
replaced = torch.zeros(B * T)
replaced[positions] = (sampled != mlm_labels).float()
replaced = replaced.reshape(B, T)
hd = encoder("", disc_ids, L, C, NH)
logits = linear(gelu(linear(hd, "discriminator_predictions.dense")), "discriminator_predictions.dense_prediction")
logits = logits[..., 0]
real = torch.arange(T)[None, :] < lengths[:, None]
disc_loss = torch.nn.functional.binary_cross_entropy_with_logits(logits[real], replaced[real])
total = gen_loss + DW * disc_loss
total.backward()

save(d, "gen_logits", gen_logits)
save(d, "disc_logits", logits.masked_fill(~real, 0.0))
save(d, "losses", torch.tensor([float(gen_loss), float(disc_loss), float(total)]))
for n, _ in shapes:
    save(d, "grad." + n, P_[n].grad)
