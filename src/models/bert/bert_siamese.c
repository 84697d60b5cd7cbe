/* bert_siamese.c — the siamese similarity head (Sentence-BERT's regression
 * objective, Reimers & Gurevych 2019): the two texts of a pair are encoded as
 * separate sequences, each mean-pooled over its real tokens, and the score is
 * the cosine of the two vectors. No parameters of its own.
 *
 * Why it exists: a [CLS] cross-encoder has to learn to compare the two texts
 * through attention, and this repository's small, briefly pretrained encoder
 * does not (STS-B Pearson about 20 however long it is fine-tuned; the pooled
 * vectors of each text, compared directly, are what the TextCNN and BiLSTM
 * baselines reach 68-71 with). See bert.h for the calling convention. */
#include <math.h>
#include <string.h>

#include "core/common.h"
#include "models/bert/bert.h"
#include "models/bert/bert_work.h"

/* Below this product of norms the cosine is taken as 0 (an all-zero vector). */
#define SIAMESE_MIN_NORM 1e-12

/* out (C) = mean of the first len rows of h (T, C). */
static void siamese_mean_pool(double *out, const float *h, int len, int C) {
    for (int c = 0; c < C; c++) out[c] = 0.0;
    for (int t = 0; t < len; t++)
        for (int c = 0; c < C; c++) out[c] += h[(long)t * C + c];
    for (int c = 0; c < C; c++) out[c] /= len;
}

/* cos(u, v); with backward, du and dv (C) get d cos / du and d cos / dv. */
static double siamese_cosine(const double *u, const double *v, int C, double *du, double *dv) {
    double uv = 0, uu = 0, vv = 0;
    for (int c = 0; c < C; c++) {
        uv += u[c] * v[c];
        uu += u[c] * u[c];
        vv += v[c] * v[c];
    }
    double nn = sqrt(uu) * sqrt(vv);
    if (nn < SIAMESE_MIN_NORM) {
        if (du) memset(du, 0, sizeof(double) * (size_t)C);
        if (dv) memset(dv, 0, sizeof(double) * (size_t)C);
        return 0.0;
    }
    double cs = uv / nn;
    if (du)   /* d(u.v / |u||v|)/du = v / (|u||v|) - cos u / |u|^2 */
        for (int c = 0; c < C; c++) {
            du[c] = v[c] / nn - cs * u[c] / uu;
            dv[c] = u[c] / nn - cs * v[c] / vv;
        }
    return cs;
}

/* The last forward's pairs: n = B / 2, after the checks every entry point makes. */
static int siamese_pairs(const Bert *m, const char *what) {
    const BertWork *k = m->work;
    if (!k || k->B == 0 || k->rows_only) DIE("%s needs a full bert_forward first", what);
    if (k->B % 2) DIE("%s: %d rows; a siamese batch has two per pair", what, k->B);
    return k->B / 2;
}

void bert_siamese_forward(Bert *m, float *scores) {
    int n = siamese_pairs(m, "bert_siamese_forward"), T = m->work->T, C = m->cfg.hidden_size;
    const float *h = bert_hidden(m);
    double u[C], v[C];   /* C is the hidden size: a few KiB at most */
    for (int i = 0; i < n; i++) {
        siamese_mean_pool(u, h + (long)i * T * C, m->work->lengths[i], C);
        siamese_mean_pool(v, h + (long)(n + i) * T * C, m->work->lengths[n + i], C);
        scores[i] = (float)siamese_cosine(u, v, C, NULL, NULL);
    }
}

void bert_siamese_backward(Bert *m, const float *dscores) {
    BertWork *k = m->work;
    int n = siamese_pairs(m, "bert_siamese_backward"), T = k->T, C = m->cfg.hidden_size;
    if (!k->train) DIE("bert_siamese_backward without bert_reserve(..., train = 1)");
    const float *h = bert_hidden(m);
    double u[C], v[C], du[C], dv[C];
    for (int i = 0; i < n; i++) {
        int la = k->lengths[i], lb = k->lengths[n + i];
        siamese_mean_pool(u, h + (long)i * T * C, la, C);
        siamese_mean_pool(v, h + (long)(n + i) * T * C, lb, C);
        siamese_cosine(u, v, C, du, dv);
        /* d score / d h[row, t] = d cos / d pooled / len, for each real token t. */
        double ga = (double)dscores[i] / la, gb = (double)dscores[i] / lb;
        float *da = k->dhidden + (long)i * T * C, *db = k->dhidden + (long)(n + i) * T * C;
        for (int t = 0; t < la; t++)
            for (int c = 0; c < C; c++) da[(long)t * C + c] += (float)(ga * du[c]);
        for (int t = 0; t < lb; t++)
            for (int c = 0; c < C; c++) db[(long)t * C + c] += (float)(gb * dv[c]);
    }
}
