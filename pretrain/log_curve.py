#!/usr/bin/env python3
"""log_curve.py — the curve table of a model card from a pretraining log.

Training MLM loss and accuracy averaged over the last 50 steps (5 logged values) at
every 500th step and the last, with the held-out evaluations the run made at those steps. An
ELECTRA run's log: the generator's masked LM and the discriminator's loss and
accuracy in place of the MLM columns.
usage: pretrain/log_curve.py RUN/log.jsonl[.gz]   (prints a Markdown table)"""
import gzip
import json
import sys

f = sys.argv[1]
lines = (gzip.open(f, "rt") if f.endswith(".gz") else open(f)).read().splitlines()
rows = [json.loads(l) for l in lines]
tr = [r for r in rows if "loss" in r]
ev = {r["step"]: r for r in rows if "eval_loss" in r}
electra = "gen_loss" in tr[0]
if electra:   # the generator's masked LM, the discriminator's replaced-token detection
    print("| step | tokens seen | generator loss | generator acc | disc loss | disc acc | held-out loss | held-out acc "
          "| wall hours |")
    print("|---|---|---|---|---|---|---|---|---|")
else:
    print("| step | tokens seen | train MLM loss | train MLM acc | held-out loss | held-out acc | wall hours |")
    print("|---|---|---|---|---|---|---|")
end = tr[-1]["step"]
for s in list(range(500, end + 1, 500)) + ([end] if end % 500 else []):   # and the run's last step
    w = [r for r in tr if r["step"] <= s][-5:]
    if not w:
        continue
    last = w[-1]
    mean = lambda k: sum(r[k] for r in w) / len(w)
    e = ev.get(s)
    he = f"{e['eval_loss']:.3f} | {100 * e['eval_acc']:.1f}%" if e else " | "
    if electra:
        cols = f"{mean('gen_loss'):.3f} | {100 * mean('mlm_acc'):.1f}% | {mean('disc_loss'):.4f} | {100 * mean('disc_acc'):.1f}%"
    else:
        cols = f"{mean('loss'):.3f} | {100 * mean('mlm_acc'):.1f}%"
    print(f"| {s} | {last['tokens'] / 1e6:.1f}M | {cols} | {he} | {last['elapsed'] / 3600:.2f} |")
