/* metrics.h — the official GLUE metrics (accuracy, F1, Matthews correlation,
 * Pearson, Spearman), and macro/micro F1 over every label (per-label scores:
 * metrics/per_label.h; multi-label predictions: metrics/multilabel.h). The GLUE
 * score is metrics/glue_score.h, corpus BLEU metrics/bleu.h.
 *
 * Every metric returns its natural scale (accuracy and F1 in [0,1], correlations
 * in [-1,1]); tables, results JSON and `--json` output show them ×100, the GLUE
 * leaderboard's convention. */
#ifndef GLUE_METRICS_H
#define GLUE_METRICS_H

typedef enum {
    METRIC_NONE = 0,
    METRIC_ACC,
    METRIC_F1,        /* binary, positive class 1 */
    METRIC_MCC,       /* Matthews correlation; K-class (Gorodkin's R_K) for K > 2 */
    METRIC_PEARSON,
    METRIC_SPEARMAN,  /* average ranks for ties */
    METRIC_MACRO_F1,  /* mean of the labels' F1 (metrics/per_label.h says which labels) */
    METRIC_MICRO_F1,  /* F1 of the counts summed over labels (single-label: the accuracy) */
} MetricId;

/* JSON key: "accuracy", "f1", "mcc", "pearson", "spearman", "macro_f1", "micro_f1" */
const char *metric_name(MetricId m);
/* Inverse of metric_name (case-insensitive); METRIC_NONE if unknown. */
MetricId metric_from_name(const char *name);

/* A metric that has no value is NaN, never a number made up for it (issue 42:
 * a NaN shown as 0.00 reads as "no correlation"): every metric of no rows,
 * and the correlations as scipy gives them — NaN when an input is constant
 * or not finite (a diverged model, a gold score beyond float's range) or
 * n < 2. Where the reference defines a value, it is that value: F1 without
 * any positive is 0 (sklearn's zero_division=0), MCC on a constant input is
 * 0 (sklearn's matthews_corrcoef). Callers show NaN as "nan" (metric_text),
 * JSON writes it as null, and the commands exit non-zero. Any finite scores
 * are fine, 1e308 included: Pearson scales its inputs first. Classes must lie
 * in [0, num_classes). */

double metric_accuracy(const int *pred, const int *gold, int n);
double metric_f1(const int *pred, const int *gold, int n);
double metric_mcc(const int *pred, const int *gold, int n, int num_classes);
double metric_pearson(const double *x, const double *y, int n);
double metric_spearman(const double *x, const double *y, int n);

/* v (already ×100) as a table shows it: "%.2f", or "nan" when it is not a
 * number (whatever NaN's sign bit; "inf" likewise). out: 16 bytes or more. */
void metric_text(double v, char *out, unsigned cap);

/* A metric on single-label predictions: classes (pred/gold) for
 * classification, scores (pred_score/gold_score) for regression. Multi-label
 * predictions: multilabel_metric (metrics/multilabel.h). */
double metric_compute(MetricId m, int n, int num_classes,
                      const int *pred, const int *gold,
                      const double *pred_score, const double *gold_score);

#endif
