/* test_gemm_int8.c — core/gemm_int8: every int8 kernel this CPU runs (vnni,
 * avx2, portable; GLUE_KERNELS levels forced one by one) gives exactly the
 * portable kernel's int32 sums and output bits, on shapes that hit every edge
 * (one element, ragged tiles and panels, K not a multiple of 4, K = 0, few
 * rows split by panels) and on the saturation cases (every activation 127,
 * every weight +-127: the largest int16 pair vpmaddubsw makes); the sums equal
 * an int64 reference; the quantized product is within the rounding bound of
 * the fp32 one; the same with inputs smoothed per channel (x_mul, SmoothQuant),
 * also across matmul_int8_quantized's hand-over; and the bad inputs the packer
 * refuses. Under qemu with an
 * AVX2-only CPU (tests/test_older_cpus.c) the avx2 kernel is compared too. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/gemm_int8.h"
#include "core/kernels.h"
#include "core/rng.h"
#include "tests/test.h"

/* mode 0: random; 1: all activations 127, weights +-127 by column; 2: weights -127 */
static void fill_ints(uint8_t *xq, int8_t *q, float *scale, int M, int N, int K, int mode, Rng *r) {
    for (long i = 0; i < (long)M * K; i++) xq[i] = mode ? 127 : (uint8_t)rng_below(r, 128);
    for (int n = 0; n < N; n++) {
        scale[n] = 0.01f + 0.001f * (float)n;
        for (int k = 0; k < K; k++)
            q[(long)n * K + k] = mode == 1 ? (n % 2 ? -127 : 127) : mode == 2 ? -127 : (int8_t)((int)rng_below(r, 255) - 127);
    }
}

static int levels_available(KernLevel *lv) {
    int n = 0;
    for (int l = KERN_PORTABLE; l <= (int)KERN_AVX512; l++)
        if (kernels_at((KernLevel)l)) lv[n++] = (KernLevel)l;
    return n;
}

static void check_sums(int M, int N, int K, int mode) {
    Rng r;
    rng_seed(&r, (uint64_t)(M * 1009 + N * 31 + K * 7 + mode));
    uint8_t *xq = malloc((size_t)M * K + 1);
    int8_t *q = malloc((size_t)N * K + 1);
    float *scale = malloc(sizeof(float) * (size_t)N);
    fill_ints(xq, q, scale, M, N, K, mode, &r);
    Int8Weights w;
    const char *why = "";
    if (!CHECK_MSG(int8_weights_pack(&w, q, scale, N, K, &why) == 0, "pack: %s", why)) return;
    int32_t *ref = malloc(sizeof(int32_t) * (size_t)M * N), *got = malloc(sizeof(int32_t) * (size_t)M * N);
    for (int m = 0; m < M; m++)
        for (int n = 0; n < N; n++) {
            long long s = 0;
            for (int k = 0; k < K; k++) s += (long long)xq[(long)m * K + k] * q[(long)n * K + k];
            ref[(long)m * N + n] = (int32_t)s;
        }
    KernLevel lv[KERN_LEVELS];
    int nl = levels_available(lv);
    KernLevel prev = kernels_level();
    for (int i = 0; i < nl; i++) {
        kernels_force(lv[i]);
        memset(got, 0x55, sizeof(int32_t) * (size_t)M * N);
        gemm_int8_sums(got, xq, M, &w);
        CHECK_MSG(memcmp(got, ref, sizeof(int32_t) * (size_t)M * N) == 0,
                  "%s kernel: int32 sums differ from the exact ones (M%d N%d K%d mode %d)", gemm_int8_kernel(), M, N,
                  K, mode);
    }
    kernels_force(prev);
    int8_weights_free(&w);
    free(xq); free(q); free(scale); free(ref); free(got);
}

/* SmoothQuant-like factors (K): varied, positive, not powers of two. */
static float *smooth_factors(int K) {
    float *s = malloc(sizeof(float) * ((size_t)K + 1));
    for (int k = 0; k < K; k++) s[k] = 0.3f + 0.7f * (float)(k % 5) + (k % 7 == 0 ? 2.9f : 0.0f);
    return s;
}

/* matmul_int8 at every level: the same bits as portable; and within the
 * quantization bound of the fp32 product. smooth: W packed with per input
 * channel factors (x / s quantized, W s packed), x with an outlier channel. */
static void check_outputs(int M, int N, int K, int gelu, int smooth) {
    Rng r;
    rng_seed(&r, (uint64_t)(M * 17 + N * 5 + K + gelu + 100 * smooth));
    float *x = malloc(sizeof(float) * ((size_t)M * K + 1)), *W = malloc(sizeof(float) * ((size_t)N * K + 1));
    float *bias = malloc(sizeof(float) * (size_t)N);
    for (long i = 0; i < (long)M * K; i++)
        x[i] = rng_normal(&r) * (smooth && i % K % 7 == 0 ? 8.0f : 1.0f) + (i % 3 == 0 ? 1.0f : 0.0f);
    for (long i = 0; i < (long)N * K; i++) W[i] = 0.1f * rng_normal(&r);
    for (int i = 0; i < N; i++) bias[i] = rng_normal(&r);
    Int8Weights w;
    float *sf = smooth ? smooth_factors(K) : NULL;
    if (!CHECK((smooth ? int8_weights_quantize_smoothed(&w, W, sf, N, K) : int8_weights_quantize(&w, W, N, K)) == 0))
        return;
    CHECK(smooth ? w.x_mul != NULL : w.x_mul == NULL);
    size_t ny = (size_t)M * N;
    float *y0 = malloc(sizeof(float) * ny), *y = malloc(sizeof(float) * ny);
    KernLevel prev = kernels_level();
    kernels_force(KERN_PORTABLE);
    matmul_int8(y0, x, &w, M, bias, gelu);
    KernLevel lv[KERN_LEVELS];
    int nl = levels_available(lv);
    for (int i = 1; i < nl; i++) {
        kernels_force(lv[i]);
        for (size_t j = 0; j < ny; j++) y[j] = NAN;
        matmul_int8(y, x, &w, M, bias, gelu);
        CHECK_MSG(memcmp(y, y0, sizeof(float) * ny) == 0,
                  "%s kernel: outputs differ from portable (M%d N%d K%d gelu %d smooth %d)", gemm_int8_kernel(), M, N, K,
                  gelu, smooth);
    }
    /* The residual in the epilogue, at every level: exactly y0 + res. */
    float *res = malloc(sizeof(float) * (ny + 1));
    for (size_t j = 0; j < ny; j++) res[j] = 0.5f * (float)(j % 7) - 1.0f;
    for (int i = 0; i < nl && !gelu; i++) {
        kernels_force(lv[i]);
        matmul_int8_residual(y, x, &w, M, bias, res);
        for (size_t j = 0; j < ny; j++)
            if (!CHECK_MSG(y[j] == y0[j] + res[j], "%s kernel: residual epilogue differs at %zu (M%d N%d K%d)",
                           gemm_int8_kernel(), j, M, N, K)) break;
    }
    free(res);
    kernels_force(prev);
    if (!gelu) {   /* |error| <= sum_k |dx||w| + |x||dw| + |dx||dw| with |dx| <= sx/2, |dw| <= sw/2
                    * (smoothed: of x / s and W s, whose product is x W) */
        double worst = 0;
        for (int m = 0; m < M; m++) {
            float lo = 0, hi = 0;
            for (int k = 0; k < K; k++) {
                float a = smooth ? x[(long)m * K + k] * w.x_mul[k] : x[(long)m * K + k];
                lo = fminf(lo, a), hi = fmaxf(hi, a);
            }
            double dx = (hi - lo) / 127.0 / 2 * 1.0001;
            for (int n = 0; n < N; n++) {
                double ref = bias[n], bound = 1e-5 * (1 + fabs(bias[n])), dw = w.scale[n] / 2 * 1.0001;
                for (int k = 0; k < K; k++) {
                    double a = x[(long)m * K + k], b = W[(long)n * K + k];
                    ref += a * b;
                    if (smooth) a *= w.x_mul[k], b *= sf[k];
                    bound += dx * fabs(b) + fabs(a) * dw + dx * dw;
                }
                worst = fmax(worst, fabs(y0[(long)m * N + n] - ref) / bound);
            }
        }
        CHECK_MSG(worst <= 1.0, "M%d N%d K%d smooth %d: int8 error %.3g of the quantization bound", M, N, K, smooth,
                  worst);
    }
    int8_weights_free(&w);
    free(sf); free(x); free(W); free(bias); free(y0); free(y);
}

/* A product handing its outputs on quantized (matmul_int8_quantized, then
 * matmul_int8_acts with a residual) at every level: the same bits as the
 * portable kernel's matmul_int8 into y, matmul_int8 reading y, and the
 * residual added after. Few rows split by panels (the whole y quantized
 * after), more by rows (each block as it is made). */
static void check_chain(int M, int N, int K, int gelu, int smooth) {
    Rng r;
    rng_seed(&r, (uint64_t)(M * 7 + N * 13 + K * 3 + gelu + 100 * smooth));
    int N2 = 1 + (N * 5) % 67;
    float *x = malloc(sizeof(float) * ((size_t)M * K + 1)), *W = malloc(sizeof(float) * ((size_t)N * K + 1));
    float *W2 = malloc(sizeof(float) * ((size_t)N2 * N + 1)), *b = malloc(sizeof(float) * (size_t)N);
    for (long i = 0; i < (long)M * K; i++) x[i] = rng_normal(&r) + (i % 5 == 0 ? 2.0f : 0.0f);
    for (long i = 0; i < (long)N * K; i++) W[i] = 0.1f * rng_normal(&r);
    for (long i = 0; i < (long)N2 * N; i++) W2[i] = 0.1f * rng_normal(&r);
    for (int i = 0; i < N; i++) b[i] = rng_normal(&r);
    Int8Weights w, w2;
    /* smooth: both products' inputs smoothed, so the hand-over quantizes with w2's factors */
    float *s1 = smooth ? smooth_factors(K) : NULL, *s2 = smooth ? smooth_factors(N) : NULL;
    if (!CHECK((smooth ? int8_weights_quantize_smoothed(&w, W, s1, N, K) : int8_weights_quantize(&w, W, N, K)) == 0 &&
               (smooth ? int8_weights_quantize_smoothed(&w2, W2, s2, N2, N) : int8_weights_quantize(&w2, W2, N2, N)) == 0))
        return;
    free(s1);
    free(s2);
    size_t ny = (size_t)M * N, nz = (size_t)M * N2;
    float *y = malloc(sizeof(float) * ny), *z0 = malloc(sizeof(float) * nz), *z = malloc(sizeof(float) * nz);
    KernLevel prev = kernels_level();
    kernels_force(KERN_PORTABLE);
    matmul_int8(y, x, &w, M, b, gelu);
    matmul_int8(z0, y, &w2, M, NULL, 0);
    float *res = malloc(sizeof(float) * nz);
    for (size_t j = 0; j < nz; j++) z0[j] += res[j] = rng_normal(&r);
    KernLevel lv[KERN_LEVELS];
    int nl = levels_available(lv);
    Int8Acts q = {0};
    for (int i = 0; i < nl; i++) {
        kernels_force(lv[i]);
        for (size_t j = 0; j < nz; j++) z[j] = NAN;
        matmul_int8_quantized(&q, y, x, &w, M, b, gelu, &w2);
        CHECK(q.M == M && q.K == N);
        matmul_int8_acts(z, &q, &w2, NULL, res);
        CHECK_MSG(memcmp(z, z0, sizeof(float) * nz) == 0,
                  "%s kernel: quantized hand-over differs from two matmul_int8 (M%d N%d K%d gelu %d smooth %d)",
                  gemm_int8_kernel(), M, N, K, gelu, smooth);
    }
    kernels_force(prev);
    int8_acts_free(&q);
    int8_weights_free(&w);
    int8_weights_free(&w2);
    free(x); free(W); free(W2); free(b); free(y); free(z0); free(z); free(res);
}

static const int SHAPES[][3] = {{1, 1, 1},   {13, 33, 7},  {5, 70, 3},   {12, 32, 4},  {60, 70, 601},
                                {3, 400, 64}, {100, 65, 129}, {1, 64, 0}, {40, 96, 256}, {7, 31, 1030}};
enum { NSHAPES = sizeof SHAPES / sizeof SHAPES[0] };

TEST(gemm_int8_kernels_bit_identical) {
    for (int s = 0; s < NSHAPES; s++)
        for (int mode = 0; mode < 3; mode++) check_sums(SHAPES[s][0], SHAPES[s][1], SHAPES[s][2], mode);
    for (int s = 0; s < NSHAPES; s++)
        for (int gelu = 0; gelu < 2; gelu++)
            for (int smooth = 0; smooth < 2; smooth++) check_outputs(SHAPES[s][0], SHAPES[s][1], SHAPES[s][2], gelu, smooth);
    for (int s = 0; s < NSHAPES; s++)
        for (int gelu = 0; gelu < 2; gelu++)
            for (int smooth = 0; smooth < 2; smooth++)
                if (SHAPES[s][1] > 0) check_chain(SHAPES[s][0], SHAPES[s][1], SHAPES[s][2], gelu, smooth);
    KernLevel lv[KERN_LEVELS];
    int nl = levels_available(lv);
    printf("  compared the int8 kernels of %d level(s) (CPU up to %s; default kernel %s)\n", nl,
           kernels_level_name(kernels_cpu_level()), gemm_int8_kernel());
}

TEST(gemm_int8_non_finite_rows_and_bad_weights) {
    enum { M = 3, N = 5, K = 9 };
    float x[M * K], W[N * K], y[M * N];
    for (int i = 0; i < M * K; i++) x[i] = (float)(i % 7) - 3.0f;
    for (int i = 0; i < N * K; i++) W[i] = (float)(i % 5) - 2.0f;
    x[K + 4] = NAN;   /* row 1 */
    Int8Weights w;
    if (!CHECK(int8_weights_quantize(&w, W, N, K) == 0)) return;
    matmul_int8(y, x, &w, M, NULL, 0);
    for (int n = 0; n < N; n++) {
        CHECK_MSG(isnan(y[N + n]), "row with a NaN: output %d is %g", n, y[N + n]);
        CHECK(isfinite(y[n]) && isfinite(y[2 * N + n]));
    }
    int8_weights_free(&w);
    W[3] = INFINITY;
    CHECK(int8_weights_quantize(&w, W, N, K) != 0);
    int8_t q[N * K];
    float scale[N] = {1, 1, 1, 1, 1};
    memset(q, 1, sizeof q);
    const char *why = NULL;
    scale[2] = NAN;
    CHECK(int8_weights_pack(&w, q, scale, N, K, &why) != 0 && why && strstr(why, "scale"));
    scale[2] = 1;
    q[7] = -128;
    CHECK(int8_weights_pack(&w, q, scale, N, K, &why) != 0 && why && strstr(why, "-128"));
    /* Smoothing factors: finite and positive, else refused. */
    q[7] = 1;
    if (!CHECK(int8_weights_pack(&w, q, scale, N, K, &why) == 0)) return;
    float sm[K];
    for (int k = 0; k < K; k++) sm[k] = 2.0f;
    const float BAD[] = {0.0f, -1.0f, NAN, INFINITY, 1e-39f};
    for (int i = 0; i < 5; i++) {
        sm[4] = BAD[i];
        why = NULL;
        CHECK_MSG(int8_weights_set_smoothing(&w, sm, &why) != 0 && why && strstr(why, "smoothing"),
                  "smoothing factor %g accepted", (double)BAD[i]);
    }
    sm[4] = 2.0f;
    CHECK(int8_weights_set_smoothing(&w, sm, &why) == 0 && w.x_mul && w.x_mul[4] == 0.5f);
    int8_weights_free(&w);
    W[3] = 1.0f;
    sm[4] = -1.0f;
    CHECK(int8_weights_quantize_smoothed(&w, W, sm, N, K) != 0);
}
