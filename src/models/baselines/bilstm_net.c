/* bilstm_net.c — the BiLSTM network over a batch (see bilstm.h): forward to
 * logits, backward in reverse order from their gradient, and the update
 * (clipping, the Adam step). Every buffer is
 * sized once for the largest batch (bl_buffers_alloc / bl_train_prepare); a
 * step only uses the front of each with the batch's own (R, T). */
#include "models/baselines/bilstm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "nn/activation.h"
#include "nn/dropout.h"
#include "nn/embedding.h"
#include "nn/linear.h"
#include "nn/lstm.h"
#include "nn/maxpool.h"
#include "optim/clip.h"

/* Sequences per example: a, or a and b. */
static int bl_seqs_per_example(const BiLstm *m) { return m->base.pair ? 2 : 1; }

static LstmDims bl_lstm_dims(const BiLstm *m, int R, int T) {
    return (LstmDims){.B = R, .T = T, .C = m->cfg.dim, .H = m->cfg.hidden};
}

static float *bl_floats(long n) { return xaligned_alloc(sizeof(float) * (size_t)(n > 0 ? n : 1)); }

void bl_buffers_alloc(BiLstm *m, int n) {
    BlBuffers *b = &m->buf;
    const BlConfig *c = &m->cfg;
    b->cap_n = n;
    b->cap_r = n * bl_seqs_per_example(m);
    long RT = (long)b->cap_r * c->max_len, H = c->hidden, D = c->dim;
    b->ids = xmalloc(sizeof(int) * (size_t)RT);
    b->lengths = xmalloc(sizeof(int) * (size_t)b->cap_r);
    b->x = bl_floats(RT * D);
    b->h = bl_floats(RT * 2 * H);
    b->gates = bl_floats(2 * RT * 4 * H);
    b->cell = bl_floats(2 * RT * H);
    b->lstm_scratch = bl_floats(lstm_scratch_size(bl_lstm_dims(m, b->cap_r, c->max_len)));
    b->pooled = bl_floats((long)b->cap_r * 2 * H);
    b->argmax = xmalloc(sizeof(int) * (size_t)b->cap_r * 2 * (size_t)H);
    b->feat = bl_floats((long)b->cap_n * m->F);
    b->act = bl_floats((long)b->cap_n * c->mlp);
    b->hid = bl_floats((long)b->cap_n * c->mlp);
    b->out = bl_floats((long)b->cap_n * m->K);
}

void bl_train_prepare(BiLstm *m) {
    if (m->training_ready) return;
    BlBuffers *b = &m->buf;
    const BlConfig *c = &m->cfg;
    long RT = (long)b->cap_r * c->max_len, H = c->hidden, D = c->dim, n = b->cap_n;
    params_grad_enable(m->base.params);
    /* Adam's moments now, not in the first step (optim_step would allocate them). */
    params_state(m->base.params, 0);
    params_state(m->base.params, 1);
    b->x_mask = xmalloc((size_t)RT * (size_t)D);
    b->feat_mask = xmalloc((size_t)n * (size_t)m->F);
    b->hid_mask = xmalloc((size_t)n * (size_t)c->mlp);
    b->dx = bl_floats(RT * D);
    b->dx_drop = bl_floats(RT * D);
    b->dh = bl_floats(RT * 2 * H);
    b->dpooled = bl_floats((long)b->cap_r * 2 * H);
    b->dfeat = bl_floats(n * m->F);
    b->dfeat_drop = bl_floats(n * m->F);
    b->dhid = bl_floats(n * c->mlp);
    b->dact = bl_floats(n * c->mlp);
    b->dout = bl_floats(n * m->K);
    b->touched = xmalloc(sizeof(int) * (size_t)RT);
    b->seen = xcalloc((size_t)word_vocab_size(&m->base.vocab), 1);
    m->training_ready = 1;
}

void bl_buffers_free(BlBuffers *b) {
    void *all[] = {b->ids, b->lengths, b->x, b->h, b->gates, b->cell, b->lstm_scratch, b->pooled, b->argmax,
                   b->feat, b->act, b->hid, b->out, b->x_mask, b->feat_mask, b->hid_mask, b->dx, b->dx_drop,
                   b->dh, b->dpooled, b->dfeat, b->dfeat_drop, b->dhid, b->dact, b->dout, b->touched,
                   b->seen};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) free(all[i]);
    memset(b, 0, sizeof *b);
}

/* ---- forward ---- */

/* The batch's word ids (R, T) and lengths (R), a texts then b texts; returns T
 * (at least 1, so that a batch of empty texts still has a shape). */
static int bl_gather(BiLstm *m, const WordSeqs *s, const int *rows, int n) {
    BlBuffers *b = &m->buf;
    int R = n * bl_seqs_per_example(m), T = 1;
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

/* feat (n, F) from the pooled encodings (R, 2H): u, or [u; v; |u - v|; u * v]. */
static void bl_features(BiLstm *m, int n) {
    int H2 = 2 * m->cfg.hidden;
    const float *pooled = m->buf.pooled;
    for (int i = 0; i < n; i++) {
        float *f = m->buf.feat + (long)i * m->F;
        const float *u = pooled + (long)i * H2;
        if (!m->base.pair) {
            memcpy(f, u, sizeof(float) * (size_t)H2);
            continue;
        }
        const float *v = pooled + (long)(n + i) * H2;
        for (int j = 0; j < H2; j++) {
            f[j] = u[j];
            f[H2 + j] = v[j];
            f[2 * H2 + j] = fabsf(u[j] - v[j]);
            f[3 * H2 + j] = u[j] * v[j];
        }
    }
}

int bl_forward(BiLstm *m, const WordSeqs *s, const int *rows, int n, int train) {
    BlBuffers *b = &m->buf;
    const BlConfig *c = &m->cfg;
    Params *p = m->base.params;
    int R = n * bl_seqs_per_example(m), T = bl_gather(m, s, rows, n);
    int V = word_vocab_size(&m->base.vocab), D = c->dim, H = c->hidden, M = c->mlp;
    long RT = (long)R * T;
    embedding_forward(b->x, b->ids, params_data(p, m->p.emb), (int)RT, V, D);
    if (train && c->emb_dropout > 0) dropout_forward(b->x, b->x_mask, b->x, RT * D, c->emb_dropout, &m->base.rng);
    LstmWeights w[2];
    for (int dir = 0; dir < 2; dir++)
        w[dir] = (LstmWeights){params_data(p, m->p.w_ih[dir]), params_data(p, m->p.w_hh[dir]),
                               params_data(p, m->p.b_ih[dir]), params_data(p, m->p.b_hh[dir])};
    bilstm_forward(b->h, b->gates, b->cell, b->x, b->lengths, w, bl_lstm_dims(m, R, T), b->lstm_scratch);
    /* Max over the valid steps only: padding never wins (an empty text pools to 0). */
    maxpool_time_forward(b->pooled, b->argmax, b->h, b->lengths, R, T, 2 * H);
    bl_features(m, n);
    if (train && c->dropout > 0) dropout_forward(b->feat, b->feat_mask, b->feat, (long)n * m->F, c->dropout, &m->base.rng);
    linear_forward(b->act, b->feat, params_data(p, m->p.w1), params_data(p, m->p.b1), n, m->F, M);
    if (c->act == BL_ACT_RELU) relu_forward(b->act, b->act, (long)n * M);
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

/* dpooled (R, 2H) from dfeat (n, F): the inverse of bl_features. d|x|/dx is
 * taken as 0 at x = 0, as PyTorch's abs does. */
static void bl_features_backward(BiLstm *m, const float *dfeat, int n) {
    int H2 = 2 * m->cfg.hidden;
    const float *pooled = m->buf.pooled;
    for (int i = 0; i < n; i++) {
        const float *df = dfeat + (long)i * m->F;
        float *du = m->buf.dpooled + (long)i * H2;
        if (!m->base.pair) {
            memcpy(du, df, sizeof(float) * (size_t)H2);
            continue;
        }
        float *dv = m->buf.dpooled + (long)(n + i) * H2;
        const float *u = pooled + (long)i * H2, *v = pooled + (long)(n + i) * H2;
        for (int j = 0; j < H2; j++) {
            float diff = u[j] - v[j], sgn = diff > 0 ? 1.0f : diff < 0 ? -1.0f : 0.0f;
            du[j] = df[j] + sgn * df[2 * H2 + j] + v[j] * df[3 * H2 + j];
            dv[j] = df[H2 + j] - sgn * df[2 * H2 + j] + u[j] * df[3 * H2 + j];
        }
    }
}

/* The MLP's backward from buf.dout to the gradient of the features (returned:
 * before the feature dropout, i.e. w.r.t. bl_features' output). */
static const float *bl_backward_mlp(BiLstm *m, int n) {
    BlBuffers *b = &m->buf;
    const BlConfig *c = &m->cfg;
    Params *p = m->base.params;
    int M = c->mlp, drop = c->dropout > 0;
    long nM = (long)n * M, nF = (long)n * m->F;
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
    if (c->act == BL_ACT_RELU) relu_backward(dpre, dact, b->act, nM);
    else tanh_backward(dpre, dact, b->act, nM);
    memset(b->dfeat, 0, sizeof(float) * (size_t)nF);
    linear_backward(b->dfeat, params_grad(p, m->p.w1), params_grad(p, m->p.b1), dpre, b->feat,
                    params_data(p, m->p.w1), n, m->F, M);
    if (!drop) return b->dfeat;
    memset(b->dfeat_drop, 0, sizeof(float) * (size_t)nF);
    dropout_backward(b->dfeat_drop, b->dfeat, b->feat_mask, nF, c->dropout);
    return b->dfeat_drop;
}

/* Everything after the loss: the MLP, the features, pooling, the BiLSTM and the
 * embedding rows of the batch's words (marked touched). */
void bl_backward(BiLstm *m, int n, int T) {
    BlBuffers *b = &m->buf;
    const BlConfig *c = &m->cfg;
    Params *p = m->base.params;
    int R = n * bl_seqs_per_example(m), H = c->hidden, D = c->dim, V = word_vocab_size(&m->base.vocab);
    long RT = (long)R * T;
    bl_features_backward(m, bl_backward_mlp(m, n), n);
    memset(b->dh, 0, sizeof(float) * (size_t)(RT * 2 * H));
    maxpool_time_backward(b->dh, b->dpooled, b->argmax, R, T, 2 * H);
    LstmWeights w[2];
    LstmGrads g[2];
    for (int dir = 0; dir < 2; dir++) {
        w[dir] = (LstmWeights){params_data(p, m->p.w_ih[dir]), params_data(p, m->p.w_hh[dir]),
                               params_data(p, m->p.b_ih[dir]), params_data(p, m->p.b_hh[dir])};
        g[dir] = (LstmGrads){params_grad(p, m->p.w_ih[dir]), params_grad(p, m->p.w_hh[dir]),
                             params_grad(p, m->p.b_ih[dir]), params_grad(p, m->p.b_hh[dir])};
    }
    memset(b->dx, 0, sizeof(float) * (size_t)(RT * D));
    bilstm_backward(b->dx, g, b->dh, b->h, b->gates, b->cell, b->x, b->lengths, w, bl_lstm_dims(m, R, T),
                    b->lstm_scratch);
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

void bl_forward_ops(Model *model, const Encoded *e, const int *rows, int n, const TrainState *st, float *logits) {
    BiLstm *m = (BiLstm *)model;
    const WordSeqs *s = (const WordSeqs *)e;
    if (st) {
        if (n > m->buf.cap_n) {   /* a bigger batch than configured: grow once */
            bl_buffers_free(&m->buf);
            m->training_ready = 0;
            bl_buffers_alloc(m, n);
        }
        bl_train_prepare(m);   /* no-op after create / load_state */
        params_zero_grad(m->base.params);
        m->last_n = n;
        if (n == 0) return;
        m->last_T = bl_forward(m, s, rows, n, 1);
        memcpy(logits, m->buf.out, sizeof(float) * (size_t)n * (size_t)m->K);
        return;
    }
    for (int done = 0; done < n;) {   /* in buffer-sized chunks */
        int k = n - done < m->buf.cap_n ? n - done : m->buf.cap_n;
        bl_forward(m, s, rows + done, k, 0);
        memcpy(logits + (long)done * m->K, m->buf.out, sizeof(float) * (size_t)k * (size_t)m->K);
        done += k;
    }
}

void bl_backward_ops(Model *model, const float *dlogits) {
    BiLstm *m = (BiLstm *)model;
    memcpy(m->buf.dout, dlogits, sizeof(float) * (size_t)m->last_n * (size_t)m->K);
    bl_backward(m, m->last_n, m->last_T);
}

int bl_update_ops(Model *model, const TrainState *st) {
    BiLstm *m = (BiLstm *)model;
    double norm = clip_grad_norm(m->base.params, m->cfg.clip);
    if (!isfinite(norm)) return -1;
    optim_step(&m->base.opt, m->base.params, st->lr);
    return 0;
}
