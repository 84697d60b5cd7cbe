"""Hugging Face BERT interchange reference for tests/test_bert_hf.c, in plain
torch ops (float64) — `transformers` is not installed here, so this is
BertModel / BertForMaskedLM / BertForSequenceClassification written out
(post-LN encoder, erf GELU, tanh pooler, tied MLM decoder) with HF's parameter
names, reading and writing safetensors with tests/ref/safetensors_ref.py.

usage:
  bert_hf_ref.py make MODELDIR STYLE SEED
      writes MODELDIR/config.json + model.safetensors of a tiny random BERT
      (V 30522 so the real vocabulary works, C 32, L 2, NH 4, FF 64) in one of
      the checkpoint styles glue must read:
        seqcls  BertForSequenceClassification, F32, 3 labels, with the I64
                "bert.embeddings.position_ids" buffer older exports carry
        mlm     BertForMaskedLM, F16, old TF-style LayerNorm gamma/beta names,
                the tied decoder weight and decoder bias stored explicitly
        base    BertModel (no "bert." prefix), BF16, with the pooler
  bert_hf_ref.py DIR forward MODELDIR STRICT B T N
      reads ids, segments, lengths (B, T / B) and mlm_pos (N, flat b*T+t) from
      DIR/*.f32, the model from MODELDIR, and writes every output the model has:
      hidden (B, T, C), pooled (B, C), logits (B, K), mlm (N, V).
      STRICT=1 (a `glue export` directory): names must be exactly what
      transformers' from_pretrained expects for config.json's architecture (no
      missing, no unexpected tensors), metadata {"format": "pt"}, F32 only.
"""
import json
import math
import os
import sys

from safetensors_ref import bf16_bits, st_read, st_write
from torchref import load, np, save, torch

V, C, L, NH, FF, P, TV = 30522, 32, 2, 4, 64, 128, 2


def layer_names(i):
    p = "encoder.layer.%d." % i
    return [p + s for s in [
        "attention.self.query.weight", "attention.self.query.bias",
        "attention.self.key.weight", "attention.self.key.bias",
        "attention.self.value.weight", "attention.self.value.bias",
        "attention.output.dense.weight", "attention.output.dense.bias",
        "attention.output.LayerNorm.weight", "attention.output.LayerNorm.bias",
        "intermediate.dense.weight", "intermediate.dense.bias",
        "output.dense.weight", "output.dense.bias",
        "output.LayerNorm.weight", "output.LayerNorm.bias"]]


def encoder_names(n_layers):
    names = ["embeddings.word_embeddings.weight", "embeddings.position_embeddings.weight",
             "embeddings.token_type_embeddings.weight", "embeddings.LayerNorm.weight",
             "embeddings.LayerNorm.bias"]
    for i in range(n_layers):
        names += layer_names(i)
    return names


POOLER = ["pooler.dense.weight", "pooler.dense.bias"]
MLM = ["cls.predictions.transform.dense.weight", "cls.predictions.transform.dense.bias",
       "cls.predictions.transform.LayerNorm.weight", "cls.predictions.transform.LayerNorm.bias",
       "cls.predictions.bias"]
CLASSIFIER = ["classifier.weight", "classifier.bias"]


def shape_of(name, K):
    if name.endswith("word_embeddings.weight"):
        return (V, C)
    if name.endswith("position_embeddings.weight"):
        return (P, C)
    if name.endswith("token_type_embeddings.weight"):
        return (TV, C)
    if name == "cls.predictions.bias":
        return (V,)
    if name.startswith("classifier."):
        return (K, C) if name.endswith("weight") else (K,)
    if "intermediate.dense" in name:
        return (FF, C) if name.endswith("weight") else (FF,)
    if "output.dense" in name and "attention" not in name:
        return (C, FF) if name.endswith("weight") else (C,)
    return (C, C) if name.endswith("weight") and "LayerNorm" not in name else (C,)


def random_value(name, shape, rng):
    """Weights large enough that attention is far from uniform and every
    LayerNorm gain and bias matters (BERT's N(0, 0.02) would hide mistakes)."""
    if "LayerNorm.weight" in name:
        return 1 + 0.2 * rng.standard_normal(shape)
    if name.endswith("bias"):
        return 0.1 * rng.standard_normal(shape)
    return (0.3 if "embeddings" in name else 0.25) * rng.standard_normal(shape)


def make(d, style, seed):
    rng = np.random.default_rng(seed)
    K = 3 if style == "seqcls" else 0
    prefix = "" if style == "base" else "bert."
    names = [prefix + n for n in encoder_names(L)]
    if style in ("seqcls", "base"):
        names += [prefix + n for n in POOLER]
    if style == "mlm":
        names += MLM
    if style == "seqcls":
        names += CLASSIFIER
    vals = {n: random_value(n, shape_of(n, K), rng).astype(np.float32) for n in names}
    blobs = []
    for n in names:
        a = vals[n]
        if style == "mlm":
            n = n.replace("LayerNorm.weight", "LayerNorm.gamma").replace("LayerNorm.bias", "LayerNorm.beta")
            blobs.append((n, "F16", a.shape, a.astype("<f2").tobytes()))
        elif style == "base":
            blobs.append((n, "BF16", a.shape, bf16_bits(a).astype("<u2").tobytes()))
        else:
            blobs.append((n, "F32", a.shape, a.astype("<f4").tobytes()))
    if style == "seqcls":
        pos = np.arange(P, dtype=np.int64).reshape(1, P)
        blobs.insert(3, ("bert.embeddings.position_ids", "I64", pos.shape, pos.astype("<i8").tobytes()))
    if style == "mlm":  # the tied tensors, saved explicitly as older PyTorch exports did
        w = vals["bert.embeddings.word_embeddings.weight"]
        blobs.append(("cls.predictions.decoder.weight", "F16", w.shape, w.astype("<f2").tobytes()))
        b = vals["cls.predictions.bias"]
        blobs.append(("cls.predictions.decoder.bias", "F16", b.shape, b.astype("<f2").tobytes()))
    st_write(os.path.join(d, "model.safetensors"), blobs, metadata={"format": "pt"})
    arch = {"seqcls": "BertForSequenceClassification", "mlm": "BertForMaskedLM", "base": "BertModel"}[style]
    cfg = {"architectures": [arch], "model_type": "bert", "vocab_size": V, "hidden_size": C,
           "num_hidden_layers": L, "num_attention_heads": NH, "intermediate_size": FF,
           "max_position_embeddings": P, "type_vocab_size": TV, "hidden_act": "gelu",
           "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1,
           "layer_norm_eps": 1e-12, "initializer_range": 0.02, "pad_token_id": 0,
           "position_embedding_type": "absolute", "torch_dtype": "float32",
           "transformers_version": "4.30.0"}
    if K:
        cfg["id2label"] = {str(i): "LABEL_%d" % i for i in range(K)}
        cfg["label2id"] = {"LABEL_%d" % i: i for i in range(K)}
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)


def expected_names(cfg):
    """What transformers' from_pretrained wants for the architecture, and the
    extra names it ignores silently (BertForMaskedLM: the pooler)."""
    arch = cfg["architectures"][0]
    n_layers = cfg["num_hidden_layers"]
    if arch == "BertModel":
        return set(encoder_names(n_layers) + POOLER), set()
    names = ["bert." + n for n in encoder_names(n_layers)]
    pooler = set("bert." + n for n in POOLER)
    if arch == "BertForMaskedLM":
        return set(names + MLM), pooler
    if arch == "BertForSequenceClassification":
        return set(names + CLASSIFIER) | pooler, set()
    raise SystemExit("unexpected architecture %s" % arch)


def load_model(d, strict):
    with open(os.path.join(d, "config.json")) as f:
        cfg = json.load(f)
    raw, meta, _ = st_read(os.path.join(d, "model.safetensors"))
    if strict:
        assert meta == {"format": "pt"}, "metadata %s" % meta
        have, (want, ignored) = set(raw), expected_names(cfg)
        assert want <= have <= want | ignored, \
            "missing %s, unexpected %s" % (sorted(want - have), sorted(have - want - ignored))
        assert cfg["model_type"] == "bert" and cfg["hidden_act"] == "gelu", cfg
    sd = {}
    for k, v in raw.items():
        if v.dtype == np.int64:
            continue
        k = k.replace("LayerNorm.gamma", "LayerNorm.weight").replace("LayerNorm.beta", "LayerNorm.bias")
        if not k.startswith(("bert.", "cls.", "classifier.")):
            k = "bert." + k
        sd[k] = torch.from_numpy(v).double()
    return cfg, sd


def layer_norm(x, g, b, eps):
    mu = x.mean(-1, keepdim=True)
    var = ((x - mu) ** 2).mean(-1, keepdim=True)
    return (x - mu) / torch.sqrt(var + eps) * g + b


def gelu(x):
    return 0.5 * x * (1 + torch.erf(x / math.sqrt(2.0)))


def encoder(cfg, sd, ids, seg, lengths):
    B, T = ids.shape
    nh, c, eps = cfg["num_attention_heads"], cfg["hidden_size"], cfg["layer_norm_eps"]
    hs = c // nh
    e = "bert.embeddings."
    x = sd[e + "word_embeddings.weight"][ids] + sd[e + "position_embeddings.weight"][:T][None] \
        + sd[e + "token_type_embeddings.weight"][seg]
    x = layer_norm(x, sd[e + "LayerNorm.weight"], sd[e + "LayerNorm.bias"], eps)
    keep = torch.arange(T)[None, :] < lengths[:, None]                        # (B, T)
    add_mask = torch.where(keep, 0.0, -1e9).double()[:, None, None, :]         # (B, 1, 1, T)

    def lin(v, name):
        return v @ sd[name + ".weight"].T + sd[name + ".bias"]

    for i in range(cfg["num_hidden_layers"]):
        p = "bert.encoder.layer.%d." % i
        q, k, v = (lin(x, p + "attention.self." + s).view(B, T, nh, hs).transpose(1, 2)
                   for s in ("query", "key", "value"))
        att = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(hs) + add_mask, dim=-1)
        ctx = (att @ v).transpose(1, 2).reshape(B, T, c)
        x = layer_norm(lin(ctx, p + "attention.output.dense") + x,
                       sd[p + "attention.output.LayerNorm.weight"], sd[p + "attention.output.LayerNorm.bias"], eps)
        h = gelu(lin(x, p + "intermediate.dense"))
        x = layer_norm(lin(h, p + "output.dense") + x,
                       sd[p + "output.LayerNorm.weight"], sd[p + "output.LayerNorm.bias"], eps)
    return x


def forward(tdir, mdir, strict, B, T, N):
    cfg, sd = load_model(mdir, strict)
    ids = load(tdir, "ids", (B, T)).long()
    seg = load(tdir, "segments", (B, T)).long()
    lengths = load(tdir, "lengths", (B,)).long()
    with torch.no_grad():
        h = encoder(cfg, sd, ids, seg, lengths)
        save(tdir, "hidden", h.float())
        if "bert.pooler.dense.weight" in sd:
            pooled = torch.tanh(h[:, 0] @ sd["bert.pooler.dense.weight"].T + sd["bert.pooler.dense.bias"])
            save(tdir, "pooled", pooled.float())
            if "classifier.weight" in sd:
                save(tdir, "logits", (pooled @ sd["classifier.weight"].T + sd["classifier.bias"]).float())
        if "cls.predictions.bias" in sd and N > 0:
            pos = load(tdir, "mlm_pos", (N,)).long()
            rows = h.reshape(B * T, -1)[pos]
            t = "cls.predictions.transform."
            z = layer_norm(gelu(rows @ sd[t + "dense.weight"].T + sd[t + "dense.bias"]),
                           sd[t + "LayerNorm.weight"], sd[t + "LayerNorm.bias"], cfg["layer_norm_eps"])
            dec = sd.get("cls.predictions.decoder.weight", sd["bert.embeddings.word_embeddings.weight"])
            save(tdir, "mlm", (z @ dec.T + sd["cls.predictions.bias"]).float())


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    elif sys.argv[2] == "forward":
        forward(sys.argv[1], sys.argv[3], sys.argv[4] == "1", *map(int, sys.argv[5:8]))
    else:
        raise SystemExit(__doc__)
