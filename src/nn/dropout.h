/* dropout.h — inverted dropout: during training each element is zeroed with
 * probability p and the survivors are scaled by 1/(1-p), so evaluation (p = 0)
 * is the identity. The mask comes from the caller's Rng (deterministic for a
 * seed, whatever the thread count) and is saved for the backward. */
#ifndef GLUE_NN_DROPOUT_H
#define GLUE_NN_DROPOUT_H

#include "core/rng.h"

/* y (n) = x * mask * scale, mask (n) in {0,1}; p in [0, 1). p = 0: y = x, mask (if
 * non-NULL) all ones and rng untouched. y may alias x. Draws one number from rng
 * per call, so the stream a model sees does not depend on n. */
void dropout_forward(float *y, unsigned char *mask, const float *x, long n, float p, Rng *rng);

/* dx (n) += dy * mask * scale, with the same p as the forward. */
void dropout_backward(float *dx, const float *dy, const unsigned char *mask, long n, float p);

/* The survivor scale actually used for p: the keep probability is quantised to
 * 1/65536 (see dropout.c), and the scale matches it so E[y] = x exactly. */
float dropout_scale(float p);

#endif
