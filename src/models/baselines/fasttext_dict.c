/* fasttext_dict.c — fastText's vocabulary and the encoding of texts into input rows.
 *
 * A text becomes its words (whitespace split like the reference, or the BERT basic
 * tokenizer's words), then FT_SEP and the second text for pair tasks, then FT_EOS
 * (the reference reads the newline ending each line as that word). Its input rows
 * are: each known word's id, the char n-grams of every word but FT_EOS (maxn > 0),
 * and the word n-grams of all words, known or not (wordNgrams > 1); n-gram rows
 * live after the V word rows, in `bucket` hashed rows — exactly the reference's
 * Dictionary::getLine for supervised training. A quantized model keeps only some
 * rows (fasttext_quantize.c): the others are left out, as the reference's pruned
 * dictionary leaves them. */
#include "models/baselines/fasttext.h"

#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "text/ngrams.h"

/* ---- the vocabulary ---- */

int ft_dict_build(WordDict *d, const Dataset *train, const FtConfig *cfg) {
    word_dict_count(d, train, cfg->tokenizer, cfg->min_count);
    if (word_dict_size(d) == 0) {
        user_error_data("lower minCount, or check that the training split has text",
                   "fasttext: empty vocabulary (%d training rows, minCount %d)", train->n, cfg->min_count);
        return -1;
    }
    return 0;
}

/* ---- encoding ---- */

typedef struct {
    int32_t *ids;
    int64_t n, cap;
    uint32_t *hashes;   /* word hashes of the current text, for word n-grams */
    int nh, hcap;
} IdBuf;

static int32_t *ids_reserve(IdBuf *b, int64_t more) {
    if (b->n + more > b->cap) {
        b->cap = 2 * (b->n + more) + 1024;
        b->ids = xrealloc(b->ids, (size_t)b->cap * sizeof *b->ids);
    }
    return b->ids + b->n;
}

/* Appends the input rows of one word (its id and char n-grams). */
static void encode_word(IdBuf *b, const FastText *m, const char *w, size_t len) {
    const FtConfig *c = &m->cfg;
    int32_t V = word_dict_size(&m->dict);
    int wid = strmap_find(&m->dict.map, NULL, 0, w, len);
    if (wid >= 0) {
        *ids_reserve(b, 1) = wid;
        b->n++;
    }
    if (c->maxn > 0 && strcmp(w, FT_EOS) != 0) {
        int k = ngram_char_ngrams(w, len, c->minn, c->maxn, (uint64_t)c->bucket, NULL, 0);
        int32_t *out = ids_reserve(b, k);
        ngram_char_ngrams(w, len, c->minn, c->maxn, (uint64_t)c->bucket, out, k);
        for (int i = 0; i < k; i++) out[i] += V;
        b->n += k;
    }
}

/* Appends the input rows of one example; returns its token count. */
static int encode_example(IdBuf *b, WordList *w, const FastText *m, const Example *x) {
    word_list_of_example(w, x, m->cfg.tokenizer);
    if (w->n > b->hcap) {
        b->hcap = 2 * w->n;
        b->hashes = xrealloc(b->hashes, (size_t)b->hcap * sizeof *b->hashes);
    }
    for (int i = 0; i < w->n; i++) {
        const char *s = w->buf + w->start[i];
        size_t len = strlen(s);
        b->hashes[i] = ngram_hash(s, len);
        encode_word(b, m, s, len);
    }
    if (m->cfg.word_ngrams > 1) {
        int k = ngram_word_count(w->n, m->cfg.word_ngrams);
        int32_t *out = ids_reserve(b, k);
        ngram_word_ngrams(b->hashes, w->n, m->cfg.word_ngrams, (uint64_t)m->cfg.bucket, out);
        for (int i = 0; i < k; i++) out[i] += word_dict_size(&m->dict);
        b->n += k;
    }
    return w->n;
}

/* A quantized model keeps only some rows: the others leave each text's rows
 * (its token count, which paces the learning rate, stays). */
static void ft_encoded_drop_unkept(const FastText *m, Encoded *e) {
    int64_t w = 0;
    for (int r = 0; r < e->n; r++) {
        int64_t lo = e->off[r], hi = e->off[r + 1];
        e->off[r] = w;
        for (int64_t i = lo; i < hi; i++)
            if (m->wi_ready[e->ids[i]]) e->ids[w++] = e->ids[i];
    }
    e->off[e->n] = w;
}

Encoded *ft_encode(FastText *m, const Dataset *d) {
    Encoded *e = xcalloc(1, sizeof *e);
    e->n = d->n;
    e->off = xmalloc(((size_t)d->n + 1) * sizeof *e->off);
    e->ntok = xmalloc(((size_t)d->n + 1) * sizeof *e->ntok);
    e->label = xmalloc(((size_t)d->n + 1) * sizeof *e->label);
    e->score = xmalloc(((size_t)d->n + 1) * sizeof *e->score);
    if (m->task->multi_label) e->target = xcalloc(((size_t)d->n + 1) * (size_t)m->K, 1);
    IdBuf b = {0};
    WordList w = {0};
    e->off[0] = 0;
    for (int r = 0; r < d->n; r++) {
        e->ntok[r] = encode_example(&b, &w, m, &d->ex[r]);
        e->total_tokens += e->ntok[r];
        e->off[r + 1] = b.n;
        e->label[r] = d->ex[r].label;
        e->score[r] = d->ex[r].score;
        for (int j = 0; e->target && j < d->ex[r].nlabels; j++)
            if (d->ex[r].labels[j] >= 0 && d->ex[r].labels[j] < m->K)
                e->target[(size_t)r * (size_t)m->K + (size_t)d->ex[r].labels[j]] = 1;
    }
    word_list_free(&w);
    free(b.hashes);
    e->ids = b.ids ? b.ids : xmalloc(sizeof *e->ids);
    if (m->quantized) {
        ft_encoded_drop_unkept(m, e);
        return e;
    }
    /* Bucket rows get their (fixed) random init the first time a text uses them,
     * so the 2M-row table costs memory only for the n-grams that occur. */
    for (int64_t i = 0; i < b.n; i++)
        if (!m->wi_ready[e->ids[i]]) ft_init_row(m, e->ids[i]);
    return e;
}

void ft_encoded_free(Encoded *e) {
    if (!e) return;
    free(e->off);
    free(e->ids);
    free(e->ntok);
    free(e->label);
    free(e->target);
    free(e->score);
    free(e);
}
