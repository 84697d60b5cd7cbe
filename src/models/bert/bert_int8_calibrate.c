/* bert_int8_calibrate.c — SmoothQuant calibration of BERT's int8 inference
 * (bert_int8_calibrate in bert.h).
 *
 * Why: the inputs of the encoder's products (LayerNorm outputs above all) have
 * a few channels far larger than the rest, and a row quantized per row in 7
 * bits spends its range on them: the other channels get a handful of levels.
 * Dividing input channel k by s_k and multiplying the weights' column k by it
 * leaves the product unchanged and moves part of that range into the weights,
 * which have 8 bits per output row and no such outliers. s_k comes from the
 * fp32 model's own inputs on a sample of the training split (never dev):
 * s_k = max|x_k|^alpha / max_n |W[n][k]|^(1 - alpha), alpha = 0.5, both maxima
 * floored at 1e-5 (SmoothQuant's choices), s_k = 1 for a channel never seen
 * non-zero. Applied to all four products of a layer: the x / s of each is one
 * multiply in the quantizer (core/gemm_int8.h x_mul), where SmoothQuant folds
 * it into the LayerNorm before (not possible here: post-LN BERT adds that
 * LayerNorm's output to the residual too). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "models/bert/bert.h"

#define BERT_SMOOTH_ALPHA 0.5
#define BERT_SMOOTH_FLOOR 1e-5

static long bert_int8_channel_count(const Bert *m) {
    return (long)m->cfg.num_layers * (3L * m->cfg.hidden_size + m->cfg.intermediate_size);
}

/* The forwards' observers (transformer.h absmax_*) on m's layers, or off. */
static void bert_int8_observe(Bert *m, float *absmax) {
    for (int l = 0; l < m->cfg.num_layers; l++) {
        BertLayer *ly = &m->w.layers[l];
        ly->attn.absmax_qkv = absmax ? bert_int8_channels(m, absmax, l, 0) : NULL;
        ly->attn.absmax_o = absmax ? bert_int8_channels(m, absmax, l, 1) : NULL;
        ly->ffn.absmax_in = absmax ? bert_int8_channels(m, absmax, l, 2) : NULL;
        ly->ffn.absmax_out = absmax ? bert_int8_channels(m, absmax, l, 3) : NULL;
    }
}

/* s (K) of matrix j of layer l from the inputs' maxima ax (K). */
static void bert_int8_factors(const Bert *m, int l, int j, const float *ax, float *s) {
    int N, K;
    const float *W = bert_int8_weights(m, l, j, &N, &K);
    for (int k = 0; k < K; k++) {
        double wmax = 0;
        for (long n = 0; n < N; n++) wmax = fmax(wmax, fabs(W[n * K + k]));
        s[k] = ax[k] > 0.0f && wmax > 0
                   ? (float)(pow(fmax(ax[k], BERT_SMOOTH_FLOOR), BERT_SMOOTH_ALPHA) /
                             pow(fmax(wmax, BERT_SMOOTH_FLOOR), 1.0 - BERT_SMOOTH_ALPHA))
                   : 1.0f;
    }
}

int bert_int8_calibrate(Bert *m, int on, long examples) {
    if (m->int8 || m->int8_stored) {
        user_error_usage("calibrate the fp32 model", "int8 smoothing is calibrated on the fp32 forward, and this "
                         "model runs int8");
        return -1;
    }
    long n = bert_int8_channel_count(m);
    if (on) {
        free(m->int8_absmax);
        m->int8_absmax = xcalloc((size_t)n, sizeof(float));
        bert_int8_observe(m, m->int8_absmax);
        return 0;
    }
    bert_int8_observe(m, NULL);
    float *ax = m->int8_absmax;
    m->int8_absmax = NULL;
    if (!ax || examples <= 0) {
        free(ax);
        user_error_usage("give --calibrate N > 0", "int8 calibration saw no examples");
        return -1;
    }
    free(m->int8_smooth);
    m->int8_smooth = xmalloc(sizeof(float) * (size_t)n);
    for (int l = 0; l < m->cfg.num_layers; l++)
        for (int j = 0; j < 4; j++)
            bert_int8_factors(m, l, j, bert_int8_channels(m, ax, l, j), bert_int8_channels(m, m->int8_smooth, l, j));
    m->int8_calibrated = examples;
    free(ax);
    return 0;
}
