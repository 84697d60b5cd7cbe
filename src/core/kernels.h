/* kernels.h — the hot element-wise loops, compiled once per instruction-set
 * level and chosen at run time from the CPU's features (cpuid).
 *
 * Why: the binary is built for a portable baseline (x86-64-v2, Makefile), so
 * that a build made on an AVX-512 machine runs on any x86-64 CPU. The loops
 * that take a visible share of a BERT step (softmax, LayerNorm and its
 * backward, GELU, residual adds, dropout's backward, attention's softmax
 * backward, the MLM cross-entropy, the LSTM and GRU cells, the AdamW update, gradient clipping's sum
 * of squares, and core/sgemm's tiles and packing) are written once, in core/kernels_body.h, and
 * compiled three times (core/kernels_portable.c, kernels_avx2.c,
 * kernels_avx512.c) with different target instruction sets. The first call of
 * kernels() picks the highest level the CPU supports; the environment
 * variable GLUE_KERNELS=portable|avx2|avx512|avx512bf16|amx forces a lower one
 * (tests, benchmarks, comparisons). AVX512-BF16 is a level of its own only for
 * core/gemm_bf16 (the vdpbf16ps kernel), AMX (AVX512-BF16 and AMX-BF16 tiles,
 * which the kernel lets the process use) only for core/gemm_amx (matmul's bf16
 * training products on tiles); the element-wise loops of both are AVX-512's.
 * Where the CPU has AMX the default is amx. Otherwise it stops at AVX-512 on
 * CPUs whose vdpbf16ps is slower than fp32 FMAs (kernels_bf16_dot_fast);
 * GLUE_KERNELS=avx512bf16 still selects it.
 *
 * The kernels are serial: the callers (nn/, optim/) keep their OpenMP loops
 * and call a kernel per row or per chunk, so the thread split, and with it the
 * summation order, is the same at every level. Levels differ only in how the
 * compiler vectorises the same C (fp32 sums in a different lane order; the
 * AVX2 and AVX-512 builds contract a*b+c into FMAs), which tests/test_kernels.c
 * bounds against the portable build. */
#ifndef GLUE_KERNELS_H
#define GLUE_KERNELS_H

#include <stdint.h>

typedef enum { KERN_PORTABLE, KERN_AVX2, KERN_AVX512, KERN_AVX512BF16, KERN_AMX, KERN_LEVELS } KernLevel;

/* AdamW's per-step constants (optim/adamw.c computes them in double). */
typedef struct {
    float decay_mul;           /* 1 - lr*wd */
    float beta1, one_beta1;    /* b1, 1 - b1 */
    float beta2, one_beta2;
    float step_size;           /* lr / (1 - b1^t) */
    float bc2_sqrt;            /* sqrt(1 - b2^t) */
    float eps;
} AdamwCoef;

typedef struct ElemKernels {
    const char *name;   /* "portable", "avx2", "avx512" */
    /* x (n) = softmax(x) in place; -INFINITY entries get 0, an all -inf row becomes 0. */
    void (*softmax_row)(float *x, int n);
    /* y (C) = (x - mean) * rstd * gamma + beta; the mean and variance are summed
     * in double (eps may be 1e-12). *mean, *rstd are written. */
    void (*layernorm_row)(float *y, float *mean, float *rstd, const float *x, const float *gamma,
                          const float *beta, int C, float eps);
    /* One row of the LayerNorm backward after a residual (nn/transformer.c's
     * tail): o (C) = rs * (g - mean(g) - xhat * mean(g * xhat)), g = d * gamma,
     * xhat = (x - m) * rs, WRITTEN; sg += d * xhat, sb += d. */
    void (*layernorm_backward_row)(float *o, float *sg, float *sb, const float *d, const float *x,
                                   const float *gamma, float m, float rs, int C);
    /* y (n) += x (n). */
    void (*add)(float *y, const float *x, long n);
    /* acc (n) += each of rows rows of x (row stride ld), in row order (bias
     * gradients: one call per column chunk, not one per row). */
    void (*add_rows)(float *acc, const float *x, long rows, long ld, int n);
    /* y (n) = mask ? x * scale : 0 (mask of 0/1 bytes). */
    void (*masked_scale)(float *y, const float *x, const unsigned char *mask, float scale, long n);
    /* dx (n) += mask ? dy * scale : 0. */
    void (*masked_scale_add)(float *dx, const float *dy, const unsigned char *mask, float scale, long n);
    /* pre (n) += b; act = pre * Phi(pre). */
    void (*bias_gelu)(float *pre, float *act, const float *b, int n);
    /* d (n) *= GELU'(pre) = Phi(pre) + pre * phi(pre). */
    void (*gelu_backward_inplace)(float *d, const float *pre, long n);
    /* Softmax backward of one row: g (n) = p * (g - sum_j g_j p_j). */
    void (*softmax_backward_row)(float *g, const float *p, int n);
    /* One row of the MLM cross-entropy over n logits r: returns max(r) in *mx and
     * sum exp(r - max) (the log-sum-exp's argument); d (n), if not NULL, gets
     * exp(r - max) / (sum * rows) WRITTEN (the label's -1/rows is the caller's). */
    float (*xent_row)(float *d, const float *r, int n, int rows, float *mx);
    /* sum of exp(r - mx) over n (ELECTRA's sampler). */
    float (*exp_sum)(const float *r, int n, float mx);
    /* AdamW on x, g, m, v (n) in PyTorch's operation order. */
    void (*adamw)(float *x, const float *g, float *m, float *v, long n, AdamwCoef c);
    /* sum of g[i]^2 in double (gradient clipping's norm); and g (n) *= s. */
    double (*sumsq)(const float *g, long n);
    void (*scale)(float *g, long n, float s);
    /* y (n) = sigmoid(x), tanh(x) (core/fastmath.h's, bounds there); y may be x. */
    void (*sigmoid)(float *y, const float *x, long n);
    void (*tanh)(float *y, const float *x, long n);
    /* One LSTM step of one sequence (nn/lstm.c): g (4H, i | f | g | o; the input
     * projection) += b + r (r: h_prev W_hh^T, NULL at the first step); then i,
     * f, o = sigmoid, g = tanh, written back to g; c (H) = f cp + i g (cp, the
     * previous cell, NULL: 0); h (H) = o tanh(c). */
    void (*lstm_cell)(float *g, float *c, float *h, const float *cp, const float *b, const float *r, int H);
    /* One GRU step of one sequence (nn/gru.c): g (3H, r | z | n; the input
     * projection) and r (h_prev W_hh^T, NULL at the first step, with hp, the
     * previous h) give r, z = sigmoid(g + b + r), hn (H) = b_n + r_n,
     * n = tanh(g_n + r hn), written back to g; h (H) = (1 - z) n + z hp. */
    void (*gru_cell)(float *g, float *hn, float *h, const float *hp, const float *b, const float *r, int H);
    /* fp32 GEMM pieces (core/sgemm.c): tiles of sgemm_mr rows x sgemm_nr
     * columns. pack_a: rows [0, rows <= sgemm_mr) x kc of op(A) (trans: A is
     * stored k-major, a[k * lda + r]; else a[r * lda + k]) -> dst [kc][sgemm_mr],
     * zero-padded. pack_b: columns [0, cols <= sgemm_nr) x kc of op(B) (trans:
     * b[j * ldb + k]; else b[k * ldb + j]) -> dst [kc][sgemm_nr], zero-padded.
     * dst 64-byte aligned. tile: C (mr x nc, row stride ldc) = alpha *
     * op(A).bp + beta * C, C not read when beta is 0, op(A)'s (r, k) at
     * a[r * a_rs + k * a_cs] with a_rs or a_cs 1 (a packed A: 1, sgemm_mr). */
    int sgemm_mr, sgemm_nr;
    void (*sgemm_pack_a)(float *dst, const float *a, long lda, int trans, int rows, int kc);
    void (*sgemm_pack_b)(float *dst, const float *b, long ldb, int trans, int cols, int kc);
    void (*sgemm_tile)(float *c, long ldc, int mr, int nc, const float *a, long a_rs, long a_cs, const float *bp,
                       long kc, float alpha, float beta);
} ElemKernels;

/* The kernels of the current level (chosen on the first call). */
const ElemKernels *kernels(void);
/* The current level, and one level's kernels (NULL if this CPU cannot run them). */
KernLevel kernels_level(void);
const ElemKernels *kernels_at(KernLevel level);
/* The highest level this CPU supports, ignoring GLUE_KERNELS. */
KernLevel kernels_cpu_level(void);
/* 1 when this CPU has AVX512-BF16 and its vdpbf16ps does at least as many
 * multiply-adds per second as an fp32 FMA (timed once, ~1 ms). When it does
 * not (Intel Xeon family 6 model 207: half as many), the default level is
 * avx512, not avx512bf16, and --bf16 runs the fp32 path. */
int kernels_bf16_dot_fast(void);
/* Use `level` from now on (tests, benchmarks); returns the previous level. Dies
 * if the CPU cannot run it. Call outside parallel regions. */
KernLevel kernels_force(KernLevel level);
/* "portable", "avx2", "avx512", "avx512bf16", "amx". */
const char *kernels_level_name(KernLevel level);
/* The CPU as /proc/cpuinfo names it, with cpuid's family and model, e.g.
 * "AMD EPYC (family 25, model 17)". Static storage. */
const char *kernels_cpu_model(void);

#endif
