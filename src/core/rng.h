/* rng.h — explicit, copyable random state (no global RNG, DESIGN §4.9).
 * xoshiro256** seeded through splitmix64: fast, good quality, and its state is
 * four words, so checkpoints can store it and resume exactly. */
#ifndef GLUE_RNG_H
#define GLUE_RNG_H

#include <stdint.h>

typedef struct { uint64_t s[4]; } Rng;

void rng_seed(Rng *r, uint64_t seed);
/* An independent stream for worker `k` of a seed (thread-private RNGs). */
void rng_seed_stream(Rng *r, uint64_t seed, uint64_t k);
uint64_t rng_u64(Rng *r);
uint32_t rng_below(Rng *r, uint32_t n);      /* uniform in [0, n), unbiased */
float rng_uniform(Rng *r);                   /* [0, 1) */
float rng_normal(Rng *r);                    /* standard normal (Box-Muller) */
void rng_shuffle_int(Rng *r, int *a, int n); /* Fisher-Yates */

#endif
