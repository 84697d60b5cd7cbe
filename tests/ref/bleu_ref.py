"""bleu_ref.py — reference preprocessing for tests/test_bleu.c, run by
/usr/bin/python3: sacreBLEU's 13a tokenizer (the mteval-v13a rules, applied with
Python's own `re` engine on str, as sacreBLEU does) and Python's str.lower().

Input (argv[1]): a JSON array of strings. Output: a JSON object
{"tok13a": [...], "lower": [...]} with one entry per input string."""
import json
import re
import sys

# mteval-v13a, language-dependent part: space out ASCII symbols, then periods
# and commas unless next to a digit, then a dash after a digit.
RULES = [
    (re.compile(r"([\{-\~\[-\` -\&\(-\+\:-\@\/])"), r" \1 "),
    (re.compile(r"([^0-9])([\.,])"), r"\1 \2 "),
    (re.compile(r"([\.,])([^0-9])"), r" \1 \2"),
    (re.compile(r"([0-9])(-)"), r"\1 \2 "),
]


def tok13a(line):
    # Language-independent part, in mteval's order.
    line = line.replace("<skipped>", "").replace("-\n", "").replace("\n", " ")
    if "&" in line:
        for ent, ch in (("&quot;", '"'), ("&amp;", "&"), ("&lt;", "<"), ("&gt;", ">")):
            line = line.replace(ent, ch)
    line = " %s " % line
    for pattern, repl in RULES:
        line = pattern.sub(repl, line)
    return " ".join(line.split())


def main(path):
    texts = json.load(open(path, encoding="utf-8"))
    print(json.dumps({"tok13a": [tok13a(t) for t in texts], "lower": [t.lower() for t in texts]}))


if __name__ == "__main__":
    main(sys.argv[1])
