/* fastmath.h — e^x and the normal CDF in branch-free float code, so that
 * `#pragma omp simd` loops vectorise them: glibc's expf/erff are scalar calls,
 * and with them GELU and the softmaxes (attention, MLM, cross-entropy) cost
 * more than the GEMMs around them. Used by nn/ (softmax, GELU, the LSTM and GRU
 * gates) and by core/gemm_bf16's fused bias + GELU epilogue. */
#ifndef GLUE_FASTMATH_H
#define GLUE_FASTMATH_H

/* e^x, relative error ~1e-7 (Cephes expf: x = k ln2 + r, |r| <= ln2/2,
 * degree-6 polynomial); x is clamped to [-87, 88] (e^-87 ~ 1.6e-38). */
static inline float fast_expf(float x) {
    x = x < -87.0f ? -87.0f : x;
    x = x > 88.0f ? 88.0f : x;
    float k = __builtin_rintf(x * 1.44269504088896341f);
    float r = x - k * 0.693359375f;          /* ln2 in two parts, exact products */
    r = r + k * 2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * (r * r) + r + 1.0f;
    /* unsigned: a NaN x makes k NaN and the exponent garbage, and the shift
     * must not be undefined for it (p is NaN, so the result is NaN anyway) */
    union { unsigned u; float f; } two_k = {.u = (unsigned)((int)k + 127) << 23};
    return p * two_k.f;
}

/* 1 / (1 + e^-x): relative error < 4e-7 (tests/test_fastmath.c) for x >= -87;
 * below, where the true value is under 1.7e-38, it stays at ~1.6e-38 (fast_expf's
 * clamp) instead of going to 0. +-inf give 1 and ~1.6e-38, NaN gives NaN. */
static inline float fast_sigmoidf(float x) { return 1.0f / (1.0f + fast_expf(-x)); }

/* tanh(x), relative error < 4e-7 (tests/test_fastmath.c). Cephes' tanhf made
 * branch-free: |x| < 0.625 an odd polynomial (no cancellation near 0, so tiny
 * and subnormal x come back exact), else 1 - 2 / (e^2|x| + 1) with the sign of
 * x; fast_expf's clamp makes |x| > 44 (and +-inf) exactly +-1. NaN gives NaN
 * (the comparison is false, the polynomial propagates it). */
static inline float fast_tanhf(float x) {
    float z = x < 0.0f ? -x : x;
    float big = 1.0f - 2.0f / (fast_expf(z + z) + 1.0f);
    float s = x * x;
    float p = -5.70498872745e-3f;
    p = p * s + 2.06390887954e-2f;
    p = p * s - 5.37397155531e-2f;
    p = p * s + 1.33314422036e-1f;
    p = p * s - 3.33332819422e-1f;
    float small = x + x * s * p;
    return z >= 0.625f ? (x < 0.0f ? -big : big) : small;
}

/* Phi(x), the standard normal CDF = 0.5 erfc(-x / sqrt 2), with erfc from
 * Numerical Recipes' Chebyshev fit (fractional error 1.2e-7 in exact
 * arithmetic), so the left tail keeps its relative accuracy, unlike 1 + erf.
 * In float: relative error < 6e-7 for x >= -2, < 2e-6 down to -5, < 2e-5
 * below (where Phi < 3e-7). GELU(x) = x Phi(x). */
static inline float normal_cdf(float x) {
    float z = (x < 0.0f ? -x : x) * 0.70710678118654752f;
    float t = 1.0f / (1.0f + 0.5f * z);
    float p = 0.17087277f;
    p = p * t - 0.82215223f;
    p = p * t + 1.48851587f;
    p = p * t - 1.13520398f;
    p = p * t + 0.27886807f;
    p = p * t - 0.18628806f;
    p = p * t + 0.09678418f;
    p = p * t + 0.37409196f;
    p = p * t + 1.00002368f;
    p = p * t - 1.26551223f;
    float half_erfc = 0.5f * t * fast_expf(p - 0.5f * (x * x));   /* z^2 = x^2 / 2, one rounding */
    return x < 0.0f ? half_erfc : 1.0f - half_erfc;
}

#endif
