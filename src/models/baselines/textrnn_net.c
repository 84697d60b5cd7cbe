/* textrnn_net.c — the TextRNN network over a batch (see textrnn.h): the
 * batch's word ids, embeddings, the encoder (textrnn_encoder.c), the pair
 * features and the classifier; forward to logits, backward in reverse order
 * from their gradient, and the update (clipping, the Adam step). Every buffer
 * is sized once for the largest batch (tr_buffers_alloc / tr_train_prepare); a
 * step only uses the front of each with the batch's own (R, T). */
#include "models/baselines/textrnn.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "nn/activation.h"
#include "nn/dropout.h"
#include "nn/embedding.h"
#include "nn/linear.h"

/* Sequences per example: a, or a and b. */
static int tr_seqs_per_example(const TextRnn *m) { return m->base.pair ? 2 : 1; }

static float *tr_floats(long n) { return xaligned_alloc(sizeof(float) * (size_t)(n > 0 ? n : 1)); }

void tr_buffers_alloc(TextRnn *m, int n) {
    TrBuffers *b = &m->buf;
    const TrConfig *c = &m->cfg;
    b->cap_n = n;
    b->cap_r = n * tr_seqs_per_example(m);
    long RT = (long)b->cap_r * c->max_len, H = c->hidden, D = c->dim;
    b->ids = xmalloc(sizeof(int) * (size_t)RT);
    b->lengths = xmalloc(sizeof(int) * (size_t)b->cap_r);
    b->x = tr_floats(RT * D);
    b->h = tr_floats(RT * 2 * H);
    if (m->enc == TR_ENC_BIRNN) {
        b->gates = tr_floats(2 * RT * 4 * H);
        b->state = tr_floats(2 * RT * H);
    } else if (m->enc == TR_ENC_RCNN) {
        rcnn_buffers_alloc(m, RT);
    }
    b->rnn_scratch = tr_floats(tr_rnn_scratch_size(m, b->cap_r, c->max_len));
    b->pooled = tr_floats((long)b->cap_r * m->P);
    b->argmax = xmalloc(sizeof(int) * (size_t)b->cap_r * (size_t)m->P);
    if (c->pool == TR_POOL_ATTENTION) {
        b->keys = tr_floats(RT * 2 * H);
        b->alpha = tr_floats(RT);
    }
    b->feat = tr_floats((long)b->cap_n * m->F);
    b->act = tr_floats((long)b->cap_n * c->mlp);
    b->hid = tr_floats((long)b->cap_n * c->mlp);
    b->out = tr_floats((long)b->cap_n * m->K);
}

void tr_train_prepare(TextRnn *m) {
    if (m->training_ready) return;
    TrBuffers *b = &m->buf;
    const TrConfig *c = &m->cfg;
    long RT = (long)b->cap_r * c->max_len, H = c->hidden, D = c->dim, n = b->cap_n;
    params_grad_enable(m->base.params);
    /* Adam's moments now, not in the first step (optim_step would allocate them). */
    params_state(m->base.params, 0);
    params_state(m->base.params, 1);
    b->x_mask = xmalloc((size_t)RT * (size_t)D);
    b->feat_mask = xmalloc((size_t)n * (size_t)m->F);
    b->hid_mask = xmalloc((size_t)n * (size_t)c->mlp);
    b->dx = tr_floats(RT * D);
    b->dx_drop = tr_floats(RT * D);
    b->dh = tr_floats(RT * 2 * H);
    b->dpooled = tr_floats((long)b->cap_r * m->P);
    if (c->pool == TR_POOL_ATTENTION) b->dkeys = tr_floats(RT * 2 * H);
    if (m->enc == TR_ENC_RCNN) rcnn_train_alloc(m, RT);
    b->dfeat = tr_floats(n * m->F);
    b->dfeat_drop = tr_floats(n * m->F);
    b->dhid = tr_floats(n * c->mlp);
    b->dact = tr_floats(n * c->mlp);
    b->dout = tr_floats(n * m->K);
    b->touched = xmalloc(sizeof(int) * (size_t)RT);
    b->seen = xcalloc((size_t)word_vocab_size(&m->base.vocab), 1);
    m->training_ready = 1;
}

void tr_buffers_free(TrBuffers *b) {
    void *all[] = {b->ids, b->lengths, b->x, b->h, b->gates, b->state, b->rnn_scratch, b->pooled, b->argmax,
                   b->keys, b->alpha, b->dkeys, b->cat, b->ctx_hs, b->dcat,
                   b->feat, b->act, b->hid, b->out, b->x_mask, b->feat_mask, b->hid_mask, b->dx, b->dx_drop,
                   b->dh, b->dpooled, b->dfeat, b->dfeat_drop, b->dhid, b->dact, b->dout, b->touched,
                   b->seen};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) free(all[i]);
    han_buffers_free(b->han);
    memset(b, 0, sizeof *b);
}

/* ---- forward ---- */

/* The batch's word ids (R, T) and lengths (R), a texts then b texts; returns T
 * (at least 1, so that a batch of empty texts still has a shape). */
static int tr_gather(TextRnn *m, const WordSeqs *s, const int *rows, int n) {
    TrBuffers *b = &m->buf;
    int R = n * tr_seqs_per_example(m), T = 1;
    for (int i = 0; i < n; i++) {
        b->lengths[i] = s->len_a[rows[i]];
        if (m->base.pair) b->lengths[n + i] = s->len_b[rows[i]];
    }
    for (int r = 0; r < R; r++) T = b->lengths[r] > T ? b->lengths[r] : T;
    for (int r = 0; r < R; r++) {
        int *dst = b->ids + (long)r * T, i = r % n;
        const int32_t *src = r < n ? word_seqs_a(s, rows[i]) : word_seqs_b(s, rows[i]);
        for (int t = 0; t < b->lengths[r]; t++) dst[t] = src[t];
        for (int t = b->lengths[r]; t < T; t++) dst[t] = WF_PAD;
    }
    return T;
}

/* feat (n, F) from the pooled encodings (R, P): u, or [u; v; |u - v|; u * v]. */
static void tr_features(TextRnn *m, int n) {
    int P = m->P;
    const float *pooled = m->buf.pooled;
    for (int i = 0; i < n; i++) {
        float *f = m->buf.feat + (long)i * m->F;
        const float *u = pooled + (long)i * P;
        if (!m->base.pair) {
            memcpy(f, u, sizeof(float) * (size_t)P);
            continue;
        }
        const float *v = pooled + (long)(n + i) * P;
        for (int j = 0; j < P; j++) {
            f[j] = u[j];
            f[P + j] = v[j];
            f[2 * P + j] = fabsf(u[j] - v[j]);
            f[3 * P + j] = u[j] * v[j];
        }
    }
}

int tr_forward(TextRnn *m, const WordSeqs *s, const int *rows, int n, int train) {
    TrBuffers *b = &m->buf;
    const TrConfig *c = &m->cfg;
    Params *p = m->base.params;
    int R = n * tr_seqs_per_example(m), T = tr_gather(m, s, rows, n);
    int V = word_vocab_size(&m->base.vocab), D = c->dim, M = c->mlp;
    long RT = (long)R * T;
    embedding_forward(b->x, b->ids, params_data(p, m->p.emb), (int)RT, V, D);
    if (train && c->emb_dropout > 0) dropout_forward(b->x, b->x_mask, b->x, RT * D, c->emb_dropout, &m->base.rng);
    b->seqs = s;
    b->rows = rows;
    tr_encode_forward(m, R, T, train);
    tr_features(m, n);
    if (train && c->dropout > 0) dropout_forward(b->feat, b->feat_mask, b->feat, (long)n * m->F, c->dropout, &m->base.rng);
    if (M == 0) {   /* one linear layer on the features */
        linear_forward(b->out, b->feat, params_data(p, m->p.w2), params_data(p, m->p.b2), n, m->F, m->K);
        return T;
    }
    linear_forward(b->act, b->feat, params_data(p, m->p.w1), params_data(p, m->p.b1), n, m->F, M);
    if (c->act == TR_ACT_RELU) relu_forward(b->act, b->act, (long)n * M);
    else tanh_forward(b->act, b->act, (long)n * M);
    const float *hid = b->act;
    if (train && c->dropout > 0) {
        dropout_forward(b->hid, b->hid_mask, b->act, (long)n * M, c->dropout, &m->base.rng);
        hid = b->hid;
    }
    linear_forward(b->out, hid, params_data(p, m->p.w2), params_data(p, m->p.b2), n, M, m->K);
    return T;
}

/* ---- backward ---- */

/* dpooled (R, P) from dfeat (n, F): the inverse of tr_features. d|x|/dx is
 * taken as 0 at x = 0, as PyTorch's abs does. */
static void tr_features_backward(TextRnn *m, const float *dfeat, int n) {
    int P = m->P;
    const float *pooled = m->buf.pooled;
    for (int i = 0; i < n; i++) {
        const float *df = dfeat + (long)i * m->F;
        float *du = m->buf.dpooled + (long)i * P;
        if (!m->base.pair) {
            memcpy(du, df, sizeof(float) * (size_t)P);
            continue;
        }
        float *dv = m->buf.dpooled + (long)(n + i) * P;
        const float *u = pooled + (long)i * P, *v = pooled + (long)(n + i) * P;
        for (int j = 0; j < P; j++) {
            float diff = u[j] - v[j], sgn = diff > 0 ? 1.0f : diff < 0 ? -1.0f : 0.0f;
            du[j] = df[j] + sgn * df[2 * P + j] + v[j] * df[3 * P + j];
            dv[j] = df[P + j] - sgn * df[2 * P + j] + u[j] * df[3 * P + j];
        }
    }
}

/* The MLP's backward from buf.dout to the gradient of the features (returned:
 * before the feature dropout, i.e. w.r.t. tr_features' output). */
static const float *tr_backward_mlp(TextRnn *m, int n) {
    TrBuffers *b = &m->buf;
    const TrConfig *c = &m->cfg;
    Params *p = m->base.params;
    int M = c->mlp, drop = c->dropout > 0;
    long nM = (long)n * M, nF = (long)n * m->F;
    if (M == 0) {
        memset(b->dfeat, 0, sizeof(float) * (size_t)nF);
        linear_backward(b->dfeat, params_grad(p, m->p.w2), params_grad(p, m->p.b2), b->dout, b->feat,
                        params_data(p, m->p.w2), n, m->F, m->K);
        if (!drop) return b->dfeat;
        memset(b->dfeat_drop, 0, sizeof(float) * (size_t)nF);
        dropout_backward(b->dfeat_drop, b->dfeat, b->feat_mask, nF, c->dropout);
        return b->dfeat_drop;
    }
    /* dhid: w.r.t. the MLP hidden layer's output (after dropout). */
    memset(b->dhid, 0, sizeof(float) * (size_t)nM);
    linear_backward(b->dhid, params_grad(p, m->p.w2), params_grad(p, m->p.b2), b->dout, drop ? b->hid : b->act,
                    params_data(p, m->p.w2), n, M, m->K);
    const float *dact = b->dhid;      /* w.r.t. the activation's output */
    if (drop) {
        memset(b->dact, 0, sizeof(float) * (size_t)nM);
        dropout_backward(b->dact, b->dhid, b->hid_mask, nM, c->dropout);
        dact = b->dact;
    }
    float *dpre = drop ? b->dhid : b->dact;   /* the buffer dact is not in */
    memset(dpre, 0, sizeof(float) * (size_t)nM);
    if (c->act == TR_ACT_RELU) relu_backward(dpre, dact, b->act, nM);
    else tanh_backward(dpre, dact, b->act, nM);
    memset(b->dfeat, 0, sizeof(float) * (size_t)nF);
    linear_backward(b->dfeat, params_grad(p, m->p.w1), params_grad(p, m->p.b1), dpre, b->feat,
                    params_data(p, m->p.w1), n, m->F, M);
    if (!drop) return b->dfeat;
    memset(b->dfeat_drop, 0, sizeof(float) * (size_t)nF);
    dropout_backward(b->dfeat_drop, b->dfeat, b->feat_mask, nF, c->dropout);
    return b->dfeat_drop;
}

/* Everything after the loss: the classifier, the features, the encoder and
 * the embedding rows of the batch's words (marked touched). */
void tr_backward(TextRnn *m, int n, int T) {
    TrBuffers *b = &m->buf;
    const TrConfig *c = &m->cfg;
    Params *p = m->base.params;
    int R = n * tr_seqs_per_example(m), D = c->dim, V = word_vocab_size(&m->base.vocab);
    long RT = (long)R * T;
    tr_features_backward(m, tr_backward_mlp(m, n), n);
    tr_encode_backward(m, R, T);
    const float *demb = b->dx;
    if (c->emb_dropout > 0) {
        memset(b->dx_drop, 0, sizeof(float) * (size_t)(RT * D));
        dropout_backward(b->dx_drop, b->dx, b->x_mask, RT * D, c->emb_dropout);
        demb = b->dx_drop;
    }
    int touched = embedding_backward(params_grad(p, m->p.emb), b->touched, b->seen, demb, b->ids, (int)RT, V, D);
    params_touch_rows(p, m->p.emb, b->touched, touched);
}

/* ---- logits for the harness's head ---- */

static const float *tr_run(Model *model, const Encoded *e, const int *rows, int n, int train) {
    TextRnn *m = (TextRnn *)model;
    int T = tr_forward(m, (const WordSeqs *)e, rows, n, train);
    if (train) m->last_T = T;
    return m->buf.out;
}

void tr_forward_ops(Model *model, const Encoded *e, const int *rows, int n, const TrainState *st, float *logits) {
    TextRnn *m = (TextRnn *)model;
    if (st) {
        if (n > m->buf.cap_n) {   /* a bigger batch than configured: grow once */
            tr_buffers_free(&m->buf);
            m->training_ready = 0;
            tr_buffers_alloc(m, n);
        }
        tr_train_prepare(m);   /* no-op after create / load_state */
        m->last_n = n;
    }
    word_model_forward(model, e, rows, n, st, logits, m->K, m->buf.cap_n, tr_run);
}

void tr_backward_ops(Model *model, const float *dlogits) {
    TextRnn *m = (TextRnn *)model;
    memcpy(m->buf.dout, dlogits, sizeof(float) * (size_t)m->last_n * (size_t)m->K);
    tr_backward(m, m->last_n, m->last_T);
}

int tr_update_ops(Model *model, const TrainState *st) {
    return word_model_step(model, ((TextRnn *)model)->cfg.clip, st->lr);
}
