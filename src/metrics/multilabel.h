/* multilabel.h — the scores of multi-label predictions: an (n, K) 0/1 gold
 * matrix against an (n, K) 0/1 prediction matrix (row-major, cell i*K+k is 1
 * when row i has label k; any non-zero byte counts as 1).
 *
 * Every value is scikit-learn's on the same indicator matrices:
 *   micro / macro / samples precision, recall, F1  precision_recall_fscore_support(average=...)
 *   per-label P, R, F1, support                    the same with average=None
 *   hamming loss                                   hamming_loss
 *   subset accuracy (the whole row right)          accuracy_score
 * with its default zero_division ("warn", i.e. 0): a row or label with nothing
 * predicted has precision 0, one with no gold label recall 0, and F1 is 0 when
 * both are empty — a row with no gold label and no prediction scores 0 in the
 * samples average, as in scikit-learn. Macro averages take all K labels.
 *
 * Precision@k (scikit-learn has none) is computed from scores: for each row the
 * k highest-scoring labels (equal scores: the lower label id first), the share
 * of them that are gold, averaged over the rows; it divides by k even when a row
 * has fewer than k gold labels. */
#ifndef GLUE_MULTILABEL_H
#define GLUE_MULTILABEL_H

#include "metrics/metrics.h"
#include "metrics/per_label.h"

#include <stdint.h>

typedef struct MultiLabelScores {
    PrfAverage micro, macro, samples;
    double hamming_loss;        /* wrong cells / (n K) */
    double subset_accuracy;     /* rows whose predicted set is exactly the gold set / n */
    long empty_predictions;     /* rows predicted with no label (allowed, and counted) */
    long empty_gold;            /* rows with no gold label */
} MultiLabelScores;

/* Scores of pred against gold (n rows, K labels, n >= 0, K >= 1); per_label,
 * when not NULL, gets the K-row table. With n = 0 every score is 0. */
void multilabel_score(const uint8_t *pred, const uint8_t *gold, int n, int K, MultiLabelScores *out,
                      LabelScore *per_label);

/* Mean precision@k of score (n, K) against gold; k in [1, K]. */
double multilabel_precision_at_k(const float *score, const uint8_t *gold, int n, int K, int k);

/* A task metric on multi-label predictions: METRIC_MACRO_F1, METRIC_MICRO_F1,
 * or METRIC_ACC (subset accuracy). Dies on any other (a programmer error). */
double multilabel_metric(MetricId m, const uint8_t *pred, const uint8_t *gold, int n, int K);

#endif
