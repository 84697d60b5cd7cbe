/* label_smoothing.c — label-smoothed cross-entropy (see label_smoothing.h). */
#include "nn/label_smoothing.h"

#include <math.h>
#include <string.h>

#include "core/common.h"

/* Rows per block: per-row losses go to a stack array summed serially, so the
 * total does not depend on how threads split the rows. */
#define LS_CHUNK 256

/* One row: returns the smoothed loss, *nll the plain one; writes drow if asked. */
static double ls_row(float *drow, const float *z, int y, int K, float eps, float grad_scale, double *nll) {
    float mx = z[0];
    for (int k = 1; k < K; k++) mx = z[k] > mx ? z[k] : mx;
    double sum = 0.0, zsum = 0.0;
    for (int k = 0; k < K; k++) { sum += expf(z[k] - mx); zsum += z[k]; }
    double lse = mx + log(sum);
    double loss = lse - (1.0 - eps) * z[y] - eps / K * zsum;
    *nll = lse - z[y];
    if (drow) {
        /* z is read before drow[k] is written: drow may be z. */
        float inv = (float)(1.0 / sum), off = eps / (float)K;
        float zy = z[y];
        for (int k = 0; k < K; k++) drow[k] = grad_scale * (expf(z[k] - mx) * inv - off);
        drow[y] = grad_scale * (expf(zy - mx) * inv - off - (1.0f - eps));
    }
    return loss;
}

double label_smoothing_xent(float *dlogits, const float *logits, const int *labels, int N, int K, float eps,
                            int ignore_index, float grad_scale, double *nll_sum) {
    double total = 0.0, nll_total = 0.0;
    for (int lo = 0; lo < N; lo += LS_CHUNK) {
        int hi = lo + LS_CHUNK < N ? lo + LS_CHUNK : N;
        double part[LS_CHUNK], part_nll[LS_CHUNK];
        #pragma omp parallel for if ((long)(hi - lo) * K > 16384)
        for (int n = lo; n < hi; n++) {
            part[n - lo] = part_nll[n - lo] = 0.0;
            float *drow = dlogits ? dlogits + (long)n * K : NULL;
            if (labels[n] == ignore_index) {
                if (drow) memset(drow, 0, sizeof(float) * (size_t)K);
                continue;
            }
            if (labels[n] < 0 || labels[n] >= K) DIE("label %d outside [0, %d)", labels[n], K);
            part[n - lo] = ls_row(drow, logits + (long)n * K, labels[n], K, eps, grad_scale, &part_nll[n - lo]);
        }
        for (int n = lo; n < hi; n++) { total += part[n - lo]; nll_total += part_nll[n - lo]; }
    }
    if (nll_sum) *nll_sum += nll_total;
    return total;
}
