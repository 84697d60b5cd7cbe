# tokenizer_reference.py — an independent reference for tests/test_tokenizer.c:
# the reference BERT BasicTokenizer (google-research/bert tokenization.py,
# do_lower_case=True) restated with Python's own str.lower() and unicodedata,
# run on random strings drawn from tricky Unicode ranges (capital sigma, U+0130,
# combining marks, CJK, Hangul, controls, odd spaces, punctuation, musical
# symbols with combining classes). Prints one line per string:
#   hex(utf-8 input) TAB hex(word1),hex(word2),...
# usage: /usr/bin/python3 tests/tokenizer_reference.py SEED COUNT
#
# With "bpe" it is instead a naive reference for WordPiece vocabulary training
# (tests/test_vocab_train.c): the same recipe as src/text/wordpiece_train.c but
# recounting every pair from scratch before each merge. Prints the vocabulary.
#   /usr/bin/python3 tests/tokenizer_reference.py bpe SIZE MIN_COUNT FILE...
import random, sys, unicodedata as ud
def control(c): return c not in '\t\n\r' and ud.category(c) in ('Cc', 'Cf')
def space(c): return c in ' \t\n\r' or ud.category(c) == 'Zs'
def punct(c):
    o = ord(c)
    return 33 <= o <= 47 or 58 <= o <= 64 or 91 <= o <= 96 or 123 <= o <= 126 or ud.category(c).startswith('P')
CJK = [(0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F), (0x2B740, 0x2B81F),
       (0x2B820, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F)]
def cjk(c): return any(a <= ord(c) <= b for a, b in CJK)
def basic(t):
    t = ''.join(' ' if space(c) else c for c in t if not (ord(c) in (0, 0xFFFD) or control(c)))
    t = ''.join(' ' + c + ' ' if cjk(c) else c for c in t)
    words = []
    for tok in t.split():
        tok = ''.join(c for c in ud.normalize('NFD', tok.lower()) if ud.category(c) != 'Mn')
        cur = []
        for c in tok:
            if punct(c):
                words.append(''.join(cur)); words.append(c); cur = []
            else:
                cur.append(c)
        words.append(''.join(cur))
    return ' '.join(w for w in words if w).split()
RANGES = [(0x20, 0x7E)] * 6 + [(0x0, 0x1F), (0x7F, 0xA0), (0xA0, 0x24F), (0x130, 0x131), (0x300, 0x36F),
          (0x370, 0x3FF), (0x3A3, 0x3A3), (0x3A3, 0x3A3), (0x400, 0x4FF), (0x590, 0x6FF), (0x900, 0x97F),
          (0x1E00, 0x1FFF), (0x2000, 0x206F), (0x2100, 0x218F), (0x2460, 0x24FF), (0x3000, 0x30FF),
          (0x4E00, 0x4E20), (0xAC00, 0xAC40), (0xE000, 0xE010), (0xF900, 0xF920), (0xFB00, 0xFB4F),
          (0xFE00, 0xFE6F), (0xFF00, 0xFFEF), (0x1D100, 0x1D1EA), (0x1F300, 0x1F64F), (0x2F800, 0x2F810)]
def rand_char():
    while True:
        a, b = random.choice(RANGES)
        c = chr(random.randint(a, b))
        if ud.category(c) not in ('Cn', 'Cs'): return c

def bpe(paths, size, min_count):
    import collections, gzip
    counts = collections.Counter()
    for p in paths:
        with (gzip.open(p, 'rt', encoding='utf-8') if p.endswith('.gz') else open(p, encoding='utf-8')) as f:
            for line in f:
                counts.update(w for w in basic(line.rstrip('\n')) if len(w) <= 200)
    vocab = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]']
    vocab += sorted({w[0] for w in counts}) + ['##' + c for c in sorted({c for w in counts for c in w[1:]})]
    ids = {t: i for i, t in enumerate(vocab)}
    words = [[ids[w[0]]] + [ids['##' + c] for c in w[1:]] for w in counts]
    freq = list(counts.values())
    while len(vocab) < size:
        pairs = collections.Counter()
        for s, c in zip(words, freq):
            for p in zip(s, s[1:]):
                pairs[p] += c
        if not pairs:
            break
        best = min(pairs, key=lambda p: (-pairs[p], p))
        if pairs[best] < min_count:
            break
        tok = vocab[best[0]] + vocab[best[1]][2:]
        if tok not in ids:
            ids[tok] = len(vocab)
            vocab.append(tok)
        new = ids[tok]
        for k, s in enumerate(words):
            out, i = [], 0
            while i < len(s):
                if i + 1 < len(s) and (s[i], s[i + 1]) == best:
                    out.append(new)
                    i += 2
                else:
                    out.append(s[i])
                    i += 1
            words[k] = out
    return vocab

if sys.argv[1] == 'bpe':
    sys.stdout.write(''.join(t + '\n' for t in bpe(sys.argv[4:], int(sys.argv[2]), int(sys.argv[3]))))
    sys.exit(0)

random.seed(int(sys.argv[1]))
for _ in range(int(sys.argv[2]) if len(sys.argv) > 2 else 3000):
    s = ''.join(rand_char() for _ in range(random.randint(1, 30)))
    print(s.encode().hex() + '\t' + ','.join(w.encode().hex() for w in basic(s)))
