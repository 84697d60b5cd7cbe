"""The PyTorch side of `glue bench rnn` (eval/bench/bench_rnn.c): bidirectional
nn.LSTM and nn.GRU (batch_first, full-length rows, fp32) timed the way the C
side times ours: `train` = zero the gradients, forward, backward of
sum(out * G) (gradients of x and every weight); `infer` = forward under
torch.inference_mode(). One warm-up call, then REPS timed calls of each; prints
{"lstm": {"20": {"train": [s, ..], "infer": [..]}, ..}, "gru": {..}} on stdout.
usage: bench_rnn.py BATCH DIM HIDDEN THREADS REPS L1[,L2..] [lstm,gru]"""
import json
import sys
import time

try:
    import torch
except ImportError:
    sys.exit(77)

B, D, H, threads, reps = (int(a) for a in sys.argv[1:6])
lengths = [int(t) for t in sys.argv[6].split(",")]
cells = sys.argv[7].split(",") if len(sys.argv) > 7 else ["lstm", "gru"]
torch.set_num_threads(threads)
torch.manual_seed(1)
out = {}
for cell in cells:
    cls = {"lstm": torch.nn.LSTM, "gru": torch.nn.GRU}[cell]
    rnn = cls(D, H, batch_first=True, bidirectional=True)
    out[cell] = {}
    for T in lengths:
        x = torch.rand(B, T, D) * 2 - 1
        x.requires_grad_()
        g = torch.rand(B, T, 2 * H) * 2 - 1

        def train():
            rnn.zero_grad(set_to_none=False)
            x.grad = None
            y, _ = rnn(x)
            y.backward(g)

        def infer():
            with torch.inference_mode():
                rnn(x)

        times = {}
        for what, fn in (("train", train), ("infer", infer)):
            fn()   # warm-up
            ts = []
            for _ in range(reps):
                t0 = time.perf_counter()
                fn()
                ts.append(time.perf_counter() - t0)
            times[what] = ts
        out[cell][str(T)] = times
print(json.dumps(out))
