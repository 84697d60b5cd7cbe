/* word_dict.c — the word dictionary the word-level baselines share: the words
 * of a text, counted over a training split, most frequent first (see
 * word_dict.h). */
#include "models/baselines/word_dict.h"

#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "text/ngrams.h"

/* ---- the word list of one text (reused buffers: no allocation once grown) ---- */


static void word_list_push(WordList *w, const char *s, size_t len) {
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

static void word_list_text(WordList *w, const char *text, WordSplit split) {
    size_t len = strlen(text), pos = 0, start, wlen;
    if (split == WORD_SPLIT_WHITESPACE) {   /* the reference's own rule */
        while (ngram_next_word(text, len, &pos, &start, &wlen)) word_list_push(w, text + start, wlen);
        return;
    }
    if (!w->have_bt) {
        basic_tokenizer_init(&w->bt, 1);
        w->have_bt = 1;
    }
    int n = basic_tokenize(&w->bt, text, len);
    for (int i = 0; i < n; i++) word_list_push(w, basic_word(&w->bt, i), w->bt.words[i].len);
}

void word_list_of_example(WordList *w, const Example *x, WordSplit split) {
    w->n = 0;
    w->used = 0;
    if (x->a) word_list_text(w, x->a, split);
    if (x->b) {
        word_list_push(w, WORD_SEP, strlen(WORD_SEP));
        word_list_text(w, x->b, split);
    }
    word_list_push(w, WORD_EOS, strlen(WORD_EOS));
}

void word_list_free(WordList *w) {
    free(w->buf);
    free(w->start);
    if (w->have_bt) basic_tokenizer_free(&w->bt);
}

/* ---- the dictionary ---- */

#define WORD_DICT_MIN_CAP 64   /* a power of two */

void word_dict_add(WordDict *d, const char *w, size_t len, int64_t count) {
    int added, id = strmap_add(&d->map, w, len, &added);
    /* counts hold WORD_DICT_MIN_CAP, then double whenever id reaches a power of two */
    if (added && (id == 0 || (id >= WORD_DICT_MIN_CAP && (id & (id - 1)) == 0)))
        d->count = xrealloc(d->count, (size_t)(id ? 2 * id : WORD_DICT_MIN_CAP) * sizeof *d->count);
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
void word_dict_threshold(WordDict *d, int min_count) {
    int n = d->map.n;
    CountId *order = xmalloc((size_t)(n ? n : 1) * sizeof *order);
    for (int i = 0; i < n; i++) order[i] = (CountId){d->count[i], i};
    qsort(order, (size_t)n, sizeof *order, by_count_desc);
    WordDict kept = {0};
    strmap_init(&kept.map);
    for (int i = 0; i < n && order[i].count >= min_count; i++) {
        int id = order[i].id;
        word_dict_add(&kept, strmap_key(&d->map, id), strmap_key_len(&d->map, id), order[i].count);
    }
    free(order);
    word_dict_free(d);
    *d = kept;
}

void word_dict_count(WordDict *d, const Dataset *train, WordSplit split, int min_count) {
    memset(d, 0, sizeof *d);
    strmap_init(&d->map);
    WordList w = {0};
    for (int r = 0; r < train->n; r++) {
        word_list_of_example(&w, &train->ex[r], split);
        for (int i = 0; i < w.n; i++) {
            const char *s = w.buf + w.start[i];
            word_dict_add(d, s, strlen(s), 1);
        }
    }
    word_list_free(&w);
    word_dict_threshold(d, min_count);
}

void word_dict_free(WordDict *d) {
    strmap_free(&d->map);
    free(d->count);
    memset(d, 0, sizeof *d);
}
