/* tokenizer.c — BasicTokenizer + WordPiece into ids, and [CLS]/[SEP] model
 * inputs with BERT's longest-first truncation (see tokenizer.h). */
#include "text/tokenizer.h"

#include "core/common.h"
#include "text/wordpiece.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TOKENIZER_LOCAL_VOCAB "models/vocab.txt"
#define TOKENIZER_SHARED_VOCAB "../shared/models/vocab/bert-base-uncased-vocab.txt"

Tokenizer *tokenizer_create(const Vocab *v) {
    const VocabSpecials *sp = vocab_tokenizer_specials(
        v, 0, "a BERT vocabulary lists [PAD] [UNK] [CLS] [SEP] [MASK] (glue vocab train writes them)");
    if (!sp) return NULL;
    Tokenizer *t = xcalloc(1, sizeof *t);
    t->vocab = v;
    t->sp = *sp;
    basic_tokenizer_init(&t->basic, 1);
    return t;
}

void tokenizer_free(Tokenizer *t) {
    if (!t) return;
    basic_tokenizer_free(&t->basic);
    free(t->ids_a);
    free(t->ids_b);
    free(t);
}

/* All WordPiece ids of a text into a growing scratch array; returns the count. */
static int tokenizer_all_ids(Tokenizer *t, const char *text, size_t len, int **ids, int *cap) {
    int nw = basic_tokenize(&t->basic, text, len), n = 0;
    for (int w = 0; w < nw; w++) {
        const BasicWord *word = &t->basic.words[w];
        int need = n + (int)word->nchars + 1;
        if (need > *cap) {
            while (*cap < need) *cap = *cap ? 2 * *cap : 256;
            *ids = xrealloc(*ids, sizeof(int) * (size_t)*cap);
        }
        n += wordpiece_encode_word(t->vocab, t->sp.unk, basic_word(&t->basic, w), word->len, word->nchars,
                                   *ids + n);
    }
    return n;
}

int tokenizer_ids(Tokenizer *t, const char *text, size_t len, int *ids, const char **tokens, int cap) {
    int n = tokenizer_all_ids(t, text, len, &t->ids_a, &t->cap_a);
    for (int i = 0; i < n && i < cap; i++) {
        ids[i] = t->ids_a[i];
        if (tokens) tokens[i] = vocab_token(t->vocab, ids[i]);
    }
    return n;
}

int tokenizer_encode(Tokenizer *t, const char *a, size_t la, const char *b, size_t lb, int max_len,
                     int *ids, int *segments) {
    int specials = b ? 3 : 2;
    if (max_len < specials) DIE("tokenizer_encode: max_len %d leaves no room for %d special tokens", max_len, specials);
    int na = tokenizer_all_ids(t, a, la, &t->ids_a, &t->cap_a);
    int nb = b ? tokenizer_all_ids(t, b, lb, &t->ids_b, &t->cap_b) : 0;
    int budget = max_len - specials;
    t->last_len = na + nb + specials;
    while (na + nb > budget) {
        if (na > nb) na--;
        else nb--;
    }
    int T = 0;
    /* A text empty after cleaning, on a fresh tokenizer, leaves ids_a/ids_b NULL:
     * memcpy from NULL is undefined even for 0 bytes, hence the guards. */
    ids[T++] = t->sp.cls;
    if (na) memcpy(ids + T, t->ids_a, sizeof(int) * (size_t)na);
    T += na;
    ids[T++] = t->sp.sep;
    int len_a = T;
    if (b) {
        if (nb) memcpy(ids + T, t->ids_b, sizeof(int) * (size_t)nb);
        T += nb;
        ids[T++] = t->sp.sep;
    }
    if (segments)
        for (int i = 0; i < T; i++) segments[i] = i >= len_a;
    return T;
}

const char *tokenizer_default_vocab_path(void) {
    const char *env = getenv("GLUE_VOCAB");
    if (env && *env) return env;
    if (access(TOKENIZER_LOCAL_VOCAB, R_OK) == 0) return TOKENIZER_LOCAL_VOCAB;
    return TOKENIZER_SHARED_VOCAB;
}
