"""multilabel_ref.py — reference values for tests/test_metrics_multilabel.c from
scikit-learn (run with /usr/bin/python3, Debian's python3-sklearn).

Input (argv[1]): cases, each a header line and data lines of numbers:
  ml K n      / predicted 0/1 cells / gold 0/1 cells / scores / grid
      (n*K cells row-major; scores are float32 values, grid float32 thresholds)
      -> micro, macro, samples (P, R, F1) from precision_recall_fscore_support,
         the per-label table (average=None), hamming_loss, accuracy_score,
         precision@k for k = 1..min(K, 3), the micro-F1 of scores >= t for each
         grid value, and the per-label thresholds that maximise each label's F1
         (ties: the highest; F1 0 everywhere: the fallback 0.5) over the
         distinct scores and over the grid
  sl K n      / predicted classes / gold classes
      -> macro and micro P, R, F1 (scikit-learn's default labels), macro F1 of
         f1_score, and the per-label table over labels 0..K-1
Prints one JSON object per case. zero_division is left at its default ("warn",
which gives 0). Exits 3 when a library is missing."""
import json
import sys
import warnings
from fractions import Fraction

try:
    import numpy as np
    from sklearn.metrics import (accuracy_score, f1_score, hamming_loss,
                                 precision_recall_fscore_support)
except ImportError as e:
    print("MISSING %s: install python3-sklearn" % e)
    sys.exit(3)

warnings.simplefilter("ignore")   # zero_division warnings: the value is 0
FALLBACK = np.float32(0.5)


def prf(y, p, average, labels=None):
    r = precision_recall_fscore_support(y, p, average=average, labels=labels)
    return [float(v) for v in r[:3]]


def table(y, p, labels=None):
    r = precision_recall_fscore_support(y, p, average=None, labels=labels)
    return [[float(v) for v in col] for col in r]


def precision_at_k(s, y, k):
    total = 0.0
    for i in range(s.shape[0]):
        order = np.lexsort((np.arange(s.shape[1]), -s[i].astype(np.float64)))
        total += y[i, order[:k]].sum() / k
    return total / s.shape[0]


def tune(col, gold, candidates):
    """Highest-F1 threshold (p >= t), exact fractions; ties: the highest t."""
    pos = int(gold.sum())
    best, best_t = Fraction(0), FALLBACK
    for t in sorted(set(candidates), reverse=True):
        pred = col >= t
        tp = int((pred & (gold == 1)).sum())
        fp = int((pred & (gold == 0)).sum())
        den = 2 * tp + fp + (pos - tp)
        f = Fraction(2 * tp, den) if den else Fraction(0)
        if f > best:
            best, best_t = f, t
    return float(best_t)


def multi(K, n, lines):
    p = np.array([int(v) for v in lines[0].split()], dtype=int).reshape(n, K)
    y = np.array([int(v) for v in lines[1].split()], dtype=int).reshape(n, K)
    s = np.array([float(v) for v in lines[2].split()], dtype=np.float32).reshape(n, K)
    grid = np.array([float(v) for v in lines[3].split()], dtype=np.float32)
    out = {"micro": prf(y, p, "micro"), "macro": prf(y, p, "macro"), "samples": prf(y, p, "samples"),
           "table": table(y, p), "hamming": float(hamming_loss(y, p)), "subset": float(accuracy_score(y, p)),
           "p_at_k": [precision_at_k(s, y, k) for k in range(1, min(K, 3) + 1)],
           "curve": [float(f1_score(y, (s >= t).astype(int), average="micro")) for t in grid],
           "tuned": [tune(s[:, k], y[:, k], list(s[:, k])) for k in range(K)],
           "tuned_grid": [tune(s[:, k], y[:, k], list(grid)) for k in range(K)]}
    return out


def single(K, n, lines):
    p = [int(v) for v in lines[0].split()]
    y = [int(v) for v in lines[1].split()]
    return {"macro": prf(y, p, "macro"), "micro": prf(y, p, "micro"),
            "macro_f1": float(f1_score(y, p, average="macro")), "table": table(y, p, list(range(K)))}


def main(path):
    lines = open(path).read().split("\n")
    i = 0
    while i < len(lines) and lines[i]:
        kind, K, n = lines[i].split()
        K, n = int(K), int(n)
        if kind == "ml":
            print(json.dumps(multi(K, n, lines[i + 1:i + 5])))
            i += 5
        else:
            print(json.dumps(single(K, n, lines[i + 1:i + 3])))
            i += 3


if __name__ == "__main__":
    main(sys.argv[1])
