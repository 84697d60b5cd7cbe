/* thresholds.h — from per-label probabilities to multi-label predictions, and
 * choosing the thresholds.
 *
 * prob is an (n, K) row-major matrix of probabilities (or any scores); pred an
 * (n, K) 0/1 matrix. A label is predicted when its probability is AT OR ABOVE
 * its threshold (p >= t), so a threshold equal to a probability takes that row.
 *
 * Three ways to predict: one global threshold (0.5 by default), the k
 * best-scoring labels of each row (top-k; equal scores: the lower label id
 * first), or one threshold per label tuned on the dev split. Tuning sees only
 * the matrices it is given: callers pass dev probabilities and dev gold, never
 * test's, and apply the thresholds found to test unchanged.
 *
 * Tuning maximises each label's own F1 (2tp / (2tp + fp + fn), compared exactly
 * as fractions) over candidate thresholds: a grid, or every distinct
 * probability of that label on dev. Ties go to the HIGHEST threshold (the
 * fewest labels predicted); a label whose F1 is 0 at every candidate — no gold
 * positive on dev, or none reachable — keeps the fallback threshold. The result
 * depends only on the inputs (no randomness, no row order). */
#ifndef GLUE_THRESHOLDS_H
#define GLUE_THRESHOLDS_H

#include <stdint.h>

#define THRESHOLD_DEFAULT 0.5f

/* pred = prob >= t, one threshold for every label. */
void thresholds_apply(const float *prob, int n, int K, float t, uint8_t *pred);
/* pred = prob >= t[k] for label k. */
void thresholds_apply_per_label(const float *prob, int n, int K, const float *t, uint8_t *pred);
/* The k (1..K) best labels of each row. */
void thresholds_top_k(const float *prob, int n, int K, int k, uint8_t *pred);
/* The ids of the k best labels of one row of K scores into top[0..k), best
 * first (a NaN score ranks last). */
void thresholds_top_k_ids(const float *row, int K, int k, int *top);

/* The grid lo, lo+step, ... up to hi (within step/2) into out[0..max): the
 * count. Each value is lo + i*step computed in double, then rounded once, so
 * 0.01 .. 0.99 gives exactly the floats 0.01f .. 0.99f (no accumulated error). */
int thresholds_grid(double lo, double hi, double step, float *out, int max);

/* Per-label thresholds tuned on dev (prob, gold: n rows) into t[0..K); f1, when
 * not NULL, gets each label's dev F1 at its threshold (0 where the fallback was
 * kept). grid NULL (ngrid 0): the candidates are the label's distinct dev
 * probabilities. */
void thresholds_tune(const float *prob, const uint8_t *gold, int n, int K, const float *grid, int ngrid,
                     float fallback, float *t, double *f1);

/* Micro-F1 over all labels with the one threshold grid[j], into f1[j] (the
 * curve a report draws; its argmax is the best global threshold on dev). */
void thresholds_micro_f1_curve(const float *prob, const uint8_t *gold, int n, int K, const float *grid, int ngrid,
                               double *f1);

#endif
