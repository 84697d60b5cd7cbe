/* metrics.c — the GLUE metrics (see metrics.h), matching scikit-learn and scipy:
 * accuracy_score, f1_score (zero_division=0), matthews_corrcoef (binary and
 * K-class), pearsonr, spearmanr (average ranks for ties).
 *
 * Everything is accumulated in double with two-pass means, so a million
 * near-identical scores do not lose their variance to cancellation. Where the
 * reference has no value (scipy's nan) the metric is NaN too; where it defines
 * one for a degenerate input (sklearn: F1 and MCC give 0), that value. */
#include "metrics/metrics.h"

#include "metrics/per_label.h"

#include "core/common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const METRIC_NAMES[] = {
    [METRIC_NONE] = "none",        [METRIC_ACC] = "accuracy", [METRIC_F1] = "f1",
    [METRIC_MCC] = "mcc",          [METRIC_PEARSON] = "pearson",
    [METRIC_SPEARMAN] = "spearman", [METRIC_MACRO_F1] = "macro_f1", [METRIC_MICRO_F1] = "micro_f1",
};
#define NUM_METRIC_NAMES ((int)(sizeof METRIC_NAMES / sizeof METRIC_NAMES[0]))

const char *metric_name(MetricId m) {
    if ((int)m < 0 || (int)m >= NUM_METRIC_NAMES) DIE("metric_name: bad metric id %d", (int)m);
    return METRIC_NAMES[m];
}

MetricId metric_from_name(const char *name) {
    for (int m = 1; m < NUM_METRIC_NAMES; m++)
        if (strcasecmp(name, METRIC_NAMES[m]) == 0) return (MetricId)m;
    return METRIC_NONE;
}

double metric_accuracy(const int *pred, const int *gold, int n) {
    if (n <= 0) return NAN;   /* no rows: no value (task_load refuses such a split) */
    long correct = 0;
    for (int i = 0; i < n; i++) correct += pred[i] == gold[i];
    return (double)correct / n;
}

double metric_f1(const int *pred, const int *gold, int n) {
    if (n <= 0) return NAN;
    long tp = 0, fp = 0, fn = 0;
    for (int i = 0; i < n; i++) {
        int p = pred[i] == 1, g = gold[i] == 1;
        tp += p && g;
        fp += p && !g;
        fn += !p && g;
    }
    /* F1 = 2PR/(P+R) = 2tp/(2tp+fp+fn); sklearn's zero_division=0 when undefined. */
    long denom = 2 * tp + fp + fn;
    return denom ? 2.0 * (double)tp / (double)denom : 0.0;
}

/* Gorodkin's R_K from the confusion matrix, written as sklearn writes it:
 * (c*s - sum_k p_k t_k) / sqrt((s^2 - sum p_k^2)(s^2 - sum t_k^2)), where c is the
 * number correct, s the number of samples, p_k / t_k the predicted / true counts
 * of class k. For K = 2 this is the usual binary MCC. */
double metric_mcc(const int *pred, const int *gold, int n, int num_classes) {
    int K = num_classes;
    if (K < 2) DIE("metric_mcc: num_classes %d < 2", K);
    if (n <= 0) return NAN;
    double *t = xcalloc((size_t)K, sizeof *t), *p = xcalloc((size_t)K, sizeof *p);
    double correct = 0;
    for (int i = 0; i < n; i++) {
        if (pred[i] < 0 || pred[i] >= K || gold[i] < 0 || gold[i] >= K)
            DIE("metric_mcc: class out of range at %d (pred %d, gold %d, K %d)", i, pred[i], gold[i], K);
        t[gold[i]] += 1;
        p[pred[i]] += 1;
        correct += pred[i] == gold[i];
    }
    double s = n, pt = 0, pp = 0, tt = 0;
    for (int k = 0; k < K; k++) {
        pt += p[k] * t[k];
        pp += p[k] * p[k];
        tt += t[k] * t[k];
    }
    free(t);
    free(p);
    double cov_pt = correct * s - pt, cov_pp = s * s - pp, cov_tt = s * s - tt;
    if (cov_pp * cov_tt == 0) return 0.0;
    double r = cov_pt / sqrt(cov_pp * cov_tt);
    return r > 1 ? 1 : r < -1 ? -1 : r;
}

/* A power of two near max |v[i]|, so v[i] / scale lies in (-2, 2) exactly (a
 * power of two changes no mantissa): the sums below then stay below 4n and
 * cannot overflow, whatever finite values a prediction file holds (1e308 would
 * otherwise turn the mean into inf and the correlation into NaN). 0 when every
 * value is 0. Pearson's r does not change when an input is scaled. */
static double pearson_scale(const double *v, int n) {
    double m = 0;
    for (int i = 0; i < n; i++) m = fmax(m, fabs(v[i]));
    if (m == 0) return 0;
    int e;
    frexp(m, &e);   /* m = f * 2^e, f in [0.5, 1); 2^e itself overflows for m near DBL_MAX */
    return ldexp(1.0, e - 1);
}

double metric_pearson(const double *x, const double *y, int n) {
    if (n < 2) return NAN;
    for (int i = 0; i < n; i++)
        if (!isfinite(x[i]) || !isfinite(y[i])) return NAN;   /* no value: see metrics.h */
    double ax = pearson_scale(x, n), ay = pearson_scale(y, n);
    if (ax == 0 || ay == 0) return NAN;   /* all zero: constant */
    double mx = 0, my = 0;
    for (int i = 0; i < n; i++) { mx += x[i] / ax; my += y[i] / ay; }
    mx /= n;
    my /= n;
    double sxy = 0, sxx = 0, syy = 0;
    for (int i = 0; i < n; i++) {
        double dx = x[i] / ax - mx, dy = y[i] / ay - my;
        sxy += dx * dy;
        sxx += dx * dx;
        syy += dy * dy;
    }
    if (sxx == 0 || syy == 0) return NAN;   /* constant input: scipy gives nan */
    double r = sxy / (sqrt(sxx) * sqrt(syy));
    return r > 1 ? 1 : r < -1 ? -1 : r;
}

typedef struct { double v; int i; } Ranked;

static int ranked_cmp(const void *a, const void *b) {
    const Ranked *x = a, *y = b;
    if (x->v < y->v) return -1;
    if (x->v > y->v) return 1;
    return (x->i > y->i) - (x->i < y->i);   /* total order: qsort is not stable */
}

/* 1-based ranks; tied values all get the mean of the ranks they span. */
static void ranks_average(const double *x, int n, double *rank) {
    Ranked *r = xmalloc(sizeof *r * (size_t)n);
    for (int i = 0; i < n; i++) r[i] = (Ranked){x[i], i};
    qsort(r, (size_t)n, sizeof *r, ranked_cmp);
    for (int lo = 0; lo < n;) {
        int hi = lo + 1;
        while (hi < n && r[hi].v == r[lo].v) hi++;
        double avg = 0.5 * (double)(lo + 1 + hi);   /* mean of lo+1 .. hi */
        for (int k = lo; k < hi; k++) rank[r[k].i] = avg;
        lo = hi;
    }
    free(r);
}

double metric_spearman(const double *x, const double *y, int n) {
    if (n < 2) return NAN;
    for (int i = 0; i < n; i++)
        if (!isfinite(x[i]) || !isfinite(y[i])) return NAN;   /* no order to rank */
    double *rx = xmalloc(sizeof *rx * (size_t)n), *ry = xmalloc(sizeof *ry * (size_t)n);
    ranks_average(x, n, rx);
    ranks_average(y, n, ry);
    double r = metric_pearson(rx, ry, n);
    free(rx);
    free(ry);
    return r;
}

void metric_text(double v, char *out, unsigned cap) {
    if (isnan(v)) snprintf(out, cap, "nan");
    else if (isinf(v)) snprintf(out, cap, v > 0 ? "inf" : "-inf");
    else snprintf(out, cap, "%.2f", v);
}

double metric_compute(MetricId m, int n, int num_classes,
                      const int *pred, const int *gold,
                      const double *pred_score, const double *gold_score) {
    switch (m) {
    case METRIC_ACC:
    case METRIC_F1:
    case METRIC_MCC:
    case METRIC_MACRO_F1:
    case METRIC_MICRO_F1:
        if (!pred || !gold) DIE("metric_compute: %s needs class predictions", metric_name(m));
        if (m == METRIC_ACC) return metric_accuracy(pred, gold, n);
        if (m == METRIC_F1) return metric_f1(pred, gold, n);
        if (m == METRIC_MACRO_F1) return metric_macro_f1(pred, gold, n, num_classes);
        if (m == METRIC_MICRO_F1) return metric_micro_f1(pred, gold, n, num_classes);
        return metric_mcc(pred, gold, n, num_classes);
    case METRIC_PEARSON:
    case METRIC_SPEARMAN:
        if (!pred_score || !gold_score) DIE("metric_compute: %s needs scores", metric_name(m));
        return m == METRIC_PEARSON ? metric_pearson(pred_score, gold_score, n)
                                   : metric_spearman(pred_score, gold_score, n);
    default:
        DIE("metric_compute: bad metric id %d", (int)m);
    }
}
