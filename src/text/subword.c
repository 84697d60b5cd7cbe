/* subword.c — reversible cased WordPiece for translation (see subword.h). */
#include "text/subword.h"

#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "text/wordpiece.h"

SubwordTokenizer *subword_create(const Vocab *v) {
    /* translation pads with [PAD] */
    const VocabSpecials *sp = vocab_tokenizer_specials(v, 1, "train one with: glue vocab train --cased --mark-joins ...");
    if (!sp) return NULL;
    SubwordTokenizer *t = xcalloc(1, sizeof *t);
    t->vocab = v;
    t->sp = *sp;
    basic_tokenizer_init(&t->basic, 0);
    return t;
}

void subword_free(SubwordTokenizer *t) {
    if (!t) return;
    basic_tokenizer_free(&t->basic);
    free(t->word_ids);
    free(t);
}

int subword_encode(SubwordTokenizer *t, const char *text, size_t len, int *ids, int cap) {
    int nw = basic_tokenize(&t->basic, text, len), n = 0;
    for (int w = 0; w < nw; w++) {
        const BasicWord *word = &t->basic.words[w];
        int need = (int)word->nchars + 1;
        if (need > t->word_cap) {
            t->word_cap = 2 * need;
            t->word_ids = xrealloc(t->word_ids, sizeof(int) * (size_t)t->word_cap);
        }
        int k = wordpiece_encode_word_cont(t->vocab, t->sp.unk, basic_word(&t->basic, w), word->len,
                                           word->nchars, word->joined, t->word_ids);
        for (int i = 0; i < k; i++, n++)
            if (n < cap) ids[n] = t->word_ids[i];
    }
    return n;
}

char *subword_decode(const Vocab *v, const int *ids, int n) {
    const VocabSpecials *sp = vocab_specials(v);
    size_t cap = 64, len = 0;
    char *s = xmalloc(cap);
    for (int i = 0; i < n; i++) {
        int id = ids[i];
        if (id != sp->unk && (id == sp->pad || id == sp->cls || id == sp->sep || id == sp->mask)) continue;
        const char *tok = vocab_token(v, id);
        if (!tok) continue;
        size_t tl = strlen(tok);
        int cont = tl > VOCAB_CONT_PREFIX_LEN && memcmp(tok, VOCAB_CONT_PREFIX, VOCAB_CONT_PREFIX_LEN) == 0;
        if (cont) { tok += VOCAB_CONT_PREFIX_LEN; tl -= VOCAB_CONT_PREFIX_LEN; }
        if (len + tl + 2 > cap) {
            while (len + tl + 2 > cap) cap *= 2;
            s = xrealloc(s, cap);
        }
        if (!cont && len > 0) s[len++] = ' ';
        memcpy(s + len, tok, tl);
        len += tl;
    }
    s[len] = '\0';
    return s;
}
