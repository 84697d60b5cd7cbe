/* kernels_body.h — the hot loops of core/kernels.h, written once and included
 * by core/kernels_portable.c, kernels_avx2.c and kernels_avx512.c, each of
 * which is compiled for its instruction set (the Makefile's KERN_FLAGS) and
 * defines:
 *   KERN_OPS      the table's name (kernels_<level>_ops), KERN_NAME its level;
 *   KW            floats per vector register (4, 8, 16);
 *   KERN_SG_MR    rows of the fp32 GEMM tile (core/sgemm.c), likewise;
 *   KV_FMA(a, b, c), KV_SET1(s)   a * b + c and a broadcast at that width.
 * Everything is static: the three copies do not clash. The element-wise loops
 * are plain C with `#pragma omp simd`, the same source the nn/ files had
 * before; the compiler vectorises them for the target. */
#ifndef KERN_OPS
#error "include core/kernels_body.h from a core/kernels_<level>.c file"
#endif

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "core/fastmath.h"
#include "core/kernels.h"

/* ---- softmax, LayerNorm, residuals, dropout, GELU ---- */

/* Vectorised with fast_expf (glibc's expf is a scalar call). fast_expf clamps
 * its argument, so masked entries are selected to 0 explicitly. */
static void k_softmax_row(float *x, int n) {
    float mx = -INFINITY;
    #pragma omp simd reduction(max : mx)
    for (int i = 0; i < n; i++) mx = x[i] > mx ? x[i] : mx;
    if (mx == -INFINITY) { memset(x, 0, sizeof(float) * (size_t)n); return; }
    float sum = 0.0f;
    #pragma omp simd reduction(+ : sum)
    for (int i = 0; i < n; i++) {
        float e = x[i] == -INFINITY ? 0.0f : fast_expf(x[i] - mx);
        x[i] = e;
        sum += e;
    }
    float inv = 1.0f / sum;
    #pragma omp simd
    for (int i = 0; i < n; i++) x[i] *= inv;
}

/* Two passes (mean, then squared deviations) in double: with eps = 1e-12 the
 * variance must not lose digits to cancellation. */
static void k_layernorm_row(float *y, float *mean, float *rstd, const float *x, const float *gamma,
                            const float *beta, int C, float eps) {
    double m = 0.0;
    #pragma omp simd reduction(+ : m)
    for (int c = 0; c < C; c++) m += x[c];
    m /= C;
    double v = 0.0;
    #pragma omp simd reduction(+ : v)
    for (int c = 0; c < C; c++) { double d = x[c] - m; v += d * d; }
    v /= C;
    float mf = (float)m, rs = (float)(1.0 / sqrt(v + eps));
    #pragma omp simd
    for (int c = 0; c < C; c++) y[c] = (x[c] - mf) * rs * gamma[c] + beta[c];
    *mean = mf;
    *rstd = rs;
}

static void k_layernorm_backward_row(float *o, float *sg, float *sb, const float *d, const float *x,
                                     const float *gamma, float m, float rs, int C) {
    float sum_g = 0.0f, sum_gx = 0.0f;
    #pragma omp simd reduction(+ : sum_g, sum_gx)
    for (int c = 0; c < C; c++) {
        float xhat = (x[c] - m) * rs, g = d[c] * gamma[c];
        sum_g += g;
        sum_gx += g * xhat;
        sg[c] += d[c] * xhat;
        sb[c] += d[c];
    }
    float mg = sum_g / C, mgx = sum_gx / C;
    #pragma omp simd
    for (int c = 0; c < C; c++) o[c] = rs * (d[c] * gamma[c] - mg - (x[c] - m) * rs * mgx);
}

static void k_add(float *y, const float *x, long n) {
    #pragma omp simd
    for (long i = 0; i < n; i++) y[i] += x[i];
}

/* mask ? v : 0 as a bit mask (0/1 byte -> 0 or all ones): GCC 12 leaves a
 * select on a byte condition between floats scalar. */
static inline float k_keep(float v, unsigned char keep) {
    uint32_t u;
    memcpy(&u, &v, 4);
    u &= -(uint32_t)keep;
    memcpy(&v, &u, 4);
    return v;
}

static void k_add_rows(float *acc, const float *x, long rows, long ld, int n) {
    for (long r = 0; r < rows; r++) {
        const float *row = x + r * ld;
        #pragma omp simd
        for (int j = 0; j < n; j++) acc[j] += row[j];
    }
}

static void k_masked_scale(float *y, const float *x, const unsigned char *mask, float scale, long n) {
    #pragma omp simd
    for (long i = 0; i < n; i++) y[i] = k_keep(x[i] * scale, mask[i]);
}

static void k_masked_scale_add(float *dx, const float *dy, const unsigned char *mask, float scale, long n) {
    #pragma omp simd
    for (long i = 0; i < n; i++) dx[i] += k_keep(dy[i] * scale, mask[i]);
}

static void k_bias_gelu(float *pre, float *act, const float *b, int n) {
    #pragma omp simd
    for (int j = 0; j < n; j++) {
        float v = pre[j] + b[j];
        pre[j] = v;
        act[j] = v * normal_cdf(v);
    }
}

static void k_gelu_backward_inplace(float *d, const float *pre, long n) {
    const float inv_sqrt_2pi = 0.39894228040143268f;
    #pragma omp simd
    for (long i = 0; i < n; i++) {
        float x = pre[i];
        d[i] *= normal_cdf(x) + x * inv_sqrt_2pi * fast_expf(-0.5f * x * x);
    }
}

static void k_softmax_backward_row(float *g, const float *p, int n) {
    float dot = 0.0f;
    #pragma omp simd reduction(+ : dot)
    for (int j = 0; j < n; j++) dot += g[j] * p[j];
    #pragma omp simd
    for (int j = 0; j < n; j++) g[j] = p[j] * (g[j] - dot);
}

/* One pass for the max, one for exp (stored as the gradient's numerator) and
 * the sum, one to scale. */
static float k_xent_row(float *d, const float *r, int n, int rows, float *mx_out) {
    float mx = r[0], sum = 0.0f;
    #pragma omp simd reduction(max : mx)
    for (int v = 0; v < n; v++) mx = r[v] > mx ? r[v] : mx;
    if (d) {
        #pragma omp simd reduction(+ : sum)
        for (int v = 0; v < n; v++) {
            float e = fast_expf(r[v] - mx);
            d[v] = e;
            sum += e;
        }
        float scale = 1.0f / (sum * (float)rows);
        #pragma omp simd
        for (int v = 0; v < n; v++) d[v] *= scale;
    } else {
        #pragma omp simd reduction(+ : sum)
        for (int v = 0; v < n; v++) sum += fast_expf(r[v] - mx);
    }
    *mx_out = mx;
    return sum;
}

static void k_adamw(float *x, const float *g, float *m, float *v, long n, AdamwCoef c) {
    #pragma omp simd
    for (long i = 0; i < n; i++) {
        float xi = x[i] * c.decay_mul;
        m[i] = m[i] * c.beta1 + c.one_beta1 * g[i];
        v[i] = v[i] * c.beta2 + c.one_beta2 * g[i] * g[i];
        float denom = sqrtf(v[i]) / c.bc2_sqrt + c.eps;
        x[i] = xi - c.step_size * (m[i] / denom);
    }
}

static double k_sumsq(const float *g, long n) {
    double acc = 0.0;
    #pragma omp simd reduction(+ : acc)
    for (long i = 0; i < n; i++) acc += (double)g[i] * g[i];
    return acc;
}

static void k_scale(float *g, long n, float s) {
    #pragma omp simd
    for (long i = 0; i < n; i++) g[i] *= s;
}

/* ---- packing for core/sgemm ---- */

/* dst[k * w + r] = src[r * lds + k] for r < n, k < kc; rows n..w-1 of dst
 * zero (w a multiple of 4). Four rows by four k at a time through SSE's 4x4
 * transpose (every level has SSE): the packers' transposes were a seventh of
 * a pretraining step as scalar strided stores. (core/sgemm's A and B.) */
static void k_sgemm_transpose(float *dst, int w, const float *src, long lds, int n, int kc) {
    int r = 0;
    for (; r + 4 <= n; r += 4) {
        const float *s0 = src + (long)r * lds, *s1 = s0 + lds, *s2 = s1 + lds, *s3 = s2 + lds;
        int k = 0;
        for (; k + 4 <= kc; k += 4) {
            __m128 x0 = _mm_loadu_ps(s0 + k), x1 = _mm_loadu_ps(s1 + k);
            __m128 x2 = _mm_loadu_ps(s2 + k), x3 = _mm_loadu_ps(s3 + k);
            _MM_TRANSPOSE4_PS(x0, x1, x2, x3);
            float *d = dst + (long)k * w + r;
            _mm_storeu_ps(d, x0);
            _mm_storeu_ps(d + w, x1);
            _mm_storeu_ps(d + 2 * w, x2);
            _mm_storeu_ps(d + 3 * w, x3);
        }
        for (; k < kc; k++) {
            float *d = dst + (long)k * w + r;
            d[0] = s0[k]; d[1] = s1[k]; d[2] = s2[k]; d[3] = s3[k];
        }
    }
    for (; r < n; r++) {
        const float *s0 = src + (long)r * lds;
        for (int k = 0; k < kc; k++) dst[(long)k * w + r] = s0[k];
    }
    if (n < w)
        for (int k = 0; k < kc; k++) memset(dst + (long)k * w + n, 0, sizeof(float) * (size_t)(w - n));
}

typedef float kvf __attribute__((vector_size(KW * 4)));
typedef float kvf_unaligned __attribute__((vector_size(KW * 4), aligned(4)));
enum { K_NC = 2 * KW };   /* columns of one sub-tile: two vectors */

/* The register tiles take their row count as a compile-time constant (so the
 * accumulators stay in registers): K_SWITCH_ROWS(mr, MAX, FN, args...) calls
 * FN(R, args...) for R = mr in 1..MAX (MAX <= 12), nothing otherwise. */
#define K_ROWS_CASE(R, MAX, FN, ...) \
    case R:                          \
        if (R <= MAX) FN(R <= MAX ? R : 1, __VA_ARGS__); \
        break;
#define K_SWITCH_ROWS(mr, MAX, FN, ...)                                                                   \
    switch (mr) {                                                                                        \
        K_ROWS_CASE(1, MAX, FN, __VA_ARGS__) K_ROWS_CASE(2, MAX, FN, __VA_ARGS__)                         \
        K_ROWS_CASE(3, MAX, FN, __VA_ARGS__) K_ROWS_CASE(4, MAX, FN, __VA_ARGS__)                         \
        K_ROWS_CASE(5, MAX, FN, __VA_ARGS__) K_ROWS_CASE(6, MAX, FN, __VA_ARGS__)                         \
        K_ROWS_CASE(7, MAX, FN, __VA_ARGS__) K_ROWS_CASE(8, MAX, FN, __VA_ARGS__)                         \
        K_ROWS_CASE(9, MAX, FN, __VA_ARGS__) K_ROWS_CASE(10, MAX, FN, __VA_ARGS__)                        \
        K_ROWS_CASE(11, MAX, FN, __VA_ARGS__) K_ROWS_CASE(12, MAX, FN, __VA_ARGS__)                       \
    default: break;                                                                                      \
    }

/* sum of exp(r[v] - mx) over n (ELECTRA's sampler scans the generator's
 * distribution block by block). */
static float k_exp_sum(const float *r, int n, float mx) {
    float sum = 0.0f;
    #pragma omp simd reduction(+ : sum)
    for (int v = 0; v < n; v++) sum += fast_expf(r[v] - mx);
    return sum;
}

/* ---- fp32 GEMM (core/sgemm.c): packers and the register tile ---- */

/* The tile is KERN_SG_MR rows x K_NC columns (two vectors per row), summed
 * over k from a packed A panel ([k][KERN_SG_MR]) and a packed B panel
 * ([k][K_NC]): per k, two loads of B, one broadcast per row, two FMAs per
 * row; the accumulators never leave the registers (KERN_SG_MR * 2 of them:
 * 24 of 32 at AVX-512, 12 of 16 at AVX2 and below). */

/* A rows [0, rows) x k [0, kc) of op(A) into dst [kc][KERN_SG_MR], rows past
 * `rows` zero. trans: op(A) = A^T, so a[k * lda + r] (contiguous per k);
 * else a[r * lda + k] (a transpose, row by row). */
static void k_sgemm_pack_a(float *dst, const float *a, long lda, int trans, int rows, int kc) {
    if (trans) {
        for (int k = 0; k < kc; k++) {
            const float *src = a + (long)k * lda;
            float *d = dst + (long)k * KERN_SG_MR;
            if (rows == KERN_SG_MR) {   /* a fixed-size copy: vector moves, not a byte loop */
                memcpy(d, src, sizeof(float) * KERN_SG_MR);
                continue;
            }
            int r = 0;
            for (; r < rows; r++) d[r] = src[r];
            for (; r < KERN_SG_MR; r++) d[r] = 0.0f;
        }
        return;
    }
    k_sgemm_transpose(dst, KERN_SG_MR, a, lda, rows, kc);
}

/* Columns [0, cols) x k [0, kc) of op(B) into dst [kc][K_NC], columns past
 * `cols` zero. trans: op(B) = B^T, so b[j * ldb + k] (a transpose, column by
 * column); else b[k * ldb + j] (contiguous per k). */
static void k_sgemm_pack_b(float *dst, const float *b, long ldb, int trans, int cols, int kc) {
    if (!trans) {
        for (int k = 0; k < kc; k++) {
            const float *src = b + (long)k * ldb;
            float *d = dst + (long)k * K_NC;
            if (cols == K_NC) {
                *(kvf *)d = *(const kvf_unaligned *)src;
                *(kvf *)(d + KW) = *(const kvf_unaligned *)(src + KW);
                continue;
            }
            int j = 0;
            for (; j < cols; j++) d[j] = src[j];
            for (; j < K_NC; j++) d[j] = 0.0f;
        }
        return;
    }
    k_sgemm_transpose(dst, K_NC, b, ldb, cols, kc);
}

/* C rows [0, mr) x columns [0, nc) = alpha * (op(A) . bp) + beta * C; beta
 * == 0 never reads C (it may hold anything). op(A)'s (r, k) is a[r * a_rs +
 * k * a_cs], read where it lies (unpacked): a_rs == 1 (A^T stored k-major)
 * or a_cs == 1 (A row-major); the caller's inline constant for the one that
 * is 1 lets each row's broadcast be a fixed offset. mr is a compile-time
 * constant (k_sgemm_tile's switch), so the accumulators stay in registers. */
static inline __attribute__((always_inline)) void k_sgemm_tile_rows(const int mr, float *c, long ldc, int nc,
                                                                    const float *a, long a_rs, long a_cs,
                                                                    const float *bp, long kc, float alpha,
                                                                    float beta) {
    kvf acc[KERN_SG_MR][2];
#pragma GCC unroll 16
    for (int r = 0; r < mr; r++) acc[r][0] = acc[r][1] = (kvf){0};
    for (long k = 0; k < kc; k++) {
        kvf b0 = *(const kvf *)(bp + k * K_NC), b1 = *(const kvf *)(bp + k * K_NC + KW);
        const float *ak = a + k * a_cs;
#pragma GCC unroll 16
        for (int r = 0; r < mr; r++) {
            kvf av = KV_SET1(ak[r * a_rs]);
            acc[r][0] = KV_FMA(av, b0, acc[r][0]);
            acc[r][1] = KV_FMA(av, b1, acc[r][1]);
        }
    }
    kvf va = KV_SET1(alpha), vb = KV_SET1(beta);
    for (int r = 0; r < mr; r++) {
        float *out = c + (long)r * ldc;
        kvf t0 = acc[r][0] * va, t1 = acc[r][1] * va;
        if (nc == K_NC) {
            if (beta != 0.0f) {
                t0 = KV_FMA(vb, *(kvf_unaligned *)out, t0);
                t1 = KV_FMA(vb, *(kvf_unaligned *)(out + KW), t1);
            }
            *(kvf_unaligned *)out = t0;
            *(kvf_unaligned *)(out + KW) = t1;
            continue;
        }
        float t[K_NC];
        memcpy(t, &t0, sizeof t0);
        memcpy(t + KW, &t1, sizeof t1);
        if (beta != 0.0f)
            for (int j = 0; j < nc; j++) t[j] += beta * out[j];
        memcpy(out, t, sizeof(float) * (size_t)nc);
    }
}

static void k_sgemm_tile(float *c, long ldc, int mr, int nc, const float *a, long a_rs, long a_cs,
                         const float *bp, long kc, float alpha, float beta) {
    if (a_rs == 1) K_SWITCH_ROWS(mr, KERN_SG_MR, k_sgemm_tile_rows, c, ldc, nc, a, 1, a_cs, bp, kc, alpha, beta)
    else K_SWITCH_ROWS(mr, KERN_SG_MR, k_sgemm_tile_rows, c, ldc, nc, a, a_rs, 1, bp, kc, alpha, beta)
}

/* ---- recurrent cells (nn/lstm.c, nn/gru.c) ---- */

static void k_sigmoid(float *y, const float *x, long n) {
    #pragma omp simd
    for (long i = 0; i < n; i++) y[i] = fast_sigmoidf(x[i]);
}

static void k_tanh(float *y, const float *x, long n) {
    #pragma omp simd
    for (long i = 0; i < n; i++) y[i] = fast_tanhf(x[i]);
}

/* The LSTM cell of one element given the pre-activations; cp the previous cell. */
static inline void k_lstm_elem(float *g, float *c, float *h, float cp, int H, int j) {
    float i = fast_sigmoidf(g[j]), f = fast_sigmoidf(g[H + j]);
    float gg = fast_tanhf(g[2 * H + j]), o = fast_sigmoidf(g[3 * H + j]);
    float cj = i * gg + f * cp;
    g[j] = i; g[H + j] = f; g[2 * H + j] = gg; g[3 * H + j] = o;
    c[j] = cj;
    h[j] = o * fast_tanhf(cj);
}

/* Separate loops for the NULL cases, so that the simd loops have no branch and
 * the first step adds nothing (c = i g exactly, as the scalar loop had it). */
static void k_lstm_cell(float *g, float *c, float *h, const float *cp, const float *b, const float *r, int H) {
    if (r) {
        #pragma omp simd
        for (int j = 0; j < 4 * H; j++) g[j] += b[j] + r[j];
    } else {
        #pragma omp simd
        for (int j = 0; j < 4 * H; j++) g[j] += b[j];
    }
    if (cp) {
        #pragma omp simd
        for (int j = 0; j < H; j++) k_lstm_elem(g, c, h, cp[j], H, j);
    } else {
        #pragma omp simd
        for (int j = 0; j < H; j++) {
            float i = fast_sigmoidf(g[j]), f = fast_sigmoidf(g[H + j]);
            float gg = fast_tanhf(g[2 * H + j]), o = fast_sigmoidf(g[3 * H + j]);
            float cj = i * gg;
            g[j] = i; g[H + j] = f; g[2 * H + j] = gg; g[3 * H + j] = o;
            c[j] = cj;
            h[j] = o * fast_tanhf(cj);
        }
    }
}

/* The GRU cell of one element; rr, rz, rn the recurrent parts (0 at step 0). */
static inline float k_gru_elem(float *g, float *hn, const float *b, float rr, float rz, float rn, int H, int j) {
    float rg = fast_sigmoidf(g[j] + b[j] + rr);
    float zg = fast_sigmoidf(g[H + j] + b[H + j] + rz);
    float hnj = b[2 * H + j] + rn;
    float ng = fast_tanhf(g[2 * H + j] + rg * hnj);
    g[j] = rg; g[H + j] = zg; g[2 * H + j] = ng;
    hn[j] = hnj;
    return zg;
}

static void k_gru_cell(float *g, float *hn, float *h, const float *hp, const float *b, const float *r, int H) {
    if (r && hp) {
        #pragma omp simd
        for (int j = 0; j < H; j++) {
            float zg = k_gru_elem(g, hn, b, r[j], r[H + j], r[2 * H + j], H, j);
            h[j] = (1.0f - zg) * g[2 * H + j] + zg * hp[j];
        }
    } else {   /* the first step: no recurrent part, no previous h */
        #pragma omp simd
        for (int j = 0; j < H; j++) {
            float zg = k_gru_elem(g, hn, b, 0.0f, 0.0f, 0.0f, H, j);
            h[j] = (1.0f - zg) * g[2 * H + j];
        }
    }
}

const ElemKernels KERN_OPS = {
    .name = KERN_NAME,
    .softmax_row = k_softmax_row,
    .layernorm_row = k_layernorm_row,
    .layernorm_backward_row = k_layernorm_backward_row,
    .add = k_add,
    .add_rows = k_add_rows,
    .masked_scale = k_masked_scale,
    .masked_scale_add = k_masked_scale_add,
    .bias_gelu = k_bias_gelu,
    .gelu_backward_inplace = k_gelu_backward_inplace,
    .softmax_backward_row = k_softmax_backward_row,
    .xent_row = k_xent_row,
    .exp_sum = k_exp_sum,
    .adamw = k_adamw,
    .sumsq = k_sumsq,
    .scale = k_scale,
    .sigmoid = k_sigmoid,
    .tanh = k_tanh,
    .lstm_cell = k_lstm_cell,
    .gru_cell = k_gru_cell,
    .sgemm_mr = KERN_SG_MR,
    .sgemm_nr = K_NC,
    .sgemm_pack_a = k_sgemm_pack_a,
    .sgemm_pack_b = k_sgemm_pack_b,
    .sgemm_tile = k_sgemm_tile,
};
