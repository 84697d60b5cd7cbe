/* gemm_amx.c — bf16 products on AMX tiles (see gemm_amx.h).
 *
 * Packing: op(A) (M, K) becomes ap [Mp rows][Pp pairs] and op(B) (K, N) bp [Pp
 * pairs][Np columns], 32-bit lanes of two bf16 (core/bf16_pairs.h), Mp and Np
 * rounded up to 32, Pp to 16, the padding zero (it adds zero products). A tile
 * of A is 16 rows x 16 pairs of ap (64 bytes a row), a tile of B 16 pairs x 16
 * columns of bp: tileloadd reads both at their row strides. A stored as (M, K)
 * and B as (K, N) pair straight into those layouts; A stored transposed (K, M)
 * and B stored transposed (N, K) run the other way, so they are paired 16 x 16
 * lanes at a time and the block turned in registers (amx_transpose16).
 *
 * Compute: tiles 0-3 hold a 32 x 32 block of C, 4-5 the two 16-row halves of
 * A's block, 6-7 the two 16-column halves of B's; four tdpbf16ps per 16 pairs
 * (the largest block that eight tiles allow). Each C element is summed over K
 * in one order (in slices, the sums between them kept in fp32 exactly as the
 * tiles hold them), then alpha and beta are applied as it is written, so no C
 * element depends on the thread split.
 *
 * Measured (Intel Xeon family 6 model 167, 2 threads, best of 5, against
 * OpenBLAS sgemm in the same process, BERT-mini's products at 16,384 tokens):
 * forward and input-gradient products 1.6-1.9x; weight gradients (K = 16,384,
 * A transposed) 0.75-1.0x, their packing bound by memory (it reads 80 MB of
 * activations and gradients); the MLM's 30,522-word projection 1.3x, its
 * weight gradient 0.7x. A pretraining step of pretrain/mini-electra.json:
 * 7,900 tokens/s against 5,550 in fp32 (1.42x). */
#include "core/gemm_amx.h"

#include <immintrin.h>
#include <omp.h>
#include <stdint.h>

#include "core/bf16_pairs.h"
#include "core/gemm_bf16.h"

#define AMX_TARGET __attribute__((target("avx512f,avx512bw,avx512bf16,amx-tile,amx-bf16")))

enum { AMX_LANES = 16, AMX_BLOCK = 32 };

typedef struct {
    uint8_t palette, start_row, reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
} AmxTileConfig;

/* Eight tiles of 16 rows x 64 bytes. Static and const: GCC 12 drops the
 * stores to a stack copy that only ldtilecfg reads (it then faults). */
static const AmxTileConfig AMX_CONFIG = {
    .palette = 1,
    .colsb = {64, 64, 64, 64, 64, 64, 64, 64},
    .rows = {16, 16, 16, 16, 16, 16, 16, 16},
};

typedef struct {
    int ta, tb, M, N, K, lda, ldb, ldc;
    int Mp, Np, Pp;          /* padded rows, columns, pairs */
    float alpha, beta;
    const float *A, *B;
    float *C;
    uint32_t *ap, *bp;       /* [Mp][Pp], [Pp][Np] */
} AmxProduct;

static int round_up(int x, int to) { return (x + to - 1) / to * to; }

/* r[i] (16 rows of 16 lanes) becomes its transpose: r[j] lane i = old r[i] lane j.
 * Two rounds of unpacks turn 4 x 4 blocks inside each 128-bit lane, two of
 * shuffle_i32x4 move the lanes. */
static inline __attribute__((always_inline)) AMX_TARGET void amx_transpose16(__m512i r[16]) {
    __m512i t[16];
    for (int i = 0; i < 16; i += 2) {
        t[i] = _mm512_unpacklo_epi32(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_epi32(r[i], r[i + 1]);
    }
    for (int i = 0; i < 16; i += 4) {   /* r[i + j], lane l: column 4l + j of rows i..i+3 */
        r[i] = _mm512_unpacklo_epi64(t[i], t[i + 2]);
        r[i + 1] = _mm512_unpackhi_epi64(t[i], t[i + 2]);
        r[i + 2] = _mm512_unpacklo_epi64(t[i + 1], t[i + 3]);
        r[i + 3] = _mm512_unpackhi_epi64(t[i + 1], t[i + 3]);
    }
    for (int j = 0; j < 4; j++) {
        t[j] = _mm512_shuffle_i32x4(r[j], r[4 + j], 0x88);
        t[4 + j] = _mm512_shuffle_i32x4(r[j], r[4 + j], 0xdd);
        t[8 + j] = _mm512_shuffle_i32x4(r[8 + j], r[12 + j], 0x88);
        t[12 + j] = _mm512_shuffle_i32x4(r[8 + j], r[12 + j], 0xdd);
    }
    for (int j = 0; j < 4; j++) {
        r[j] = _mm512_shuffle_i32x4(t[j], t[8 + j], 0x88);
        r[8 + j] = _mm512_shuffle_i32x4(t[j], t[8 + j], 0xdd);
        r[4 + j] = _mm512_shuffle_i32x4(t[4 + j], t[12 + j], 0x88);
        r[12 + j] = _mm512_shuffle_i32x4(t[4 + j], t[12 + j], 0xdd);
    }
}

/* 16 pairs from k = 2 p0 on of a row whose k are adjacent (zeros past K). */
static inline __attribute__((always_inline)) AMX_TARGET __m512i amx_pairs_along(const float *row, int p0, int K) {
    return 2 * p0 < K ? bf16_pairs_adjacent(row + 2 * p0, K - 2 * p0) : _mm512_setzero_si512();
}

/* Pair p of 16 columns from j0 on of an operand stored k-major (rows k,
 * row stride ld, `cols` columns): zeros past K or past the columns. */
static inline __attribute__((always_inline)) AMX_TARGET __m512i amx_pairs_across(const float *X, long ld, int p,
                                                                                 int K, int j0, int cols) {
    int k = 2 * p;
    if (k >= K || j0 >= cols) return _mm512_setzero_si512();
    return bf16_pairs_stacked(X + k * ld + j0, k + 1 < K ? X + (k + 1) * ld + j0 : NULL, cols - j0);
}

/* 16 rows of ap from m0 on, pairs [p0, p0 + 16). */
static inline __attribute__((always_inline)) AMX_TARGET void amx_pack_a_block(const AmxProduct *p, int m0, int p0) {
    __m512i v[16];
    if (!p->ta) {   /* A (M, K): each row pairs itself */
        for (int i = 0; i < 16; i++)
            v[i] = m0 + i < p->M ? amx_pairs_along(p->A + (long)(m0 + i) * p->lda, p0, p->K) : _mm512_setzero_si512();
    } else {        /* A stored (K, M): pair p0 + j of columns m0.., then turned */
        for (int j = 0; j < 16; j++) v[j] = amx_pairs_across(p->A, p->lda, p0 + j, p->K, m0, p->M);
        amx_transpose16(v);
    }
    for (int i = 0; i < 16; i++) _mm512_storeu_si512(p->ap + (long)(m0 + i) * p->Pp + p0, v[i]);
}

/* 16 pairs of bp from p0 on, columns [n0, n0 + 16). */
static inline __attribute__((always_inline)) AMX_TARGET void amx_pack_b_block(const AmxProduct *p, int p0, int n0) {
    __m512i v[16];
    if (!p->tb) {   /* B (K, N): pair j of columns n0.. is two of its rows */
        for (int j = 0; j < 16; j++) v[j] = amx_pairs_across(p->B, p->ldb, p0 + j, p->K, n0, p->N);
    } else {        /* B stored (N, K): each column pairs itself, then turned */
        for (int i = 0; i < 16; i++)
            v[i] = n0 + i < p->N ? amx_pairs_along(p->B + (long)(n0 + i) * p->ldb, p0, p->K) : _mm512_setzero_si512();
        amx_transpose16(v);
    }
    for (int j = 0; j < 16; j++) _mm512_storeu_si512(p->bp + (long)(p0 + j) * p->Np + n0, v[j]);
}

/* Packing in units that read the stored operand in memory order: an operand
 * whose k runs along its rows (A, or B transposed) in strips of 16 rows by
 * all of K; one stored k-major (A transposed, B) in blocks of 256 k-rows by
 * 64 columns, so that its reads stay within a few pages and its writes within
 * 64 rows of the packing. (A walk down a 16-wide column strip touched a new
 * page at every row of a 16,384-row gradient; a walk along whole rows wrote
 * one line into each of 30,528 packed rows: either cost more than the
 * products.) */
enum { AMX_UNIT_PAIRS = 32, AMX_UNIT_COLS = 512 };

typedef struct {
    int units_a, units;     /* A's units first, then B's */
    int cols_a, cols_b;     /* a k-major operand's units across its columns (64 wide) */
} AmxUnits;

static AmxUnits amx_units(const AmxProduct *p) {
    AmxUnits u = {0};
    int slices = (p->Pp + AMX_UNIT_PAIRS - 1) / AMX_UNIT_PAIRS;
    u.cols_a = (p->Mp + AMX_UNIT_COLS - 1) / AMX_UNIT_COLS;
    u.cols_b = (p->Np + AMX_UNIT_COLS - 1) / AMX_UNIT_COLS;
    u.units_a = p->ta ? slices * u.cols_a : p->Mp / AMX_LANES;
    u.units = u.units_a + (p->tb ? p->Np / AMX_LANES : slices * u.cols_b);
    return u;
}

static AMX_TARGET void amx_pack_unit(const AmxProduct *p, const AmxUnits *u, int unit) {
    if (unit < u->units_a) {
        if (!p->ta) {   /* rows [m0, m0 + 16) of A (M, K), all pairs */
            int m0 = unit * AMX_LANES;
            for (int p0 = 0; p0 < p->Pp; p0 += AMX_LANES) amx_pack_a_block(p, m0, p0);
            return;
        }
        int pa = unit / u->cols_a * AMX_UNIT_PAIRS, ma = unit % u->cols_a * AMX_UNIT_COLS;
        for (int p0 = pa; p0 < pa + AMX_UNIT_PAIRS && p0 < p->Pp; p0 += AMX_LANES)
            for (int m0 = ma; m0 < ma + AMX_UNIT_COLS && m0 < p->Mp; m0 += AMX_LANES) amx_pack_a_block(p, m0, p0);
        return;
    }
    unit -= u->units_a;
    if (p->tb) {        /* columns [n0, n0 + 16) of op(B): rows of B stored (N, K), all pairs */
        int n0 = unit * AMX_LANES;
        for (int p0 = 0; p0 < p->Pp; p0 += AMX_LANES) amx_pack_b_block(p, p0, n0);
        return;
    }
    int pb = unit / u->cols_b * AMX_UNIT_PAIRS, nb = unit % u->cols_b * AMX_UNIT_COLS;
    for (int p0 = pb; p0 < pb + AMX_UNIT_PAIRS && p0 < p->Pp; p0 += AMX_LANES)
        for (int n0 = nb; n0 < nb + AMX_UNIT_COLS && n0 < p->Np; n0 += AMX_LANES) amx_pack_b_block(p, p0, n0);
}

/* C's block at (i0, j0) from its sums acc (32 x 32): alpha acc + beta C,
 * rows and columns past M and N not written. */
static inline __attribute__((always_inline)) AMX_TARGET void amx_write(const AmxProduct *p, const float *acc,
                                                                       int i0, int j0) {
    int rows = p->M - i0 < AMX_BLOCK ? p->M - i0 : AMX_BLOCK, cols = p->N - j0;
    __mmask16 k0 = bf16_lanes(cols), k1 = bf16_lanes(cols - 16);
    __m512 va = _mm512_set1_ps(p->alpha), vb = _mm512_set1_ps(p->beta);
    for (int r = 0; r < rows; r++) {
        float *out = p->C + (long)(i0 + r) * p->ldc + j0;
        __m512 c0 = _mm512_mul_ps(_mm512_load_ps(acc + r * AMX_BLOCK), va);
        __m512 c1 = _mm512_mul_ps(_mm512_load_ps(acc + r * AMX_BLOCK + 16), va);
        if (p->beta != 0.0f) {
            c0 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(k0, out), vb, c0);
            c1 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(k1, out + 16), vb, c1);
        }
        _mm512_mask_storeu_ps(out, k0, c0);
        _mm512_mask_storeu_ps(out + 16, k1, c1);
    }
}

/* K in slices of AMX_KC pairs and C's columns in chunks, so that a slice of
 * B's chunk (about AMX_B_SLICE bytes) stays in L2 while every row block of the
 * thread passes over it (B streamed whole for each 32 rows made products of
 * K = 16,384 or N = 30,522 slower than fp32). With one slice (K <= 1,024, the
 * encoder's layers forward) the tiles hold the sums over all of K; with more,
 * the sums so far wait in fp32 (partial, Mp x chunk) between slices. */
enum { AMX_KC = 512, AMX_B_SLICE = 1 << 20 };

/* Columns in a chunk: as many 32-column blocks as fit a slice in AMX_B_SLICE. */
static int amx_chunk_cols(const AmxProduct *p) {
    int kc = p->Pp < AMX_KC ? p->Pp : AMX_KC, cols = AMX_B_SLICE / (4 * kc) / AMX_BLOCK * AMX_BLOCK;
    cols = cols > AMX_BLOCK ? cols : AMX_BLOCK;
    return cols < p->Np ? cols : p->Np;
}

/* The blocks [bi0, bi1) x [bj0, bj1) of C (32 x 32 each), on this thread's
 * tiles, in chunks of pc columns (partial: Mp x pc, or NULL with one slice). */
static AMX_TARGET void amx_blocks(const AmxProduct *p, float *partial, int pc, int bi0, int bi1, int bj0, int bj1) {
    if (bi0 >= bi1 || bj0 >= bj1) return;
    _tile_loadconfig(&AMX_CONFIG);
    float acc[AMX_BLOCK * AMX_BLOCK] __attribute__((aligned(64)));
    const long sa = (long)p->Pp * 4, sb = (long)p->Np * 4, sc = (long)pc * 4;   /* row strides in bytes */
    const int chunk = pc / AMX_BLOCK;
    for (int jc = bj0; jc < bj1; jc += chunk) {
        int jc_end = jc + chunk < bj1 ? jc + chunk : bj1;
        for (int k0 = 0; k0 < p->Pp; k0 += AMX_KC) {
            int k1 = k0 + AMX_KC < p->Pp ? k0 + AMX_KC : p->Pp, first = k0 == 0, last = k1 == p->Pp;
            for (int bi = bi0; bi < bi1; bi++)
                for (int bj = jc; bj < jc_end; bj++) {
                    const uint32_t *a = p->ap + (long)bi * AMX_BLOCK * p->Pp, *b = p->bp + (long)bj * AMX_BLOCK;
                    float *part = partial ? partial + (long)bi * AMX_BLOCK * pc + (bj - jc) * AMX_BLOCK : NULL;
                    if (first) {
                        _tile_zero(0);
                        _tile_zero(1);
                        _tile_zero(2);
                        _tile_zero(3);
                    } else {
                        _tile_loadd(0, part, sc);
                        _tile_loadd(1, part + 16, sc);
                        _tile_loadd(2, part + 16L * pc, sc);
                        _tile_loadd(3, part + 16L * pc + 16, sc);
                    }
                    for (long kp = k0; kp < k1; kp += AMX_LANES) {
                        _tile_loadd(4, a + kp, sa);
                        _tile_loadd(5, a + 16L * p->Pp + kp, sa);
                        _tile_loadd(6, b + kp * p->Np, sb);
                        _tile_loadd(7, b + kp * p->Np + 16, sb);
                        _tile_dpbf16ps(0, 4, 6);
                        _tile_dpbf16ps(1, 4, 7);
                        _tile_dpbf16ps(2, 5, 6);
                        _tile_dpbf16ps(3, 5, 7);
                    }
                    if (!last) {
                        _tile_stored(0, part, sc);
                        _tile_stored(1, part + 16, sc);
                        _tile_stored(2, part + 16L * pc, sc);
                        _tile_stored(3, part + 16L * pc + 16, sc);
                        continue;
                    }
                    _tile_stored(0, acc, AMX_BLOCK * 4);
                    _tile_stored(1, acc + 16, AMX_BLOCK * 4);
                    _tile_stored(2, acc + 16 * AMX_BLOCK, AMX_BLOCK * 4);
                    _tile_stored(3, acc + 16 * AMX_BLOCK + 16, AMX_BLOCK * 4);
                    amx_write(p, acc, bi * AMX_BLOCK, bj * AMX_BLOCK);
                }
        }
    }
    _tile_release();   /* the kernel then saves no tile state at a context switch */
}

/* (The parallel loops are outside the AMX_TARGET functions: clang does not
 * give OpenMP's outlined bodies their function's target.) */
void gemm_amx(int ta, int tb, int M, int N, int K, float alpha, const float *A, int lda, const float *B, int ldb,
              float beta, float *C, int ldc, int team) {
    if (M <= 0 || N <= 0) return;
    AmxProduct p = {.ta = ta, .tb = tb, .M = M, .N = N, .K = K, .lda = lda, .ldb = ldb, .ldc = ldc,
                    .Mp = round_up(M, AMX_BLOCK), .Np = round_up(N, AMX_BLOCK), .Pp = round_up((K + 1) / 2, AMX_LANES),
                    .alpha = alpha, .beta = beta, .A = A, .B = B, .C = C};
    if (p.Pp == 0) p.Pp = AMX_LANES;   /* K = 0: zero sums, C = beta C */
    p.ap = bf16_pairs_scratch(0, (size_t)p.Mp * (size_t)p.Pp);
    p.bp = bf16_pairs_scratch(1, (size_t)p.Pp * (size_t)p.Np);
    AmxUnits u = amx_units(&p);
    #pragma omp parallel for schedule(static) num_threads(team) if (team > 1)
    for (int unit = 0; unit < u.units; unit++) amx_pack_unit(&p, &u, unit);
    /* Each thread a range of block rows (or, with few of them, of block
     * columns), computed whole. */
    int nbi = p.Mp / AMX_BLOCK, nbj = p.Np / AMX_BLOCK, by_rows = nbi >= 2 * team || nbi >= nbj;
    /* Partial sums, rows Mp by one chunk's columns: one per thread when the
     * threads share rows (split by columns). */
    int pc = amx_chunk_cols(&p), copies = by_rows ? 1 : team;
    float *partial = p.Pp > AMX_KC ? (float *)bf16_pairs_scratch(2, (size_t)copies * p.Mp * pc) : NULL;
    #pragma omp parallel num_threads(team) if (team > 1)
    {
        int t = omp_get_thread_num(), nt = omp_get_num_threads();
        if (by_rows) amx_blocks(&p, partial, pc, nbi * t / nt, nbi * (t + 1) / nt, 0, nbj);
        else amx_blocks(&p, partial ? partial + (long)t * p.Mp * pc : NULL, pc, 0, nbi, nbj * t / nt, nbj * (t + 1) / nt);
    }
}
