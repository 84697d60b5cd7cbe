/* fuzz_tokenizer.c — the BERT tokenizer (basic tokenizer + WordPiece) on any
 * bytes, invalid UTF-8 included, as one text or a pair (split at the first
 * TAB), with a max_len from byte 0, on a fresh tokenizer each time (issue 22's
 * memcpy from NULL happened on a fresh one). */
#include "tests/fuzz/fuzz_util.h"
#include "text/tokenizer.h"
#include "text/vocab.h"

#include <stdlib.h>
#include <string.h>

static const char *const TOKENS[] = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "un", "##believ",
                                     "##able", "##s", "a", "##a", ".", ",", "é", "##é", "中", "hello", "world"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static Vocab *v;
    if (!v) v = vocab_from_tokens(TOKENS, (int)(sizeof TOKENS / sizeof TOKENS[0]));
    if (size < 1) return 0;
    int max_len = 3 + data[0] % 64;
    const char *text = (const char *)data + 1;
    size_t n = size - 1;
    const char *tab = memchr(text, '\t', n);
    Tokenizer *tok = tokenizer_create(v);
    int *ids = malloc(sizeof(int) * (size_t)max_len), *seg = malloc(sizeof(int) * (size_t)max_len);
    int T = tab ? tokenizer_encode(tok, text, (size_t)(tab - text), tab + 1, n - (size_t)(tab - text) - 1, max_len,
                                   ids, seg)
                : tokenizer_encode(tok, text, n, NULL, 0, max_len, ids, seg);
    if (T < 2 || T > max_len) __builtin_trap();
    for (int i = 0; i < T; i++)
        if (ids[i] < 0 || ids[i] >= vocab_size(v)) __builtin_trap();
    const char *names[64];
    int all = tokenizer_ids(tok, text, n, ids, names, max_len < 64 ? max_len : 64);
    if (all < 0) __builtin_trap();
    free(ids);
    free(seg);
    tokenizer_free(tok);
    return 0;
}
