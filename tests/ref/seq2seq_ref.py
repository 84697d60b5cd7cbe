"""References for the translation model (src/nn/label_smoothing.c,
src/models/seq2seq/seq2seq*.c) with plain torch ops.

usage: seq2seq_ref.py DIR MODE ARGS...
  lsxent N K EPS IGNORE   label-smoothed cross-entropy, PyTorch's definition
                          (F.cross_entropy(label_smoothing=EPS), summed over
                          rows whose label != IGNORE): saves loss (1), nll (1),
                          dlogits (N, K) = d(sum loss)/dlogits
  model V C NH FF LE LD MAXLEN POS BASE KEYS VALUES LS EPS B S T
                          the whole translation model (src/models/seq2seq/seq2seq*.c)
                          on a batch (src, src_len, tgt_in, tgt_out, tgt_len):
                          saves loss (1) = mean label-smoothed loss, nll (1) =
                          summed NLL, and g.<name> for every parameter <name>
  declayer (same args)    decoder layer 0 alone on inputs y (B, T, C) and mem
                          (B, S, C) with loss sum(out * r): saves out, dy,
                          dmem and g.<name> for the layer's parameters
POS: 0 sinusoid, 1 learned, 2 lpr (relative key/value tables per self-attention
layer, bucket sign(d) ceil(log_BASE(|d| + 1)) clipped to S = ceil(log_BASE(MAXLEN)))."""
import sys

from torchref import load, save, torch

import math


def run_model(d, mode, args):
    V, C, NH, FF, LE, LD, MAXLEN, POS, BASE, KEYS, VALUES = (int(a) for a in args[:11])
    LS, EPS = float(args[11]), float(args[12])
    B, S, T = (int(a) for a in args[13:16])
    HS = C // NH
    F = torch.nn.functional
    if POS == 2:
        SMAX, pw = 0, 1
        while BASE > 1 and pw < MAXLEN:
            pw *= BASE
            SMAX += 1
    else:
        SMAX = 0
    NB = 2 * SMAX + 1
    params = {}

    def P(name, shape):
        t = load(d, name, shape).requires_grad_()
        params[name] = t
        return t

    def attn_params(prefix):
        return [P(prefix + n, s) for n, s in (("w_qkv", (3 * C, C)), ("b_qkv", (3 * C,)), ("w_o", (C, C)),
                                               ("b_o", (C,)), ("ln_g", (C,)), ("ln_b", (C,)))]

    def ffn_params(prefix):
        return [P(prefix + n, s) for n, s in (("w_in", (FF, C)), ("b_in", (FF,)), ("w_out", (C, FF)),
                                               ("b_out", (C,)), ("ln_g", (C,)), ("ln_b", (C,)))]

    def layer(side, l, dec):
        L = {"self": attn_params(f"{side}.{l}.self."), "ffn": ffn_params(f"{side}.{l}.ffn.")}
        if dec:
            L["cross"] = attn_params(f"{side}.{l}.cross.")
        L["rk"] = P(f"{side}.{l}.rel_k", (NB, HS)) if POS == 2 and KEYS else None
        L["rv"] = P(f"{side}.{l}.rel_v", (NB, HS)) if POS == 2 and VALUES else None
        return L

    def bucket(dist):
        if BASE <= 1 or dist == 0:
            return 0
        e = 0
        while BASE ** e < abs(dist) + 1 and e < SMAX:
            e += 1
        return e if dist > 0 else -e

    def heads(t):
        return t.view(t.shape[0], t.shape[1], NH, HS).transpose(1, 2)

    def attention(xq, xkv, p, key_len, causal, rk=None, rv=None, cross=False):
        w, b = p[0], p[1]
        q = xq @ w[:C].T + b[:C]
        k = xkv @ w[C:2 * C].T + b[C:2 * C]
        v = xkv @ w[2 * C:].T + b[2 * C:]
        Tq, Tk = xq.shape[1], xkv.shape[1]
        qh, kh, vh = heads(q), heads(k), heads(v)
        scores = qh @ kh.transpose(-1, -2)
        idx = torch.tensor([[bucket(j - i) + SMAX for j in range(Tk)] for i in range(Tq)])
        if rk is not None:
            scores = scores + torch.einsum("bhid,ijd->bhij", qh, rk[idx])
        scores = scores / math.sqrt(HS)
        j = torch.arange(Tk)
        allowed = (j[None, :] < key_len[:, None])[:, None, None, :]
        if causal:
            allowed = allowed & (j[None, :] <= torch.arange(Tq)[:, None])[None, None]
        pr = torch.nan_to_num(torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1))
        o = pr @ vh
        if rv is not None:
            o = o + torch.einsum("bhij,ijd->bhid", pr, rv[idx])
        o = o.transpose(1, 2).reshape(xq.shape[0], Tq, C)
        return F.layer_norm(xq + o @ p[2].T + p[3], (C,), p[4], p[5], EPS)

    def ffn(x, p):
        h = F.gelu(x @ p[0].T + p[1]) @ p[2].T + p[3]
        return F.layer_norm(x + h, (C,), p[4], p[5], EPS)

    def dec_layer(L, y, mem, tgt_len, src_len):
        y = attention(y, y, L["self"], tgt_len, True, L["rk"], L["rv"])
        y = attention(y, mem, L["cross"], src_len, False)
        return ffn(y, L["ffn"])

    if mode == "declayer":
        L = layer("dec", 0, True)
        y = load(d, "y", (B, T, C)).requires_grad_()
        mem = load(d, "mem", (B, S, C)).requires_grad_()
        r = load(d, "r", (B, T, C))
        src_len = load(d, "src_len", (B,)).long()
        tgt_len = load(d, "tgt_len", (B,)).long()
        out = dec_layer(L, y, mem, tgt_len, src_len)
        (out * r).sum().backward()
        save(d, "out", out)
        save(d, "dy", y.grad)
        save(d, "dmem", mem.grad)
    else:
        E = P("embed", (V, C))
        if POS == 1:
            pos = P("pos", (MAXLEN, C))
        elif POS == 0:
            pos = torch.zeros(MAXLEN, C, dtype=torch.float64)
            for t in range(MAXLEN):
                for i in range(0, C, 2):
                    a = t / 10000.0 ** (i / C)
                    pos[t, i] = math.sin(a)
                    if i + 1 < C:
                        pos[t, i + 1] = math.cos(a)
            pos = pos.float()
        else:
            pos = torch.zeros(MAXLEN, C)
        enc = [layer("enc", l, False) for l in range(LE)]
        dec = [layer("dec", l, True) for l in range(LD)]
        src = load(d, "src", (B, S)).long()
        src_len = load(d, "src_len", (B,)).long()
        tgt_in = load(d, "tgt_in", (B, T)).long()
        tgt_out = load(d, "tgt_out", (B, T)).long()
        tgt_len = load(d, "tgt_len", (B,)).long()
        x = math.sqrt(C) * E[src] + pos[:S]
        for L in enc:
            x = ffn(attention(x, x, L["self"], src_len, False, L["rk"], L["rv"]), L["ffn"])
        y = math.sqrt(C) * E[tgt_in] + pos[:T]
        for L in dec:
            y = dec_layer(L, y, x, tgt_len, src_len)
        logits = y @ E.T
        keep = tgt_out.reshape(-1) >= 0
        lg, lab = logits.reshape(-1, V)[keep], tgt_out.reshape(-1)[keep]
        loss = F.cross_entropy(lg, lab, label_smoothing=LS)
        nll = F.cross_entropy(lg, lab, reduction="sum")
        loss.backward()
        save(d, "loss", loss.reshape(1))
        save(d, "nll", nll.reshape(1))
    for name, t in params.items():
        save(d, "g." + name, t.grad if t.grad is not None else torch.zeros_like(t))


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
elif mode in ("model", "declayer"):
    run_model(d, mode, args)
else:
    sys.exit("unknown mode " + mode)
