/* per_label.c — per-label precision, recall and F1 and their averages (see
 * per_label.h), as scikit-learn's precision_recall_fscore_support computes them
 * with zero_division=0.
 *
 * F1 is taken from the counts, 2tp / (2tp + fp + fn), which equals 2PR/(P+R)
 * whenever that is defined and is 0 exactly where scikit-learn gives 0. */
#include "metrics/per_label.h"

#include "core/common.h"

#include <stdlib.h>
#include <string.h>

/* a / b, or 0 when b is 0 (zero_division=0). */
static double ratio(long a, long b) { return b ? (double)a / (double)b : 0.0; }

void label_counts_single(const int *pred, const int *gold, int n, int K, LabelCounts *c) {
    memset(c, 0, sizeof *c * (size_t)K);
    for (int i = 0; i < n; i++) {
        int p = pred[i], g = gold[i];
        if (p < 0 || p >= K || g < 0 || g >= K)
            DIE("label_counts_single: class out of range at %d (pred %d, gold %d, K %d)", i, p, g, K);
        if (p == g) {
            c[p].tp++;
        } else {
            c[p].fp++;
            c[g].fn++;
        }
    }
}

void label_counts_multi(const uint8_t *pred, const uint8_t *gold, int n, int K, LabelCounts *c) {
    memset(c, 0, sizeof *c * (size_t)K);
    for (long i = 0; i < n; i++) {
        const uint8_t *p = pred + i * K, *g = gold + i * K;
        for (int k = 0; k < K; k++) {
            int pk = p[k] != 0, gk = g[k] != 0;
            c[k].tp += pk && gk;
            c[k].fp += pk && !gk;
            c[k].fn += !pk && gk;
        }
    }
}

static LabelScore score_of(const LabelCounts *c) {
    return (LabelScore){.precision = ratio(c->tp, c->tp + c->fp), .recall = ratio(c->tp, c->tp + c->fn),
                        .f1 = ratio(2 * c->tp, 2 * c->tp + c->fp + c->fn), .support = c->tp + c->fn,
                        .predicted = c->tp + c->fp};
}

void label_scores(const LabelCounts *c, int K, LabelScore *out) {
    for (int k = 0; k < K; k++) out[k] = score_of(&c[k]);
}

PrfAverage label_micro_average(const LabelCounts *c, int K) {
    LabelCounts sum = {0, 0, 0};
    for (int k = 0; k < K; k++) {
        sum.tp += c[k].tp;
        sum.fp += c[k].fp;
        sum.fn += c[k].fn;
    }
    LabelScore s = score_of(&sum);
    return (PrfAverage){s.precision, s.recall, s.f1};
}

PrfAverage label_macro_average(const LabelCounts *c, int K, int present_only) {
    PrfAverage a = {0, 0, 0};
    int m = 0;
    for (int k = 0; k < K; k++) {
        if (present_only && c[k].tp + c[k].fp + c[k].fn == 0) continue;
        LabelScore s = score_of(&c[k]);
        a.precision += s.precision;
        a.recall += s.recall;
        a.f1 += s.f1;
        m++;
    }
    if (m) {
        a.precision /= m;
        a.recall /= m;
        a.f1 /= m;
    }
    return a;
}

/* The single-label counts of pred/gold, then avg. */
static PrfAverage single_average(const int *pred, const int *gold, int n, int K, int macro) {
    if (K < 1) DIE("per-label metrics: %d classes", K);
    LabelCounts *c = xmalloc(sizeof *c * (size_t)K);
    label_counts_single(pred, gold, n, K, c);
    PrfAverage a = macro ? label_macro_average(c, K, 1) : label_micro_average(c, K);
    free(c);
    return a;
}

double metric_macro_f1(const int *pred, const int *gold, int n, int K) { return single_average(pred, gold, n, K, 1).f1; }

double metric_micro_f1(const int *pred, const int *gold, int n, int K) { return single_average(pred, gold, n, K, 0).f1; }
