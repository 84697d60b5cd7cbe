"""Kim (2014)'s four TextCNN variants on one task, for each word-vectors file:
CNN-rand once, then CNN-static, CNN-non-static and CNN-multichannel per
vectors method; writes kim_<task>.json and kim_<task>.md into $GLUE_RESULTS
(default runs/results), one row per run (dev metrics of the best epoch,
training minutes), and with --analogies FILE each vectors file's word-analogy
accuracy per category (`glue vectors eval --json`). Each run is `glue finetune TASK --model textcnn` into
$GLUE_RUNS/kim/<task>/<variant>-<method>-seed<S>; a finished run (its
results.json) is reused, so the command can be stopped and run again.
usage: python3 eval/kim_table.py --glue BIN --vectors skipgram=FILE[,cbow=FILE,...]
       [--task sst2] [--seed 1] [--threads 1] [--set key=value ...] [--analogies FILE] [--note TEXT]"""
import argparse
import json
import os
import subprocess
import sys

VARIANTS = ["static", "non-static", "multichannel"]


def run(args, variant, method, vec):
    runs = os.environ.get("GLUE_RUNS", "runs")
    out = os.path.join(runs, "kim", args.task, "%s-%s-seed%d" % (variant, method, args.seed))
    results = os.path.join(out, "results.json")
    if not os.path.exists(results):
        cmd = [args.glue, "finetune", args.task, "--model", "textcnn", "--seed", str(args.seed),
               "--threads", str(args.threads), "--out", out, "--set", "embedding=" + variant]
        if vec:
            cmd += ["--set", "vectors=" + vec]
        for s in args.set:
            cmd += ["--set", s]
        print(" ".join(cmd), file=sys.stderr, flush=True)
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    with open(results) as f:
        r = json.load(f)
    return {"variant": "CNN-" + variant, "vectors": method, "vectors_file": vec, "run": out,
            "dev": r["best"]["dev"], "best_epoch": r["best"]["epoch"], "epochs": len(r["epochs"]),
            "train_minutes": round(r["train_seconds"] / 60, 1), "num_params": r["num_params"]}


def intrinsic(args, method, vec):
    out = subprocess.run([args.glue, "vectors", "eval", vec, "--analogies", args.analogies, "--json"], check=True,
                         stdout=subprocess.PIPE, text=True).stdout
    r = json.loads(out)
    cats = {c["category"]: round(100.0 * c["correct"] / c["answered"], 1) if c["answered"] else None
            for c in r["analogies"]}
    return {"vectors": method, "file": vec, "words": r["words"], "dim": r["dim"], "questions": r["questions"],
            "answered": r["answered"], "accuracy": round(r["accuracy"], 1), "categories": cats,
            "neighbours": {w: [n["word"] for n in ns] for w, ns in r["neighbours"].items()}}


def markdown_intrinsic(rows, args):
    cats = list(rows[0]["categories"].keys())
    lines = ["", "Word analogies (%s; 3CosAdd over the file's words, accuracy of the answered):" % args.analogies, "",
             "| vectors | words | answered | all | " + " | ".join(cats) + " | neighbours of '%s' |" % next(iter(rows[0]["neighbours"])),
             "|---|---:|---:|---:|" + "---:|" * len(cats) + "---|"]
    for r in rows:
        first = next(iter(r["neighbours"].values()))
        lines.append("| %s | %d | %d of %d | %.1f | %s | %s |" % (
            r["vectors"], r["words"], r["answered"], r["questions"], r["accuracy"],
            " | ".join("-" if r["categories"][c] is None else "%.1f" % r["categories"][c] for c in cats),
            ", ".join(first)))
    return "\n".join(lines) + "\n"


def markdown(rows, args):
    metrics = list(rows[0]["dev"].keys())
    lines = ["# Kim (2014) TextCNN variants on %s dev" % args.task, "",
             "Seed %d, --threads %d, settings: TextCNN's defaults%s. %s" % (
                 args.seed, args.threads, (" with " + ", ".join(args.set)) if args.set else "", args.note), "",
             "| variant | vectors | " + " | ".join("dev " + m for m in metrics) + " | best epoch | train min |",
             "|---|---|" + "---:|" * (len(metrics) + 2)]
    for r in rows:
        lines.append("| %s | %s | %s | %d of %d | %.1f |" % (
            r["variant"], r["vectors"], " | ".join("%.2f" % r["dev"][m] for m in metrics), r["best_epoch"],
            r["epochs"], r["train_minutes"]))
    return "\n".join(lines) + "\n"


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--glue", default="./glue")
    p.add_argument("--task", default="sst2")
    p.add_argument("--vectors", required=True, help="method=FILE,... (.vec or .vec.gz)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--set", action="append", default=[])
    p.add_argument("--analogies", help="an analogy file (data/analogies/questions.txt)")
    p.add_argument("--note", default="")
    args = p.parse_args()
    vectors = [v.split("=", 1) for v in args.vectors.split(",")]
    if any(len(v) != 2 for v in vectors):
        p.error("--vectors wants method=FILE pairs")
    rows = [run(args, "rand", "none", None)]
    for method, vec in vectors:
        for variant in VARIANTS:
            rows.append(run(args, variant, method, vec))
    out_dir = os.environ.get("GLUE_RESULTS", os.path.join(os.environ.get("GLUE_RUNS", "runs"), "results"))
    os.makedirs(out_dir, exist_ok=True)
    intr = [intrinsic(args, m, v) for m, v in vectors] if args.analogies else []
    base = os.path.join(out_dir, "kim_%s" % args.task)
    with open(base + ".json", "w") as f:
        json.dump({"task": args.task, "seed": args.seed, "threads": args.threads, "set": args.set,
                   "note": args.note, "rows": rows, "intrinsic": intr}, f, indent=1)
    with open(base + ".md", "w") as f:
        f.write(markdown(rows, args) + (markdown_intrinsic(intr, args) if intr else ""))
    print("wrote %s.json and %s.md" % (base, base))


main()
