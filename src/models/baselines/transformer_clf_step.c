/* transformer_clf_step.c — the Transformer's computation over a batch: the
 * padded layout, forward (embedding * sqrt(C) + sinusoids -> dropout ->
 * encoder layers -> mean or [CLS] pooling -> dropout -> linear) to logits,
 * backward in reverse from their gradient, and the update. Every buffer is in
 * TfWork, sized once (transformer_clf.h explains the model). */
#include "models/baselines/transformer_clf.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "models/baselines/word_pair.h"
#include "nn/dropout.h"
#include "nn/embedding.h"
#include "nn/linear.h"
#include "nn/positions.h"

/* ---- workspace ---- */

static float *tf_floats(long n) { return xaligned_alloc((size_t)(n > 0 ? n : 1) * sizeof(float)); }

static BlockDims tf_dims(const TransformerClf *m, int B, int T, const int *lengths) {
    const TfConfig *c = &m->cfg;
    return (BlockDims){.B = B, .T = T, .C = c->dim, .NH = c->heads, .FF = c->ff, .eps = c->eps,
                       .hidden_dropout = c->dropout, .attn_dropout = c->attn_dropout, .lengths = lengths};
}

void tf_work_alloc(TransformerClf *m, int rows) {
    const TfConfig *c = &m->cfg;
    TfWork *w = &m->w;
    int B = m->base.pair ? 2 * rows : rows, T = c->max_len + (c->pool == TF_POOL_CLS), C = c->dim;
    long N = (long)B * T;
    if (N > (1L << 28)) DIE("transformer: batch %d x max_len %d is too large", rows, c->max_len);
    w->cap_seqs = B;
    w->cap_T = T;
    w->ids = xmalloc((size_t)N * sizeof *w->ids);
    w->lengths = xmalloc((size_t)B * sizeof *w->lengths);
    w->touched = xmalloc((size_t)N * sizeof *w->touched);
    w->seen = xcalloc((size_t)word_vocab_size(&m->base.vocab), 1);
    w->pos = tf_floats((long)T * C);
    positions_sinusoid(w->pos, T, C);
    w->x0 = tf_floats(N * C);
    w->dx = tf_floats(N * C);
    w->dy = tf_floats(N * C);
    w->x0_mask = xmalloc((size_t)N * C);
    BlockDims md = tf_dims(m, B, T, NULL);
    for (int l = 0; l < c->layers; l++) {
        block_attn_acts_init(&w->attn[l], &md, 0);
        block_ffn_acts_init(&w->ffn[l], &md);
    }
    w->scratch = tf_floats(block_scratch_floats(&md));
    w->enc = tf_floats((long)B * C);
    w->denc = tf_floats((long)B * C);
    long nf = (long)rows * m->FC;
    w->feat = tf_floats(nf);
    w->dfeat = tf_floats(nf);
    w->drop = tf_floats(nf);
    w->ddrop = tf_floats(nf);
    w->mask = xmalloc((size_t)(nf > 0 ? nf : 1));
    w->logits = tf_floats((long)rows * m->K);
    w->dlogits = tf_floats((long)rows * m->K);
}

void tf_work_free(TfWork *w, int layers) {
    if (w->ids)
        for (int l = 0; l < layers; l++) {
            block_attn_acts_free(&w->attn[l]);
            block_ffn_acts_free(&w->ffn[l]);
        }
    free(w->ids); free(w->lengths); free(w->touched); free(w->seen); free(w->pos); free(w->x0); free(w->dx);
    free(w->dy); free(w->x0_mask); free(w->scratch); free(w->enc); free(w->denc); free(w->feat); free(w->dfeat);
    free(w->drop); free(w->ddrop); free(w->mask); free(w->logits); free(w->dlogits);
    memset(w, 0, sizeof *w);
}

/* Rows a step can take without growing the workspace. */
static int tf_work_rows(const TransformerClf *m) { return m->base.pair ? m->w.cap_seqs / 2 : m->w.cap_seqs; }

/* ---- layout ---- */

/* ids (B, T): sentence j < n is text a of rows[j], n + j (pairs) its text b,
 * after the [CLS] slot (pool=cls: position 0, id WF_PAD, its vector set by
 * the forward); an empty text is one padding word; T = the longest. */
static void tf_layout(TransformerClf *m, const WordSeqs *s, const int *rows, int n) {
    TfWork *w = &m->w;
    int B = w->B, cls = m->cfg.pool == TF_POOL_CLS, T = 1;
    for (int j = 0; j < B; j++) {
        int r = rows[j % n], len = j >= n ? s->len_b[r] : s->len_a[r];
        CHECK_OR_DIE(len <= m->cfg.max_len);
        w->lengths[j] = cls + (len > 0 ? len : 1);
        if (w->lengths[j] > T) T = w->lengths[j];
    }
    w->T = T;
    for (int j = 0; j < B; j++) {
        int r = rows[j % n], second = j >= n;
        int len = second ? s->len_b[r] : s->len_a[r];
        const int32_t *src = second ? word_seqs_b(s, r) : word_seqs_a(s, r);
        int *dst = w->ids + (long)j * T;
        for (int t = 0; t < T; t++) dst[t] = WF_PAD;
        for (int t = 0; t < len; t++) dst[cls + t] = src[t];
    }
}

/* ---- forward ---- */

/* x0 (B, T, C) = emb[ids] * sqrt(C) (the [CLS] vector at position 0) + sinusoids, dropout when training. */
static void tf_embed_forward(TransformerClf *m) {
    TfWork *w = &m->w;
    int B = w->B, T = w->T, C = m->cfg.dim;
    long N = (long)B * T;
    embedding_forward(w->x0, w->ids, m->emb, (int)N, word_vocab_size(&m->base.vocab), C);
    float scale = sqrtf((float)C);
    for (long i = 0; i < N * C; i++) w->x0[i] *= scale;
    if (m->cls)
        for (int j = 0; j < B; j++) memcpy(w->x0 + (long)j * T * C, m->cls, (size_t)C * sizeof *w->x0);
    positions_add(w->x0, w->pos, B, T, C, 0);
    if (w->train && m->cfg.dropout > 0) dropout_forward(w->x0, w->x0_mask, w->x0, N * C, m->cfg.dropout, &m->base.rng);
}

/* enc (B, C): the mean of each sentence's outputs, or its [CLS] output. */
static void tf_pool_forward(TransformerClf *m, const float *h) {
    TfWork *w = &m->w;
    int T = w->T, C = m->cfg.dim;
    for (int j = 0; j < w->B; j++) {
        float *e = w->enc + (long)j * C;
        const float *hj = h + (long)j * T * C;
        if (m->cfg.pool == TF_POOL_CLS) {
            memcpy(e, hj, (size_t)C * sizeof *e);
            continue;
        }
        memset(e, 0, (size_t)C * sizeof *e);
        for (int t = 0; t < w->lengths[j]; t++)
            for (int c = 0; c < C; c++) e[c] += hj[(long)t * C + c];
        float inv = 1.0f / (float)w->lengths[j];
        for (int c = 0; c < C; c++) e[c] *= inv;
    }
}

static void tf_forward(TransformerClf *m, int n) {
    const TfConfig *c = &m->cfg;
    TfWork *w = &m->w;
    Rng *rng = w->train ? &m->base.rng : NULL;
    BlockDims d = tf_dims(m, w->B, w->T, w->lengths);
    tf_embed_forward(m);
    const float *x = w->x0;
    for (int l = 0; l < c->layers; l++) {
        block_self_attn_forward(&w->attn[l], x, &m->attn[l], &d, rng, w->scratch);
        block_ffn_forward(&w->ffn[l], w->attn[l].out, &m->ffn[l], &d, rng, w->scratch);
        x = w->ffn[l].out;
    }
    tf_pool_forward(m, x);
    word_pair_features(w->feat, w->enc, n, c->dim, m->base.pair);
    const float *in = w->feat;
    if (w->train && c->dropout > 0) {
        dropout_forward(w->drop, w->mask, w->feat, (long)n * m->FC, c->dropout, &m->base.rng);
        in = w->drop;
    }
    linear_forward(w->logits, in, m->out_w, m->out_b, n, m->FC, m->K);
}

/* ---- backward ---- */

/* dy (B, T, C) = the gradient of the last layer's output from denc (B, C). */
static void tf_pool_backward(TransformerClf *m) {
    TfWork *w = &m->w;
    int T = w->T, C = m->cfg.dim;
    memset(w->dy, 0, (size_t)w->B * T * C * sizeof *w->dy);
    for (int j = 0; j < w->B; j++) {
        const float *g = w->denc + (long)j * C;
        float *dj = w->dy + (long)j * T * C;
        int cls = m->cfg.pool == TF_POOL_CLS, len = cls ? 1 : w->lengths[j];
        float share = 1.0f / (float)len;
        for (int t = 0; t < len; t++)
            for (int c = 0; c < C; c++) dj[(long)t * C + c] = g[c] * share;
    }
}

/* The embeddings' gradient from g = d(x0) (B, T, C), consumed: the [CLS]
 * vector's from position 0, the words' rows (times sqrt(C)); the padding row
 * stays a zero vector. */
static void tf_embed_backward(TransformerClf *m, float *g) {
    TfWork *w = &m->w;
    Params *p = m->base.params;
    int B = w->B, T = w->T, C = m->cfg.dim, V = word_vocab_size(&m->base.vocab);
    long N = (long)B * T;
    if (m->cls) {
        float *gc = params_grad(p, m->h_cls);
        for (int j = 0; j < B; j++)
            for (int c = 0; c < C; c++) gc[c] += g[(long)j * T * C + c];
    }
    float scale = sqrtf((float)C);
    for (long i = 0; i < N * C; i++) g[i] *= scale;
    float *ge = params_grad(p, m->h_emb);
    int nt = embedding_backward(ge, w->touched, w->seen, g, w->ids, (int)N, V, C), kept = 0;
    for (int i = 0; i < nt; i++)
        if (w->touched[i] != WF_PAD) w->touched[kept++] = w->touched[i];
    memset(ge + (size_t)WF_PAD * C, 0, (size_t)C * sizeof *ge);
    params_touch_rows(p, m->h_emb, w->touched, kept);
}

static void tf_backward(TransformerClf *m) {
    const TfConfig *c = &m->cfg;
    TfWork *w = &m->w;
    Params *p = m->base.params;
    int n = w->n, dropped = w->train && c->dropout > 0;
    long nf = (long)n * m->FC, NC = (long)w->B * w->T * c->dim;
    float *ddrop = dropped ? w->ddrop : w->dfeat;
    memset(ddrop, 0, (size_t)nf * sizeof *ddrop);
    linear_backward(ddrop, params_grad(p, m->h_out_w), params_grad(p, m->h_out_b), w->dlogits,
                    dropped ? w->drop : w->feat, m->out_w, n, m->FC, m->K);
    if (dropped) {
        memset(w->dfeat, 0, (size_t)nf * sizeof *w->dfeat);
        dropout_backward(w->dfeat, w->ddrop, w->mask, nf, c->dropout);
    }
    word_pair_features_backward(w->denc, w->dfeat, w->feat, n, c->dim, m->base.pair);
    tf_pool_backward(m);
    BlockDims d = tf_dims(m, w->B, w->T, w->lengths);
    for (int l = c->layers - 1; l >= 0; l--) {   /* dy: d(layer l's output) -> d(its input) */
        const float *x = l > 0 ? w->ffn[l - 1].out : w->x0;
        block_ffn_backward(w->dx, &m->ffn_g[l], w->dy, &w->ffn[l], w->attn[l].out, &m->ffn[l], &d, w->scratch);
        block_self_attn_backward(w->dy, &m->attn_g[l], w->dx, &w->attn[l], x, &m->attn[l], &d, w->scratch);
    }
    float *g = w->dy;
    if (dropped) {
        memset(w->dx, 0, (size_t)NC * sizeof *w->dx);
        dropout_backward(w->dx, w->dy, w->x0_mask, NC, c->dropout);
        g = w->dx;
    }
    tf_embed_backward(m, g);
}

void tf_batch_forward(TransformerClf *m, const WordSeqs *s, const int *rows, int n, int train) {
    TfWork *w = &m->w;
    CHECK_OR_DIE(n >= 1 && n <= tf_work_rows(m));
    w->n = n;
    w->B = m->base.pair ? 2 * n : n;
    w->train = train;
    tf_layout(m, s, rows, n);
    tf_forward(m, n);
}

void tf_batch_backward(TransformerClf *m) { tf_backward(m); }

/* ---- logits for the harness's head ---- */

static const float *tf_run(Model *model, const Encoded *e, const int *rows, int n, int train) {
    TransformerClf *m = (TransformerClf *)model;
    if (n > tf_work_rows(m)) {   /* a bigger batch than configured: grow once */
        tf_work_free(&m->w, m->cfg.layers);
        tf_work_alloc(m, n);
    }
    tf_batch_forward(m, (const WordSeqs *)e, rows, n, train);
    return m->w.logits;
}

void tf_forward_ops(Model *model, const Encoded *e, const int *rows, int n, const TrainState *st, float *logits) {
    TransformerClf *m = (TransformerClf *)model;
    if (st) m->w.n = 0;   /* an empty batch leaves nothing to back-propagate */
    word_model_forward(model, e, rows, n, st, logits, m->K, tf_work_rows(m), tf_run);
}

void tf_backward_ops(Model *model, const float *dlogits) {
    TransformerClf *m = (TransformerClf *)model;
    if (m->w.n == 0) return;
    memcpy(m->w.dlogits, dlogits, (size_t)m->w.n * m->K * sizeof *dlogits);
    tf_batch_backward(m);
}
