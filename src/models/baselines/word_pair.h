/* word_pair.h — how the word models read a sentence pair (GLUE's baselines,
 * Conneau et al. 2017): each sentence is encoded apart into u and v (H
 * features each), and the classifier reads [u; v; |u - v|; u * v] (4H).
 * Shared by DPCNN and the Transformer trained from scratch. */
#ifndef GLUE_WORD_PAIR_H
#define GLUE_WORD_PAIR_H

#include "tasks/task.h"

/* 1 when the training split's rows carry a text b. */
int word_pair_task(const Dataset *train);

/* feat (n, FC): enc (B, H) holds the B sentences' encodings, B = n (single:
 * FC = H, feat = enc) or 2n (pairs: rows [0, n) text a, [n, 2n) text b;
 * FC = 4H). */
void word_pair_features(float *feat, const float *enc, int n, int H, int pair);

/* denc (B, H) = the gradient of enc given dfeat (n, FC), WRITTEN; feat is the
 * forward's output. */
void word_pair_features_backward(float *denc, const float *dfeat, const float *feat, int n, int H, int pair);

#endif
