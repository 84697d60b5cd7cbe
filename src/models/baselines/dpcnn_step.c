/* dpcnn_step.c — DPCNN's computation over a batch: the packed layout of each
 * level, forward (embedding -> region embedding -> levels of pre-activation
 * convolutions with shortcuts, halved by max-pooling in between -> one vector
 * per sentence -> dropout -> linear) to logits, backward in reverse from their
 * gradient, and the update. Every buffer is in DpWork, sized once (dpcnn.h
 * explains the layout). */
#include "models/baselines/dpcnn.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "models/baselines/word_pair.h"
#include "nn/activation.h"
#include "nn/conv1d.h"
#include "nn/dropout.h"
#include "nn/embedding.h"
#include "nn/linear.h"
#include "nn/maxpool.h"

/* The downsampling of dpcnn.h: size 3, stride 2, one position of padding. */
enum { DP_POOL = 3, DP_STRIDE = 2, DP_POOL_PAD = 1, DP_WIDTH = 3 };

static int dp_halve(int L) { return maxpool_window_out_len(L, DP_POOL, DP_STRIDE, DP_POOL_PAD); }

/* ---- workspace ---- */

static float *dp_floats(long n) { return xaligned_alloc((size_t)(n > 0 ? n : 1) * sizeof(float)); }

void dp_work_alloc(Dpcnn *m, int rows) {
    const DpConfig *c = &m->cfg;
    DpWork *w = &m->w;
    int B = m->base.pair ? 2 * rows : rows, D = c->dim, F = c->filters, L = c->max_len;
    long T0 = 1 + (long)B * (L + 1);
    if (T0 > (1L << 30)) DIE("dpcnn: batch %d x max_len %d is too large", rows, L);
    w->cap_seqs = B;
    for (int l = 0; l < m->levels; l++, L = dp_halve(L)) {
        DpLevel *lv = &w->lv[l];
        lv->cap_T = 1 + B * (L + 1);
        lv->start = xmalloc((size_t)B * sizeof *lv->start);
        lv->len = xmalloc((size_t)B * sizeof *lv->len);
        lv->a = dp_floats((long)lv->cap_T * F);
        lv->h1 = dp_floats((long)lv->cap_T * F);
        lv->h2 = dp_floats((long)lv->cap_T * F);
        lv->out = dp_floats((long)lv->cap_T * F);
        lv->argmax = xmalloc((size_t)lv->cap_T * F * sizeof *lv->argmax);
    }
    int C = D > F ? D : F;
    w->col = dp_floats(conv1d_scratch_size((Conv1dDims){.B = 1, .T = (int)T0, .C = C, .F = F, .W = DP_WIDTH}));
    w->ids = xmalloc((size_t)T0 * sizeof *w->ids);
    w->touched = xmalloc((size_t)T0 * sizeof *w->touched);
    w->seen = xcalloc((size_t)word_vocab_size(&m->base.vocab), 1);
    w->x = dp_floats(T0 * D);
    w->dx = dp_floats(T0 * D);
    w->g0 = dp_floats(T0 * F);
    w->g1 = dp_floats(T0 * F);
    w->gh = dp_floats(T0 * F);
    w->gc = dp_floats(T0 * F);
    w->enc = dp_floats((long)B * F);
    w->denc = dp_floats((long)B * F);
    long nf = (long)rows * m->FC;
    w->feat = dp_floats(nf);
    w->dfeat = dp_floats(nf);
    w->drop = dp_floats(nf);
    w->ddrop = dp_floats(nf);
    w->mask = xmalloc((size_t)(nf > 0 ? nf : 1));
    w->logits = dp_floats((long)rows * m->K);
    w->dlogits = dp_floats((long)rows * m->K);
}

void dp_work_free(DpWork *w) {
    for (int l = 0; l < DP_MAX_LEVELS; l++) {
        DpLevel *lv = &w->lv[l];
        free(lv->start); free(lv->len); free(lv->a); free(lv->h1); free(lv->h2); free(lv->out); free(lv->argmax);
    }
    free(w->col); free(w->ids); free(w->touched); free(w->seen); free(w->x); free(w->dx);
    free(w->g0); free(w->g1); free(w->gh); free(w->gc); free(w->enc); free(w->denc);
    free(w->feat); free(w->dfeat); free(w->drop); free(w->ddrop); free(w->mask); free(w->logits); free(w->dlogits);
    memset(w, 0, sizeof *w);
}

/* Rows a step can take without growing the workspace. */
static int dp_work_rows(const Dpcnn *m) { return m->base.pair ? m->w.cap_seqs / 2 : m->w.cap_seqs; }

/* ---- layout ---- */

/* Level 0: one padding position, then each sentence followed by one. Sentence
 * j < n is text a of rows[j], n + j (pairs) its text b; an empty text is one
 * padding word. */
static void dp_layout(Dpcnn *m, const WordSeqs *s, const int *rows, int n) {
    DpWork *w = &m->w;
    DpLevel *lv = &w->lv[0];
    int B = w->B, pos = 0;
    w->ids[pos++] = WF_PAD;
    for (int j = 0; j < B; j++) {
        int r = rows[j % n], second = j >= n;
        int len = second ? s->len_b[r] : s->len_a[r];
        const int32_t *src = second ? word_seqs_b(s, r) : word_seqs_a(s, r);
        CHECK_OR_DIE(len <= m->cfg.max_len);
        lv->start[j] = pos;
        lv->len[j] = len > 0 ? len : 1;
        if (len == 0) w->ids[pos++] = WF_PAD;
        for (int t = 0; t < len; t++) w->ids[pos++] = src[t];
        w->ids[pos++] = WF_PAD;
    }
    lv->T = pos;
}

/* Level l + 1's layout from level l's: every sentence halved. */
static void dp_layout_next(DpLevel *next, const DpLevel *lv, int B) {
    int pos = 1;
    for (int j = 0; j < B; j++) {
        next->start[j] = pos;
        next->len[j] = dp_halve(lv->len[j]);
        pos += next->len[j] + 1;
    }
    next->T = pos;
}

/* Rows of y (T, F) at the layout's padding positions set to zero. */
static void dp_zero_pads(const DpLevel *lv, float *y, int B, int F) {
    memset(y, 0, (size_t)F * sizeof *y);
    for (int j = 0; j < B; j++) memset(y + (long)(lv->start[j] + lv->len[j]) * F, 0, (size_t)F * sizeof *y);
}

/* ---- the width-3 "same" convolution of every sentence of a layout ---- */

static Conv1dDims dp_dims(const Dpcnn *m, const DpLevel *lv, int C) {
    return (Conv1dDims){.B = 1, .T = lv->T, .C = C, .F = m->cfg.filters, .W = DP_WIDTH};
}

/* y (T, F) from x (T, C): the valid convolution of the layout, whose window at
 * output o is centred on position o + 1, written one row down; padding rows zero. */
static void dp_conv_forward(Dpcnn *m, const DpLevel *lv, float *y, const float *x, const float *w, const float *b,
                            int C) {
    int F = m->cfg.filters;
    conv1d_forward(y + F, x, w, b, dp_dims(m, lv, C), m->w.col);
    dp_zero_pads(lv, y, m->w.B, F);
}

/* dx (T, C) += its gradient, dw and db added, given dy (T, F) zero at the
 * padding rows (they are constants, not outputs). */
static void dp_conv_backward(Dpcnn *m, const DpLevel *lv, float *dx, float *dw, float *db, const float *dy,
                             const float *x, const float *w, int C) {
    conv1d_backward(dx, dw, db, dy + m->cfg.filters, x, w, dp_dims(m, lv, C), m->w.col);
}

/* ---- forward ---- */

/* out = a + conv2(relu(conv1(relu(a)))) at level l. */
static void dp_level_forward(Dpcnn *m, int l) {
    DpLevel *lv = &m->w.lv[l];
    int F = m->cfg.filters;
    long n = (long)lv->T * F;
    relu_forward(lv->h1, lv->a, n);
    dp_conv_forward(m, lv, lv->h2, lv->h1, m->conv_w[l][0], m->conv_b[l][0], F);
    relu_forward(lv->h2, lv->h2, n);
    dp_conv_forward(m, lv, lv->out, lv->h2, m->conv_w[l][1], m->conv_b[l][1], F);
    for (long i = 0; i < n; i++) lv->out[i] += lv->a[i];
}

/* Level l + 1's input: each sentence of level l's out max-pooled. */
static void dp_pool_forward(Dpcnn *m, int l) {
    DpLevel *lv = &m->w.lv[l], *next = &m->w.lv[l + 1];
    int F = m->cfg.filters, B = m->w.B;
    dp_layout_next(next, lv, B);
    dp_zero_pads(next, next->a, B, F);
    for (int j = 0; j < B; j++)
        maxpool_window_forward(next->a + (long)next->start[j] * F, lv->argmax + (long)next->start[j] * F,
                               lv->out + (long)lv->start[j] * F, lv->len[j], F, DP_POOL, DP_STRIDE, DP_POOL_PAD);
}

static void dp_forward(Dpcnn *m, int n, int train) {
    const DpConfig *c = &m->cfg;
    DpWork *w = &m->w;
    int F = c->filters, B = w->B, top = m->levels - 1;
    DpLevel *lv0 = &w->lv[0];
    embedding_forward(w->x, w->ids, m->emb, lv0->T, word_vocab_size(&m->base.vocab), c->dim);
    dp_conv_forward(m, lv0, lv0->a, w->x, m->region_w, m->region_b, c->dim);
    for (int l = 0; l <= top; l++) {
        if (l > 0) dp_pool_forward(m, l - 1);
        dp_level_forward(m, l);
    }
    for (int j = 0; j < B; j++) {   /* every sentence is one position at the top */
        CHECK_OR_DIE(w->lv[top].len[j] == 1);
        memcpy(w->enc + (long)j * F, w->lv[top].out + (long)w->lv[top].start[j] * F, (size_t)F * sizeof *w->enc);
    }
    word_pair_features(w->feat, w->enc, n, F, m->base.pair);
    const float *in = w->feat;
    w->dropped = train && c->dropout > 0;
    if (w->dropped) {
        dropout_forward(w->drop, w->mask, w->feat, (long)n * m->FC, c->dropout, &m->base.rng);
        in = w->drop;
    }
    linear_forward(w->logits, in, m->out_w, m->out_b, n, m->FC, m->K);
}

/* ---- backward ---- */

/* g (T, F) holds d(out) of level l; on return d(a), in place. */
static void dp_level_backward(Dpcnn *m, int l, float *g) {
    DpWork *w = &m->w;
    DpLevel *lv = &w->lv[l];
    Params *p = m->base.params;
    int F = m->cfg.filters;
    long n = (long)lv->T * F;
    memset(w->gh, 0, (size_t)n * sizeof *w->gh);
    dp_conv_backward(m, lv, w->gh, params_grad(p, m->h_conv_w[l][1]), params_grad(p, m->h_conv_b[l][1]), g, lv->h2,
                     m->conv_w[l][1], F);
    memset(w->gc, 0, (size_t)n * sizeof *w->gc);
    relu_backward(w->gc, w->gh, lv->h2, n);   /* zero at the padding rows: h2 is zero there */
    memset(w->gh, 0, (size_t)n * sizeof *w->gh);
    dp_conv_backward(m, lv, w->gh, params_grad(p, m->h_conv_w[l][0]), params_grad(p, m->h_conv_b[l][0]), w->gc, lv->h1,
                     m->conv_w[l][0], F);
    relu_backward(g, w->gh, lv->h1, n);   /* the shortcut's d(out) plus the convolutions' */
}

/* dprev (level l's d(out)) = the pool's backward of level l + 1's d(a), g. */
static void dp_pool_backward(Dpcnn *m, int l, float *dprev, const float *g) {
    DpLevel *lv = &m->w.lv[l], *next = &m->w.lv[l + 1];
    int F = m->cfg.filters;
    memset(dprev, 0, (size_t)lv->T * F * sizeof *dprev);
    for (int j = 0; j < m->w.B; j++)
        maxpool_window_backward(dprev + (long)lv->start[j] * F, g + (long)next->start[j] * F,
                                lv->argmax + (long)next->start[j] * F, next->len[j], F);
}

/* Embedding rows of the batch get dx; the padding row stays a zero vector. */
static void dp_embedding_backward(Dpcnn *m) {
    DpWork *w = &m->w;
    int V = word_vocab_size(&m->base.vocab), D = m->cfg.dim;
    float *g = params_grad(m->base.params, m->h_emb);
    int nt = embedding_backward(g, w->touched, w->seen, w->dx, w->ids, w->lv[0].T, V, D), kept = 0;
    for (int i = 0; i < nt; i++)
        if (w->touched[i] != WF_PAD) w->touched[kept++] = w->touched[i];
    memset(g + (size_t)WF_PAD * D, 0, (size_t)D * sizeof *g);
    params_touch_rows(m->base.params, m->h_emb, w->touched, kept);
}

static void dp_backward(Dpcnn *m) {
    const DpConfig *c = &m->cfg;
    DpWork *w = &m->w;
    Params *p = m->base.params;
    int n = w->n, F = c->filters, top = m->levels - 1;
    long nf = (long)n * m->FC;
    float *ddrop = w->dropped ? w->ddrop : w->dfeat;
    memset(ddrop, 0, (size_t)nf * sizeof *ddrop);
    linear_backward(ddrop, params_grad(p, m->h_out_w), params_grad(p, m->h_out_b), w->dlogits,
                    w->dropped ? w->drop : w->feat, m->out_w, n, m->FC, m->K);
    if (w->dropped) {
        memset(w->dfeat, 0, (size_t)nf * sizeof *w->dfeat);
        dropout_backward(w->dfeat, w->ddrop, w->mask, nf, c->dropout);
    }
    word_pair_features_backward(w->denc, w->dfeat, w->feat, n, F, m->base.pair);
    float *g = w->g0, *other = w->g1;
    const DpLevel *tl = &w->lv[top];
    memset(g, 0, (size_t)tl->T * F * sizeof *g);
    for (int j = 0; j < w->B; j++) memcpy(g + (long)tl->start[j] * F, w->denc + (long)j * F, (size_t)F * sizeof *g);
    for (int l = top; l >= 0; l--) {
        dp_level_backward(m, l, g);
        if (l == 0) break;
        dp_pool_backward(m, l - 1, other, g);
        float *t = g;
        g = other;
        other = t;
    }
    memset(w->dx, 0, (size_t)w->lv[0].T * c->dim * sizeof *w->dx);
    dp_conv_backward(m, &w->lv[0], w->dx, params_grad(p, m->h_region_w), params_grad(p, m->h_region_b), g, w->x,
                     m->region_w, c->dim);
    dp_embedding_backward(m);
}

void dp_batch_forward(Dpcnn *m, const WordSeqs *s, const int *rows, int n, int train) {
    DpWork *w = &m->w;
    CHECK_OR_DIE(n >= 1 && n <= dp_work_rows(m));
    w->n = n;
    w->B = m->base.pair ? 2 * n : n;
    dp_layout(m, s, rows, n);
    dp_forward(m, n, train);
}

void dp_batch_backward(Dpcnn *m) { dp_backward(m); }

/* ---- logits for the harness's head ---- */

static const float *dp_run(Model *model, const Encoded *e, const int *rows, int n, int train) {
    Dpcnn *m = (Dpcnn *)model;
    if (n > dp_work_rows(m)) {   /* a bigger batch than configured: grow once */
        dp_work_free(&m->w);
        dp_work_alloc(m, n);
    }
    dp_batch_forward(m, (const WordSeqs *)e, rows, n, train);
    return m->w.logits;
}

void dp_forward_ops(Model *model, const Encoded *e, const int *rows, int n, const TrainState *st, float *logits) {
    Dpcnn *m = (Dpcnn *)model;
    if (st) m->w.n = 0;   /* an empty batch leaves nothing to back-propagate */
    word_model_forward(model, e, rows, n, st, logits, m->K, dp_work_rows(m), dp_run);
}

void dp_backward_ops(Model *model, const float *dlogits) {
    Dpcnn *m = (Dpcnn *)model;
    if (m->w.n == 0) return;
    memcpy(m->w.dlogits, dlogits, (size_t)m->w.n * m->K * sizeof *dlogits);
    dp_batch_backward(m);
}
