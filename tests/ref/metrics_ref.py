"""metrics_ref.py — reference values for tests/test_metrics.c from scikit-learn
and scipy (run with /usr/bin/python3, Debian's python3-sklearn/python3-scipy).

Input (argv[1]): cases, three lines each:
  cls K n      / predicted classes / gold classes      -> "accuracy f1 mcc"
  reg n        / predicted scores  / gold scores       -> "pearson spearman"
F1 is for class 1 against the rest (zero_division=0). Prints one line per case;
undefined values print as nan. Exits 3 when a library is missing."""
import math
import sys
import warnings

try:
    from scipy.stats import pearsonr, spearmanr
    from sklearn.metrics import accuracy_score, f1_score, matthews_corrcoef
except ImportError as e:
    print("MISSING %s: install python3-sklearn python3-scipy" % e)
    sys.exit(3)

warnings.simplefilter("ignore")   # constant inputs: scipy warns and returns nan


def main(path):
    lines = open(path).read().split("\n")
    out = []
    i = 0
    while i + 2 < len(lines) and lines[i]:
        head = lines[i].split()
        if head[0] == "cls":
            p = [int(v) for v in lines[i + 1].split()]
            g = [int(v) for v in lines[i + 2].split()]
            acc = accuracy_score(g, p)
            f1 = f1_score(g, p, labels=[1], average=None, zero_division=0)[0]
            mcc = matthews_corrcoef(g, p)
            out.append("%r %r %r" % (float(acc), float(f1), float(mcc)))
        else:
            x = [float(v) for v in lines[i + 1].split()]
            y = [float(v) for v in lines[i + 2].split()]
            pr = pearsonr(x, y)[0]
            sr = spearmanr(x, y)[0]
            out.append("%r %r" % (float(pr), float(sr)))
        i += 3
    print("\n".join(out))


if __name__ == "__main__":
    main(sys.argv[1])
