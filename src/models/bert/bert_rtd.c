/* bert_rtd.c — replaced-token detection, the head of ELECTRA's discriminator
 * (Clark et al. 2020; Hugging Face's ElectraDiscriminatorPredictions):
 *
 *   logit[b, t] = w2 · gelu(W1 h[b, t] + b1) + b2       every real token t < lengths[b]
 *   loss = mean over real tokens of BCE-with-logits(logit, replaced[b, t])
 *
 * Padding positions take no part (their logit is reported as 0). The head
 * runs over all rows of the batch at once: the dense layer is one (N, C) x
 * (C, C) GEMM, padding rows included (cheaper than gathering, and their
 * gradient is zeroed). See bert.h. */
#include <math.h>
#include <string.h>

#include "core/blas.h"
#include "core/common.h"
#include "models/bert/bert.h"
#include "models/bert/bert_work.h"
#include "nn/activation.h"
#include "nn/linear.h"

/* log(1 + e^x) without overflow. */
static double softplus(double x) { return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x)); }

/* Loss, accuracy counts and (if dlogits) the gradient of scale * loss per
 * logit; the sums run in row order so the result does not depend on threads. */
static double rtd_bce(BertWork *k, const unsigned char *replaced, float scale, long count_over, float *dlogits,
                      long *hits, long *count) {
    int B = k->B, T = k->T;
    long n = 0, h = 0;
    for (int b = 0; b < B; b++) n += k->lengths[b];
    if (count_over > 0) n = count_over;   /* see Bert.loss_count */
    double total = 0.0;
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++) {
            long i = (long)b * T + t;
            if (t >= k->lengths[b]) {
                k->rtd_logits[i] = 0.0f;
                if (dlogits) dlogits[i] = 0.0f;
                continue;
            }
            double z = k->rtd_logits[i], y = replaced[i] ? 1.0 : 0.0;
            /* BCE(z, y) = softplus(z) - y z; its derivative sigmoid(z) - y. */
            total += softplus(z) - y * z;
            h += (z > 0) == (y > 0);
            if (dlogits) dlogits[i] = (float)((1.0 / (1.0 + exp(-z)) - y) * scale / (double)n);
        }
    *hits = h;
    *count = n;
    return total / (double)n;
}

float bert_rtd_loss(Bert *m, const unsigned char *replaced, float scale, int backward, float *accuracy) {
    BertWork *k = m->work;
    if (!k || k->B == 0) DIE("bert_rtd_loss before bert_forward");
    if (!m->heads.rtd) DIE("bert_rtd_loss: the model has no replaced-token detection head");
    if (backward && !k->train) DIE("bert_rtd_loss: backward without bert_reserve(..., train = 1)");
    int C = m->cfg.hidden_size;
    long N = (long)k->B * k->T;
    const float *h = bert_hidden(m);
    linear_forward(k->rtd_pre, h, m->w.rtd_w, m->w.rtd_b, (int)N, C, C);
    gelu_forward(k->rtd_act, k->rtd_pre, N * C);
    linear_forward(k->rtd_logits, k->rtd_act, m->w.rtd_out_w, m->w.rtd_out_b, (int)N, C, 1);
    long hits, count;
    double loss = rtd_bce(k, replaced, scale, m->loss_count, backward ? k->rtd_dlogits : NULL, &hits, &count);
    k->rtd_done = 1;
    if (accuracy) *accuracy = (float)((double)hits / (double)count);
    if (!backward) return (float)loss;
    /* dlogits (N) -> dense_prediction (1, C): dact = dlogits w2 (outer product). */
    float *dact = k->rtd_d1, *dpre = k->rtd_d2;
    matmul(dact, k->rtd_dlogits, m->w.rtd_out_w, (int)N, C, 1, MAT_N, MAT_N, 1.0f, 0.0f);
    matmul(m->g.rtd_out_w, k->rtd_dlogits, k->rtd_act, 1, C, (int)N, MAT_T, MAT_N, 1.0f, 1.0f);
    linear_bias_backward(m->g.rtd_out_b, k->rtd_dlogits, (int)N, 1);
    memset(dpre, 0, sizeof(float) * (size_t)(N * C));
    gelu_backward(dpre, dact, k->rtd_pre, N * C);
    /* dense (C, C): dhidden += dpre W1; padding rows carry zeros. */
    matmul(k->dhidden, dpre, m->w.rtd_w, (int)N, C, C, MAT_N, MAT_N, 1.0f, 1.0f);
    matmul(m->g.rtd_w, dpre, h, C, C, (int)N, MAT_T, MAT_N, 1.0f, 1.0f);
    linear_bias_backward(m->g.rtd_b, dpre, (int)N, C);
    return (float)loss;
}

const float *bert_rtd_logits(const Bert *m) {
    if (!m->work || !m->work->rtd_done) DIE("bert_rtd_logits before bert_rtd_loss");
    return m->work->rtd_logits;
}
