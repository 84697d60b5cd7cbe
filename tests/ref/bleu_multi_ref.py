"""bleu_multi_ref.py — reference corpus BLEU and chrF with several references
per segment, for tests/test_bleu.c and tests/test_chrf.c, run by /usr/bin/python3
with the standard library only. Written from sacreBLEU 2.x's definitions (not
its code), straightforwardly, with Counters:

BLEU: a line is rstripped, lowercased (optional, str.lower()), tokenized (13a
from bleu_ref.py, or none) and split on whitespace. A hypothesis n-gram (1..4)
is clipped by its maximum count over the segment's references; the segment's
reference length is the one closest to the hypothesis length, the shorter on a
tie. Sums over the corpus; 'exp' smoothing; brevity penalty. No match at all is
BLEU 0 with zero precisions; an order the system never reaches stops the
precisions there and makes BLEU 0.

chrF (beta 2, character orders 1..6, no word n-grams): a line is lowercased
(optional) and all whitespace removed; per order, [hyp n-grams (0 when the
reference has none of that order), ref n-grams, clipped matches]. Per segment,
the reference whose statistics give the best sentence chrF (the first on a tie)
is kept; statistics are summed; precision and recall are averaged over the
orders where both counts are positive; F-beta of the two, times 100.

Input (argv[1]): a JSON object {"cases": [{"hyp": [...], "refs": [[...], ...],
"lowercase": bool, "tokenize": "13a"|"none"}, ...]}, refs[k][i] being reference
k of line i. Output: a JSON array, per case {"bleu", "precisions", "bp",
"sys_len", "ref_len", "chrf"}."""
import json
import math
import os
import sys
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bleu_ref import tok13a  # noqa: E402

MAX_ORDER = 4
CHAR_ORDER = 6
BETA = 2


def words(line, lowercase, tokenize):
    line = line.rstrip()
    if lowercase:
        line = line.lower()
    if tokenize == "13a":
        line = tok13a(line)
    return line.split()


def word_ngrams(tokens):
    counts = Counter()
    for n in range(1, MAX_ORDER + 1):
        for i in range(len(tokens) - n + 1):
            counts[tuple(tokens[i:i + n])] += 1
    return counts


def bleu(hyps, refs, lowercase, tokenize):
    correct, total = [0] * MAX_ORDER, [0] * MAX_ORDER
    sys_len = ref_len = 0
    for i, hyp in enumerate(hyps):
        h = words(hyp, lowercase, tokenize)
        rs = [words(r[i], lowercase, tokenize) for r in refs]
        clip = Counter()
        for r in rs:
            for g, c in word_ngrams(r).items():
                clip[g] = max(clip[g], c)
        for g, c in word_ngrams(h).items():
            total[len(g) - 1] += c
            correct[len(g) - 1] += min(c, clip[g])
        sys_len += len(h)
        ref_len += len(min(rs, key=lambda r: (abs(len(r) - len(h)), len(r))))
    if sys_len < ref_len:
        bp = math.exp(1 - ref_len / sys_len) if sys_len > 0 else 0.0
    else:
        bp = 1.0
    precisions = [0.0] * MAX_ORDER
    score = 0.0
    if any(correct):
        halvings, reached = 1.0, True
        for n in range(MAX_ORDER):
            if total[n] == 0:
                reached = False
                break
            if correct[n] == 0:
                halvings *= 2
                precisions[n] = 100.0 / (halvings * total[n])
            else:
                precisions[n] = 100.0 * correct[n] / total[n]
        if reached:
            score = bp * math.exp(sum(math.log(p) for p in precisions) / MAX_ORDER)
    return {"bleu": score, "precisions": precisions, "bp": bp, "sys_len": sys_len, "ref_len": ref_len}


def chars(line, lowercase):
    if lowercase:
        line = line.lower()
    return "".join(line.split())


def char_ngrams(s, n):
    return Counter(s[i:i + n] for i in range(len(s) - n + 1))


def chrf_pair(h, r):
    stats = []
    for n in range(1, CHAR_ORDER + 1):
        hc, rc = char_ngrams(h, n), char_ngrams(r, n)
        match = sum(min(c, rc[g]) for g, c in hc.items())
        stats.append((sum(hc.values()) if rc else 0, sum(rc.values()), match))
    return stats


def chrf_score(stats):
    prec = rec = 0.0
    orders = 0
    for n_hyp, n_ref, n_match in stats:
        if n_hyp > 0 and n_ref > 0:
            prec += n_match / n_hyp
            rec += n_match / n_ref
            orders += 1
    if orders == 0:
        return 0.0
    prec /= orders
    rec /= orders
    if prec + rec == 0:
        return 0.0
    factor = BETA ** 2
    score = (1 + factor) * prec * rec
    score /= factor * prec + rec
    return 100 * score


def chrf(hyps, refs, lowercase):
    sums = [[0, 0, 0] for _ in range(CHAR_ORDER)]
    for i, hyp in enumerate(hyps):
        h = chars(hyp, lowercase)
        best, best_f = None, -1.0
        for r in refs:
            stats = chrf_pair(h, chars(r[i], lowercase))
            f = chrf_score(stats)
            if f > best_f:
                best, best_f = stats, f
        for n in range(CHAR_ORDER):
            for j in range(3):
                sums[n][j] += best[n][j]
    return chrf_score(sums)


def main(path):
    with open(path, encoding="utf-8") as f:
        cases = json.load(f)["cases"]
    out = []
    for c in cases:
        r = bleu(c["hyp"], c["refs"], c["lowercase"], c["tokenize"])
        r["chrf"] = chrf(c["hyp"], c["refs"], c["lowercase"])
        out.append(r)
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1])
