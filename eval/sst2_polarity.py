"""Why the encoder loses SST-2 to bag-of-words models (issue 48's question):
how well each finished run fits SST-2's training phrases and the dev set,
overall and by buckets of the examples' words, against how often those words
occur in the encoder's pretraining text. Writes sst2_polarity.json and .md
into --out (a results folder).

Each run labels every train and dev row through `glue predict --run DIR`
(stdin, one text per line). The pretraining text is counted word by word
(lower-cased, split at whitespace and punctuation; WikiExtractor's <doc>
lines skipped, Brown's /tags dropped). Polarity words are those of SST-2's
training phrases with |log-odds| > 1.5 between the classes (add-one
smoothed, seen in at least 20 phrases). A bucket's "BERT - TextCNN" gap
comes with a 95% bootstrap interval of its difference from the other
bucket's gap (10,000 resamples of the split, seed 1).
usage: python3 eval/sst2_polarity.py --glue BIN --run NAME=DIR ... --corpus FILE ... [--data data/glue/SST-2] [--out results]"""
import argparse
import collections
import gzip
import json
import math
import os
import re
import subprocess
import sys

import numpy as np

TOKEN = re.compile(r"[a-z0-9]+|[^\sa-z0-9]")
POLARITY_MIN_PHRASES, POLARITY_LOG_ODDS = 20, 1.5
TITLE = "SST-2: what the encoder fits, by the words of the examples"


def read_split(data, split):
    texts, labels = [], []
    with open(os.path.join(data, split + ".tsv"), encoding="utf-8") as f:
        next(f)
        for line in f:
            text, label = line.rstrip("\n").split("\t")
            texts.append(text)
            labels.append(int(label))
    return texts, np.array(labels)


def predict(glue, run, texts):
    out = subprocess.run([glue, "predict", "--run", run], input="\n".join(texts) + "\n", capture_output=True,
                         text=True, check=True).stdout.splitlines()
    assert len(out) == len(texts), (run, len(out), len(texts))
    return np.array([1 if line.split("\t")[0] == "positive" else 0 for line in out])


def corpus_counts(files):
    counts = collections.Counter()
    for path in files:
        brown = "brown" in path   # NLTK's tagged Brown corpus: word/TAG tokens
        with gzip.open(path, "rt", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("<doc") or line.startswith("</doc"):
                    continue
                if brown:
                    line = " ".join(w.rsplit("/", 1)[0] for w in line.split())
                counts.update(TOKEN.findall(line.lower()))
    return counts


def split_by_wordpiece(glue, words, vocab):
    """The words the vocabulary's WordPiece (glue tokenize: BERT's uncased cleaning, greedy longest match)
    cuts into more than one piece."""
    words = sorted(words)
    out = subprocess.run([glue, "tokenize", "--vocab", vocab], input="\n".join(words) + "\n", capture_output=True,
                         text=True, check=True).stdout.splitlines()
    assert len(out) == len(words), (len(out), len(words))
    return {w for w, line in zip(words, out) if len(line.split("\t")[0].split()) != 1}


def polarity_words(texts, labels):
    pos, neg = collections.Counter(), collections.Counter()
    for text, y in zip(texts, labels):
        (pos if y else neg).update(set(TOKEN.findall(text.lower())))
    npos = int(labels.sum())
    nneg = len(labels) - npos
    polar = {}
    for w in set(pos) | set(neg):
        if pos[w] + neg[w] < POLARITY_MIN_PHRASES:
            continue
        lo = math.log((pos[w] + 1) / (npos + 2)) - math.log((neg[w] + 1) / (nneg + 2))
        if abs(lo) > POLARITY_LOG_ODDS:
            polar[w] = lo
    return polar, pos, neg


def bootstrap_gap_difference(a, b, bucket, reps=10000):
    """95% interval of (gap in bucket) - (gap outside it), gap = accuracy of a - accuracy of b."""
    rng = np.random.default_rng(1)
    n, diffs = len(a), []
    for _ in range(reps):
        i = rng.integers(0, n, n)
        yes, no = bucket[i], ~bucket[i]
        if yes.sum() == 0 or no.sum() == 0:
            continue
        diffs.append(100 * ((a[i][yes].mean() - b[i][yes].mean()) - (a[i][no].mean() - b[i][no].mean())))
    if not diffs:   # the bucket holds every example or none
        return None
    return [round(float(x), 2) for x in np.percentile(diffs, [2.5, 97.5])]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--glue", required=True)
    ap.add_argument("--run", action="append", required=True, help="NAME=DIR; the first is compared with the second")
    ap.add_argument("--corpus", action="append", required=True)
    ap.add_argument("--vocab", default="../shared/models/vocab/bert-base-uncased-vocab.txt")
    ap.add_argument("--data", default="data/glue/SST-2")
    ap.add_argument("--out", default="results")
    args = ap.parse_args()
    runs = [r.split("=", 1) for r in args.run]
    train, ytrain = read_split(args.data, "train")
    dev, ydev = read_split(args.data, "dev")
    counts = corpus_counts(args.corpus)
    total = sum(counts.values())
    polar, pos, neg = polarity_words(train, ytrain)
    dev_words = [TOKEN.findall(t.lower()) for t in dev]
    polar_tok = [counts.get(w, 0) for ws in dev_words for w in ws if w.isalpha() and w in polar] or [0]
    other_tok = [counts.get(w, 0) for ws in dev_words for w in ws if w.isalpha() and w not in polar] or [0]
    split_polar = split_by_wordpiece(args.glue, [w for w in polar if w.isalpha()], args.vocab)
    top = sorted(polar, key=lambda w: -(pos[w] + neg[w]))[:15]
    result = {
        "command": "python3 eval/sst2_polarity.py " + " ".join(sys.argv[1:]),
        "glue": subprocess.run([args.glue, "--version"], capture_output=True, text=True).stdout.splitlines()[0],
        "runs": {name: run for name, run in runs},
        "pretraining_words": total,
        "polarity_words": len(polar),
        "dev_tokens": {"polarity": {"tokens": len(polar_tok), "median_count": float(np.median(polar_tok)),
                                    "per_million": round(1e6 * float(np.median(polar_tok)) / total, 1)},
                       "other": {"tokens": len(other_tok), "median_count": float(np.median(other_tok)),
                                 "per_million": round(1e6 * float(np.median(other_tok)) / total, 1)}},
        "frequent_polarity_words": {w: counts.get(w, 0) for w in top},
        "polarity_words_split": len(split_polar),
        "frequent_split_polarity_words": sorted(split_polar, key=lambda w: -(pos[w] + neg[w]))[:15],
        "splits": {},
    }
    buckets = {
        "a word seen < 100 times in pretraining": lambda ws: any(counts.get(w, 0) < 100 for w in ws),
        "a polarity word seen < 1,000 times in pretraining": lambda ws: any(
            w in polar and counts.get(w, 0) < 1000 for w in ws),
        "no polarity word": lambda ws: not any(w in polar for w in ws),
        "a polarity word the vocabulary splits into pieces": lambda ws: any(w in split_polar for w in ws),
        "a negation (not, n't, no, never, nothing)": lambda ws: any(
            w in ("not", "t", "no", "never", "nothing") for w in ws),
        "longer than 20 words": lambda ws: len(ws) > 20,
    }
    for split, texts, y in (("train", train, ytrain), ("dev", dev, ydev)):
        words = [TOKEN.findall(t.lower()) for t in texts]
        right = {name: predict(args.glue, run, texts) == y for name, run in runs}
        a, b = right[runs[0][0]], right[runs[1][0]]
        rows = [{"bucket": "all", "examples": len(y), **{n: round(100 * r.mean(), 2) for n, r in right.items()},
                 "gap": round(100 * (a.mean() - b.mean()), 2)}]
        for name, test in buckets.items():
            inside = np.array([test(ws) for ws in words])
            for tag, sel in (("yes", inside), ("no", ~inside)):
                row = {"bucket": "%s: %s" % (name, tag), "examples": int(sel.sum())}
                row.update({n: round(100 * r[sel].mean(), 2) for n, r in right.items()})
                row["gap"] = round(row[runs[0][0]] - row[runs[1][0]], 2)
                interval = bootstrap_gap_difference(a, b, inside) if tag == "yes" else None
                if interval:
                    row["gap_difference_95"] = interval
                rows.append(row)
        result["splits"][split] = rows
    names = [n for n, _ in runs]
    gap_col = "%s - %s" % (names[0], names[1])
    interval_col = "95% interval of the gap's difference from the other bucket's"
    result["analysis"] = TITLE
    result["tables"] = [{"title": "%s: accuracy (%%) by bucket" % split,
                         "columns": ["bucket", "examples"] + names + [gap_col, interval_col],
                         "rows": [[r["bucket"], r["examples"]] + [r[n] for n in names] + [r["gap"], "[%+.2f, %+.2f]" % tuple(
                             r["gap_difference_95"]) if "gap_difference_95" in r else ""] for r in rows]}
                        for split, rows in result["splits"].items()]
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "sst2_polarity.json")
    with open(path + ".tmp", "w") as f:
        json.dump(result, f, indent=1, allow_nan=False)
    os.replace(path + ".tmp", path)
    md = ["# " + TITLE, "",
          "Written by `%s` (%s)." % (result["command"], result["glue"]), "",
          "Pretraining text: %s words. Polarity words (SST-2 training phrases, |log-odds| > %.1f, in >= %d phrases): %d,"
          " of which the vocabulary (%s) splits %d into word pieces (the most frequent: %s)."
          % (format(total, ","), POLARITY_LOG_ODDS, POLARITY_MIN_PHRASES, len(polar), os.path.basename(args.vocab),
             len(split_polar), ", ".join(result["frequent_split_polarity_words"])),
          "In the dev set's %d polarity-word tokens the median word occurs %.1f times per million words of the"
          " pretraining text; its %d other word tokens, %.1f per million." %
          (len(polar_tok), result["dev_tokens"]["polarity"]["per_million"], len(other_tok),
           result["dev_tokens"]["other"]["per_million"]), "",
          "The most frequent polarity words of SST-2's training phrases and their counts in the pretraining text: " +
          ", ".join("%s %s" % (w, format(c, ",")) for w, c in result["frequent_polarity_words"].items()) + ".", ""]
    for t in result["tables"]:
        md += ["## " + t["title"], "", "| " + " | ".join(t["columns"]) + " |",
               "|---|---:|" + "---:|" * (len(names) + 1) + "---|"]
        md += ["| %s | %d | %s | %+.2f | %s |" % (r[0], r[1], " | ".join("%.2f" % v for v in r[2:-2]), r[-2], r[-1])
               for r in t["rows"]]
        md.append("")
    with open(os.path.join(args.out, "sst2_polarity.md.tmp"), "w") as f:
        f.write("\n".join(md))
    os.replace(os.path.join(args.out, "sst2_polarity.md.tmp"), os.path.join(args.out, "sst2_polarity.md"))
    print("wrote", path, "and sst2_polarity.md", file=sys.stderr)


if __name__ == "__main__":
    main()
