/* test_sgemm.c — core/sgemm: our own fp32 GEMM equals the naive product at
 * every kernel level this CPU runs (portable, AVX2, AVX-512), for every
 * transpose, alpha/beta (beta 0 never reads C), ragged tiles, operands that
 * are slices of wider matrices, and shapes that cross each blocking boundary
 * (KC, MC, NC); matmul through it splits over threads the same way; and the
 * backend choice (GLUE_GEMM, named by --version).
 *
 * Tolerance per output: a K-term fp32 sum in another order (FMAs),
 * |diff| <= 2 (K + 2) 2^-24 sum_k |a_k b_k| (+ the beta term's rounding), so a
 * wrong element (off by O(1) of the scale) cannot pass. */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "core/blas.h"
#include "core/gemm_bf16.h"
#include "core/half.h"
#include "core/kernels.h"
#include "core/rng.h"
#include "core/sgemm.h"
#include "tests/test.h"

typedef struct {
    int M, N, K, ta, tb, pad;   /* pad: extra columns of every operand's row (ld > width) */
    float alpha, beta;
} SgCase;

/* One case at the current kernel level: returns the worst |diff| / bound. */
static double sg_check(SgCase c, Rng *r) {
    int arow = c.ta ? c.M : c.K, acol = c.ta ? c.K : c.M;   /* stored A: acol rows of arow */
    int brow = c.tb ? c.K : c.N, bcol = c.tb ? c.N : c.K;
    int lda = arow + c.pad, ldb = brow + c.pad, ldc = c.N + c.pad;
    float *A = malloc(sizeof(float) * (size_t)acol * lda), *B = malloc(sizeof(float) * (size_t)bcol * ldb);
    float *C = malloc(sizeof(float) * (size_t)c.M * ldc), *C0 = malloc(sizeof(float) * (size_t)c.M * ldc);
    for (long i = 0; i < (long)acol * lda; i++) A[i] = rng_normal(r);
    for (long i = 0; i < (long)bcol * ldb; i++) B[i] = rng_normal(r);
    for (long i = 0; i < (long)c.M * ldc; i++) C0[i] = c.beta == 0.0f ? NAN : rng_normal(r);
    memcpy(C, C0, sizeof(float) * (size_t)c.M * ldc);
    sgemm_own(c.ta, c.tb, c.M, c.N, c.K, c.alpha, A, lda, B, ldb, c.beta, C, ldc);
    double worst = 0.0;
    for (int i = 0; i < c.M; i++)
        for (int j = 0; j < c.N; j++) {
            double acc = 0.0, mag = 0.0;
            for (int k = 0; k < c.K; k++) {
                double a = c.ta ? A[(long)k * lda + i] : A[(long)i * lda + k];
                double b = c.tb ? B[(long)j * ldb + k] : B[(long)k * ldb + j];
                acc += a * b;
                mag += fabs(a * b);
            }
            double want = c.alpha * acc, prev = c.beta == 0.0f ? 0.0 : C0[(long)i * ldc + j];
            want += c.beta * prev;
            double bound = 2.0 * (c.K + 2) * 0x1p-24 * (fabs(c.alpha) * mag + fabs(c.beta * prev)) + 1e-30;
            double d = fabs(C[(long)i * ldc + j] - want) / bound;
            if (!(d <= worst)) worst = isnan(d) ? INFINITY : d;
        }
    /* The padding between rows of C is never written. */
    for (int i = 0; i < c.M; i++)
        for (int j = c.N; j < ldc; j++)
            if (memcmp(&C[(long)i * ldc + j], &C0[(long)i * ldc + j], sizeof(float)) != 0) worst = INFINITY;
    free(A); free(B); free(C); free(C0);
    return worst;
}

TEST(sgemm_own_every_level_matches_naive) {
    const SgCase cases[] = {
        {1, 1, 1, 0, 0, 0, 1.0f, 0.0f},
        {7, 5, 3, 0, 1, 0, 0.5f, 2.0f},         /* smaller than one tile */
        {13, 33, 17, 1, 0, 3, 1.0f, 1.0f},      /* ragged rows and columns, strided */
        {25, 40, 300, 1, 1, 0, -1.5f, 0.0f},    /* two K slices, beta 0 over NaN */
        {200, 70, 64, 0, 1, 5, 1.0f, 0.25f},    /* two row blocks (MC = 16 panels), A unpacked (N <= 128) */
        {200, 140, 300, 0, 0, 2, 1.0f, 0.5f},   /* two row blocks and K slices, A packed (N > 128) */
        {1100, 40, 30, 0, 0, 1, 1.0f, 0.5f},    /* transposed, A's k steps > 1024 floats apart: packed */
        {3, 4100, 9, 0, 0, 0, 1.0f, 0.0f},      /* two column blocks (NC = 4096) */
        {129, 129, 520, 0, 0, 1, 0.75f, 1.0f},  /* three K slices, everything ragged */
        {6, 0, 5, 0, 0, 0, 1.0f, 1.0f},         /* empty */
        {4, 9, 0, 0, 0, 0, 1.0f, 0.5f},         /* K = 0: C = beta C */
        {4, 9, 0, 1, 1, 0, 1.0f, 0.0f},         /* K = 0, beta 0: zeros */
    };
    KernLevel prev = kernels_level();
    for (int level = KERN_PORTABLE; level <= (int)kernels_cpu_level() && level <= KERN_AVX512; level++) {
        kernels_force((KernLevel)level);
        Rng r;
        rng_seed(&r, 11);
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            SgCase c = cases[i];
            for (int t = 0; t < 4; t++) {
                c.ta = t & 1; c.tb = t >> 1;
                double w = sg_check(c, &r);
                CHECK_MSG(w <= 1.0, "%s: M%d N%d K%d ta%d tb%d pad%d alpha %g beta %g: worst diff %.3g of the bound",
                          kernels_level_name((KernLevel)level), c.M, c.N, c.K, c.ta, c.tb, c.pad, c.alpha, c.beta, w);
            }
        }
    }
    kernels_force(prev);
}

/* matmul with our GEMM (split over the thread pool) against the naive loop,
 * and the same product from OpenBLAS within the bound. */
TEST(sgemm_matmul_backends_agree) {
    enum { M = 300, N = 200, K = 150 };
    Rng r;
    rng_seed(&r, 5);
    float *A = malloc(sizeof(float) * M * K), *B = malloc(sizeof(float) * K * N);
    float *C1 = malloc(sizeof(float) * M * N), *C2 = malloc(sizeof(float) * M * N), *C3 = malloc(sizeof(float) * M * N);
    for (int i = 0; i < M * K; i++) A[i] = rng_normal(&r);
    for (int i = 0; i < K * N; i++) B[i] = rng_normal(&r);
    GemmBackend prev = gemm_backend_force(GEMM_OWN);
    matmul(C1, A, B, M, N, K, MAT_N, MAT_T, 1.0f, 0.0f);
    gemm_backend_force(GEMM_OPENBLAS);
    matmul(C2, A, B, M, N, K, MAT_N, MAT_T, 1.0f, 0.0f);
    gemm_backend_force(prev);
    matmul_naive(C3, A, B, M, N, K, MAT_N, MAT_T, 1.0f, 0.0f);
    double worst = 0.0;
    for (int i = 0; i < M * N; i++) {
        worst = fmax(worst, fabs(C1[i] - C3[i]));
        worst = fmax(worst, fabs(C1[i] - C2[i]));
    }
    /* |a_k b_k| ~ 1, so the bound is about 2 (K + 2) 2^-24 K. */
    CHECK_MSG(worst < 2.0 * (K + 2) * 0x1p-24 * K * 4, "worst diff %g", worst);
    free(A); free(B); free(C1); free(C2); free(C3);
}

TEST(sgemm_backend_choice) {
    int st;
    char cmd[512];
    snprintf(cmd, sizeof cmd, "GLUE_GEMM=own %s --version 2>&1", test_glue_bin());
    char *out = test_run(cmd, &st);
    CHECK_MSG(st == 0 && strstr(out, "gemm: own ("), "%s", out);
    free(out);
    snprintf(cmd, sizeof cmd, "GLUE_GEMM=openblas %s --version 2>&1", test_glue_bin());
    out = test_run(cmd, &st);
    CHECK_MSG(st == 0 && strstr(out, "gemm: openblas ("), "%s", out);
    free(out);
    snprintf(cmd, sizeof cmd, "GLUE_GEMM=mkl %s --version 2>&1", test_glue_bin());
    out = test_run(cmd, &st);
    CHECK_MSG(st == 2 && strstr(out, "GLUE_GEMM=mkl") && strstr(out, "hint:"), "%s", out);
    free(out);
}

/* MATMUL_BF16 at one kernel level: matmul equals the naive product of the
 * operands rounded to bf16 within the fp32 sum's bound, for every transpose,
 * odd K (a pair padded with zero), ragged tiles and blocks, K slices and row
 * blocks, and the thread split; the unrounded product is NOT within it (the
 * bf16 path ran). */
static void check_bf16_products(KernLevel level) {
    kernels_force(level);
    CHECK(matmul_set_precision(MATMUL_BF16) == MATMUL_FP32);
    const int shapes[][3] = {{1, 1, 1},      {7, 5, 3},        {13, 33, 17},     {25, 40, 600},  {200, 70, 64},
                             {200, 140, 515}, {3, 4100, 9},    {129, 129, 1031}, {608, 300, 256}, {33, 47, 65},
                             {64, 64, 32},   {100, 1000, 40}};
    Rng r;
    rng_seed(&r, 17);
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int t = 0; t < 4; t++) {
            int M = shapes[s][0], N = shapes[s][1], K = shapes[s][2], ta = t & 1, tb = t >> 1;
            float alpha = t == 1 ? 0.5f : 1.0f, beta = t == 2 ? 0.0f : 0.75f;
            float *A = malloc(sizeof(float) * (size_t)M * K), *B = malloc(sizeof(float) * (size_t)K * N);
            float *C = malloc(sizeof(float) * (size_t)M * N), *C0 = malloc(sizeof(float) * (size_t)M * N);
            for (long i = 0; i < (long)M * K; i++) A[i] = rng_normal(&r);
            for (long i = 0; i < (long)K * N; i++) B[i] = rng_normal(&r);
            for (long i = 0; i < (long)M * N; i++) C0[i] = beta == 0.0f ? NAN : rng_normal(&r);
            memcpy(C, C0, sizeof(float) * (size_t)M * N);
            matmul(C, A, B, M, N, K, ta ? MAT_T : MAT_N, tb ? MAT_T : MAT_N, alpha, beta);
            double worst = 0.0, off_fp32 = 0.0;
            for (int i = 0; i < M; i++)
                for (int j = 0; j < N; j++) {
                    double acc = 0.0, exact = 0.0, mag = 0.0;
                    for (int k = 0; k < K; k++) {
                        float a = ta ? A[(long)k * M + i] : A[(long)i * K + k];
                        float b = tb ? B[(long)j * K + k] : B[(long)k * N + j];
                        double ab = (double)bf16_to_float(bf16_from_float(a)) * bf16_to_float(bf16_from_float(b));
                        acc += ab;
                        exact += (double)a * b;
                        mag += fabs(ab);
                    }
                    double prev = beta == 0.0f ? 0.0 : C0[(long)i * N + j], got = C[(long)i * N + j];
                    double bound = 2.0 * (K + 2) * 0x1p-24 * (fabs(alpha) * mag + fabs(beta * prev)) + 1e-30;
                    double d = fabs(got - (alpha * acc + beta * prev)) / bound;
                    if (!(d <= worst)) worst = isnan(d) ? INFINITY : d;
                    off_fp32 = fmax(off_fp32, fabs(got - (alpha * exact + beta * prev)) / bound);
                }
            CHECK_MSG(worst <= 1.0, "%s: M%d N%d K%d ta%d tb%d: worst diff %.3g of the bound",
                      kernels_level_name(level), M, N, K, ta, tb, worst);
            /* One-element products may round exactly; every longer one does not. */
            if (K >= 3)
                CHECK_MSG(off_fp32 > 1.0, "%s: M%d N%d K%d ta%d tb%d: equals fp32", kernels_level_name(level), M, N, K,
                          ta, tb);
            free(A); free(B); free(C); free(C0);
        }
    matmul_set_precision(MATMUL_FP32);
}

/* MATMUL_BF16 on core/gemm_bf16's pairs through core/sgemm's blocked loop
 * (avx512bf16: both A paths, unpacked at N <= 128); attention's matmul_strided and calls inside a parallel region
 * stay fp32; and the precision is refused below the avx512bf16 level. */
TEST(sgemm_matmul_bf16_products) {
    if (!gemm_bf16_available()) {
        test_skip("this CPU has no AVX512-BF16");
        return;
    }
    KernLevel prev_level = kernels_force(KERN_AVX512);
    CHECK(matmul_set_precision(MATMUL_BF16) == -1 && matmul_precision() == MATMUL_FP32);
    check_bf16_products(KERN_AVX512BF16);
    kernels_force(KERN_AVX512BF16);
    Rng r;
    rng_seed(&r, 17);
    CHECK(matmul_set_precision(MATMUL_BF16) == MATMUL_FP32);
    /* Attention's products and calls from inside a parallel region: fp32 (the
     * naive product within the fp32 bound). */
    enum { M = 64, N = 48, K = 96 };
    float *A = malloc(sizeof(float) * M * K), *B = malloc(sizeof(float) * K * N);
    float *C1 = malloc(sizeof(float) * M * N), *C2 = malloc(sizeof(float) * M * N), *C3 = malloc(sizeof(float) * M * N);
    for (int i = 0; i < M * K; i++) A[i] = rng_normal(&r);
    for (int i = 0; i < K * N; i++) B[i] = rng_normal(&r);
    matmul_strided(C1, A, B, M, N, K, MAT_N, MAT_N, 1.0f, 0.0f, 1, 0, 0, 0);
    #pragma omp parallel num_threads(2)
    {
        #pragma omp single
        matmul(C2, A, B, M, N, K, MAT_N, MAT_N, 1.0f, 0.0f);
    }
    matmul_naive(C3, A, B, M, N, K, MAT_N, MAT_N, 1.0f, 0.0f);
    double worst = 0.0;
    for (int i = 0; i < M * N; i++) worst = fmax(worst, fmax(fabs(C1[i] - C3[i]), fabs(C2[i] - C3[i])));
    CHECK_MSG(worst < 2.0 * (K + 2) * 0x1p-24 * K * 4, "fp32 paths: worst diff %g", worst);
    free(A); free(B); free(C1); free(C2); free(C3);
    matmul_set_precision(MATMUL_FP32);
    kernels_force(prev_level);
}

/* MATMUL_BF16 on core/gemm_amx's tiles (the amx level): the same bound for
 * every shape and transpose (32 x 32 blocks with ragged edges, pairs padded to
 * 16, transposed operands turned in registers), and the same numbers on one
 * thread as on the pool (a block's sums do not depend on the split). */
TEST(sgemm_matmul_bf16_amx_tiles) {
    if (kernels_cpu_level() < KERN_AMX) {
        test_skip("this CPU has no AMX (or the kernel does not grant its tiles)");
        return;
    }
    KernLevel prev_level = kernels_level();
    check_bf16_products(KERN_AMX);
    enum { M = 300, N = 200, K = 333 };
    float *A = malloc(sizeof(float) * M * K), *B = malloc(sizeof(float) * K * N);
    float *C1 = malloc(sizeof(float) * M * N), *C2 = malloc(sizeof(float) * M * N);
    Rng r;
    rng_seed(&r, 5);
    for (int i = 0; i < M * K; i++) A[i] = rng_normal(&r);
    for (int i = 0; i < K * N; i++) B[i] = rng_normal(&r);
    matmul_set_precision(MATMUL_BF16);
    for (int t = 0; t < 4; t++) {
        MatTrans ta = t & 1 ? MAT_T : MAT_N, tb = t >> 1 ? MAT_T : MAT_N;
        matmul(C1, A, B, M, N, K, ta, tb, 1.0f, 0.0f);
        int prev_threads = omp_get_max_threads();
        omp_set_num_threads(1);
        matmul(C2, A, B, M, N, K, ta, tb, 1.0f, 0.0f);
        omp_set_num_threads(prev_threads);
        CHECK_MSG(memcmp(C1, C2, sizeof(float) * M * N) == 0, "ta%d tb%d: one thread differs from %d", t & 1, t >> 1,
                  prev_threads);
    }
    matmul_set_precision(MATMUL_FP32);
    kernels_force(prev_level);
    free(A); free(B); free(C1); free(C2);
}
