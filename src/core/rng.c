/* rng.c — xoshiro256** (Blackman & Vigna) seeded with splitmix64 (see rng.h). */
#include "core/rng.h"

#include <math.h>

static uint64_t splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void rng_seed(Rng *r, uint64_t seed) {
    for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&seed);
}

void rng_seed_stream(Rng *r, uint64_t seed, uint64_t k) {
    uint64_t x = seed ^ (0xD1B54A32D192ED03ull * (k + 1));
    rng_seed(r, splitmix64(&x));
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t rng_u64(Rng *r) {
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

uint32_t rng_below(Rng *r, uint32_t n) {
    /* Lemire's multiply-shift with rejection: unbiased without a division. */
    uint64_t m = (uint64_t)(uint32_t)rng_u64(r) * n;
    if ((uint32_t)m < n) {
        uint32_t threshold = (uint32_t)(-n) % n;
        while ((uint32_t)m < threshold) m = (uint64_t)(uint32_t)rng_u64(r) * n;
    }
    return (uint32_t)(m >> 32);
}

float rng_uniform(Rng *r) { return (float)(rng_u64(r) >> 40) * (1.0f / 16777216.0f); }

float rng_normal(Rng *r) {
    double u1 = ((double)(rng_u64(r) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
    double u2 = (double)(rng_u64(r) >> 11) * (1.0 / 9007199254740992.0);
    return (float)(sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
}

void rng_shuffle_int(Rng *r, int *a, int n) {
    for (int i = n - 1; i > 0; i--) {
        int j = (int)rng_below(r, (uint32_t)i + 1);
        int t = a[i]; a[i] = a[j]; a[j] = t;
    }
}
