/* blas.c — matmul over cblas_sgemm or our own GEMM (core/sgemm.h chooses),
 * or, at MATMUL_BF16 precision, on AMX tiles (core/gemm_amx, the amx kernel
 * level) or over bf16 pairs of both operands through our GEMM's blocking with
 * core/gemm_bf16's tile (the avx512bf16 level); and the naive reference (see
 * blas.h).
 *
 * Threads: OpenBLAS keeps ONE thread (threads_init sets it), and matmul splits
 * a product over the OpenMP pool itself, each thread running a single-threaded
 * sgemm on its block of C. With OpenBLAS's own pool as well, two sets of
 * threads compete for the same cores: its workers spin in sched_yield while
 * OpenMP's spin in their barriers, and on this shared 2-core machine (load
 * ~15) that made a BERT training step 2-3x slower than with one pool.
 * matmul_strided (attention heads) runs whole products per thread. The
 * blocks depend only on the shape and the thread count, so results are
 * deterministic for a thread count (not bit-identical across counts:
 * OpenBLAS's kernels for ragged block edges round differently). Called inside
 * a parallel region, or when OpenBLAS has more than one thread (threads_init
 * was not called), both simply call sgemm. */
#include "core/blas.h"

#include <cblas.h>
#include <stdint.h>

#include "core/common.h"
#include "core/gemm_amx.h"
#include "core/gemm_bf16.h"
#include "core/kernels.h"
#include "core/sgemm.h"
#include <omp.h>

extern int openblas_get_num_threads(void);

/* Below this many multiply-adds a product stays on the calling thread: the
 * fork/join would cost more than the second core saves (~2 MFLOP, ~10 us). */
#define BLAS_PARALLEL_MIN_MACS (1L << 20)
/* Blocks of C start on multiples of this (the sgemm kernels' unroll), so no
 * thread gets a ragged edge it would compute slowly. */
#define BLAS_SPLIT_ALIGN 16

static void blas_sgemm(float *C, const float *A, const float *B, int M, int N, int K, MatTrans ta, MatTrans tb,
                       float alpha, float beta, int lda, int ldb, int ldc) {
    if (gemm_backend() == GEMM_OWN) {
        sgemm_own(ta == MAT_T, tb == MAT_T, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
        return;
    }
    cblas_sgemm(CblasRowMajor, ta == MAT_N ? CblasNoTrans : CblasTrans, tb == MAT_N ? CblasNoTrans : CblasTrans, M, N,
                K, alpha, A, lda, B, ldb, beta, C, ldc);
}

/* The OpenMP threads a call may use: 1 inside a parallel region, or when
 * OpenBLAS threads itself. */
static int blas_team(void) {
    if (omp_in_parallel() || openblas_get_num_threads() != 1) return 1;
    return omp_get_max_threads();
}

static MatmulPrecision g_precision = MATMUL_FP32;

/* The levels with a bf16 product worth running: AMX tiles, or a vdpbf16ps as
 * fast as the FMA (the default picks avx512bf16 only then). */
static int matmul_bf16_runs(void) { return kernels_level() == KERN_AMX || kernels_level() == KERN_AVX512BF16; }

int matmul_set_precision(MatmulPrecision p) {
    if (p == MATMUL_BF16 && !matmul_bf16_runs()) return -1;
    MatmulPrecision prev = g_precision;
    g_precision = p;
    return (int)prev;
}

MatmulPrecision matmul_precision(void) { return g_precision; }

const char *const MATMUL_PRECISION_NAMES[] = {"fp32", "bf16", NULL};

MatmulPrecision matmul_training_precision(MatmulPrecision wanted, int speak) {
    if (wanted != MATMUL_BF16 || matmul_bf16_runs()) return wanted;
    if (speak)
        user_warning("no fast bf16 product here (kernels: %s): precision=bf16 trains with fp32 products",
                     kernels_level_name(kernels_level()));
    return MATMUL_FP32;
}

/* One product (or a block of one) on the calling thread: fp32 (tile NULL:
 * blas_sgemm) or over bf16 pairs (core/gemm_bf16's tile, K counting pairs). */
static void blas_block(SgemmTile tile, float *C, const float *A, const float *B, int M, int N, int K, MatTrans ta,
                       MatTrans tb, float alpha, float beta, int lda, int ldb, int ldc) {
    if (tile) sgemm_own_tile(tile, ta == MAT_T, tb == MAT_T, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    else blas_sgemm(C, A, B, M, N, K, ta, tb, alpha, beta, lda, ldb, ldc);
}

/* C (M, N, row stride N) over the team: each thread one block of C's longer
 * side. macs decides whether a second thread pays. */
static void blas_split(SgemmTile tile, float *C, const float *A, const float *B, int M, int N, int K, MatTrans ta,
                       MatTrans tb, float alpha, float beta, int lda, int ldb, long macs) {
    int team = macs < BLAS_PARALLEL_MIN_MACS ? 1 : blas_team();
    if (team <= 1) {
        blas_block(tile, C, A, B, M, N, K, ta, tb, alpha, beta, lda, ldb, N);
        return;
    }
    /* Split the longer side of C: each thread packs the whole of the other
     * operand, so the copy it duplicates is the smaller one. */
    int split_rows = M >= N, D = split_rows ? M : N;
    long per = ((D + team - 1) / team + BLAS_SPLIT_ALIGN - 1) / BLAS_SPLIT_ALIGN * BLAS_SPLIT_ALIGN;
    #pragma omp parallel num_threads(team)
    {
        long lo = omp_get_thread_num() * per, hi = lo + per < D ? lo + per : D;
        if (lo < hi && split_rows)
            blas_block(tile, C + lo * N, ta == MAT_N ? A + lo * lda : A + lo, B, (int)(hi - lo), N, K, ta, tb, alpha,
                       beta, lda, ldb, N);
        else if (lo < hi)
            blas_block(tile, C + lo, A, tb == MAT_N ? B + lo : B + lo * ldb, M, (int)(hi - lo), K, ta, tb, alpha,
                       beta, lda, ldb, N);
    }
}

void matmul(float *C, const float *A, const float *B, int M, int N, int K,
            MatTrans ta, MatTrans tb, float alpha, float beta) {
    if (M == 0 || N == 0) return;
    long macs = (long)M * N * K;
    if (g_precision == MATMUL_BF16 && K > 0 && !omp_in_parallel() && kernels_level() == KERN_AMX) {
        gemm_amx(ta == MAT_T, tb == MAT_T, M, N, K, alpha, A, ta == MAT_N ? K : M, B, tb == MAT_N ? N : K, beta, C, N,
                 macs < BLAS_PARALLEL_MIN_MACS ? 1 : blas_team());
        return;
    }
    if (g_precision == MATMUL_BF16 && K > 0 && !omp_in_parallel()) {
        Bf16Operands p = gemm_bf16_pair_operands(A, ta == MAT_N ? K : M, B, tb == MAT_N ? N : K, M, N, K,
                                                 ta == MAT_T, tb == MAT_T);
        blas_split(p.tile, C, p.a, p.b, M, N, p.pairs, ta, tb, alpha, beta, p.lda, p.ldb, macs);
        return;
    }
    blas_split(NULL, C, A, B, M, N, K, ta, tb, alpha, beta, ta == MAT_N ? K : M, tb == MAT_N ? N : K, macs);
}

void matmul_ld(float *C, int ldc, const float *A, int lda, const float *B, int ldb, int M, int N, int K,
               MatTrans ta, MatTrans tb, float alpha, float beta) {
    if (M == 0 || N == 0) return;
    blas_sgemm(C, A, B, M, N, K, ta, tb, alpha, beta, lda, ldb, ldc);
}

void matmul_naive(float *C, const float *A, const float *B, int M, int N, int K,
                  MatTrans ta, MatTrans tb, float alpha, float beta) {
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double acc = 0.0;
            for (int k = 0; k < K; k++) {
                float a = ta == MAT_N ? A[(long)i * K + k] : A[(long)k * M + i];
                float b = tb == MAT_N ? B[(long)k * N + j] : B[(long)j * K + k];
                acc += (double)a * b;
            }
            float prev = beta == 0.0f ? 0.0f : beta * C[(long)i * N + j];
            C[(long)i * N + j] = (float)(alpha * acc) + prev;
        }
}

float *matmul_pack_b(float *buf, const float *B, int K, int N, MatTrans tb) {
    float *bp = (float *)(((uintptr_t)buf + 63) & ~(uintptr_t)63);   /* the packers' vector stores */
    sgemm_pack_b_all(bp, tb == MAT_T, K, N, B, tb == MAT_N ? N : K);
    return bp;
}

void matmul_packed_b(float *C, const float *A, const float *bp, int M, int N, int K, MatTrans ta, float alpha,
                     float beta) {
    if (M == 0 || N == 0) return;
    int lda = ta == MAT_N ? K : M;
    int team = (long)M * N * K < BLAS_PARALLEL_MIN_MACS ? 1 : blas_team();
    if (team <= 1) {
        sgemm_own_packed_b(ta == MAT_T, M, N, K, alpha, A, lda, bp, beta, C, N, 0, N);
        return;
    }
    int NR = kernels()->sgemm_nr;   /* blocks start on a panel */
    long per = ((N + team - 1) / team + NR - 1) / NR * NR;
    #pragma omp parallel num_threads(team)
    {
        long lo = omp_get_thread_num() * per, hi = lo + per < N ? lo + per : N;
        if (lo < hi) sgemm_own_packed_b(ta == MAT_T, M, N, K, alpha, A, lda, bp, beta, C, N, (int)lo, (int)hi);
    }
}

void matmul_strided(float *C, const float *A, const float *B, int M, int N, int K,
                    MatTrans ta, MatTrans tb, float alpha, float beta, int batch,
                    long stride_c, long stride_a, long stride_b) {
    if (M == 0 || N == 0) return;
    int lda = ta == MAT_N ? K : M;
    int ldb = tb == MAT_N ? N : K;
    int team = (long)M * N * K * batch < BLAS_PARALLEL_MIN_MACS || batch < 2 ? 1 : blas_team();
    if (team <= 1 && batch == 1) {   /* fp32 whatever matmul's precision */
        blas_split(NULL, C, A, B, M, N, K, ta, tb, alpha, beta, lda, ldb, (long)M * N * K);
        return;
    }
    #pragma omp parallel for schedule(static) num_threads(team) if (team > 1)
    for (int b = 0; b < batch; b++)
        blas_sgemm(C + b * stride_c, A + b * stride_a, B + b * stride_b, M, N, K, ta, tb, alpha, beta, lda, ldb, N);
}
