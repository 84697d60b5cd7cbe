/* vectors_glove.c — GloVe (see vectors_glove.h): the co-occurrence counts in
 * an open-addressing table, the weighted least-squares cost and its gradient,
 * AdaGrad over the worker pool, the .vec file of w + w~. */
#include "models/baselines/vectors_glove.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "core/files.h"
#include "core/progress.h"
#include "core/rng.h"
#include "core/workers.h"

/* ---- counts ---- */

typedef struct {
    uint64_t *key;   /* i * V + j, or GC_EMPTY */
    float *x;
    long cap, n;     /* cap a power of two */
} GcTable;

#define GC_EMPTY UINT64_MAX

static long gc_slot(const GcTable *t, uint64_t key) {
    uint64_t h = key * 0x9E3779B97F4A7C15ULL;
    long s = (long)((h ^ (h >> 29)) & (uint64_t)(t->cap - 1));
    while (t->key[s] != GC_EMPTY && t->key[s] != key) s = (s + 1) & (t->cap - 1);
    return s;
}

static void gc_alloc(GcTable *t, long cap) {
    t->cap = cap;
    t->n = 0;
    t->key = xmalloc((size_t)cap * sizeof *t->key);
    t->x = xmalloc((size_t)cap * sizeof *t->x);
    memset(t->key, 0xff, (size_t)cap * sizeof *t->key);
}

/* Kept at most half full: doubled when it gets there. */
static void gc_add(GcTable *t, uint64_t key, float x) {
    if (2 * (t->n + 1) > t->cap) {
        GcTable bigger;
        gc_alloc(&bigger, 2 * t->cap);
        for (long s = 0; s < t->cap; s++)
            if (t->key[s] != GC_EMPTY) {
                long d = gc_slot(&bigger, t->key[s]);
                bigger.key[d] = t->key[s];
                bigger.x[d] = t->x[s];
            }
        bigger.n = t->n;
        free(t->key);
        free(t->x);
        *t = bigger;
    }
    long s = gc_slot(t, key);
    if (t->key[s] == GC_EMPTY) {
        t->key[s] = key;
        t->x[s] = 0;
        t->n++;
    }
    t->x[s] += x;
}

long glove_count(const WordSeqs *text, int V, int window, GloveCooc **out) {
    GcTable t;
    gc_alloc(&t, 1 << 16);
    int32_t *kept = NULL;
    long cap = 0;
    for (int r = 0; r < text->n; r++) {
        const int32_t *ids = word_seqs_a(text, r);
        if (text->len_a[r] > cap) {
            cap = text->len_a[r];
            kept = xrealloc(kept, (size_t)cap * sizeof *kept);
        }
        int nk = 0;
        for (int i = 0; i < text->len_a[r]; i++)
            if (ids[i] >= WF_NUM_RESERVED) kept[nk++] = ids[i];
        for (int a = 0; a < nk; a++)
            for (int d = 1; d <= window && a + d < nk; d++) {
                float x = 1.0f / (float)d;
                gc_add(&t, (uint64_t)kept[a] * (uint64_t)V + (uint64_t)kept[a + d], x);
                gc_add(&t, (uint64_t)kept[a + d] * (uint64_t)V + (uint64_t)kept[a], x);
            }
    }
    free(kept);
    GloveCooc *e = xmalloc((size_t)(t.n ? t.n : 1) * sizeof *e);
    long n = 0;
    for (long s = 0; s < t.cap; s++)
        if (t.key[s] != GC_EMPTY)
            e[n++] = (GloveCooc){(int32_t)(t.key[s] / (uint64_t)V), (int32_t)(t.key[s] % (uint64_t)V), t.x[s]};
    free(t.key);
    free(t.x);
    *out = e;
    return n;
}

/* ---- cost ---- */

double glove_weight(double x, double x_max, double alpha) { return x < x_max ? pow(x / x_max, alpha) : 1.0; }

/* w_i . w~_j + b_i + b~_j - log X_ij */
static double glove_diff(const GloveParams *p, const GloveCooc *c) {
    const float *a = p->w + (size_t)c->i * p->D, *b = p->wt + (size_t)c->j * p->D;
    double dot = 0;
    for (int k = 0; k < p->D; k++) dot += (double)a[k] * b[k];
    return dot + p->b[c->i] + p->bt[c->j] - log((double)c->x);
}

double glove_cost(const GloveParams *p, const GloveCooc *e, long n, double x_max, double alpha, GloveParams *grad) {
    double cost = 0;
    for (long k = 0; k < n; k++) {
        double diff = glove_diff(p, &e[k]), fdiff = glove_weight(e[k].x, x_max, alpha) * diff;
        cost += 0.5 * fdiff * diff;
        if (!grad) continue;
        const float *a = p->w + (size_t)e[k].i * p->D, *b = p->wt + (size_t)e[k].j * p->D;
        float *ga = grad->w + (size_t)e[k].i * p->D, *gb = grad->wt + (size_t)e[k].j * p->D;
        for (int d = 0; d < p->D; d++) {
            ga[d] += (float)(fdiff * b[d]);
            gb[d] += (float)(fdiff * a[d]);
        }
        grad->b[e[k].i] += (float)fdiff;
        grad->bt[e[k].j] += (float)fdiff;
    }
    return cost;
}

/* ---- training ---- */

typedef struct {
    const VecConfig *c;
    GloveParams p, sq;       /* parameters and AdaGrad's sums of squared gradients */
    const GloveCooc *e;
    long n;
    int workers;
    double *loss;            /* (workers, WORKER_DOUBLES_PER_LINE) [0] this epoch's cost */
} Glove;

/* One AdaGrad step on one co-occurrence (the reference's update: the
 * gradient scaled by lr first, so the squared sums hold lr^2 g^2); returns its
 * cost. */
static double glove_step(Glove *g, const GloveCooc *c, float *gi, float *gj) {
    GloveParams *p = &g->p, *sq = &g->sq;
    int D = p->D;
    double diff = glove_diff(p, c), fdiff = glove_weight(c->x, g->c->x_max, g->c->alpha) * diff;
    double cost = 0.5 * fdiff * diff;
    if (!isfinite(diff)) return 0;
    float f = (float)(fdiff * g->c->lr);
    float *a = p->w + (size_t)c->i * D, *b = p->wt + (size_t)c->j * D;
    float *sa = sq->w + (size_t)c->i * D, *sb = sq->wt + (size_t)c->j * D;
    for (int k = 0; k < D; k++) {
        gi[k] = f * b[k];
        gj[k] = f * a[k];
    }
    for (int k = 0; k < D; k++) {
        a[k] -= gi[k] / sqrtf(sa[k]);
        b[k] -= gj[k] / sqrtf(sb[k]);
        sa[k] += gi[k] * gi[k];
        sb[k] += gj[k] * gj[k];
    }
    p->b[c->i] -= f / sqrtf(sq->b[c->i]);
    p->bt[c->j] -= f / sqrtf(sq->bt[c->j]);
    sq->b[c->i] += f * f;
    sq->bt[c->j] += f * f;
    return cost;
}

typedef struct {
    Glove *g;
    float *scratch;   /* (workers, 2 D) */
} GloveJob;

/* Worker k: its share of the (shuffled) co-occurrences, one epoch. */
static void glove_job(void *arg, int k) {
    GloveJob *j = arg;
    Glove *g = j->g;
    long lo = g->n * k / g->workers, hi = g->n * (k + 1) / g->workers;
    float *gi = j->scratch + (size_t)k * 2 * g->p.D, *gj = gi + g->p.D;
    double cost = 0;
    for (long s = lo; s < hi; s++) cost += glove_step(g, &g->e[s], gi, gj);
    g->loss[(long)k * WORKER_DOUBLES_PER_LINE] = cost;
}

static void glove_params_alloc(GloveParams *p, int V, int D, float fill) {
    p->V = V;
    p->D = D;
    p->w = xmalloc((size_t)V * D * sizeof *p->w);
    p->wt = xmalloc((size_t)V * D * sizeof *p->wt);
    p->b = xmalloc((size_t)V * sizeof *p->b);
    p->bt = xmalloc((size_t)V * sizeof *p->bt);
    for (long i = 0; i < (long)V * D; i++) p->w[i] = p->wt[i] = fill;
    for (int i = 0; i < V; i++) p->b[i] = p->bt[i] = fill;
}

static void glove_params_free(GloveParams *p) { free(p->w); free(p->wt); free(p->b); free(p->bt); }

/* U(-0.5/D, 0.5/D) for every parameter, as the reference. */
static void glove_init(GloveParams *p, uint64_t seed) {
    Rng r;
    rng_seed_stream(&r, seed, 7);
    float s = 1.0f / (float)p->D;
    for (long i = 0; i < (long)p->V * p->D; i++) p->w[i] = (rng_uniform(&r) - 0.5f) * s;
    for (long i = 0; i < (long)p->V * p->D; i++) p->wt[i] = (rng_uniform(&r) - 0.5f) * s;
    for (int i = 0; i < p->V; i++) p->b[i] = (rng_uniform(&r) - 0.5f) * s;
    for (int i = 0; i < p->V; i++) p->bt[i] = (rng_uniform(&r) - 0.5f) * s;
}

/* "N D" then each word and w + w~, through path.tmp. */
static int glove_write(const GloveParams *p, const WordVocab *v, const char *path) {
    AtomicFile out;
    FILE *f = atomic_open(&out, path);
    if (!f) return -1;
    fprintf(f, "%d %d\n", p->V - WF_NUM_RESERVED, p->D);
    for (int i = WF_NUM_RESERVED; i < p->V; i++) {
        fputs(word_vocab_word(v, i), f);
        for (int d = 0; d < p->D; d++) fprintf(f, " %.5g", p->w[(size_t)i * p->D + d] + p->wt[(size_t)i * p->D + d]);
        fputc('\n', f);
    }
    return atomic_commit(&out);
}

int glove_train(const VecConfig *c, const WordVocab *v, const WordSeqs *text, const char *out_path, VecStats *st) {
    double t0 = now_seconds();
    int V = word_vocab_size(v);
    GloveCooc *e = NULL;
    long n = glove_count(text, V, c->window, &e);
    if (n == 0) {
        user_error_data("give more text, or a lower --min-count", "vectors: no two vocabulary words ever occur together");
        free(e);
        return 1;
    }
    Rng r;
    rng_seed_stream(&r, c->seed, UINT64_MAX);
    for (long k = n - 1; k > 0; k--) {   /* one random order, as the reference's shuffle */
        long s = (long)(((uint64_t)rng_below(&r, 1u << 31) << 31 | rng_below(&r, 1u << 31)) % (uint64_t)(k + 1));
        GloveCooc tmp = e[k];
        e[k] = e[s];
        e[s] = tmp;
    }
    Glove g = {.c = c, .e = e, .n = n};
    glove_params_alloc(&g.p, V, c->dim, 0);
    glove_params_alloc(&g.sq, V, c->dim, 1.0f);
    glove_init(&g.p, c->seed);
    Workers *w = workers_create(c->threads);
    g.workers = workers_count(w);
    g.loss = xaligned_alloc((size_t)g.workers * WORKER_DOUBLES_PER_LINE * sizeof *g.loss);
    GloveJob job = {.g = &g, .scratch = xmalloc((size_t)g.workers * 2 * c->dim * sizeof(float))};
    Progress bar;
    if (c->show_progress) progress_start(&bar, "glove", c->epochs, PROGRESS_AUTO);
    double first = 0, last = 0;
    for (int ep = 0; ep < c->epochs; ep++) {
        workers_run(w, glove_job, &job);
        last = 0;
        for (int k = 0; k < g.workers; k++) last += g.loss[(long)k * WORKER_DOUBLES_PER_LINE];
        last /= (double)n;
        if (ep == 0) first = last;
        if (c->show_progress) progress_update(&bar, ep + 1, "cost %.4f  (%ld co-occurrences)", last, n);
    }
    if (c->show_progress) progress_finish(&bar, "cost %.4f", last);
    workers_free(w);
    int rc = glove_write(&g.p, v, out_path) ? 1 : 0;
    if (st) *st = (VecStats){.words = (long)text->tokens, .vocab = V - WF_NUM_RESERVED, .loss = last,
                             .loss_first = first, .seconds = now_seconds() - t0};
    free(job.scratch);
    free(g.loss);
    glove_params_free(&g.p);
    glove_params_free(&g.sq);
    free(e);
    return rc;
}
