/* bert_heads.c — the heads on top of the encoder: masked LM (gathered rows,
 * decoder tied to the word embeddings; pretraining's loss, with its gradient
 * at once), and the K-way classifier or regressor on the pooled [CLS] vector
 * (logits forward, and backward from the fine-tuning harness's dlogits). The
 * gradients w.r.t. the encoder output go into work->dhidden or
 * work->dpooled, for bert_backward. See bert.h. */
#include <math.h>
#include <string.h>

#include "core/blas.h"
#include "core/common.h"
#include "core/kernels.h"
#include "models/bert/bert.h"
#include "models/bert/bert_work.h"
#include "nn/activation.h"
#include "nn/dropout.h"
#include "nn/layernorm.h"
#include "nn/linear.h"

static BertWork *bert_head_work(Bert *m, int backward, const char *what) {
    BertWork *k = m->work;
    if (!k || k->B == 0) DIE("%s before bert_forward", what);
    if (backward && !k->train) DIE("%s: backward without bert_reserve(..., train = 1)", what);
    return k;
}

/* The MLM loss over the vocabulary, fused: per row one pass for the max, one
 * for exp (stored as the gradient's numerator) and the sum, one to scale, with
 * the vectorised fast_expf (core/kernels' xent_row) — the (n, V) softmax is
 * the largest element-wise job of a pretraining step. Returns the mean cross-entropy; dlogits (n, V),
 * if non-NULL, gets its gradient WRITTEN; *hits = rows whose label has the
 * largest logit (an exact tie counts as a hit). row_loss (n) is scratch: the
 * rows' losses are summed in order, so the result does not depend on threads. */
static float bert_mlm_xent(float *dlogits, const float *logits, const int *labels, int n, int V, long count,
                           double *row_loss, int *hits) {
    int h = 0;
    const ElemKernels *k = kernels();
    #pragma omp parallel for reduction(+ : h) if ((long)n * V > 65536)
    for (int i = 0; i < n; i++) {
        const float *r = logits + (long)i * V;
        float *d = dlogits ? dlogits + (long)i * V : NULL, mx;
        float sum = k->xent_row(d, r, V, (int)count, &mx);
        if (d) d[labels[i]] -= 1.0f / (float)count;
        row_loss[i] = log((double)sum) + mx - r[labels[i]];
        h += r[labels[i]] == mx;
    }
    double total = 0.0;
    for (int i = 0; i < n; i++) total += row_loss[i];
    *hits = h;
    return (float)(total / (double)count);
}

/* The MLM head's backward from dlogits (n, V) down to the hidden rows'
 * gradient: dhidden at positions, or drows at the slots (bert_forward_rows). */
static void bert_mlm_backward(Bert *m, const int *rows, int n) {
    BertWork *k = m->work;
    int C = m->cfg.hidden_size, V = m->cfg.vocab_size, E = bert_embedding_size(&m->cfg);
    float *dout = k->mlm_d1, *dact = k->mlm_d2, *dpre = k->mlm_d1, *dx = k->mlm_d2;
    /* Tied decoder: logits = out · word^T + bias. */
    matmul(dout, k->mlm_dlogits, m->w.word_emb, n, E, V, MAT_N, MAT_N, 1.0f, 0.0f);
    matmul(m->g.word_emb, k->mlm_dlogits, k->mlm_out, V, E, n, MAT_T, MAT_N, 1.0f, 1.0f);
    block_bias_backward(m->g.mlm_bias, k->mlm_dlogits, n, V);
    memset(dact, 0, sizeof(float) * (size_t)n * E);
    layernorm_backward(dact, m->g.mlm_ln_g, m->g.mlm_ln_b, dout, k->mlm_act, k->mlm_mean, k->mlm_rstd,
                       m->w.mlm_ln_g, n, E);
    /* dpre reuses d1 (dout is consumed). */
    memset(dpre, 0, sizeof(float) * (size_t)n * E);
    gelu_backward(dpre, dact, k->mlm_pre, (long)n * E);
    /* dx reuses d2 (dact is consumed). */
    matmul(dx, dpre, m->w.mlm_w, n, C, E, MAT_N, MAT_N, 1.0f, 0.0f);
    matmul(m->g.mlm_w, dpre, k->mlm_x, E, C, n, MAT_T, MAT_N, 1.0f, 1.0f);
    linear_bias_backward(m->g.mlm_b, dpre, n, E);
    /* Scatter-add: serial, as two masked positions never repeat but nothing forbids it. */
    bert_scatter_add_rows(k->rows_only ? k->drows : k->dhidden, dx, rows, n, C);
}

float bert_mlm_loss(Bert *m, const int *positions, const int *labels, int n, int backward, float *accuracy) {
    BertWork *k = bert_head_work(m, backward, "bert_mlm_loss");
    if (!m->heads.mlm) DIE("bert_mlm_loss: the model has no MLM head");
    if (n < 0 || n > k->max_masked) DIE("bert_mlm_loss: %d positions, %d reserved", n, k->max_masked);
    if (accuracy) *accuracy = 0.0f;
    k->mlm_n = n;
    if (n == 0) return 0.0f;
    int C = m->cfg.hidden_size, V = m->cfg.vocab_size, E = bert_embedding_size(&m->cfg);
    long N = (long)k->B * k->T;
    for (int i = 0; i < n; i++) {
        if (positions[i] < 0 || positions[i] >= N) DIE("bert_mlm_loss: position %d outside [0, %ld)", positions[i], N);
        if (labels[i] < 0 || labels[i] >= V) DIE("bert_mlm_loss: label %d outside [0, %d)", labels[i], V);
    }
    /* Gather FIRST: the transform and the (n, V) projection see n rows, not
     * B*T. After bert_forward_rows the rows are its slots. */
    const float *hidden = k->rows_only ? k->rows_ffn.out : bert_hidden(m);
    const int *rows = positions;
    if (k->rows_only) {
        if (n != k->rows_n || memcmp(positions, k->rows_asked, sizeof(int) * (size_t)n) != 0)
            DIE("bert_mlm_loss: positions other than the %d bert_forward_rows computed", k->rows_n);
        rows = k->rows_slot;
    }
    bert_gather_rows(k->mlm_x, hidden, rows, n, C);
    linear_forward(k->mlm_pre, k->mlm_x, m->w.mlm_w, m->w.mlm_b, n, C, E);
    gelu_forward(k->mlm_act, k->mlm_pre, (long)n * E);
    layernorm_forward(k->mlm_out, k->mlm_mean, k->mlm_rstd, k->mlm_act, m->w.mlm_ln_g, m->w.mlm_ln_b, n, E,
                      m->cfg.layer_norm_eps);
    linear_forward(k->mlm_logits, k->mlm_out, m->w.word_emb, m->w.mlm_bias, n, E, V);
    int hits;
    long count = m->loss_count > 0 ? m->loss_count : n;   /* see Bert.loss_count */
    float loss = bert_mlm_xent(backward ? k->mlm_dlogits : NULL, k->mlm_logits, labels, n, V, count, k->mlm_row_loss,
                               &hits);
    if (accuracy) *accuracy = (float)hits / (float)count;
    if (backward) bert_mlm_backward(m, rows, n);
    return loss;
}

const float *bert_mlm_logits(const Bert *m) {
    if (!m->work || m->work->mlm_n == 0) DIE("bert_mlm_logits before bert_mlm_loss");
    return m->work->mlm_logits;
}

void bert_head_forward(Bert *m, Rng *rng, float *logits) {
    BertWork *k = bert_head_work(m, 0, "bert_head_forward");
    if (m->heads.num_labels < 1 || m->heads.pair_features)
        DIE("bert_head_forward: the model has no classification/regression head on the pooled vector");
    int B = k->B, C = m->cfg.hidden_size, K = m->heads.num_labels;
    const float *x = bert_pooled(m);
    k->head_dropped = rng && m->cfg.hidden_dropout > 0.0f;
    if (k->head_dropped) {
        dropout_forward(k->head_in, k->head_mask, x, (long)B * C, m->cfg.hidden_dropout, rng);
        x = k->head_in;
    } else {
        memcpy(k->head_in, x, sizeof(float) * (size_t)B * C);
    }
    linear_forward(logits, x, m->w.cls_w, m->w.cls_b, B, C, K);
}

/* dlogits (B, K) -> classifier weights and dpooled. */
void bert_head_backward(Bert *m, const float *dlogits) {
    BertWork *k = bert_head_work(m, 1, "bert_head_backward");
    int B = k->B, C = m->cfg.hidden_size, K = m->heads.num_labels;
    matmul(k->dhead, dlogits, m->w.cls_w, B, C, K, MAT_N, MAT_N, 1.0f, 0.0f);
    matmul(m->g.cls_w, dlogits, k->head_in, K, C, B, MAT_T, MAT_N, 1.0f, 1.0f);
    linear_bias_backward(m->g.cls_b, dlogits, B, K);
    if (k->head_dropped) {
        dropout_backward(k->dpooled, k->dhead, k->head_mask, (long)B * C, m->cfg.hidden_dropout);
    } else {
        for (long i = 0; i < (long)B * C; i++) k->dpooled[i] += k->dhead[i];
    }
    k->pooled_grad = 1;
}
