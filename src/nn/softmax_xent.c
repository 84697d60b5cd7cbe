/* softmax_xent.c — softmax and the fused softmax + cross-entropy (see softmax_xent.h). */
#include "nn/softmax_xent.h"

#include <math.h>
#include <string.h>

#include "core/common.h"
#include "core/kernels.h"

/* Rows per chunk of the loss: per-row losses go to a stack array and are summed
 * serially, so the result does not depend on how threads split the rows. */
#define XENT_CHUNK 256

/* core/kernels' softmax (vectorised with fast_expf for the CPU's level). */
void softmax_row(float *x, int n) { kernels()->softmax_row(x, n); }

void softmax_forward(float *probs, const float *logits, int N, int K) {
    kernels();   /* chosen before the threads call it */
    #pragma omp parallel for if ((long)N * K > 16384)
    for (int n = 0; n < N; n++) {
        if (probs != logits) memcpy(probs + (long)n * K, logits + (long)n * K, sizeof(float) * (size_t)K);
        softmax_row(probs + (long)n * K, K);
    }
}

/* -log softmax(row)[label] and, if drow != NULL, drow += coef * (softmax - onehot). */
static double xent_row(float *drow, const float *row, int label, int K, float coef) {
    float mx = row[0];
    for (int k = 1; k < K; k++) mx = row[k] > mx ? row[k] : mx;
    double sum = 0.0;
    for (int k = 0; k < K; k++) sum += expf(row[k] - mx);
    double lse = mx + log(sum);
    if (drow) {
        float inv = (float)(1.0 / sum);
        for (int k = 0; k < K; k++) drow[k] += coef * expf(row[k] - mx) * inv;
        drow[label] -= coef;
    }
    return lse - row[label];
}

float softmax_xent_forward_backward(float *dlogits, const float *logits, const int *labels,
                                    const float *row_weights, int N, int K, int ignore_index) {
    double wsum = 0.0;
    for (int n = 0; n < N; n++) {
        if (labels[n] == ignore_index) continue;
        if (labels[n] < 0 || labels[n] >= K) DIE("label %d outside [0, %d)", labels[n], K);
        wsum += row_weights ? row_weights[n] : 1.0f;
    }
    if (wsum == 0.0) return 0.0f;
    double total = 0.0;
    for (int lo = 0; lo < N; lo += XENT_CHUNK) {
        int hi = lo + XENT_CHUNK < N ? lo + XENT_CHUNK : N;
        double part[XENT_CHUNK];
        #pragma omp parallel for if ((long)(hi - lo) * K > 16384)
        for (int n = lo; n < hi; n++) {
            part[n - lo] = 0.0;
            if (labels[n] == ignore_index) continue;
            float w = row_weights ? row_weights[n] : 1.0f;
            float *drow = dlogits ? dlogits + (long)n * K : NULL;
            part[n - lo] = w * xent_row(drow, logits + (long)n * K, labels[n], K, (float)(w / wsum));
        }
        for (int n = lo; n < hi; n++) total += part[n - lo];
    }
    return (float)(total / wsum);
}
