/* sigmoid_bce.c — binary cross-entropy with logits, positive weights and a
 * focal term (see sigmoid_bce.h). Each cell in double: the loss of one cell
 * and its derivative; the sum is serial, so the result does not depend on
 * threads. */
#include "nn/sigmoid_bce.h"

#include <math.h>

/* log(1 + e^x) without overflow or loss of precision at either end. */
static double softplus(double x) { return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x)); }

/* sigmoid(x) = 1 / (1 + e^-x), without overflow for large |x|. */
static double sigmoid(double x) {
    if (x >= 0) return 1.0 / (1.0 + exp(-x));
    double e = exp(x);
    return e / (1.0 + e);
}

void sigmoid_forward(float *probs, const float *logits, int N, int K) {
    long n = (long)N * K;
    for (long i = 0; i < n; i++) probs[i] = (float)sigmoid(logits[i]);
}

/* One cell's loss, and its derivative w.r.t. x into *dx. The focal factor
 * m = (1-pt)^gamma has dm/dx = -gamma (1-pt)^(gamma-1) dpt/dx with
 * dpt/dx = s (1-s) (2y-1); (1-pt)^(gamma-1) * bce stays finite as 1-pt -> 0
 * (bce -> 0 with it), so that product is 0 there. */
static double bce_cell(double x, double y, double p, double gamma, double *dx) {
    double s = sigmoid(x), sneg = sigmoid(-x);   /* s and 1 - s, each without cancellation */
    double bce = p * y * softplus(-x) + (1 - y) * softplus(x);
    double dbce = -p * y * sneg + (1 - y) * s;
    if (gamma == 0) {
        *dx = dbce;
        return bce;
    }
    double q = s * (1 - y) + sneg * y;   /* 1 - pt */
    double m = pow(q, gamma);
    double dm_bce = q > 0 ? -gamma * pow(q, gamma - 1) * s * sneg * (2 * y - 1) * bce : 0;
    *dx = dm_bce + m * dbce;
    return bce * m;
}

float sigmoid_bce_forward_backward(float *dlogits, const float *logits, const float *targets,
                                   const float *pos_weight, const unsigned char *row_mask, int N, int K,
                                   float gamma) {
    long counted = 0;
    for (int n = 0; n < N; n++) counted += !row_mask || row_mask[n];
    if (counted == 0 || K < 1) return 0.0f;
    double scale = 1.0 / ((double)counted * K), total = 0;
    for (int n = 0; n < N; n++) {
        if (row_mask && !row_mask[n]) continue;
        for (int k = 0; k < K; k++) {
            long i = (long)n * K + k;
            double dx;
            total += bce_cell(logits[i], targets[i], pos_weight ? pos_weight[k] : 1.0, gamma, &dx);
            if (dlogits) dlogits[i] += (float)(dx * scale);
        }
    }
    return (float)(total * scale);
}
