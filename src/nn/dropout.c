/* dropout.c — inverted dropout with a thread-count-independent mask (see dropout.h).
 *
 * The mask is drawn in fixed blocks, each from its own stream seeded by (one draw
 * of the caller's Rng, block index): blocks can be filled in parallel and the
 * result is the same for 1 or many threads. Each 64-bit draw gives four 16-bit
 * uniforms, compared with p quantised to 1/65536 — four times fewer draws, and
 * the quantisation (at most 8e-6 in p) is folded into the scale. */
#include "nn/dropout.h"

#include <math.h>
#include <string.h>

#include "core/common.h"
#include "core/kernels.h"

#define DROPOUT_BLOCK 4096          /* elements per RNG stream; multiple of 4 */
#define DROPOUT_LEVELS 65536.0      /* resolution of the 16-bit uniforms */

static uint32_t dropout_threshold(float p) {
    if (!(p >= 0.0f && p < 1.0f)) DIE("dropout probability %g outside [0, 1)", (double)p);
    double t = floor((double)p * DROPOUT_LEVELS + 0.5);
    /* Keep at least one level so that a p just below 1 still keeps something. */
    return t >= DROPOUT_LEVELS ? (uint32_t)DROPOUT_LEVELS - 1 : (uint32_t)t;
}

float dropout_scale(float p) {
    return (float)(DROPOUT_LEVELS / (DROPOUT_LEVELS - dropout_threshold(p)));
}

void dropout_forward(float *y, unsigned char *mask, const float *x, long n, float p, Rng *rng) {
    uint32_t thr = dropout_threshold(p);
    if (thr == 0) {
        if (y != x) memcpy(y, x, sizeof(float) * (size_t)n);
        if (mask) memset(mask, 1, (size_t)n);
        return;
    }
    CHECK_OR_DIE(mask != NULL);   /* training needs the mask for the backward */
    float scale = dropout_scale(p);
    uint64_t seed = rng_u64(rng);
    long nblocks = (n + DROPOUT_BLOCK - 1) / DROPOUT_BLOCK;
    const ElemKernels *k = kernels();
    #pragma omp parallel for if (n > 8 * DROPOUT_BLOCK)
    for (long blk = 0; blk < nblocks; blk++) {
        Rng r;
        rng_seed_stream(&r, seed, (uint64_t)blk);
        long lo = blk * DROPOUT_BLOCK, hi = lo + DROPOUT_BLOCK < n ? lo + DROPOUT_BLOCK : n;
        uint64_t bits = 0;
        for (long i = lo; i < hi; i++) {
            if (((i - lo) & 3) == 0) bits = rng_u64(&r);
            mask[i] = (uint32_t)(bits & 0xffff) >= thr;
            bits >>= 16;
        }
        k->masked_scale(y + lo, x + lo, mask + lo, scale, hi - lo);   /* the block's mask is in L1 */
    }
}

void dropout_backward(float *dx, const float *dy, const unsigned char *mask, long n, float p) {
    float scale = dropout_scale(p);
    const ElemKernels *k = kernels();
    long nblocks = (n + DROPOUT_BLOCK - 1) / DROPOUT_BLOCK;
    #pragma omp parallel for if (n > 65536)
    for (long blk = 0; blk < nblocks; blk++) {
        long lo = blk * DROPOUT_BLOCK, len = lo + DROPOUT_BLOCK < n ? DROPOUT_BLOCK : n - lo;
        k->masked_scale_add(dx + lo, dy + lo, mask + lo, scale, len);
    }
}
