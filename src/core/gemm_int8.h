/* gemm_int8.h — int8 inference GEMMs: y (M, N) = act(x (M, K) W^T + bias) with
 * W (N, K) in int8 and x quantized row by row as each product starts.
 *
 * Why: on x86 an 8-bit dot product does four multiply-adds per 32-bit lane
 * (vpdpbusd: 64 per AVX-512 instruction, where vfmadd231ps does 16), and int8
 * weights are a quarter of the memory a forward streams. The field's dynamic
 * quantization (PyTorch's quantize_dynamic, ONNX Runtime) does the same.
 *
 * The numbers:
 *   W: symmetric, per output channel (row n): scale_w[n] = max|W[n]| / 127,
 *      q = round(W / scale_w) in [-127, 127] (never -128).
 *   x: per row, dynamic, asymmetric, 7 bits: u8 in [0, 127] with a zero point
 *      z (the row's range [min(0, x), max(0, x)] over 127 steps, so 0 is exact).
 *      Unsigned because vpdpbusd and vpmaddubsw multiply u8 by s8; 7 bits (as
 *      PyTorch's fbgemm does, reduce_range) because vpmaddubsw adds two u8 x s8
 *      products into int16 with saturation: 127 * 127 * 2 = 32258 fits, 255 * 127
 *      * 2 does not. With 7 bits no kernel ever saturates, so every kernel
 *      computes the exact int32 sum and the outputs are bit-identical.
 *   Optionally x's column k is first multiplied by x_mul[k] (SmoothQuant's
 *      1 / s_k, the weights packed as W s): one IEEE product in every quantizer.
 *   y[m][n] = (float)(sum_k qx qw - z[m] * colsum[n]) * (scale_x[m] * scale_w[n])
 *             + bias[n], then GELU when asked; colsum[n] = sum_k qw[n][k].
 *   Every float step is one IEEE operation in the same order in every kernel
 *   (no FMA), and GELU is one shared function: the same bits at every level.
 *   int32 holds any sum for K < 2^31 / 127^2 (133,000; checked).
 *
 * Kernels, chosen at run time from core/kernels.h's level (GLUE_KERNELS forces
 * one): "vnni" (vpdpbusd on zmm; the avx512 levels on CPUs with AVX512-VNNI),
 * "avx2" (vpmaddubsw + vpmaddwd on ymm; the avx2 level, and avx512 without
 * VNNI), "portable" (C). tests/test_gemm_int8.c compares them bit for bit.
 * Call from the main thread, outside parallel regions (core/threads.h's rule). */
#ifndef GLUE_GEMM_INT8_H
#define GLUE_GEMM_INT8_H

#include <stddef.h>
#include <stdint.h>

typedef struct Int8Weights {
    int N, K;
    int groups;        /* ceil(K / 4): K padded with zeros to a multiple of 4 */
    int panels;        /* ceil(N / 32): N padded with zero rows */
    int8_t *data;      /* [panel][group][32 columns][4 k] */
    int32_t *colsum;   /* (panels * 32) sum over k of each row's int8 weights */
    float *scale;      /* (panels * 32) per-row scale, 0 in the padding */
    float *x_mul;      /* (K) or NULL: input column k is multiplied by x_mul[k]
                        * before it is quantized (SmoothQuant's 1 / s_k, the
                        * weights having been packed as W[n][k] s_k) */
} Int8Weights;

/* Row n of W (N, K) -> q (N, K) int8 and scale (N): symmetric per row. A row
 * of zeros gets scale 1 and q 0 (every scale is positive). -1 (nothing else said) if W holds a NaN or
 * infinity. */
int int8_quantize_rows(int8_t *q, float *scale, const float *W, int N, int K);
/* Packs q (N, K) with its row scales (as int8_quantize_rows makes them).
 * -1 with *why set (static text) when a scale is not positive or not finite, or a
 * q is -128 (the kernels' no-saturation bound); the caller says where. */
int int8_weights_pack(Int8Weights *p, const int8_t *q, const float *scale, int N, int K, const char **why);
/* Quantizes and packs W (N, K); -1 if W is not finite. */
int int8_weights_quantize(Int8Weights *p, const float *W, int N, int K);
/* Per input channel smoothing (SmoothQuant, Xiao et al. 2023): W (N, K)
 * quantized and packed as W[n][k] s[k], and the inputs multiplied by
 * x_mul[k] = 1 / s[k] as they are quantized, so that the product is
 * unchanged but an input channel of large values (BERT's LayerNorm outputs
 * have a few) no longer spends most of its row's 7 bits. -1 if W is not
 * finite or an s[k] is not finite and positive. */
int int8_weights_quantize_smoothed(Int8Weights *p, const float *W, const float *s, int N, int K);
/* Sets the inputs' factors of packed weights (as int8_weights_quantize_smoothed
 * does; s copied, the packed integers already W s): -1 with *why set when an
 * s[k] is not finite and positive. */
int int8_weights_set_smoothing(Int8Weights *p, const float *s, const char **why);
void int8_weights_free(Int8Weights *p);
/* *v = rows [n0, n1) of w, sharing its memory (free only w): 0, or -1 when n0
 * is not a multiple of 32 (the packing's panel) or the range is not in w. */
int int8_weights_rows(const Int8Weights *w, int n0, int n1, Int8Weights *v);

/* y (M, N) = act(x (M, K) W^T + bias), y only written; bias (N) may be NULL;
 * x smoothed by w->x_mul (when set) as it is quantized;
 * act is GELU (x Phi(x), core/fastmath.h) when gelu is set. A row of x with a
 * NaN or infinity gives a row of NaN. */
void matmul_int8(float *y, const float *x, const Int8Weights *w, int M, const float *bias, int gelu);
/* y = (x W^T + bias) + res, res (M, N) added in the epilogue (a residual
 * connection without a pass of its own). */
void matmul_int8_residual(float *y, const float *x, const Int8Weights *w, int M, const float *bias, const float *res);

/* Inputs already quantized (per row, exactly as matmul_int8 quantizes x):
 * what one product hands the next when nothing but that product reads its
 * outputs (BERT's GELU activations feeding the FFN's second product). */
typedef struct Int8Acts {
    uint8_t *q;           /* (M, lda) in [0, 127], zero past K */
    int32_t *z;           /* (M) zero points */
    float *sx;            /* (M) scales */
    long lda;             /* 4 ceil(K / 4) */
    const float *x_mul;   /* the smoothing the rows were quantized with (the
                           * reading product's x_mul), or NULL */
    int M, K;
    size_t q_cap, rows_cap;   /* allocated; grown, never shrunk */
} Int8Acts;
void int8_acts_free(Int8Acts *a);

/* out = the quantized rows of act(x W^T + bias), the same bytes as
 * matmul_int8 into y then the product `next` reading y would quantize
 * (smoothed by next->x_mul), without that pass over y: each thread quantizes
 * its block of rows while it is in cache. out is grown as needed (zeroed
 * Int8Acts to start); y (M, N) is scratch, written or not. */
void matmul_int8_quantized(Int8Acts *out, float *y, const float *x, const Int8Weights *w, int M, const float *bias,
                           int gelu, const Int8Weights *next);
/* y (x->M, N) = x W^T + bias (+ res) from inputs already quantized; x->K must
 * be w's K and x quantized for w (its x_mul); res (x->M, N) may be NULL. */
void matmul_int8_acts(float *y, const Int8Acts *x, const Int8Weights *w, const float *bias, const float *res);

/* The kernel matmul_int8 runs at the current level: "vnni", "avx2", "portable". */
const char *gemm_int8_kernel(void);

/* For tests: s (M, N) = sum_k xq[m][k] w[n][k] in int32 from activations
 * already quantized (xq (M, K) row-major, each in [0, 127]) by the current
 * level's kernel. */
void gemm_int8_sums(int32_t *s, const uint8_t *xq, int M, const Int8Weights *w);

#endif
