/* half.c — fp16 / bf16 <-> float by bit manipulation (see half.h). */
#include "core/half.h"

#include <string.h>

static uint32_t float_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float bits_float(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* Keeps the top bits of x above `shift`, rounded to nearest, ties to even. */
static uint32_t round_shift_even(uint32_t x, int shift) {
    uint32_t r = x >> shift, rem = x & ((UINT32_C(1) << shift) - 1), halfway = UINT32_C(1) << (shift - 1);
    return r + (rem > halfway || (rem == halfway && (r & 1)));
}

uint16_t half_from_float(float f) {
    uint32_t x = float_bits(f);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
    uint32_t a = x & 0x7fffffffu;
    if (a >= 0x7f800000u) /* inf, or NaN kept quiet with its top payload bits */
        return (uint16_t)(sign | 0x7c00 | (a > 0x7f800000u ? 0x200 | ((a >> 13) & 0x3ff) : 0));
    if (a >= 0x477ff000u) return sign | 0x7c00;  /* >= 65520 rounds to infinity */
    if (a >= 0x38800000u)                        /* >= 2^-14: a normal half */
        return (uint16_t)(sign | (round_shift_even(a, 13) - (112u << 10)));
    if (a <= 0x33000000u) return sign;           /* <= 2^-25 rounds to zero */
    /* Subnormal half: count of 2^-24 units = mantissa * 2^(e - 126). */
    uint32_t e = a >> 23, mant = (a & 0x7fffffu) | 0x800000u;
    return (uint16_t)(sign | round_shift_even(mant, (int)(126 - e)));
}

float half_to_float(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff;
    if (e == 0x1f) return bits_float(sign | 0x7f800000u | (m << 13));
    if (e != 0) return bits_float(sign | ((e + 112) << 23) | (m << 13));
    if (m == 0) return bits_float(sign);
    /* Subnormal half: normalise into a float exponent. */
    uint32_t fe = 113;
    while (!(m & 0x400)) {
        m <<= 1;
        fe--;
    }
    return bits_float(sign | (fe << 23) | ((m & 0x3ff) << 13));
}

uint16_t bf16_from_float(float f) {
    uint32_t x = float_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40); /* quiet NaN */
    return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1)) >> 16);
}

float bf16_to_float(uint16_t h) { return bits_float((uint32_t)h << 16); }

void half_from_float_array(uint16_t *dst, const float *src, size_t n) {
    for (size_t i = 0; i < n; i++) dst[i] = half_from_float(src[i]);
}

void half_to_float_array(float *dst, const uint16_t *src, size_t n) {
    for (size_t i = 0; i < n; i++) dst[i] = half_to_float(src[i]);
}

void bf16_from_float_array(uint16_t *dst, const float *src, size_t n) {
    for (size_t i = 0; i < n; i++) dst[i] = bf16_from_float(src[i]);
}

void bf16_to_float_array(float *dst, const uint16_t *src, size_t n) {
    for (size_t i = 0; i < n; i++) dst[i] = bf16_to_float(src[i]);
}
