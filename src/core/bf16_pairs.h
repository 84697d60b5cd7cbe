/* bf16_pairs.h — fp32 into bf16 pairs, sixteen at a time: the packers of
 * core/gemm_bf16 (vdpbf16ps) and core/gemm_amx (AMX tiles) share them.
 *
 * Both products multiply pairs: one 32-bit lane holds two bf16 neighbours
 * along k (k = 2p in the low half, 2p + 1 in the high half). A row whose k
 * neighbours are adjacent in memory pairs itself (bf16_pairs_adjacent); an
 * operand stored k-major pairs two of its rows (bf16_pairs_stacked).
 * vcvtne2ps2bf16 rounds to nearest even, as core/half.h's bf16_from_float does
 * for every number but NaN payloads. Header-only so that each caller inlines
 * them into its own target-attributed loops; callers must run only where the
 * CPU has AVX512-BF16 (core/kernels.h's avx512bf16 level or above). */
#ifndef GLUE_BF16_PAIRS_H
#define GLUE_BF16_PAIRS_H

#include <immintrin.h>

#define BF16_PAIRS_TARGET __attribute__((target("avx512f,avx512bw,avx512bf16")))

/* Lanes [0, n) set (n <= 16). */
static inline __attribute__((always_inline)) __mmask16 bf16_lanes(int n) {
    return n >= 16 ? (__mmask16)0xffff : n <= 0 ? (__mmask16)0 : (__mmask16)((1u << n) - 1u);
}

/* s[0, n) (n <= 32 floats, nothing past them read) -> 16 pairs (s[2p] low,
 * s[2p + 1] high); pairs past n are zero, an odd n's last pair has a zero high half. */
static inline __attribute__((always_inline)) BF16_PAIRS_TARGET __m512i bf16_pairs_adjacent(const float *s, int n) {
    __m512 lo = _mm512_maskz_loadu_ps(bf16_lanes(n), s), hi = _mm512_maskz_loadu_ps(bf16_lanes(n - 16), s + 16);
    return (__m512i)_mm512_cvtne2ps_pbh(hi, lo);
}

/* s0[0, n), s1[0, n) (n <= 16; s1 NULL: zeros) -> n pairs (s0 low, s1 high),
 * lanes past n zero. */
static inline __attribute__((always_inline)) BF16_PAIRS_TARGET __m512i bf16_pairs_stacked(const float *s0,
                                                                                           const float *s1, int n) {
    __mmask16 m = bf16_lanes(n);
    __m512i lo = _mm512_cvtepu16_epi32((__m256i)_mm512_cvtneps_pbh(_mm512_maskz_loadu_ps(m, s0)));
    if (!s1) return lo;
    __m512i hi = _mm512_cvtepu16_epi32((__m256i)_mm512_cvtneps_pbh(_mm512_maskz_loadu_ps(m, s1)));
    return _mm512_or_si512(lo, _mm512_slli_epi32(hi, 16));
}

#endif
