/* bert_pair_head.c — pair classification on features of the two texts:
 * [u; v; |u - v|; u * v] of their mean-pooled encodings (InferSent's
 * combination, Conneau et al. 2017, which the TextCNN and BiLSTM baselines
 * use), optionally after the pooled [CLS] of the joined pair. See bert.h
 * (bert_pair_features_forward) for the row layout.
 *
 * Why: the encoder reads a pair joined as "[CLS] a [SEP] b [SEP]" and must
 * learn to compare the texts through attention; a small, briefly pretrained
 * encoder leaves MRPC at its majority class that way, while the same texts
 * encoded apart and compared feature by feature are what the baselines beat
 * it with. The features have no parameters; the classifier reads F*C inputs. */
#include <math.h>
#include <string.h>

#include "core/blas.h"
#include "core/common.h"
#include "models/bert/bert.h"
#include "models/bert/bert_work.h"
#include "nn/dropout.h"
#include "nn/linear.h"

/* out (C) = mean of the first len rows of h (T, C). */
static void pair_mean_pool(float *out, const float *h, int len, int C) {
    for (int c = 0; c < C; c++) {
        double s = 0.0;
        for (int t = 0; t < len; t++) s += h[(long)t * C + c];
        out[c] = (float)(s / len);
    }
}

void bert_pair_features_forward(Bert *m, int n, Rng *rng, float *logits) {
    BertWork *k = m->work;
    int F = m->heads.pair_features, C = m->cfg.hidden_size, K = m->heads.num_labels, T = k ? k->T : 0;
    if (!k || k->B == 0 || k->rows_only) DIE("bert_pair_features_forward needs a full bert_forward first");
    if (F != 4 && F != 5) DIE("bert_pair_features_forward: the model has no pair-features head");
    int first = F == 5 ? n : 0;   /* the block of first texts */
    if (k->B != first + 2 * n) DIE("bert_pair_features_forward: %d rows for %d pairs", k->B, n);
    const float *h = bert_hidden(m);
    long FC = (long)F * C;
    float *f = k->pair_f;
    for (int i = 0; i < n; i++) {
        float *fi = f + i * FC, *u = fi + (F == 5 ? C : 0), *v = u + C, *ad = v + C, *pr = ad + C;
        int ra = first + i, rb = first + n + i;
        if (F == 5) memcpy(fi, k->pooled + (long)i * C, sizeof(float) * (size_t)C);
        pair_mean_pool(u, h + (long)ra * T * C, k->lengths[ra], C);
        pair_mean_pool(v, h + (long)rb * T * C, k->lengths[rb], C);
        for (int c = 0; c < C; c++) {
            ad[c] = fabsf(u[c] - v[c]);
            pr[c] = u[c] * v[c];
        }
    }
    k->head_dropped = rng && m->cfg.hidden_dropout > 0.0f;
    const float *x = f;
    if (k->head_dropped) {
        dropout_forward(k->head_in, k->head_mask, f, n * FC, m->cfg.hidden_dropout, rng);
        x = k->head_in;
    }
    linear_forward(logits, x, m->w.cls_w, m->w.cls_b, n, (int)FC, K);
    k->pair_n = n;
}

/* The classifier's gradients, then back through dropout and the features
 * into the hidden states' (and, F = 5, the pooled vectors') gradients. */
void bert_pair_features_backward(Bert *m, const float *dlogits) {
    BertWork *k = m->work;
    if (!k || k->pair_n == 0) DIE("bert_pair_features_backward before bert_pair_features_forward");
    if (!k->train) DIE("bert_pair_features_backward without bert_reserve(..., train = 1)");
    int F = m->heads.pair_features, C = m->cfg.hidden_size, K = m->heads.num_labels, T = k->T, n = k->pair_n;
    int first = F == 5 ? n : 0;
    long FC = (long)F * C;
    const float *f = k->pair_f, *x = k->head_dropped ? k->head_in : f;
    float *df = k->pair_df;
    matmul(df, dlogits, m->w.cls_w, n, (int)FC, K, MAT_N, MAT_N, 1.0f, 0.0f);
    matmul(m->g.cls_w, dlogits, x, K, (int)FC, n, MAT_T, MAT_N, 1.0f, 1.0f);
    linear_bias_backward(m->g.cls_b, dlogits, n, K);
    if (k->head_dropped) {
        float *d = k->head_in;   /* x is consumed: its buffer takes the undropped gradient */
        memset(d, 0, sizeof(float) * (size_t)(n * FC));
        dropout_backward(d, df, k->head_mask, n * FC, m->cfg.hidden_dropout);
        memcpy(df, d, sizeof(float) * (size_t)(n * FC));
    }
    for (int i = 0; i < n; i++) {
        const float *fi = f + i * FC, *u = fi + (F == 5 ? C : 0), *v = u + C;
        const float *dfi = df + i * FC, *dpool = dfi, *du0 = dfi + (F == 5 ? C : 0), *dv0 = du0 + C, *dad = dv0 + C,
                    *dpr = dad + C;
        if (F == 5) {
            float *dp = k->dpooled + (long)i * C;
            for (int c = 0; c < C; c++) dp[c] += dpool[c];
            k->pooled_grad = 1;
        }
        int ra = first + i, rb = first + n + i, la = k->lengths[ra], lb = k->lengths[rb];
        float *da = k->dhidden + (long)ra * T * C, *db = k->dhidden + (long)rb * T * C;
        for (int c = 0; c < C; c++) {
            /* d|u - v|/du = sign(u - v) (0 at a tie), d(u v)/du = v. */
            float s = u[c] > v[c] ? 1.0f : u[c] < v[c] ? -1.0f : 0.0f;
            float du = du0[c] + s * dad[c] + v[c] * dpr[c], dv = dv0[c] - s * dad[c] + u[c] * dpr[c];
            for (int t = 0; t < la; t++) da[(long)t * C + c] += du / (float)la;
            for (int t = 0; t < lb; t++) db[(long)t * C + c] += dv / (float)lb;
        }
    }
}
