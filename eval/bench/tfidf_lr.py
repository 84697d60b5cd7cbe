#!/usr/bin/python3
"""tfidf_lr.py — the TF-IDF + logistic-regression reference baseline (scikit-learn)
on the GLUE dev sets, the floor every glue baseline is compared against.

    /usr/bin/python3 eval/bench/tfidf_lr.py [--data data/glue] [--out results/tfidf_lr.json]

Model: a TfidfVectorizer (sklearn defaults: lowercased word unigrams) fitted on
the training text, a pair's two sentences joined by a space; LogisticRegression
(C=1, lbfgs) for the classification tasks, Ridge (alpha=1) on the 0..5 score for
STS-B. Metrics are GLUE's (the same definitions as metrics/metrics.c), x100.
Needs Debian's python3-sklearn and python3-scipy; reads .tsv or .tsv.gz.
"""
import argparse
import csv
import gzip
import json
import os
import sys

import numpy as np
from scipy.stats import pearsonr, spearmanr
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.metrics import accuracy_score, f1_score, matthews_corrcoef

# name: (directory, sentence columns, label column, header rows, metrics);
# the official column layouts (data/README.md).
TASKS = {
    "cola": ("CoLA", (3,), 1, 0, ("mcc",)),
    "sst2": ("SST-2", (0,), 1, 1, ("accuracy",)),
    "mrpc": ("MRPC", (3, 4), 0, 1, ("f1", "accuracy")),
    "stsb": ("STS-B", (7, 8), 9, 1, ("pearson", "spearman")),
    "rte": ("RTE", (1, 2), 3, 1, ("accuracy",)),
    "wnli": ("WNLI", (1, 2), 3, 1, ("accuracy",)),
}


def read_split(data, task, split):
    directory, text_cols, label_col, header, _ = TASKS[task]
    for name in (f"{split}.tsv", f"{split}.tsv.gz"):
        path = os.path.join(data, directory, name)
        if os.path.exists(path):
            break
    else:
        return None
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8-sig", newline="") as f:
        rows = list(csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE))[header:]
    rows = [r for r in rows if len(r) > max(text_cols + (label_col,))]
    texts = [" ".join(r[c] for c in text_cols) for r in rows]
    labels = [r[label_col] for r in rows]
    return texts, labels


def score(task, gold, pred):
    metrics = TASKS[task][4]
    out = {}
    for m in metrics:
        if m == "mcc":
            out[m] = matthews_corrcoef(gold, pred)
        elif m == "accuracy":
            out[m] = accuracy_score(gold, pred)
        elif m == "f1":
            out[m] = f1_score(gold, pred, pos_label="1")
        elif m == "pearson":
            out[m] = pearsonr(gold, pred)[0]
        elif m == "spearman":
            out[m] = spearmanr(gold, pred)[0]
    return {k: 100.0 * float(v) for k, v in out.items()}


def run_task(data, task):
    train, dev = read_split(data, task, "train"), read_split(data, task, "dev")
    if train is None or dev is None:
        return None
    vec = TfidfVectorizer()
    x_train, x_dev = vec.fit_transform(train[0]), vec.transform(dev[0])
    if task == "stsb":
        model = Ridge(alpha=1.0).fit(x_train, np.array(train[1], dtype=float))
        return score(task, np.array(dev[1], dtype=float), model.predict(x_dev))
    model = LogisticRegression(C=1.0, max_iter=2000).fit(x_train, train[1])
    return score(task, dev[1], model.predict(x_dev))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=os.environ.get("GLUE_DATA", "data/glue"))
    ap.add_argument("--out", default=None, help="write the results as JSON here")
    args = ap.parse_args()
    results = {}
    for task in TASKS:
        r = run_task(args.data, task)
        if r is None:
            print(f"{task}: no train/dev data under {args.data}", file=sys.stderr)
            continue
        results[task] = {"dev": r}
        print(task, " ".join(f"{k} {v:.2f}" for k, v in r.items()))
    summary = {"model": "tfidf+logistic regression (scikit-learn)", "command": " ".join(sys.argv),
               "tasks": results}
    if args.out:
        with open(args.out, "w") as f:
            json.dump(summary, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
