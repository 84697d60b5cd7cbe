/* per_label.h — precision, recall and F1 of each label, and their micro and
 * macro averages, for single-label predictions (one class per row) and for
 * multi-label ones (an (n, K) 0/1 matrix, row-major: cell i*K+k is 1 when row i
 * has label k).
 *
 * Both start from the per-label counts (true positives, false positives,
 * false negatives), so one table and one pair of averages serve every task.
 * Values match scikit-learn's precision_recall_fscore_support with its default
 * zero_division ("warn", which gives 0): a precision with nothing predicted, a
 * recall with no gold positive, and an F1 with neither, are 0 — never NaN.
 *
 * Which labels a macro average covers is scikit-learn's default too: for
 * multi-label predictions all K columns (an indicator matrix's columns, a label
 * with no gold and no predicted row scoring 0); for single-label predictions
 * only the labels that occur among the gold or the predicted classes (a class
 * absent from both is not averaged in). The per-label table always has K rows. */
#ifndef GLUE_PER_LABEL_H
#define GLUE_PER_LABEL_H

#include <stdint.h>

typedef struct LabelCounts {
    long tp, fp, fn;           /* support (gold positives) = tp + fn; predicted = tp + fp */
} LabelCounts;

typedef struct LabelScore {
    double precision, recall, f1;
    long support;              /* rows whose gold labels include this one */
    long predicted;            /* rows predicted with it */
} LabelScore;

typedef struct PrfAverage {
    double precision, recall, f1;
} PrfAverage;

/* Counts of classes pred/gold (n rows, each in [0, K)) into c[0..K). */
void label_counts_single(const int *pred, const int *gold, int n, int K, LabelCounts *c);
/* Counts of (n, K) 0/1 matrices (any non-zero byte is 1) into c[0..K). */
void label_counts_multi(const uint8_t *pred, const uint8_t *gold, int n, int K, LabelCounts *c);

/* The table: out[k] for k < K. */
void label_scores(const LabelCounts *c, int K, LabelScore *out);
/* Micro average: the counts summed over the labels, then P, R and F1. */
PrfAverage label_micro_average(const LabelCounts *c, int K);
/* Macro average: the unweighted mean of the labels' P, R and F1; with
 * present_only, over the labels with a gold or predicted row only (0 when there
 * is none). */
PrfAverage label_macro_average(const LabelCounts *c, int K, int present_only);

/* Single-label macro F1 (scikit-learn's f1_score(average="macro")). */
double metric_macro_f1(const int *pred, const int *gold, int n, int K);
/* Single-label micro F1: the accuracy, since every row has one gold and one
 * predicted class. Kept for a single definition of "micro_f1" across tasks. */
double metric_micro_f1(const int *pred, const int *gold, int n, int K);

#endif
