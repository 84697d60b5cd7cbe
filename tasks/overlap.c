/* overlap.c — rows of one split whose texts are also another split's
 * (dataset_shared_rows in task.h): a user's dev file that repeats training
 * rows scores how well the model fits them, not how it generalises. */
#include "tasks/task.h"

#include "core/common.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* FNV-1a over a row's texts (b after a NUL, so "x"+"y" is not "xy"). */
static uint64_t row_hash(const Example *e) {
    uint64_t h = 1469598103934665603ull;
    for (int part = 0; part < 2; part++) {
        const char *s = part ? e->b : e->a;
        for (; s && *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
        h = (h ^ 0xffu) * 1099511628211ull;   /* the end of a text, present or not */
    }
    return h;
}

static int same_texts(const Example *x, const Example *y) {
    return !strcmp(x->a ? x->a : "", y->a ? y->a : "") && !x->b == !y->b && (!x->b || !strcmp(x->b, y->b));
}

typedef struct { uint64_t h; int i; } RowKey;

static int key_cmp(const void *p, const void *q) {
    uint64_t a = ((const RowKey *)p)->h, b = ((const RowKey *)q)->h;
    return a < b ? -1 : a > b;
}

int dataset_shared_rows(const Dataset *d, const Dataset *other) {
    if (d->n <= 0 || other->n <= 0) return 0;
    RowKey *keys = xmalloc(sizeof *keys * (size_t)other->n);
    for (int i = 0; i < other->n; i++) keys[i] = (RowKey){row_hash(&other->ex[i]), i};
    qsort(keys, (size_t)other->n, sizeof *keys, key_cmp);
    int shared = 0;
    for (int i = 0; i < d->n; i++) {
        uint64_t h = row_hash(&d->ex[i]);
        size_t lo = 0, hi = (size_t)other->n;   /* the first key >= h */
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (keys[mid].h < h) lo = mid + 1;
            else hi = mid;
        }
        int found = 0;
        for (size_t k = lo; k < (size_t)other->n && keys[k].h == h && !found; k++)
            found = same_texts(&d->ex[i], &other->ex[keys[k].i]);
        shared += found;
    }
    free(keys);
    return shared;
}
