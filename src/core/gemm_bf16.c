/* gemm_bf16.c — bf16-weight inference GEMMs (see gemm_bf16.h).
 *
 * The kernel is the classic blocked GEMM (Goto/BLIS): K in blocks of KC
 * pairs, x in blocks of MC rows packed as bf16 pairs [row][KC pairs],
 * W packed once as [panel][pair][32 columns], and a micro-kernel that keeps an
 * MR x 32 tile of y in 24 zmm accumulators: per pair of k it loads two
 * 16-column vectors of W, broadcasts MR pairs of x and issues 2*MR vdpbf16ps.
 * One parallel region per product (gb_drive): each thread packs and computes
 * its own rows, or with few rows its own panels. Measured on the Zen 5 session's
 * two cores (a standalone prototype of this kernel): 610-840 GFLOP/s on BERT-small
 * shapes with 4,096 rows (OpenBLAS sgemm: 495-515), 760-850 with 32 rows
 * (sgemm 240-280).
 *
 * Only where vdpbf16ps is fast: on an Intel Xeon of family 6, model 207
 * (Emerald Rapids) it does half the multiply-adds per second of vfmadd231ps,
 * and the kernel ran at 0.6-0.85x our fp32 GEMM. There, as on CPUs without
 * AVX512-BF16, core/kernels.h's default level is below avx512bf16 and --bf16
 * runs the fp32 path (cli/cli_run.c says so). A widening path (bf16 weights
 * turned into fp32 in registers for FMAs) existed until 2026-11: at best equal
 * to the fp32 GEMM on the CPUs measured, it was never chosen, and was removed. */
#include "core/gemm_bf16.h"

#include <immintrin.h>
#include <omp.h>
#include <string.h>

#include "core/bf16_pairs.h"
#include "core/common.h"
#include "core/fastmath.h"
#include "core/half.h"
#include "core/kernels.h"
#include "core/sgemm.h"
#include "core/thread_scratch.h"

enum { GB_NR = 32, GB_MR = 12, GB_KC = 256, GB_MC = 240 };   /* GB_MC: a multiple of GB_MR */

/* Two consecutive k of one row as one 32-bit lane of vdpbf16ps: low half first. */
static uint32_t bf16_pair(float lo, float hi) {
    return (uint32_t)bf16_from_float(lo) | (uint32_t)bf16_from_float(hi) << 16;
}

int gemm_bf16_native(void) { return kernels_level() == KERN_AVX512BF16; }

int gemm_bf16_available(void) { return kernels_cpu_level() >= KERN_AVX512BF16; }

void bf16_weights_pack(Bf16Weights *p, const float *W, int N, int K) {
    /* Once here, not per product: without packed weights matmul_bf16 has nothing to run. */
    if (!gemm_bf16_available()) DIE("bf16 weights need AVX512-BF16 (callers check gemm_bf16_native)");
    p->N = N;
    p->K = K;
    p->pairs = (K + 1) / 2;
    p->panels = (N + GB_NR - 1) / GB_NR;
    p->data = xaligned_alloc(sizeof(uint32_t) * (size_t)p->panels * (size_t)p->pairs * GB_NR);
    #pragma omp parallel for if ((long)N * K > 65536)
    for (int pn = 0; pn < p->panels; pn++)
        for (int kp = 0; kp < p->pairs; kp++)
            for (int j = 0; j < GB_NR; j++) {
                int n = pn * GB_NR + j, k = 2 * kp;
                const float *row = W + (long)n * K;
                p->data[((long)pn * p->pairs + kp) * GB_NR + j] =
                    n < N ? bf16_pair(row[k], k + 1 < K ? row[k + 1] : 0.0f) : 0;
            }
}

void bf16_weights_free(Bf16Weights *p) {
    free(p->data);
    memset(p, 0, sizeof *p);
}

/* ---- K = 0: no products, only the epilogue (not a hot path) ---- */

static void matmul_bf16_empty(float *y, int M, int N, float beta, const float *bias, int gelu) {
    for (long m = 0; m < M; m++)
        for (int n = 0; n < N; n++) {
            float *out = y + m * N + n;
            float v = (beta == 0.0f ? 0.0f : beta * *out) + (bias ? bias[n] : 0.0f);
            *out = gelu ? v * normal_cdf(v) : v;
        }
}

/* ---- AVX512-BF16 path ---- */

#define GB_TARGET BF16_PAIRS_TARGET

/* What a tile does besides the product: see gb_tile. */
typedef struct {
    int first, last, gelu;
    float beta;
    const float *bias;   /* the panel's first column's bias, or NULL */
} GbEpilogue;

/* x rows [m0, m0 + mc) x pairs [kp0, kp0 + kc) -> ap[row block][row][GB_KC pairs],
 * each row's pairs contiguous at a fixed stride, so the micro-kernel reaches
 * row r's pair kp at a constant offset r * GB_KC from one pointer. Rows past mc
 * are never read (their tile rows are not computed). core/bf16_pairs.h rounds
 * 32 floats at a time into 16 pairs in memory order, reading nothing past K and
 * padding an odd K with zero. (A call per element, as bf16_pair does, cost a
 * fifth of a forward.) */
static GB_TARGET void gb_pack_x(uint32_t *ap, const float *x, int K, int m0, int mc, int kp0, int kc) {
    int k0 = 2 * kp0, nk = K - k0 < 2 * kc ? K - k0 : 2 * kc;
    for (int row = 0; row < mc; row++) {
        uint32_t *dst = ap + (long)row * GB_KC;   /* = [row / MR][row % MR][0] */
        const float *src = x + (long)(m0 + row) * K + k0;
        for (int i = 0; i < nk; i += 32)
            _mm512_mask_storeu_epi32(dst + i / 2, bf16_lanes((nk - i + 1) / 2), bf16_pairs_adjacent(src + i, nk - i));
    }
}

/* y tile (mr rows, ncols <= 32 columns) (+)= ap . bp over kc pairs. `first`:
 * the first K block, where y is scaled by beta (and the bias added) instead of
 * accumulated; `last`: the last one, after which GELU is applied (gelu set). */
static inline __attribute__((always_inline)) GB_TARGET void gb_tile(int mr, const uint32_t *ap, const uint32_t *bp,
                                                                   int kc, float *y, long ldy, int ncols,
                                                                   const GbEpilogue *e) {
    /* The row loops must be unrolled completely, or the accumulators live in
     * memory: -O2 does not (measured: 250-330 instead of 610-840 GFLOP/s). */
    __m512 acc[GB_MR][2];
#pragma GCC unroll 12
    for (int r = 0; r < GB_MR; r++) acc[r][0] = acc[r][1] = _mm512_setzero_ps();
    for (int kp = 0; kp < kc; kp++) {
        __m512bh b0 = (__m512bh)_mm512_load_si512(bp + (long)kp * GB_NR);
        __m512bh b1 = (__m512bh)_mm512_load_si512(bp + (long)kp * GB_NR + 16);
#pragma GCC unroll 12
        for (int r = 0; r < mr; r++) {
            __m512bh a = (__m512bh)_mm512_set1_epi32((int)ap[r * GB_KC + kp]);
            acc[r][0] = _mm512_dpbf16_ps(acc[r][0], a, b0);
            acc[r][1] = _mm512_dpbf16_ps(acc[r][1], a, b1);
        }
    }
    __mmask16 k0 = ncols >= 16 ? 0xffff : (__mmask16)((1u << ncols) - 1u);
    __mmask16 k1 = ncols >= 32 ? 0xffff : ncols <= 16 ? 0 : (__mmask16)((1u << (ncols - 16)) - 1u);
    int load = !e->first || e->beta != 0.0f;
    __m512 scale = _mm512_set1_ps(e->first ? e->beta : 1.0f);
    __m512 bias0 = _mm512_setzero_ps(), bias1 = _mm512_setzero_ps();
    if (e->first && e->bias) {
        bias0 = _mm512_maskz_loadu_ps(k0, e->bias);
        bias1 = _mm512_maskz_loadu_ps(k1, e->bias + 16);
    }
#pragma GCC unroll 12
    for (int r = 0; r < mr; r++) {
        float *out = y + r * ldy;
        __m512 c0 = _mm512_add_ps(acc[r][0], bias0), c1 = _mm512_add_ps(acc[r][1], bias1);
        if (load) {
            c0 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(k0, out), scale, c0);
            c1 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(k1, out + 16), scale, c1);
        }
        _mm512_mask_storeu_ps(out, k0, c0);
        _mm512_mask_storeu_ps(out + 16, k1, c1);
    }
    if (e->last && e->gelu)   /* the tile is in L1: GELU costs no memory traffic here */
        for (int r = 0; r < mr; r++) {
            float *out = y + r * ldy;
            #pragma omp simd
            for (int j = 0; j < ncols; j++) out[j] *= normal_cdf(out[j]);
        }
}

/* The tile with mr a compile-time constant, so the accumulators stay in registers. */
static GB_TARGET void gb_tile_any(int mr, const uint32_t *ap, const uint32_t *bp, int kc, float *y, long ldy,
                                  int ncols, const GbEpilogue *e) {
    switch (mr) {
#define GB_CASE(R) \
    case R: gb_tile(R, ap, bp, kc, y, ldy, ncols, e); break;
        GB_CASE(1) GB_CASE(2) GB_CASE(3) GB_CASE(4) GB_CASE(5) GB_CASE(6)
        GB_CASE(7) GB_CASE(8) GB_CASE(9) GB_CASE(10) GB_CASE(11) GB_CASE(12)
#undef GB_CASE
    default: DIE("bf16 tile of %d rows", mr);
    }
}

enum { GB_MAX_TEAM = 256, GB_X_BLOCK = GB_MC * GB_KC };   /* a packed x block: GB_MC rows x GB_KC pairs */

/* One parallel region per product, no barrier inside: each thread packs its own
 * x rows into its own block and computes their tiles for every panel (enough
 * row tiles for two per thread), or, with few rows (single sentences), packs
 * all of them and computes its share of the panels. (A region per K and row
 * block with a barrier between packing and tiles, as before, cost the tiny
 * model's bf16 forward its lead over fp32 on a loaded machine: ~150 regions.) */
static GB_TARGET void gb_drive(float *y, const float *x, const Bf16Weights *w, int M, float beta,
                               const float *bias, int gelu) {
    int N = w->N, K = w->K;
    int team = omp_in_parallel() || (long)M * N * K < (1L << 18) ? 1 : omp_get_max_threads();
    team = team < GB_MAX_TEAM ? team : GB_MAX_TEAM;
    /* The calling thread's blocks, one per team thread (core/thread_scratch.h). */
    uint32_t *packed = thread_scratch(SCRATCH_BF16_X_BLOCKS, sizeof(uint32_t) * (size_t)team * GB_X_BLOCK);
    int blocks = (M + GB_MR - 1) / GB_MR, by_rows = blocks >= 2 * team;
    #pragma omp parallel num_threads(team)
    {
        int t = omp_get_thread_num(), nt = omp_get_num_threads();
        uint32_t *buf = packed + (size_t)t * GB_X_BLOCK;
        int r_lo = 0, r_hi = M, p_lo = 0, p_hi = w->panels;
        if (by_rows) {
            r_lo = blocks * t / nt * GB_MR;
            r_hi = blocks * (t + 1) / nt * GB_MR;
            r_hi = r_hi < M ? r_hi : M;
        } else {
            p_lo = w->panels * t / nt;
            p_hi = w->panels * (t + 1) / nt;
        }
        for (int kp0 = 0; kp0 < w->pairs && p_lo < p_hi; kp0 += GB_KC) {
            int kc = w->pairs - kp0 < GB_KC ? w->pairs - kp0 : GB_KC;
            for (int m0 = r_lo; m0 < r_hi; m0 += GB_MC) {
                int mc = r_hi - m0 < GB_MC ? r_hi - m0 : GB_MC;
                gb_pack_x(buf, x, K, m0, mc, kp0, kc);
                for (int pn = p_lo; pn < p_hi; pn++) {
                    const uint32_t *bp = w->data + ((long)pn * w->pairs + kp0) * GB_NR;
                    int ncols = N - pn * GB_NR < GB_NR ? N - pn * GB_NR : GB_NR;
                    GbEpilogue e = {.first = kp0 == 0, .last = kp0 + kc == w->pairs, .beta = beta,
                                    .bias = bias ? bias + pn * GB_NR : NULL, .gelu = gelu};
                    for (int rb = 0; rb < mc; rb += GB_MR)
                        gb_tile_any(mc - rb < GB_MR ? mc - rb : GB_MR, buf + (long)rb * GB_KC, bp, kc,
                                    y + (long)(m0 + rb) * N + pn * GB_NR, N, ncols, &e);
                }
            }
        }
    }
}

void matmul_bf16(float *y, const float *x, const Bf16Weights *w, int M, float beta, const float *bias, int gelu) {
    if (M <= 0 || w->N <= 0) return;
    if (w->K == 0) matmul_bf16_empty(y, M, w->N, beta, bias, gelu);
    else gb_drive(y, x, w, M, beta, bias, gelu);
}

/* ---- training products: both operands rounded to bf16 (matmul's bf16 precision) ---- */

/* One row of K floats -> ceil(K/2) pairs, each two neighbours (k = 2p low,
 * 2p + 1 high; an odd K's last pair has a zero high half). */
static GB_TARGET void gb_pair_row(uint32_t *d, const float *s, int K) {
    for (int i = 0; i < K; i += 32)
        _mm512_mask_storeu_epi32(d + i / 2, bf16_lanes((K - i + 1) / 2), bf16_pairs_adjacent(s + i, K - i));
}

/* Two rows of cols floats (s1 NULL: zeros) -> cols pairs (s0 low, s1 high). */
static GB_TARGET void gb_pair_two_rows(uint32_t *d, const float *s0, const float *s1, int cols) {
    for (int j = 0; j < cols; j += 16)
        _mm512_mask_storeu_epi32(d + j, bf16_lanes(cols - j), bf16_pairs_stacked(s0 + j, s1 ? s1 + j : NULL, cols - j));
}

/* rows x K of src (row stride ld) -> dst rows x ceil(K/2) pairs. (The
 * parallel loops are outside the GB_TARGET functions: clang does not give
 * OpenMP's outlined bodies their function's target.) */
static void gb_pair_adjacent(uint32_t *dst, const float *src, int rows, int K, long ld) {
    long pairs = (K + 1) / 2;
    #pragma omp parallel for if ((long)rows * K > 65536)
    for (int r = 0; r < rows; r++) gb_pair_row(dst + (long)r * pairs, src + (long)r * ld, K);
}

/* K x cols of src (row stride ld) -> dst ceil(K/2) x cols, row p pairing src's
 * rows 2p (low half) and 2p + 1 (high half; zero past K). */
static void gb_pair_rows(uint32_t *dst, const float *src, int K, int cols, long ld) {
    int pairs = (K + 1) / 2;
    #pragma omp parallel for if ((long)K * cols > 65536)
    for (int p = 0; p < pairs; p++)
        gb_pair_two_rows(dst + (long)p * cols, src + (long)(2 * p) * ld, 2 * p + 1 < K ? src + (long)(2 * p + 1) * ld : NULL,
                         cols);
}

/* core/sgemm's tile over bf16 pairs: C (mr x nc) = alpha * op(A).bp + beta * C,
 * op(A)'s pair (r, p) at a[r * a_rs + p * a_cs], bp [kc pairs][32 columns]
 * (the AVX-512 packers' layout: 12 x 32 tiles). */
static inline __attribute__((always_inline)) GB_TARGET void gb_train_tile_rows(const int mr, float *c, long ldc,
                                                                              int nc, const uint32_t *a, long a_rs,
                                                                              long a_cs, const uint32_t *bp,
                                                                              long kc, float alpha, float beta) {
    __m512 acc[GB_MR][2];
#pragma GCC unroll 12
    for (int r = 0; r < GB_MR; r++) acc[r][0] = acc[r][1] = _mm512_setzero_ps();
    for (long kp = 0; kp < kc; kp++) {
        __m512bh b0 = (__m512bh)_mm512_load_si512(bp + kp * GB_NR);
        __m512bh b1 = (__m512bh)_mm512_load_si512(bp + kp * GB_NR + 16);
        const uint32_t *ak = a + kp * a_cs;
#pragma GCC unroll 12
        for (int r = 0; r < mr; r++) {
            __m512bh av = (__m512bh)_mm512_set1_epi32((int)ak[r * a_rs]);
            acc[r][0] = _mm512_dpbf16_ps(acc[r][0], av, b0);
            acc[r][1] = _mm512_dpbf16_ps(acc[r][1], av, b1);
        }
    }
    __mmask16 k0 = nc >= 16 ? 0xffff : (__mmask16)((1u << nc) - 1u);
    __mmask16 k1 = nc >= 32 ? 0xffff : nc <= 16 ? 0 : (__mmask16)((1u << (nc - 16)) - 1u);
    __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
#pragma GCC unroll 12
    for (int r = 0; r < mr; r++) {
        float *out = c + r * ldc;
        __m512 c0 = _mm512_mul_ps(acc[r][0], va), c1 = _mm512_mul_ps(acc[r][1], va);
        if (beta != 0.0f) {
            c0 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(k0, out), vb, c0);
            c1 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(k1, out + 16), vb, c1);
        }
        _mm512_mask_storeu_ps(out, k0, c0);
        _mm512_mask_storeu_ps(out + 16, k1, c1);
    }
}

static GB_TARGET void gb_train_tile(float *c, long ldc, int mr, int nc, const float *a, long a_rs, long a_cs,
                                    const float *bp, long kc, float alpha, float beta) {
    const uint32_t *ap = (const uint32_t *)a, *bpp = (const uint32_t *)bp;
    switch (mr) {
#define GB_TRAIN_CASE(R)                                                                                   \
    case R:                                                                                                \
        if (a_rs == 1) gb_train_tile_rows(R, c, ldc, nc, ap, 1, a_cs, bpp, kc, alpha, beta);               \
        else gb_train_tile_rows(R, c, ldc, nc, ap, a_rs, 1, bpp, kc, alpha, beta);                         \
        break;
        GB_TRAIN_CASE(1) GB_TRAIN_CASE(2) GB_TRAIN_CASE(3) GB_TRAIN_CASE(4) GB_TRAIN_CASE(5) GB_TRAIN_CASE(6)
        GB_TRAIN_CASE(7) GB_TRAIN_CASE(8) GB_TRAIN_CASE(9) GB_TRAIN_CASE(10) GB_TRAIN_CASE(11) GB_TRAIN_CASE(12)
#undef GB_TRAIN_CASE
    default: DIE("bf16 tile of %d rows", mr);
    }
}

uint32_t *bf16_pairs_scratch(int which, size_t words) {
    static const ThreadScratchSlot SLOT[3] = {SCRATCH_BF16_PAIRS_A, SCRATCH_BF16_PAIRS_B, SCRATCH_BF16_PARTIAL};
    if (which < 0 || which > 2) DIE("bf16_pairs_scratch: slot %d", which);
    return thread_scratch(SLOT[which], sizeof(uint32_t) * words);
}

Bf16Operands gemm_bf16_pair_operands(const float *A, int lda, const float *B, int ldb, int M, int N, int K, int ta,
                                      int tb) {
    if (kernels_level() != KERN_AVX512BF16) DIE("bf16 products need the avx512bf16 kernel level");
    Bf16Operands o = {.pairs = (K + 1) / 2, .tile = gb_train_tile};
    uint32_t *ap = bf16_pairs_scratch(0, (size_t)M * (size_t)o.pairs + 16);
    uint32_t *bp = bf16_pairs_scratch(1, (size_t)N * (size_t)o.pairs + 16);
    /* op(A) (M, K): a row's k neighbours are adjacent unless A is stored k-major. */
    if (ta) gb_pair_rows(ap, A, K, M, lda), o.lda = M;
    else gb_pair_adjacent(ap, A, M, K, lda), o.lda = o.pairs;
    /* op(B) (K, N): stored k-major unless transposed. */
    if (tb) gb_pair_adjacent(bp, B, N, K, ldb), o.ldb = o.pairs;
    else gb_pair_rows(bp, B, K, N, ldb), o.ldb = N;
    o.a = (const float *)ap;
    o.b = (const float *)bp;
    return o;
}
