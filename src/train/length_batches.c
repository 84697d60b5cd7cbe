/* length_batches.c — cuts of length-sorted rows into batches (see length_batches.h). */
#include "train/length_batches.h"

#include "core/common.h"

#include <stdlib.h>

/* The cost model, in units of one token's work through the model: a batch of
 * b rows padded to T costs LB_FIXED + b*T*(1 + T/LB_ATTENTION). The fixed part
 * is a forward pass's own overhead (its parallel regions, per-layer calls and
 * small products); the quadratic part is attention over T positions, ~T/(6H)
 * of a token's work for hidden size H (768 = 6 * 128, BERT-tiny). LB_FIXED
 * measured with BERT-tiny fine-tuned on SST-2, its 872 dev sentences shuffled
 * and predicted 64 a call on one thread (CPU time, best of 5): 1.69 s as one
 * batch a call, 1.32 s with LB_FIXED 8, 1.25 s with 16, 1.16 s with 24, 1.19 s
 * with 32, 1.42 s with 48; all 872 in one call took 1.17 s. Most of the fixed
 * part is OpenBLAS packing the weights of every product (sgemm_incopy: 37% of
 * the CPU time with one text a call). With t threads a product split by rows
 * (core/blas.c) packs them in every thread while each does 1/t of the
 * tokens' work, so the fixed part counts t times. */
#define LB_FIXED 32.0
#define LB_ATTENTION 768.0

static double lb_cost(double fixed, int b, int T) {
    return fixed + (double)b * (double)T * (1.0 + (double)T / LB_ATTENTION);
}

int length_batches_plan(const int *len, int n, int max_batch, int threads, int *starts) {
    if (max_batch < 1) max_batch = 1;
    double fixed = LB_FIXED * (threads > 1 ? threads : 1);
    /* best[j]: least cost of rows [0, j); from[j]: where its last batch starts. */
    double *best = xmalloc(sizeof(double) * (size_t)(n + 1));
    int *from = xmalloc(sizeof(int) * (size_t)(n + 1));
    best[0] = 0;
    for (int j = 1; j <= n; j++) {
        best[j] = -1;
        for (int i = j - 1; i >= 0 && j - i <= max_batch; i--) {
            double c = best[i] + lb_cost(fixed, j - i, len[i] > 0 ? len[i] : 1);   /* len[i]: the batch's longest */
            if (best[j] < 0 || c < best[j]) best[j] = c, from[j] = i;
        }
    }
    int count = 0;
    for (int j = n; j > 0; j = from[j]) count++;
    starts[count] = n;
    int k = count;
    for (int j = n; j > 0; j = from[j]) starts[--k] = from[j];
    free(best);
    free(from);
    return count;
}
