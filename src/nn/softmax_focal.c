/* softmax_focal.c — focal loss on softmax outputs (see softmax_focal.h).
 *
 * With q = p_y and L = -(1-q)^gamma log q, dL/dx_k = g (delta_ky - p_k) where
 * g = gamma (1-q)^(gamma-1) q log q - (1-q)^gamma; 1 - q is summed from the
 * other classes' probabilities (no cancellation when q is near 1), and the
 * first term is 0 when 1 - q is (it behaves as (1-q)^gamma there). */
#include "nn/softmax_focal.h"

#include <math.h>

#include "core/common.h"

/* Row n's loss; drow += coef * dL/dlogits when drow != NULL. */
static double focal_row(float *drow, const float *row, int label, int K, double gamma, double coef) {
    double mx = row[0];
    for (int k = 1; k < K; k++) mx = row[k] > mx ? row[k] : mx;
    double sum = 0, rest = 0;
    for (int k = 0; k < K; k++) {
        double e = exp(row[k] - mx);
        sum += e;
        if (k != label) rest += e;
    }
    double logq = row[label] - mx - log(sum), q = exp(logq), r = rest / sum;   /* r = 1 - q */
    double m = gamma == 0 ? 1.0 : pow(r, gamma);
    if (drow) {
        double g = (gamma == 0 || r <= 0 ? 0.0 : gamma * pow(r, gamma - 1) * q * logq) - m;
        for (int k = 0; k < K; k++) {
            double pk = exp(row[k] - mx) / sum;
            drow[k] += (float)(coef * g * ((k == label) - pk));
        }
    }
    return -m * logq;
}

float softmax_focal_forward_backward(float *dlogits, const float *logits, const int *labels,
                                     const float *row_weights, int N, int K, int ignore_index, float gamma) {
    double wsum = 0;
    for (int n = 0; n < N; n++) {
        if (labels[n] == ignore_index) continue;
        if (labels[n] < 0 || labels[n] >= K) DIE("label %d outside [0, %d)", labels[n], K);
        wsum += row_weights ? row_weights[n] : 1.0f;
    }
    if (wsum == 0) return 0.0f;
    double total = 0;
    for (int n = 0; n < N; n++) {
        if (labels[n] == ignore_index) continue;
        double w = row_weights ? row_weights[n] : 1.0;
        float *drow = dlogits ? dlogits + (long)n * K : NULL;
        total += w * focal_row(drow, logits + (long)n * K, labels[n], K, gamma, w / wsum);
    }
    return (float)(total / wsum);
}
