"""bench_bert.py — the PyTorch side of `glue bench bert` (eval/bench/bench_bert.c).

The same BERT as src/models/bert/bert*.c, written from plain torch ops (nn.Linear,
F.layer_norm, F.gelu (exact erf), softmax, F.cross_entropy, torch.optim.AdamW),
fp32, N(0, 0.02) init, LayerNorm eps 1e-12, dropout 0.1 when training, the
masked positions GATHERED before the vocabulary projection (tied decoder). The
Q/K/V projections are one fused Linear (as ours), and rows are full length, so
no attention mask is added: PyTorch gets its fastest form of the same math.

It is a server so that the C side can alternate A/B with it in one run: after
"ready" on stdout it reads commands on stdin and answers each with one line:
  train K      K training steps (zero_grad, forward, MLM loss, backward, AdamW)
  infer K      K classification forwards of (B, T) under torch.inference_mode
  latency K    K classification forwards of (1, LAT_T)
  infer_bf16 K, latency_bf16 K   the same under torch.autocast("cpu", bfloat16)
  infer_int8 K, latency_int8 K   the same with the classifier under
     torch.quantization.quantize_dynamic(model, {nn.Linear}, dtype=torch.qint8)
     (the same weights; the quantized engine PyTorch chose: fbgemm or onednn/x86)
  train_bf16 K K training steps with the forward and loss under torch.autocast("cpu", bfloat16)
     -> "WALL CPU": elapsed wall seconds, and CPU seconds of all its threads
  mem          -> peak resident memory of this process in MiB (getrusage)
  quit
usage: bench_bert.py V C L NH FF P B T NMASKED LAT_T THREADS"""
import copy
import math
import resource
import sys
import time

try:
    import torch
    import torch.nn.functional as F
except ImportError:
    print("no-torch", flush=True)
    sys.exit(77)

V, C, L, NH, FF, P, B, T, NM, LAT_T, THREADS = (int(a) for a in sys.argv[1:12])
HS = C // NH
EPS = 1e-12
DROP = 0.1
torch.set_num_threads(THREADS)
torch.manual_seed(1)


def lin(i, o):
    m = torch.nn.Linear(i, o)
    torch.nn.init.normal_(m.weight, std=0.02)
    torch.nn.init.zeros_(m.bias)
    return m


class Layer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv, self.o, self.i, self.out = lin(C, 3 * C), lin(C, C), lin(C, FF), lin(FF, C)
        self.ln1, self.ln2 = torch.nn.LayerNorm(C, eps=EPS), torch.nn.LayerNorm(C, eps=EPS)

    def forward(self, x):
        b, t, _ = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, NH, HS).permute(2, 0, 3, 1, 4)   # (B, NH, T, HS) each
        att = torch.softmax((q @ k.transpose(-1, -2)) * (1.0 / math.sqrt(HS)), dim=-1)
        att = F.dropout(att, DROP, self.training)
        ctx = (att @ v).transpose(1, 2).reshape(b, t, C)
        x = self.ln1(x + F.dropout(self.o(ctx), DROP, self.training))
        h = F.gelu(self.i(x))
        return self.ln2(x + F.dropout(self.out(h), DROP, self.training))


class Bert(torch.nn.Module):
    def __init__(self, mlm, num_labels):
        super().__init__()
        self.word = torch.nn.Parameter(torch.randn(V, C) * 0.02)
        self.pos = torch.nn.Parameter(torch.randn(P, C) * 0.02)
        self.typ = torch.nn.Parameter(torch.randn(2, C) * 0.02)
        self.ln = torch.nn.LayerNorm(C, eps=EPS)
        self.layers = torch.nn.ModuleList([Layer() for _ in range(L)])
        if mlm:
            self.mlm_dense, self.mlm_ln = lin(C, C), torch.nn.LayerNorm(C, eps=EPS)
            self.mlm_bias = torch.nn.Parameter(torch.zeros(V))
        if num_labels:
            self.pool, self.cls = lin(C, C), lin(C, num_labels)

    def encode(self, ids, seg):
        t = ids.shape[1]
        h = self.ln(self.word[ids] + self.pos[:t][None] + self.typ[seg])
        h = F.dropout(h, DROP, self.training)
        for layer in self.layers:
            h = layer(h)
        return h

    def mlm_loss(self, ids, seg, positions, labels):
        h = self.encode(ids, seg).reshape(-1, C)[positions]          # (NM, C) gathered first
        # .float(): a no-op in fp32; under bf16 autocast PyTorch 1.13's CPU
        # layer_norm refuses a bf16 input with fp32 weights (the encoder's
        # LayerNorms get fp32 from their residual sums).
        h = self.mlm_ln(F.gelu(self.mlm_dense(h)).float())
        logits = h @ self.word.t() + self.mlm_bias                    # (NM, V)
        return F.cross_entropy(logits, labels)

    def classify(self, ids, seg):
        h = self.encode(ids, seg)
        return self.cls(torch.tanh(self.pool(h[:, 0])))


def make_optimizer(model):
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    return torch.optim.AdamW([{"params": decay, "weight_decay": 0.01},
                              {"params": no_decay, "weight_decay": 0.0}], lr=1e-4, eps=1e-6)


gen = torch.Generator().manual_seed(2)
FIRST_ID = 1000 if V > 2000 else 0      # past the special tokens of a real vocabulary
ids = torch.randint(FIRST_ID, V, (B, T), generator=gen)
seg = torch.zeros(B, T, dtype=torch.long)
per_row = NM // B
positions = torch.cat([torch.randperm(T - 1, generator=gen)[:per_row] + 1 + b * T for b in range(B)])
labels = torch.randint(FIRST_ID, V, (positions.numel(),), generator=gen)
lat_ids, lat_seg = ids[:1, :LAT_T].contiguous(), seg[:1, :LAT_T].contiguous()

trainer = Bert(mlm=True, num_labels=0).train()
opt = make_optimizer(trainer)
classifier = Bert(mlm=False, num_labels=2).eval()
classifier_int8 = torch.quantization.quantize_dynamic(copy.deepcopy(classifier), {torch.nn.Linear},
                                                      dtype=torch.qint8)


def train_step():
    opt.zero_grad(set_to_none=True)
    loss = trainer.mlm_loss(ids, seg, positions, labels)
    loss.backward()
    opt.step()


def train_step_bf16():
    opt.zero_grad(set_to_none=True)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = trainer.mlm_loss(ids, seg, positions, labels)
    loss.backward()
    opt.step()


def infer(x, s):
    with torch.inference_mode():
        classifier.classify(x, s)


def infer_bf16(x, s):
    with torch.inference_mode(), torch.autocast("cpu", dtype=torch.bfloat16):
        classifier.classify(x, s)


def infer_int8(x, s):
    with torch.inference_mode():
        classifier_int8.classify(x, s)


def timed(fn, k):
    """Wall seconds and CPU seconds (all threads of the process) of k calls."""
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(k):
        fn()
    return "%.9f %.9f" % (time.perf_counter() - t0, time.process_time() - c0)


print("ready", flush=True)
for line in sys.stdin:
    cmd = line.split()
    if not cmd:
        continue
    if cmd[0] == "train":
        print(timed(train_step, int(cmd[1])), flush=True)
    elif cmd[0] == "train_bf16":
        print(timed(train_step_bf16, int(cmd[1])), flush=True)
    elif cmd[0] == "infer":
        print(timed(lambda: infer(ids, seg), int(cmd[1])), flush=True)
    elif cmd[0] == "latency":
        print(timed(lambda: infer(lat_ids, lat_seg), int(cmd[1])), flush=True)
    elif cmd[0] == "infer_bf16":
        print(timed(lambda: infer_bf16(ids, seg), int(cmd[1])), flush=True)
    elif cmd[0] == "latency_bf16":
        print(timed(lambda: infer_bf16(lat_ids, lat_seg), int(cmd[1])), flush=True)
    elif cmd[0] == "infer_int8":
        print(timed(lambda: infer_int8(ids, seg), int(cmd[1])), flush=True)
    elif cmd[0] == "latency_int8":
        print(timed(lambda: infer_int8(lat_ids, lat_seg), int(cmd[1])), flush=True)
    elif cmd[0] == "mem":
        print("%.1f" % (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0), flush=True)
    elif cmd[0] == "quit":
        break
    else:
        print("error unknown command", flush=True)
