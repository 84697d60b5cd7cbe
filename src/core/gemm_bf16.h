/* gemm_bf16.h — GEMMs with bfloat16 operands: for inference, y (M, N) = x (M, K) W^T
 * + beta y, for a weight W (N, K) stored as nn/linear stores it, packed once;
 * for training, the pairing behind core/blas.h's MATMUL_BF16 precision.
 *
 * Why: on CPUs with AVX512-BF16, vdpbf16ps does 32 multiply-adds per
 * instruction where vfmadd231ps does 16 (measured on this machine's Zen 5:
 * 530 vs 286 GFLOP/s per core), and bf16 weights halve the memory a forward
 * streams. (Not on Intel's Emerald Rapids, family 6 model 207: there
 * vdpbf16ps has half the FMA's rate, and --bf16 runs fp32.) Both operands are rounded to bf16 (round to nearest even; 8
 * significant bits, core/half.h), products are accumulated in fp32. That is an
 * approximation (relative error ~1e-2 on a product's result): inference under
 * --bf16, training only when asked (MATMUL_BF16, mixed precision: weights,
 * gradients and optimizer state stay fp32); the reference comparisons are fp32.
 *
 * The product needs AVX512-BF16: callers take this path only when
 * gemm_bf16_native() says the kernel level is avx512bf16 (the default where
 * vdpbf16ps is fast, core/kernels.h), and run fp32 otherwise.
 * Call from the main thread, outside parallel regions (core/threads.h's rule);
 * the products split the weight's columns over the OpenMP pool. */
#ifndef GLUE_GEMM_BF16_H
#define GLUE_GEMM_BF16_H

#include <stddef.h>
#include <stdint.h>

typedef struct Bf16Weights {
    int N, K;          /* W is (N, K) */
    int pairs;         /* ceil(K / 2): K padded with a zero to an even count */
    int panels;        /* ceil(N / 32): N padded with zero rows */
    uint32_t *data;    /* [panel][pair][32 columns]: (W[n][2p] | W[n][2p+1] << 16) in bf16 */
} Bf16Weights;

/* Packs W (N, K) row-major. Allocates; free with bf16_weights_free. Dies
 * without AVX512-BF16 (gemm_bf16_available), so matmul_bf16 never meets a CPU
 * that cannot run it. */
void bf16_weights_pack(Bf16Weights *p, const float *W, int N, int K);
void bf16_weights_free(Bf16Weights *p);

/* y (M, N) = act(x (M, K) W^T + bias + beta * y) (beta 0: y is only written;
 * bias (N) may be NULL; act is GELU, x Phi(x), when gelu is set, else nothing).
 * The bias and GELU are applied to each tile while it is in registers or L1,
 * instead of in passes of their own over y (which, memory-bound, cost an
 * inference forward more than a tenth of its time). */
void matmul_bf16(float *y, const float *x, const Bf16Weights *w, int M, float beta, const float *bias, int gelu);

/* Training products in bf16 (core/blas.h's MATMUL_BF16): op(A) and op(B) of
 * C = alpha op(A) op(B) + beta C rounded to bf16 and paired along k (an odd K
 * padded with a zero), so that core/sgemm's blocked loop (sgemm_own_tile), its
 * packers copying 32-bit elements, and `tile` (vdpbf16ps, fp32 sums) compute
 * the product with K = pairs. The pairs live in two buffers reused by the
 * next call: call outside parallel regions, at the avx512bf16 level only. */
typedef struct {
    const float *a, *b;   /* the paired operands (32-bit elements), with their row strides */
    int lda, ldb;
    int pairs;            /* ceil(K / 2) */
    void (*tile)(float *c, long ldc, int mr, int nc, const float *a, long a_rs, long a_cs, const float *bp, long kc,
                 float alpha, float beta);
} Bf16Operands;
/* Scratch of the training products here and in core/gemm_amx (which: 0 for
 * A's pairs, 1 for B's, 2 for gemm_amx's fp32 partial sums, 32-bit words
 * each), grown to the largest seen, never shrunk; the calling thread's own
 * (core/thread_scratch.h), one product at a time per thread, from outside
 * parallel regions. */
uint32_t *bf16_pairs_scratch(int which, size_t words);

Bf16Operands gemm_bf16_pair_operands(const float *A, int lda, const float *B, int ldb, int M, int N, int K, int ta,
                                     int tb);

/* 1 when the AVX512-BF16 kernel runs (core/kernels.h's level is avx512bf16). */
int gemm_bf16_native(void);
/* 1 when this CPU has AVX512-BF16 at all (whatever the level; every CPU with
 * AMX has it): matmul_bf16 can run. */
int gemm_bf16_available(void);

#endif
