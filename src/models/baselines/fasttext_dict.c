/* fasttext_dict.c — fastText's vocabulary and the encoding of texts into input rows.
 *
 * A text becomes its words (whitespace split like the reference, or the BERT basic
 * tokenizer's words), then FT_SEP and the second text for pair tasks, then FT_EOS
 * (the reference reads the newline ending each line as that word). Its input rows
 * are: each known word's id, the char n-grams of every word but FT_EOS (maxn > 0),
 * and the word n-grams of all words, known or not (wordNgrams > 1); n-gram rows
 * live after the V word rows, in `bucket` hashed rows — exactly the reference's
 * Dictionary::getLine for supervised training. */
#include "models/baselines/fasttext.h"

#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "text/basic_tokenizer.h"
#include "text/ngrams.h"

/* ---- the word list of one text (reused buffers: no allocation once grown) ---- */

typedef struct {
    char *buf;          /* the words, each NUL-terminated */
    size_t used, cap;
    size_t *start;      /* (n) offset of word i in buf */
    int n, max;
    BasicTokenizer bt;  /* for FT_TOK_BASIC, made on first use */
    int have_bt;
} WordList;

static void words_push(WordList *w, const char *s, size_t len) {
    if (w->used + len + 1 > w->cap) {
        w->cap = 2 * (w->used + len + 1) + 256;
        w->buf = xrealloc(w->buf, w->cap);
    }
    if (w->n == w->max) {
        w->max = 2 * w->max + 64;
        w->start = xrealloc(w->start, (size_t)w->max * sizeof *w->start);
    }
    memcpy(w->buf + w->used, s, len);
    w->buf[w->used + len] = '\0';
    w->start[w->n++] = w->used;
    w->used += len + 1;
}

static void words_of_text(WordList *w, const char *text, FtTokenizer tok) {
    size_t len = strlen(text), pos = 0, start, wlen;
    if (tok == FT_TOK_WHITESPACE) {   /* the reference's own rule */
        while (ngram_next_word(text, len, &pos, &start, &wlen)) words_push(w, text + start, wlen);
        return;
    }
    if (!w->have_bt) {
        basic_tokenizer_init(&w->bt, 1);
        w->have_bt = 1;
    }
    int n = basic_tokenize(&w->bt, text, len);
    for (int i = 0; i < n; i++) words_push(w, basic_word(&w->bt, i), w->bt.words[i].len);
}

/* The words of example x as the model reads them: a [FT_SEP b] FT_EOS. */
static void words_of_example(WordList *w, const Example *x, FtTokenizer tok) {
    w->n = 0;
    w->used = 0;
    if (x->a) words_of_text(w, x->a, tok);
    if (x->b) {
        words_push(w, FT_SEP, strlen(FT_SEP));
        words_of_text(w, x->b, tok);
    }
    words_push(w, FT_EOS, strlen(FT_EOS));
}

static void words_free(WordList *w) {
    free(w->buf);
    free(w->start);
    if (w->have_bt) basic_tokenizer_free(&w->bt);
}

/* ---- the vocabulary ---- */

#define FT_DICT_MIN_CAP 64   /* a power of two */

void ft_dict_add_word(FtDict *d, const char *w, size_t len, int64_t count) {
    int added, id = strmap_add(&d->map, w, len, &added);
    /* counts hold FT_DICT_MIN_CAP, then double whenever id reaches a power of two */
    if (added && (id == 0 || (id >= FT_DICT_MIN_CAP && (id & (id - 1)) == 0)))
        d->count = xrealloc(d->count, (size_t)(id ? 2 * id : FT_DICT_MIN_CAP) * sizeof *d->count);
    d->count[id] = added ? count : d->count[id] + count;
}

/* Most frequent first; ties keep first-seen order so the ids are reproducible. */
typedef struct { int64_t count; int id; } CountId;

static int by_count_desc(const void *a, const void *b) {
    const CountId *x = a, *y = b;
    if (x->count != y->count) return x->count > y->count ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

/* Drops words below min_count and renumbers the rest by frequency. */
static void dict_threshold(FtDict *d, int min_count) {
    int n = d->map.n;
    CountId *order = xmalloc((size_t)(n ? n : 1) * sizeof *order);
    for (int i = 0; i < n; i++) order[i] = (CountId){d->count[i], i};
    qsort(order, (size_t)n, sizeof *order, by_count_desc);
    FtDict kept = {0};
    strmap_init(&kept.map);
    for (int i = 0; i < n && order[i].count >= min_count; i++) {
        int id = order[i].id;
        ft_dict_add_word(&kept, strmap_key(&d->map, id), strmap_key_len(&d->map, id), order[i].count);
    }
    free(order);
    ft_dict_free(d);
    *d = kept;
}

int ft_dict_build(FtDict *d, const Dataset *train, const FtConfig *cfg) {
    memset(d, 0, sizeof *d);
    strmap_init(&d->map);
    WordList w = {0};
    for (int r = 0; r < train->n; r++) {
        words_of_example(&w, &train->ex[r], cfg->tokenizer);
        for (int i = 0; i < w.n; i++) {
            const char *s = w.buf + w.start[i];
            ft_dict_add_word(d, s, strlen(s), 1);
        }
    }
    words_free(&w);
    dict_threshold(d, cfg->min_count);
    if (d->map.n == 0) {
        user_error("lower minCount, or check that the training split has text",
                   "fasttext: empty vocabulary (%d training rows, minCount %d)", train->n, cfg->min_count);
        return -1;
    }
    return 0;
}

void ft_dict_free(FtDict *d) {
    strmap_free(&d->map);
    free(d->count);
    memset(d, 0, sizeof *d);
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
    int32_t V = ft_dict_size(&m->dict);
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
    words_of_example(w, x, m->cfg.tokenizer);
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
        for (int i = 0; i < k; i++) out[i] += ft_dict_size(&m->dict);
        b->n += k;
    }
    return w->n;
}

Encoded *ft_encode(FastText *m, const Dataset *d) {
    Encoded *e = xcalloc(1, sizeof *e);
    e->n = d->n;
    e->off = xmalloc(((size_t)d->n + 1) * sizeof *e->off);
    e->ntok = xmalloc(((size_t)d->n + 1) * sizeof *e->ntok);
    e->label = xmalloc(((size_t)d->n + 1) * sizeof *e->label);
    e->score = xmalloc(((size_t)d->n + 1) * sizeof *e->score);
    IdBuf b = {0};
    WordList w = {0};
    e->off[0] = 0;
    for (int r = 0; r < d->n; r++) {
        e->ntok[r] = encode_example(&b, &w, m, &d->ex[r]);
        e->total_tokens += e->ntok[r];
        e->off[r + 1] = b.n;
        e->label[r] = d->ex[r].label;
        e->score[r] = d->ex[r].score;
    }
    words_free(&w);
    free(b.hashes);
    e->ids = b.ids ? b.ids : xmalloc(sizeof *e->ids);
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
    free(e->score);
    free(e);
}
