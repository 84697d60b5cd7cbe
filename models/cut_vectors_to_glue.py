"""Cuts a .vec file to the words the GLUE training files use, for the small
word-vectors file shipped in models/ (see models/README.md).

The words are those of BERT's basic tokenizer, lower-cased (the tokenizer of
glue's word-level models and of `glue vectors train`): accents stripped, split
at whitespace and around every punctuation character. Every text column of
each GLUE task's train.tsv(.gz) (GLUE layout) and of the training subsets'
train.json(.gz) is read; numbers and labels are harmless extras.
With DIGITS, the numbers are rewritten with that many significant digits
(smaller file; 4 changes a vector by < 0.05% of its values' size).
usage: python3 cut_vectors_to_glue.py IN.vec[.gz] OUT.vec GLUE_DIR [SUBSETS_DIR [DIGITS]]"""
import glob
import gzip
import json
import os
import sys
import unicodedata


def is_punct(ch):
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def words(text):
    text = unicodedata.normalize("NFD", text.lower())
    text = "".join(c for c in text if unicodedata.category(c) != "Mn")
    out, cur = [], []
    for ch in text:
        if ch.isspace() or is_punct(ch):
            if cur:
                out.append("".join(cur))
                cur = []
            if not ch.isspace():
                out.append(ch)
        else:
            cur.append(ch)
    if cur:
        out.append("".join(cur))
    return out


def open_text(path):
    return gzip.open(path, "rt", encoding="utf-8", errors="replace") if path.endswith(".gz") else open(path, encoding="utf-8", errors="replace")


def glue_words(glue_dir, subsets_dir):
    vocab = set()
    for path in sorted(glob.glob(os.path.join(glue_dir, "*", "train.tsv*"))):
        with open_text(path) as f:
            for line in f:
                for cell in line.rstrip("\n").split("\t"):
                    vocab.update(words(cell))
    if subsets_dir:
        for path in sorted(glob.glob(os.path.join(subsets_dir, "*", "train.json*"))):
            with open_text(path) as f:
                for row in json.load(f).values():
                    for key in ("text_a", "text_b"):
                        vocab.update(words(row.get(key) or ""))
    return vocab


def main():
    src, dst, glue_dir = sys.argv[1:4]
    keep = glue_words(glue_dir, sys.argv[4] if len(sys.argv) > 4 else None)
    digits = int(sys.argv[5]) if len(sys.argv) > 5 else 0
    with open_text(src) as f:
        header = f.readline().split()
        rows = [line for line in f if line.split(" ", 1)[0] in keep]
    if digits:
        fmt = "%%.%dg" % digits
        rows = [" ".join([r.split()[0]] + [fmt % float(x) for x in r.split()[1:]]) + "\n" for r in rows]
    with open(dst, "w", encoding="utf-8") as out:
        out.write("%d %s\n" % (len(rows), header[1]))
        out.writelines(rows)
    print("%s: kept %d of %s words (%d GLUE training words)" % (dst, len(rows), header[0], len(keep)), file=sys.stderr)


main()
