/* textcnn_step.c — TextCNN's computation over a batch: layout of the word ids,
 * forward (embedding -> conv per width -> max over time -> ReLU -> features ->
 * dropout -> linear) to logits, backward in reverse from their gradient, and
 * the update (optimizer step with Kim's max-norm constraint). Every buffer is in TcWork, sized once
 * (textcnn.h explains the packed layout and the shifted views). */
#include "models/baselines/textcnn.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "nn/activation.h"
#include "nn/conv1d.h"
#include "nn/dropout.h"
#include "nn/embedding.h"
#include "nn/linear.h"
#include "nn/maxpool.h"

/* ---- workspace ---- */

static int tc_rows_per_batch(const TextCnn *m) { return m->cfg.batch > m->cfg.eval_batch ? m->cfg.batch : m->cfg.eval_batch; }
static int tc_pad(const TextCnn *m) { return m->cfg.max_window - 1; }

/* Positions of the packed layout of B sequences of at most max_len words. */
static long tc_positions(const TextCnn *m, int B) {
    long T = (long)B * (m->cfg.max_len + tc_pad(m)) + tc_pad(m);
    return T < m->cfg.max_window ? m->cfg.max_window : T;
}

/* Sized for n rows of up to max_len words. */
static void tc_work_size(TextCnn *m, int n) {
    const TcConfig *c = &m->cfg;
    TcWork *w = &m->w;
    int B = m->base.pair ? 2 * n : n, D = tc_width(c), F = c->filters, NW = c->num_windows;
    long T = tc_positions(m, B);
    if (T > (1L << 30)) DIE("textcnn: batch %d x max_len %d is too large", n, c->max_len);
    w->cap_seqs = B;
    w->cap_T = (int)T;
    long BT = T, rows = T + c->max_window;   /* + slack for the shifted views */
    long col = 0;
    for (int k = 0; k < NW; k++) {
        long s = conv1d_scratch_size((Conv1dDims){.B = 1, .T = (int)T, .C = D, .F = F, .W = c->window[k]});
        if (s > col) col = s;
    }
    w->ids = xmalloc((size_t)BT * sizeof *w->ids);
    w->start = xmalloc((size_t)B * sizeof *w->start);
    w->len = xmalloc((size_t)B * sizeof *w->len);
    w->x = xaligned_alloc((size_t)rows * D * sizeof *w->x);
    w->dx = xaligned_alloc((size_t)rows * D * sizeof *w->dx);
    memset(w->x, 0, (size_t)rows * D * sizeof *w->x);   /* the slack stays zero */
    w->conv = xaligned_alloc((size_t)BT * F * sizeof *w->conv);
    w->dconv = xaligned_alloc((size_t)BT * F * sizeof *w->dconv);
    w->col = xaligned_alloc((size_t)col * sizeof *w->col);
    w->argmax = xmalloc((size_t)NW * B * F * sizeof *w->argmax);
    w->pooled = xmalloc((size_t)NW * B * F * sizeof *w->pooled);
    w->dpooled = xmalloc((size_t)NW * B * F * sizeof *w->dpooled);
    w->dpre = xmalloc((size_t)NW * B * F * sizeof *w->dpre);
    w->feat = xmalloc((size_t)n * m->FC * sizeof *w->feat);
    w->dfeat = xmalloc((size_t)n * m->FC * sizeof *w->dfeat);
    w->drop = xmalloc((size_t)n * m->FC * sizeof *w->drop);
    w->ddrop = xmalloc((size_t)n * m->FC * sizeof *w->ddrop);
    w->mask = xmalloc((size_t)n * m->FC);
    w->logits = xmalloc((size_t)n * m->K * sizeof *w->logits);
    w->dlogits = xmalloc((size_t)n * m->K * sizeof *w->dlogits);
    w->touched = xmalloc((size_t)BT * sizeof *w->touched);
    w->seen = xcalloc((size_t)word_vocab_size(&m->base.vocab), 1);
}

void tc_work_free(TcWork *w) {
    free(w->ids); free(w->start); free(w->len); free(w->x); free(w->dx); free(w->conv); free(w->dconv); free(w->col);
    free(w->argmax); free(w->pooled); free(w->dpooled); free(w->dpre); free(w->feat); free(w->dfeat);
    free(w->drop); free(w->ddrop); free(w->mask); free(w->logits); free(w->dlogits);
    free(w->touched); free(w->seen);
    memset(w, 0, sizeof *w);
}

void tc_work_alloc(TextCnn *m) { tc_work_size(m, tc_rows_per_batch(m)); }

/* Rows a step can take without growing the workspace. */
static int tc_work_rows(const TextCnn *m) { return m->base.pair ? m->w.cap_seqs / 2 : m->w.cap_seqs; }

/* ---- layout ---- */

/* Packs rows[0..n) of s into ids (T): P padding positions, then each
 * sequence followed by P padding positions (P = W_max - 1). Sequence j < n is
 * text a of rows[j], sequence n + j (pairs) its text b. Returns T. */
static int tc_layout(TextCnn *m, const WordSeqs *s, const int *rows, int n, int *B_out) {
    const TcConfig *c = &m->cfg;
    TcWork *w = &m->w;
    int B = m->base.pair ? 2 * n : n, P = tc_pad(m);
    CHECK_OR_DIE(B <= w->cap_seqs);
    long pos = 0;
    for (int t = 0; t < P; t++) w->ids[pos++] = WF_PAD;
    for (int j = 0; j < B; j++) {
        int r = rows[j % n], second = j >= n;
        int len = second ? s->len_b[r] : s->len_a[r];
        const int32_t *src = second ? word_seqs_b(s, r) : word_seqs_a(s, r);
        CHECK_OR_DIE(len <= c->max_len);
        w->start[j] = (int)pos;
        w->len[j] = len;
        for (int t = 0; t < len; t++) w->ids[pos++] = src[t];
        for (int t = 0; t < P; t++) w->ids[pos++] = WF_PAD;
    }
    while (pos < c->max_window) w->ids[pos++] = WF_PAD;   /* widths of 1 only, empty texts */
    *B_out = B;
    return (int)pos;
}

/* Width k's view of the layout: shifted by W_max - W positions, so that for
 * every width the windows of sequence j start at output position start - P
 * and number len + W - 1 (all that overlap its words, none of another's). */
static long tc_shift(const TextCnn *m, int k) { return (long)(m->cfg.max_window - m->cfg.window[k]) * tc_width(&m->cfg); }

static Conv1dDims tc_dims(const TextCnn *m, int k, int T) {
    return (Conv1dDims){.B = 1, .T = T, .C = tc_width(&m->cfg), .F = m->cfg.filters, .W = m->cfg.window[k]};
}

/* x (T, C): each position's word vector, or for multichannel its two channels
 * side by side [emb; emb_static]. */
static void tc_embed(TextCnn *m, int T) {
    TcWork *w = &m->w;
    int V = word_vocab_size(&m->base.vocab), D = m->cfg.dim;
    if (!m->emb_static) {
        embedding_forward(w->x, w->ids, m->emb, T, V, D);
        return;
    }
    for (int t = 0; t < T; t++) {
        CHECK_OR_DIE(w->ids[t] >= 0 && w->ids[t] < V);
        float *dst = w->x + (size_t)t * 2 * D;
        memcpy(dst, m->emb + (size_t)w->ids[t] * D, (size_t)D * sizeof *dst);
        memcpy(dst + D, m->emb_static + (size_t)w->ids[t] * D, (size_t)D * sizeof *dst);
    }
}

/* ---- forward ---- */

/* Classifier input of sequence row j (single) or pair row j: feat (n, FC). */
static void tc_features(TextCnn *m, int n, int B) {
    TcWork *w = &m->w;
    int F = m->cfg.filters, NW = m->cfg.num_windows, H = m->H;
    for (int j = 0; j < B; j++) {   /* pooled (NW, B, F) -> the sentence's H features */
        int row = m->base.pair ? j % n : j, part = m->base.pair && j >= n;
        float *dst = w->feat + (long)row * m->FC + (long)part * H;
        for (int k = 0; k < NW; k++) memcpy(dst + (long)k * F, w->pooled + ((long)k * B + j) * F, (size_t)F * sizeof *dst);
    }
    if (!m->base.pair) return;
    for (int i = 0; i < n; i++) {   /* [u; v; |u - v|; u * v] */
        float *f = w->feat + (long)i * m->FC;
        const float *u = f, *v = f + H;
        for (int h = 0; h < H; h++) {
            f[2 * H + h] = fabsf(u[h] - v[h]);
            f[3 * H + h] = u[h] * v[h];
        }
    }
}

/* logits (n, K) of the laid-out batch; dropout when train. */
static void tc_forward(TextCnn *m, int n, int B, int T, int train) {
    const TcConfig *c = &m->cfg;
    TcWork *w = &m->w;
    int F = c->filters;
    tc_embed(m, T);
    for (int k = 0; k < c->num_windows; k++) {
        Conv1dDims d = tc_dims(m, k, T);
        conv1d_forward(w->conv, w->x + tc_shift(m, k), m->conv_w[k], m->conv_b[k], d, w->col);
        for (int j = 0; j < B; j++)   /* each sequence's own windows */
            maxpool_time_forward(w->pooled + ((long)k * B + j) * F, w->argmax + ((long)k * B + j) * F,
                                 w->conv + (long)(w->start[j] - tc_pad(m)) * F, NULL, 1, w->len[j] + d.W - 1, F);
    }
    /* ReLU after the max: max_t relu(z_t) = relu(max_t z_t), on B*F values
     * instead of B*T*F, with the same gradient. */
    relu_forward(w->pooled, w->pooled, (long)c->num_windows * B * F);
    tc_features(m, n, B);
    const float *in = w->feat;
    w->dropped = train && c->dropout > 0;
    if (w->dropped) {
        dropout_forward(w->drop, w->mask, w->feat, (long)n * m->FC, c->dropout, &m->base.rng);
        in = w->drop;
    }
    linear_forward(w->logits, in, m->out_w, m->out_b, n, m->FC, m->K);
}

/* ---- backward ---- */

/* dfeat (n, FC) -> dpooled (NW, B, F): the reverse of tc_features. */
static void tc_features_backward(TextCnn *m, int n, int B) {
    TcWork *w = &m->w;
    int F = m->cfg.filters, NW = m->cfg.num_windows, H = m->H;
    if (m->base.pair) {   /* fold the |u - v| and u * v parts into du (cols 0..H) and dv (H..2H) */
        for (int i = 0; i < n; i++) {
            float *g = w->dfeat + (long)i * m->FC;
            const float *f = w->feat + (long)i * m->FC;
            for (int h = 0; h < H; h++) {
                float u = f[h], v = f[H + h], ga = g[2 * H + h], gm = g[3 * H + h];
                float sgn = u > v ? 1.0f : u < v ? -1.0f : 0.0f;
                g[h] += sgn * ga + v * gm;
                g[H + h] += -sgn * ga + u * gm;
            }
        }
    }
    for (int j = 0; j < B; j++) {
        int row = m->base.pair ? j % n : j, part = m->base.pair && j >= n;
        const float *src = w->dfeat + (long)row * m->FC + (long)part * H;
        for (int k = 0; k < NW; k++) memcpy(w->dpooled + ((long)k * B + j) * F, src + (long)k * F, (size_t)F * sizeof *src);
    }
}

/* Embedding rows of the batch get dx; the padding row is dropped (it stays a
 * zero vector: Kim pads with zeros). Multichannel: only the trained channel,
 * the first D of each position's 2D values, moved together first (the frozen
 * channel's part is dropped). */
static void tc_embedding_backward(TextCnn *m, int T) {
    TcWork *w = &m->w;
    int V = word_vocab_size(&m->base.vocab), D = m->cfg.dim;
    if (m->emb_static)
        for (int t = 1; t < T; t++) memmove(w->dx + (size_t)t * D, w->dx + (size_t)t * 2 * D, (size_t)D * sizeof *w->dx);
    float *g = params_grad(m->base.params, m->h_emb);
    int nt = embedding_backward(g, w->touched, w->seen, w->dx, w->ids, T, V, D), kept = 0;
    for (int i = 0; i < nt; i++)
        if (w->touched[i] != WF_PAD) w->touched[kept++] = w->touched[i];
    memset(g + (size_t)WF_PAD * D, 0, (size_t)D * sizeof *g);
    params_touch_rows(m->base.params, m->h_emb, w->touched, kept);
}

/* Gradients of every parameter from dlogits (n, K). */
static void tc_backward(TextCnn *m, int n, int B, int T) {
    const TcConfig *c = &m->cfg;
    TcWork *w = &m->w;
    Params *p = m->base.params;
    int F = c->filters, NW = c->num_windows, trainable_emb = c->embedding != TC_EMB_STATIC;
    long nf = (long)n * m->FC, nbf = (long)NW * B * F;
    int dropped = w->dropped;
    float *ddrop = dropped ? w->ddrop : w->dfeat;
    memset(ddrop, 0, (size_t)nf * sizeof *ddrop);
    linear_backward(ddrop, params_grad(p, m->h_out_w), params_grad(p, m->h_out_b), w->dlogits,
                    dropped ? w->drop : w->feat, m->out_w, n, m->FC, m->K);
    if (dropped) {
        memset(w->dfeat, 0, (size_t)nf * sizeof *w->dfeat);
        dropout_backward(w->dfeat, w->ddrop, w->mask, nf, c->dropout);
    }
    tc_features_backward(m, n, B);
    memset(w->dpre, 0, (size_t)nbf * sizeof *w->dpre);
    relu_backward(w->dpre, w->dpooled, w->pooled, nbf);
    if (trainable_emb) memset(w->dx, 0, ((size_t)T + c->max_window) * tc_width(c) * sizeof *w->dx);
    for (int k = 0; k < NW; k++) {
        Conv1dDims d = tc_dims(m, k, T);
        int TO = T - d.W + 1;
        memset(w->dconv, 0, (size_t)TO * F * sizeof *w->dconv);
        for (int j = 0; j < B; j++)
            maxpool_time_backward(w->dconv + (long)(w->start[j] - tc_pad(m)) * F, w->dpre + ((long)k * B + j) * F,
                                  w->argmax + ((long)k * B + j) * F, 1, w->len[j] + d.W - 1, F);
        conv1d_backward(trainable_emb ? w->dx + tc_shift(m, k) : NULL, params_grad(p, m->h_conv_w[k]),
                        params_grad(p, m->h_conv_b[k]), w->dconv, w->x + tc_shift(m, k), m->conv_w[k], d, w->col);
    }
    if (trainable_emb) tc_embedding_backward(m, T);
}

/* Kim's constraint: each output row (one class's weights) rescaled to norm
 * max_norm when an update took it beyond. */
static void tc_max_norm(TextCnn *m) {
    if (m->cfg.max_norm <= 0) return;
    for (int k = 0; k < m->K; k++) {
        float *r = m->out_w + (long)k * m->FC;
        double ss = 0;
        for (int i = 0; i < m->FC; i++) ss += (double)r[i] * r[i];
        if (ss > (double)m->cfg.max_norm * m->cfg.max_norm) {
            float scale = (float)(m->cfg.max_norm / sqrt(ss));
            for (int i = 0; i < m->FC; i++) r[i] *= scale;
        }
    }
}

void tc_batch_forward(TextCnn *m, const WordSeqs *s, const int *rows, int n, int train) {
    TcWork *w = &m->w;
    w->n = n;
    w->T = tc_layout(m, s, rows, n, &w->B);
    tc_forward(m, n, w->B, w->T, train);
}

void tc_batch_backward(TextCnn *m) { tc_backward(m, m->w.n, m->w.B, m->w.T); }

/* ---- logits for the harness's head ---- */

static const float *tc_run(Model *model, const Encoded *e, const int *rows, int n, int train) {
    TextCnn *m = (TextCnn *)model;
    if (n > tc_work_rows(m)) {   /* a bigger batch than configured: grow once */
        tc_work_free(&m->w);
        tc_work_size(m, n);
    }
    tc_batch_forward(m, (const WordSeqs *)e, rows, n, train);
    return m->w.logits;
}

void tc_forward_ops(Model *model, const Encoded *e, const int *rows, int n, const TrainState *st, float *logits) {
    word_model_forward(model, e, rows, n, st, logits, ((TextCnn *)model)->K, tc_work_rows((TextCnn *)model), tc_run);
}

void tc_backward_ops(Model *model, const float *dlogits) {
    TextCnn *m = (TextCnn *)model;
    memcpy(m->w.dlogits, dlogits, (size_t)m->w.n * m->K * sizeof *dlogits);
    tc_batch_backward(m);
}

int tc_update_ops(Model *model, const TrainState *st) {
    TextCnn *m = (TextCnn *)model;
    optim_step(&m->base.opt, m->base.params, st->lr);
    tc_max_norm(m);
    return 0;
}
