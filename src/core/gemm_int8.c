/* gemm_int8.c — int8 inference GEMMs (see gemm_int8.h for the numbers).
 *
 * x is quantized once per product, row block by row block as the tiles need
 * it (the same bytes whichever kernel runs: the AVX-512 and the C quantizer
 * do the same IEEE operations), rows padded with zeros to a
 * multiple of 4 k. W is packed once as [panel][group of 4 k][32 columns][4 k]:
 * one group of a panel is 128 bytes, two zmm (vpdpbusd sums 4 adjacent u8 x s8
 * products per 32-bit lane) or four ymm (vpmaddubsw pairs them into int16,
 * vpmaddwd with ones pairs those into int32: the same four products). The
 * tile kernels keep an MR x 32 block of int32 sums in registers, broadcast
 * 4 bytes of a row of x per group, and end in the epilogue that turns sums
 * into floats (gi_epilogue_*: the same IEEE operations in the same order).
 * One parallel region per product: each thread takes its own row blocks, or
 * with few rows (single sentences) its own panels. */
#include "core/gemm_int8.h"

#include <immintrin.h>
#include <math.h>
#include <omp.h>
#include <string.h>

#include "core/common.h"
#include "core/fastmath.h"
#include "core/kernels.h"
#include "core/thread_scratch.h"

enum { GI_NR = 32, GI_MR = 12, GI_MR_AVX2 = 4, GI_MC = 24, GI_MAX_K = 133000 };
typedef enum { GI_PORTABLE, GI_AVX2, GI_VNNI } GiKernel;
static const char *const GI_NAMES[] = {"portable", "avx2", "vnni"};

static GiKernel gi_kernel(void) {
    KernLevel l = kernels_level();
    __builtin_cpu_init();
    if (l >= KERN_AVX512 && __builtin_cpu_supports("avx512vnni")) return GI_VNNI;
    return l >= KERN_AVX2 ? GI_AVX2 : GI_PORTABLE;
}

const char *gemm_int8_kernel(void) { return GI_NAMES[gi_kernel()]; }

/* ---- weights ---- */

int int8_quantize_rows(int8_t *q, float *scale, const float *W, int N, int K) {
    for (int n = 0; n < N; n++) {
        const float *row = W + (long)n * K;
        float mx = 0.0f;
        for (int k = 0; k < K; k++) {
            if (!isfinite(row[k])) return -1;
            mx = fmaxf(mx, fabsf(row[k]));
        }
        /* A row of zeros: q 0 with scale 1, so that every scale is positive
         * (a zero scale in a checkpoint is damage, int8_weights_pack). */
        float s = mx > 0.0f ? mx / 127.0f : 1.0f, inv = mx > 0.0f ? 127.0f / mx : 0.0f;
        scale[n] = s;
        for (int k = 0; k < K; k++) {
            float v = rintf(row[k] * inv);
            q[(long)n * K + k] = (int8_t)(v > 127.0f ? 127 : v < -127.0f ? -127 : (int)v);
        }
    }
    return 0;
}

int int8_weights_pack(Int8Weights *p, const int8_t *q, const float *scale, int N, int K, const char **why) {
    memset(p, 0, sizeof *p);
    if (K >= GI_MAX_K) return *why = "too many inputs for int32 sums (K >= 133000)", -1;
    for (int n = 0; n < N; n++)
        if (!isfinite(scale[n]) || scale[n] <= 0.0f) return *why = "a scale is NaN, infinite, zero or negative", -1;
    for (long i = 0; i < (long)N * K; i++)
        if (q[i] == -128) return *why = "a weight is -128 (int8 weights are in [-127, 127])", -1;
    p->N = N;
    p->K = K;
    p->groups = (K + 3) / 4;
    p->panels = (N + GI_NR - 1) / GI_NR;
    size_t cols = (size_t)p->panels * GI_NR;
    p->data = xaligned_alloc((size_t)p->panels * (size_t)p->groups * GI_NR * 4 + 64);
    p->colsum = xaligned_alloc(sizeof(int32_t) * cols);
    p->scale = xaligned_alloc(sizeof(float) * cols);
    for (size_t j = 0; j < cols; j++) {
        int n = (int)j;
        int32_t s = 0;
        for (int k = 0; n < N && k < K; k++) s += q[(long)n * K + k];
        p->colsum[j] = s;
        p->scale[j] = n < N ? scale[n] : 0.0f;
    }
    for (int pn = 0; pn < p->panels; pn++)
        for (int g = 0; g < p->groups; g++)
            for (int j = 0; j < GI_NR; j++)
                for (int b = 0; b < 4; b++) {
                    int n = pn * GI_NR + j, k = 4 * g + b;
                    p->data[(((long)pn * p->groups + g) * GI_NR + j) * 4 + b] =
                        n < N && k < K ? q[(long)n * K + k] : 0;
                }
    return 0;
}

int int8_weights_quantize(Int8Weights *p, const float *W, int N, int K) {
    int8_t *q = xmalloc((size_t)N * (size_t)K + 1);
    float *s = xmalloc(sizeof(float) * ((size_t)N + 1));
    const char *why = NULL;
    int rc = int8_quantize_rows(q, s, W, N, K) == 0 ? int8_weights_pack(p, q, s, N, K, &why) : -1;
    free(q);
    free(s);
    return rc;
}

int int8_weights_set_smoothing(Int8Weights *p, const float *s, const char **why) {
    for (int k = 0; k < p->K; k++)
        if (!isfinite(s[k]) || s[k] <= 0.0f || !isfinite(1.0f / s[k])) return *why = "a smoothing factor is NaN, infinite, zero or negative", -1;
    free(p->x_mul);
    p->x_mul = xmalloc(sizeof(float) * ((size_t)p->K + 1));
    for (int k = 0; k < p->K; k++) p->x_mul[k] = 1.0f / s[k];
    return 0;
}

int int8_weights_quantize_smoothed(Int8Weights *p, const float *W, const float *s, int N, int K) {
    float *Ws = xmalloc(sizeof(float) * ((size_t)N * (size_t)K + 1));
    for (long n = 0; n < N; n++)
        for (long k = 0; k < K; k++) Ws[n * K + k] = W[n * K + k] * s[k];
    const char *why = NULL;
    int rc = int8_weights_quantize(p, Ws, N, K);
    free(Ws);
    if (rc == 0 && int8_weights_set_smoothing(p, s, &why) != 0) {
        int8_weights_free(p);
        rc = -1;
    }
    return rc;
}

int int8_weights_rows(const Int8Weights *w, int n0, int n1, Int8Weights *v) {
    if (n0 % GI_NR != 0 || n0 < 0 || n1 < n0 || n1 > w->N) return -1;
    *v = *w;
    v->N = n1 - n0;
    v->panels = (v->N + GI_NR - 1) / GI_NR;   /* the last may reach past n1: its columns are not written */
    v->data = w->data + (long)(n0 / GI_NR) * w->groups * GI_NR * 4;
    v->colsum = w->colsum + n0;
    v->scale = w->scale + n0;
    return 0;
}

void int8_weights_free(Int8Weights *p) {
    free(p->data);
    free(p->colsum);
    free(p->scale);
    free(p->x_mul);
    memset(p, 0, sizeof *p);
}

/* ---- activations: 7-bit, per row, with a zero point ---- */

/* x[k], smoothed: one IEEE product, the same in every quantizer. */
static inline float gi_in(const float *row, const float *mul, int k) { return mul ? row[k] * mul[k] : row[k]; }

/* One row x (K), times mul (K, or NULL) -> dst (lda bytes) u8 in [0, 127],
 * zero padding past K; its zero point and scale. A row with a NaN or infinity
 * gets scale NaN (its outputs are NaN) and q 0. */
static void gi_quantize_row(uint8_t *dst, int32_t *z, float *sx, const float *row, const float *mul, int K, long lda) {
    float lo = 0.0f, hi = 0.0f;
    int finite = 1;
    for (int k = 0; k < K; k++) {
        float v = gi_in(row, mul, k);
        lo = fminf(lo, v);
        hi = fmaxf(hi, v);
        finite &= isfinite(v) != 0;
    }
    memset(dst, 0, (size_t)lda);
    float range = hi - lo;
    if (!finite) {
        *z = 0;
        *sx = NAN;
        return;
    }
    float inv = range > 0.0f ? 127.0f / range : 0.0f;
    float zf = rintf(-lo * inv);
    int zp = zf > 127.0f ? 127 : (int)zf;
    *z = zp;
    *sx = range / 127.0f;
    for (int k = 0; k < K; k++) {
        float v = rintf(gi_in(row, mul, k) * inv) + (float)zp;
        dst[k] = (uint8_t)(v < 0.0f ? 0.0f : v > 127.0f ? 127.0f : v);
    }
}

#define GI_AVX512_TARGET __attribute__((target("avx512f,avx512bw,avx512vl")))

/* The same with AVX-512, the same operations (min and max are exact in any
 * order; the product, rounding, sum and clamps are single IEEE operations):
 * the same bytes, which the kernel tests compare. A scalar loop here cost a
 * 4096-row product more time than its multiply-adds. */
static GI_AVX512_TARGET __m512 gi_in16(const float *row, const float *mul, int k, __mmask16 m) {
    __m512 v = _mm512_maskz_loadu_ps(m, row + k);
    return mul ? _mm512_mul_ps(v, _mm512_maskz_loadu_ps(m, mul + k)) : v;
}

static GI_AVX512_TARGET void gi_quantize_row_avx512(uint8_t *dst, int32_t *z, float *sx, const float *row,
                                                    const float *mul, int K, long lda) {
    __m512 lo = _mm512_setzero_ps(), hi = _mm512_setzero_ps(), bad = _mm512_setzero_ps(), zero = _mm512_setzero_ps();
    for (int k = 0; k < K; k += 16) {
        __mmask16 m = K - k >= 16 ? 0xffff : (__mmask16)((1u << (K - k)) - 1u);
        __m512 v = gi_in16(row, mul, k, m);
        lo = _mm512_min_ps(lo, v);
        hi = _mm512_max_ps(hi, v);
        bad = _mm512_add_ps(bad, _mm512_mul_ps(v, zero));   /* NaN once any element is NaN or infinite */
    }
    memset(dst, 0, (size_t)lda);
    float l = _mm512_reduce_min_ps(lo), h = _mm512_reduce_max_ps(hi), range = h - l;
    if (_mm512_reduce_add_ps(bad) != 0.0f) {   /* NaN */
        *z = 0;
        *sx = NAN;
        return;
    }
    float inv = range > 0.0f ? 127.0f / range : 0.0f;
    float zf = rintf(-l * inv);
    int zp = zf > 127.0f ? 127 : (int)zf;
    *z = zp;
    *sx = range / 127.0f;
    __m512 vinv = _mm512_set1_ps(inv), vz = _mm512_set1_ps((float)zp), top = _mm512_set1_ps(127.0f);
    for (int k = 0; k < K; k += 16) {
        __mmask16 m = K - k >= 16 ? 0xffff : (__mmask16)((1u << (K - k)) - 1u);
        __m512 v = _mm512_roundscale_ps(_mm512_mul_ps(gi_in16(row, mul, k, m), vinv),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        v = _mm512_min_ps(_mm512_max_ps(_mm512_add_ps(v, vz), zero), top);
        _mm_mask_storeu_epi8(dst + k, m, _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(v)));
    }
}

/* Rows [m0, m1) of x (M, K), times mul (K, or NULL) -> xq (M, lda), z, sx (M). */
static void gi_quantize(uint8_t *xq, int32_t *z, float *sx, const float *x, const float *mul, int m0, int m1, int K,
                        long lda) {
    int wide = gi_kernel() == GI_VNNI;
    for (int m = m0; m < m1; m++) {
        if (wide) gi_quantize_row_avx512(xq + (long)m * lda, z + m, sx + m, x + (long)m * K, mul, K, lda);
        else gi_quantize_row(xq + (long)m * lda, z + m, sx + m, x + (long)m * K, mul, K, lda);
    }
}

/* ---- the tile: what every kernel shares ---- */

typedef struct {
    float *y;               /* the tile's first output, or NULL with raw */
    int32_t *raw;           /* gemm_int8_sums: the sums themselves, no epilogue */
    long ldy;
    int ncols;              /* <= 32 */
    const int32_t *z;       /* the tile's rows' zero points and scales */
    const float *sx;
    const int32_t *colsum;  /* the panel's */
    const float *sw;
    const float *bias;      /* the panel's, or NULL */
    const float *res;       /* the tile's first residual (stride ldy, added last), or NULL; never with gelu */
    int gelu;
} GiOut;

/* One shared GELU for every kernel: the same bits whichever kernel ran. */
static void gi_gelu(float *y, long ldy, int mr, int ncols) {
    for (int r = 0; r < mr; r++)
        for (int j = 0; j < ncols; j++) y[r * ldy + j] *= normal_cdf(y[r * ldy + j]);
}

/* Sums s (mr x 32, row stride 32) -> the outputs (or raw sums). */
static void gi_epilogue_c(const int32_t *s, int mr, const GiOut *o) {
    for (int r = 0; r < mr; r++) {
        if (o->raw) {
            memcpy(o->raw + r * o->ldy, s + r * GI_NR, sizeof(int32_t) * (size_t)o->ncols);
            continue;
        }
        float *out = o->y + r * o->ldy;
        for (int j = 0; j < o->ncols; j++) {
            float scale = o->sx[r] * o->sw[j];
            float f = (float)(s[r * GI_NR + j] - o->z[r] * o->colsum[j]);
            f = f * scale;
            float v = f + (o->bias ? o->bias[j] : 0.0f);
            out[j] = o->res ? v + o->res[r * o->ldy + j] : v;
        }
    }
    if (o->y && o->gelu) gi_gelu(o->y, o->ldy, mr, o->ncols);
}

/* ---- portable ---- */

static void gi_tile_portable(int mr, const uint8_t *a, long lda, const int8_t *bp, int groups, const GiOut *o) {
    int32_t s[GI_MR * GI_NR];
    for (int r = 0; r < mr; r++)
        for (int j = 0; j < GI_NR; j++) {
            int32_t acc = 0;
            for (int g = 0; g < groups; g++)
                for (int b = 0; b < 4; b++)
                    acc += (int32_t)a[r * lda + 4 * g + b] * (int32_t)bp[((long)g * GI_NR + j) * 4 + b];
            s[r * GI_NR + j] = acc;
        }
    gi_epilogue_c(s, mr, o);
}

/* ---- AVX2: vpmaddubsw (u8 x s8 pairs -> int16, exact for 7-bit x) + vpmaddwd ---- */

#define GI_AVX2_TARGET __attribute__((target("avx2")))

static inline __attribute__((always_inline)) GI_AVX2_TARGET void gi_avx2_rows(const int mr, const uint8_t *a,
                                                                              long lda, const int8_t *bp,
                                                                              int groups, int32_t *s) {
    const __m256i ones = _mm256_set1_epi16(1);
    for (int h = 0; h < 2; h++) {   /* columns [16h, 16h + 16) */
        __m256i acc[GI_MR_AVX2][2];
#pragma GCC unroll 4
        for (int r = 0; r < GI_MR_AVX2; r++) acc[r][0] = acc[r][1] = _mm256_setzero_si256();
        for (int g = 0; g < groups; g++) {
            const int8_t *b = bp + (long)g * GI_NR * 4 + h * 64;
            __m256i b0 = _mm256_loadu_si256((const __m256i *)b), b1 = _mm256_loadu_si256((const __m256i *)(b + 32));
#pragma GCC unroll 4
            for (int r = 0; r < mr; r++) {
                int32_t four;
                memcpy(&four, a + r * lda + 4 * g, 4);
                __m256i av = _mm256_set1_epi32(four);
                acc[r][0] = _mm256_add_epi32(acc[r][0], _mm256_madd_epi16(_mm256_maddubs_epi16(av, b0), ones));
                acc[r][1] = _mm256_add_epi32(acc[r][1], _mm256_madd_epi16(_mm256_maddubs_epi16(av, b1), ones));
            }
        }
        for (int r = 0; r < mr; r++) {
            _mm256_storeu_si256((__m256i *)(s + r * GI_NR + 16 * h), acc[r][0]);
            _mm256_storeu_si256((__m256i *)(s + r * GI_NR + 16 * h + 8), acc[r][1]);
        }
    }
}

static GI_AVX2_TARGET void gi_tile_avx2(int mr, const uint8_t *a, long lda, const int8_t *bp, int groups,
                                        const GiOut *o) {
    int32_t s[GI_MR_AVX2 * GI_NR];
    switch (mr) {
    case 1: gi_avx2_rows(1, a, lda, bp, groups, s); break;
    case 2: gi_avx2_rows(2, a, lda, bp, groups, s); break;
    case 3: gi_avx2_rows(3, a, lda, bp, groups, s); break;
    case 4: gi_avx2_rows(4, a, lda, bp, groups, s); break;
    default: DIE("int8 avx2 tile of %d rows", mr);
    }
    gi_epilogue_c(s, mr, o);
}

/* ---- AVX512-VNNI: vpdpbusd, the epilogue in registers ---- */

#define GI_VNNI_TARGET __attribute__((target("avx512f,avx512bw,avx512vnni")))

/* GELU, v Phi(v), on 16 lanes: core/fastmath.h's normal_cdf and fast_expf
 * operation for operation (the same IEEE results as gi_gelu's scalar calls,
 * which the kernel tests compare), since a scalar GELU per output cost the
 * FFN's first product more than its multiply-adds. max/min take the constant
 * first so that a NaN passes through as in the scalar comparisons. */
static inline __attribute__((always_inline)) GI_VNNI_TARGET __m512 gi_gelu16(__m512 x) {
    const __m512 zero = _mm512_setzero_ps();
    __m512 z = _mm512_mul_ps(_mm512_abs_ps(x), _mm512_set1_ps(0.70710678118654752f));
    __m512 t = _mm512_div_ps(_mm512_set1_ps(1.0f), _mm512_add_ps(_mm512_set1_ps(1.0f), _mm512_mul_ps(_mm512_set1_ps(0.5f), z)));
    static const float C[10] = {0.17087277f, -0.82215223f, 1.48851587f, -1.13520398f, 0.27886807f,
                                -0.18628806f, 0.09678418f, 0.37409196f, 1.00002368f, -1.26551223f};
    __m512 p = _mm512_set1_ps(C[0]);
    for (int i = 1; i < 10; i++) {   /* p * t - c is p * t + (-c): the same rounding */
        p = _mm512_add_ps(_mm512_mul_ps(p, t), _mm512_set1_ps(C[i]));
    }
    __m512 e = _mm512_sub_ps(p, _mm512_mul_ps(_mm512_set1_ps(0.5f), _mm512_mul_ps(x, x)));
    /* fast_expf(e) */
    e = _mm512_max_ps(_mm512_set1_ps(-87.0f), e);
    e = _mm512_min_ps(_mm512_set1_ps(88.0f), e);
    __m512 k = _mm512_roundscale_ps(_mm512_mul_ps(e, _mm512_set1_ps(1.44269504088896341f)),
                                    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_sub_ps(e, _mm512_mul_ps(k, _mm512_set1_ps(0.693359375f)));
    r = _mm512_add_ps(r, _mm512_mul_ps(k, _mm512_set1_ps(2.12194440e-4f)));
    __m512 q = _mm512_set1_ps(1.9875691500e-4f);
    q = _mm512_add_ps(_mm512_mul_ps(q, r), _mm512_set1_ps(1.3981999507e-3f));
    q = _mm512_add_ps(_mm512_mul_ps(q, r), _mm512_set1_ps(8.3334519073e-3f));
    q = _mm512_add_ps(_mm512_mul_ps(q, r), _mm512_set1_ps(4.1665795894e-2f));
    q = _mm512_add_ps(_mm512_mul_ps(q, r), _mm512_set1_ps(1.6666665459e-1f));
    q = _mm512_add_ps(_mm512_mul_ps(q, r), _mm512_set1_ps(5.0000001201e-1f));
    q = _mm512_add_ps(_mm512_add_ps(_mm512_mul_ps(q, _mm512_mul_ps(r, r)), r), _mm512_set1_ps(1.0f));
    __m512i two_k = _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvttps_epi32(k), _mm512_set1_epi32(127)), 23);
    __m512 ex = _mm512_mul_ps(q, _mm512_castsi512_ps(two_k));
    __m512 half = _mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(0.5f), t), ex);
    __mmask16 neg = _mm512_cmp_ps_mask(x, zero, _CMP_LT_OQ);
    __m512 cdf = _mm512_mask_blend_ps(neg, _mm512_sub_ps(_mm512_set1_ps(1.0f), half), half);
    return _mm512_mul_ps(x, cdf);
}

/* The sums of rows [0, mr) against a panel, in 24 named registers: with an
 * array of accumulators GCC 12 kept a copy of each in memory and moved them
 * between registers every group (a third of the throughput this loop has). */
#define GI_ACC_DECL(r) __m512i c##r##a = _mm512_setzero_si512(), c##r##b = _mm512_setzero_si512();
#define GI_ACC_STEP(r)                                         \
    if (mr > r) {                                              \
        int32_t four;                                          \
        memcpy(&four, a + r * lda + 4 * g, 4);                 \
        __m512i av = _mm512_set1_epi32(four);                  \
        c##r##a = _mm512_dpbusd_epi32(c##r##a, av, b0);        \
        c##r##b = _mm512_dpbusd_epi32(c##r##b, av, b1);        \
    }
#define GI_ACC_SAVE(r) \
    if (mr > r) {      \
        acc[r][0] = c##r##a; \
        acc[r][1] = c##r##b; \
    }
#define GI_ROWS_12(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)

static inline __attribute__((always_inline)) GI_VNNI_TARGET void gi_vnni_sums(const int mr, const uint8_t *a,
                                                                              long lda, const int8_t *bp,
                                                                              int groups, __m512i acc[GI_MR][2]) {
    GI_ROWS_12(GI_ACC_DECL)
    for (int g = 0; g < groups; g++) {
        __m512i b0 = _mm512_loadu_si512(bp + (long)g * GI_NR * 4), b1 = _mm512_loadu_si512(bp + (long)g * GI_NR * 4 + 64);
        GI_ROWS_12(GI_ACC_STEP)
    }
    GI_ROWS_12(GI_ACC_SAVE)
}

static inline __attribute__((always_inline)) GI_VNNI_TARGET void gi_vnni_rows(const int mr, const uint8_t *a,
                                                                              long lda, const int8_t *bp,
                                                                              int groups, const GiOut *o) {
    __m512i acc[GI_MR][2];
    gi_vnni_sums(mr, a, lda, bp, groups, acc);
    int nc = o->ncols;
    __mmask16 k0 = nc >= 16 ? 0xffff : (__mmask16)((1u << nc) - 1u);
    __mmask16 k1 = nc >= 32 ? 0xffff : nc <= 16 ? 0 : (__mmask16)((1u << (nc - 16)) - 1u);
    if (o->raw) {
        for (int r = 0; r < mr; r++) {
            _mm512_mask_storeu_epi32(o->raw + r * o->ldy, k0, acc[r][0]);
            _mm512_mask_storeu_epi32(o->raw + r * o->ldy + 16, k1, acc[r][1]);
        }
        return;
    }
    __m512i cs0 = _mm512_loadu_si512(o->colsum), cs1 = _mm512_loadu_si512(o->colsum + 16);
    __m512 sw0 = _mm512_loadu_ps(o->sw), sw1 = _mm512_loadu_ps(o->sw + 16);
    __m512 bi0 = o->bias ? _mm512_maskz_loadu_ps(k0, o->bias) : _mm512_setzero_ps();
    __m512 bi1 = o->bias ? _mm512_maskz_loadu_ps(k1, o->bias + 16) : _mm512_setzero_ps();
#pragma GCC unroll 12
    for (int r = 0; r < mr; r++) {
        __m512i zr = _mm512_set1_epi32(o->z[r]);
        __m512 sr = _mm512_set1_ps(o->sx[r]);
        /* as gi_epilogue_c: (float)(sum - z colsum) * (sx sw) + bias, one rounding each */
        __m512 f0 = _mm512_cvtepi32_ps(_mm512_sub_epi32(acc[r][0], _mm512_mullo_epi32(zr, cs0)));
        __m512 f1 = _mm512_cvtepi32_ps(_mm512_sub_epi32(acc[r][1], _mm512_mullo_epi32(zr, cs1)));
        f0 = _mm512_add_ps(_mm512_mul_ps(f0, _mm512_mul_ps(sr, sw0)), bi0);
        f1 = _mm512_add_ps(_mm512_mul_ps(f1, _mm512_mul_ps(sr, sw1)), bi1);
        if (o->gelu) {
            f0 = gi_gelu16(f0);
            f1 = gi_gelu16(f1);
        }
        if (o->res) {
            f0 = _mm512_add_ps(f0, _mm512_maskz_loadu_ps(k0, o->res + r * o->ldy));
            f1 = _mm512_add_ps(f1, _mm512_maskz_loadu_ps(k1, o->res + r * o->ldy + 16));
        }
        _mm512_mask_storeu_ps(o->y + r * o->ldy, k0, f0);
        _mm512_mask_storeu_ps(o->y + r * o->ldy + 16, k1, f1);
    }
}

static GI_VNNI_TARGET void gi_tile_vnni(int mr, const uint8_t *a, long lda, const int8_t *bp, int groups,
                                        const GiOut *o) {
    switch (mr) {
#define GI_CASE(R) \
    case R: gi_vnni_rows(R, a, lda, bp, groups, o); break;
        GI_CASE(1) GI_CASE(2) GI_CASE(3) GI_CASE(4) GI_CASE(5) GI_CASE(6)
        GI_CASE(7) GI_CASE(8) GI_CASE(9) GI_CASE(10) GI_CASE(11) GI_CASE(12)
#undef GI_CASE
    default: DIE("int8 tile of %d rows", mr);
    }
}

/* ---- the driver ---- */

typedef void (*GiTile)(int mr, const uint8_t *a, long lda, const int8_t *bp, int groups, const GiOut *o);

typedef struct {
    const uint8_t *xq;
    long lda;
    const int32_t *z;
    const float *sx;
    const float *x;   /* the fp32 rows (M, K) still to quantize into xq, z, sx; NULL: done */
} GiRows;

static float *gi_scratch(size_t n);

/* y (or raw) rows [0, M) over every panel of w, one parallel region. */
static void gi_drive(const GiRows *x, int M, const Int8Weights *w, float *y, int32_t *raw, const float *bias,
                     int gelu, const float *res, Int8Acts *next) {
    GiKernel kind = gi_kernel();
    GiTile tile = kind == GI_VNNI ? gi_tile_vnni : kind == GI_AVX2 ? gi_tile_avx2 : gi_tile_portable;
    int mr_max = kind == GI_AVX2 ? GI_MR_AVX2 : GI_MR, N = w->N;
    int team = omp_in_parallel() || (long)M * N * w->K < (1L << 18) ? 1 : omp_get_max_threads();
    int blocks = (M + mr_max - 1) / mr_max, by_rows = blocks >= 2 * team;
    /* Split by rows, each thread quantizes its own row block just before its
     * tiles read it (x is still in cache); split by panels, every thread
     * needs every row: quantized first. */
    if (x->x && !by_rows) {
        #pragma omp parallel for num_threads(team)
        for (int m = 0; m < M; m++)
            gi_quantize((uint8_t *)x->xq, (int32_t *)x->z, (float *)x->sx, x->x, w->x_mul, m, m + 1, w->K, x->lda);
    }
    /* With next and split by rows, a thread's row block goes to its own
     * scratch (GI_MC, N), quantized into next right after its last panel. */
    float *scratch = next && by_rows ? gi_scratch((size_t)team * GI_MC * (size_t)N) : NULL;
    #pragma omp parallel num_threads(team)
    {
        int t = omp_get_thread_num(), nt = omp_get_num_threads();
        float *blk = scratch ? scratch + (long)t * GI_MC * N : NULL;
        int r_lo = 0, r_hi = M, p_lo = 0, p_hi = w->panels;
        if (by_rows) {
            r_lo = blocks * t / nt * mr_max;
            r_hi = blocks * (t + 1) / nt * mr_max;
            r_hi = r_hi < M ? r_hi : M;
        } else {
            p_lo = w->panels * t / nt;
            p_hi = w->panels * (t + 1) / nt;
        }
        for (int m0 = r_lo; m0 < r_hi; m0 += GI_MC) {
            int mc = r_hi - m0 < GI_MC ? r_hi - m0 : GI_MC;
            if (x->x && by_rows)
                gi_quantize((uint8_t *)x->xq, (int32_t *)x->z, (float *)x->sx, x->x, w->x_mul, m0, m0 + mc, w->K, x->lda);
            for (int pn = p_lo; pn < p_hi; pn++) {
                const int8_t *bp = w->data + (long)pn * w->groups * GI_NR * 4;
                int c0 = pn * GI_NR;
                for (int rb = 0; rb < mc; rb += mr_max) {
                    int m = m0 + rb;
                    GiOut o = {.y = blk ? blk + (long)rb * N + c0 : y ? y + (long)m * N + c0 : NULL, .raw = raw ? raw + (long)m * N + c0 : NULL,
                               .ldy = N, .ncols = N - c0 < GI_NR ? N - c0 : GI_NR, .z = x->z + m, .sx = x->sx + m,
                               .colsum = w->colsum + c0, .sw = w->scale + c0, .bias = bias ? bias + c0 : NULL,
                               .res = res ? res + (long)m * N + c0 : NULL, .gelu = gelu};
                    tile(mc - rb < mr_max ? mc - rb : mr_max, x->xq + (long)m * x->lda, x->lda, bp, w->groups, &o);
                }
            }
            if (blk)
                gi_quantize(next->q + (long)m0 * next->lda, next->z + m0, next->sx + m0, blk, next->x_mul, 0, mc, N,
                            next->lda);
        }
    }
    if (next && !by_rows) {
        #pragma omp parallel for num_threads(team)
        for (int m = 0; m < M; m++) gi_quantize(next->q, next->z, next->sx, y, next->x_mul, m, m + 1, N, next->lda);
    }
}

/* Room for M rows of K quantized inputs, grown to the largest seen (so that
 * the timed calls of a benchmark allocate nothing after the first). */
/* A quantized row's stride: K rounded up to whole groups of 4. */
static long gi_lda(int K) { return 4L * (K > 3 ? (K + 3) / 4 : 1); }

static void gi_acts_reserve(Int8Acts *a, int M, int K) {
    long lda = gi_lda(K);
    if ((size_t)M * (size_t)lda > a->q_cap) {
        free(a->q);
        a->q_cap = (size_t)M * (size_t)lda;
        a->q = xaligned_alloc(a->q_cap + 64);
    }
    if ((size_t)M > a->rows_cap) {
        free(a->z);
        free(a->sx);
        a->rows_cap = (size_t)M;
        a->z = xmalloc(sizeof(int32_t) * a->rows_cap);
        a->sx = xmalloc(sizeof(float) * a->rows_cap);
    }
    a->lda = lda;
    a->M = M;
    a->K = K;
}

void int8_acts_free(Int8Acts *a) {
    free(a->q);
    free(a->z);
    free(a->sx);
    memset(a, 0, sizeof *a);
}

/* The threads' output blocks of matmul_int8_quantized: the calling thread's
 * (core/thread_scratch.h), from outside parallel regions. */
static float *gi_scratch(size_t n) { return thread_scratch(SCRATCH_INT8_BLOCKS, sizeof(float) * n + 64); }

/* x quantized into the calling thread's scratch, then the product. */
static void gi_product(float *y, const float *x, const Int8Weights *w, int M, const float *bias, int gelu,
                       const float *res, Int8Acts *next) {
    long lda = gi_lda(w->K);
    GiRows rows = {.xq = thread_scratch(SCRATCH_INT8_Q, (size_t)M * (size_t)lda + 64), .lda = lda,
                   .z = thread_scratch(SCRATCH_INT8_Z, sizeof(int32_t) * (size_t)M),
                   .sx = thread_scratch(SCRATCH_INT8_SX, sizeof(float) * (size_t)M), .x = x};
    gi_drive(&rows, M, w, y, NULL, bias, gelu, res, next);
}

void matmul_int8(float *y, const float *x, const Int8Weights *w, int M, const float *bias, int gelu) {
    if (M <= 0 || w->N <= 0) return;
    gi_product(y, x, w, M, bias, gelu, NULL, NULL);
}

void matmul_int8_residual(float *y, const float *x, const Int8Weights *w, int M, const float *bias, const float *res) {
    if (M <= 0 || w->N <= 0) return;
    gi_product(y, x, w, M, bias, 0, res, NULL);
}

void matmul_int8_quantized(Int8Acts *out, float *y, const float *x, const Int8Weights *w, int M, const float *bias,
                           int gelu, const Int8Weights *next) {
    if (next->K != w->N) DIE("matmul_int8_quantized: outputs of %d columns for a product of %d inputs", w->N, next->K);
    out->x_mul = next->x_mul;
    if (M <= 0 || w->N <= 0) return;
    gi_acts_reserve(out, M, w->N);
    gi_product(y, x, w, M, bias, gelu, NULL, out);
}

void matmul_int8_acts(float *y, const Int8Acts *x, const Int8Weights *w, const float *bias, const float *res) {
    if (x->K != w->K) DIE("matmul_int8_acts: inputs of %d columns for weights of %d", x->K, w->K);
    if (x->x_mul != w->x_mul) DIE("matmul_int8_acts: inputs quantized for another product's smoothing");
    if (x->M <= 0 || w->N <= 0) return;
    GiRows rows = {.xq = x->q, .lda = x->lda, .z = x->z, .sx = x->sx};
    gi_drive(&rows, x->M, w, y, NULL, bias, 0, res, NULL);
}

void gemm_int8_sums(int32_t *s, const uint8_t *xq, int M, const Int8Weights *w) {
    if (M <= 0 || w->N <= 0) return;
    long lda = 4L * (w->groups > 0 ? w->groups : 1);
    uint8_t *a = xaligned_alloc((size_t)M * (size_t)lda + 64);
    memset(a, 0, (size_t)M * (size_t)lda);
    for (int m = 0; m < M; m++) memcpy(a + (long)m * lda, xq + (long)m * w->K, (size_t)w->K);
    int32_t *z = xcalloc((size_t)M, sizeof *z);   /* unused by the raw sums, but addressed */
    float *sx = xcalloc((size_t)M, sizeof *sx);
    GiRows rows = {.xq = a, .lda = lda, .z = z, .sx = sx};
    gi_drive(&rows, M, w, NULL, s, NULL, 0, NULL, NULL);
    free(a);
    free(z);
    free(sx);
}
