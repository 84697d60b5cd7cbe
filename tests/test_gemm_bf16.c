/* test_gemm_bf16.c — core/gemm_bf16: matmul_bf16 (the AVX512-BF16 kernel; skipped
 * on CPUs without it) against a double-precision product of the same
 * bf16-rounded operands, at shapes that hit every edge: one element,
 * rows not a multiple of the 12-row tile, columns not a multiple of 32, odd K,
 * several K and row blocks, beta 0 and beta != 0, with and without the fused
 * bias and GELU. And the approximation itself: within bf16's rounding bound of
 * the fp32 product. */
#include <math.h>
#include <stdlib.h>

#include "core/blas.h"
#include "core/gemm_bf16.h"
#include "core/half.h"
#include "core/rng.h"
#include "tests/test.h"

static float round_bf16(float f) { return bf16_to_float(bf16_from_float(f)); }

/* y = act(x W^T + bias + beta y0) in double from the rounded operands (act: GELU
 * with the exact normal CDF, or nothing); max |y - ref| relative to the sum of
 * |x||w| of each output (the scale of fp32 summation error; GELU's slope is < 1.13). */
static double bf16_error(const float *y, const float *x, const float *W, const float *y0, const float *bias,
                         int gelu, int M, int N, int K, float beta, int round) {
    double worst = 0;
    for (int m = 0; m < M; m++)
        for (int n = 0; n < N; n++) {
            double ref = 0, mag = 1e-30;
            for (int k = 0; k < K; k++) {
                double a = round ? round_bf16(x[(long)m * K + k]) : x[(long)m * K + k];
                double b = round ? round_bf16(W[(long)n * K + k]) : W[(long)n * K + k];
                ref += a * b;
                mag += fabs(a * b);
            }
            ref += beta * y0[(long)m * N + n] + (bias ? bias[n] : 0.0);
            if (gelu) ref *= 0.5 * erfc(-ref / sqrt(2.0));
            worst = fmax(worst, fabs(y[(long)m * N + n] - ref) / mag);
        }
    return worst;
}

static void check_shape(int M, int N, int K, float beta) {
    Rng r;
    rng_seed(&r, (uint64_t)(M * 131 + N * 7 + K));
    float *x = malloc(sizeof(float) * (size_t)M * K), *W = malloc(sizeof(float) * (size_t)N * K);
    float *y0 = malloc(sizeof(float) * (size_t)M * N), *y = malloc(sizeof(float) * (size_t)M * N);
    float *bias = malloc(sizeof(float) * (size_t)N);
    for (long i = 0; i < (long)M * K; i++) x[i] = rng_normal(&r);
    for (long i = 0; i < (long)N * K; i++) W[i] = rng_normal(&r);
    for (long i = 0; i < (long)M * N; i++) y0[i] = rng_normal(&r);
    for (int i = 0; i < N; i++) bias[i] = 3.0f * rng_normal(&r);
    Bf16Weights w;
    bf16_weights_pack(&w, W, N, K);
    for (int epi = 0; epi < 3; epi++) {   /* nothing; bias; bias + GELU */
        const float *b = epi ? bias : NULL;
        int gelu = epi == 2;
        for (long i = 0; i < (long)M * N; i++) y[i] = beta == 0.0f ? NAN : y0[i];   /* beta 0: never read */
        matmul_bf16(y, x, &w, M, beta, b, gelu);
        double e = bf16_error(y, x, W, y0, b, gelu, M, N, K, beta, 1);
        CHECK_MSG(e < 1e-5, "M%d N%d K%d beta %g bias %d gelu %d: error %g against the rounded operands", M, N, K,
                  beta, b != NULL, gelu, e);
        /* Against the fp32 operands: each product is off by at most ~2 * 2^-8 relative. */
        double e32 = bf16_error(y, x, W, y0, b, gelu, M, N, K, beta, 0);
        CHECK_MSG(e32 < 2 * 0x1p-8, "M%d N%d K%d: %g from the fp32 product", M, N, K, e32);
    }
    bf16_weights_free(&w);
    free(x); free(W); free(y0); free(y); free(bias);
}

TEST(gemm_bf16_matches_rounded_product) {
    if (!gemm_bf16_available()) {
        test_skip("no AVX512-BF16 on this CPU (--bf16 runs the fp32 path here)");
        return;
    }
    check_shape(1, 1, 1, 0.0f);
    check_shape(13, 33, 7, 0.0f);       /* ragged tile rows and panel columns, odd K */
    check_shape(13, 33, 7, 0.5f);
    check_shape(250, 70, 601, 0.5f);    /* two row blocks, two K blocks (the last one ragged) */
    check_shape(250, 70, 601, 0.0f);
    check_shape(32, 96, 64, 0.0f);
    check_shape(20, 400, 64, 0.5f);     /* few rows: the threads split the panels */
}
