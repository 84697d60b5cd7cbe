/* multilabel.c — multi-label scores (see multilabel.h): the per-label counts of
 * per_label.c for the micro and macro averages and the table, plus what is
 * counted per row: the samples average, Hamming loss, subset accuracy, empty
 * predictions, and precision@k from scores. */
#include "metrics/multilabel.h"

#include "core/common.h"
#include "metrics/thresholds.h"

#include <stdlib.h>
#include <string.h>

/* One row's contribution: the samples average's P, R, F1 and whether the row
 * is exactly right; *wrong gets its wrong cells. */
static void row_score(const uint8_t *p, const uint8_t *g, int K, PrfAverage *sum, long *exact, long *wrong,
                      long *empty_pred, long *empty_gold) {
    long tp = 0, np = 0, ng = 0, bad = 0;
    for (int k = 0; k < K; k++) {
        int pk = p[k] != 0, gk = g[k] != 0;
        tp += pk && gk;
        np += pk;
        ng += gk;
        bad += pk != gk;
    }
    if (np) sum->precision += (double)tp / (double)np;
    if (ng) sum->recall += (double)tp / (double)ng;
    if (np + ng) sum->f1 += 2.0 * (double)tp / (double)(np + ng);
    *exact += bad == 0;
    *wrong += bad;
    *empty_pred += np == 0;
    *empty_gold += ng == 0;
}

void multilabel_score(const uint8_t *pred, const uint8_t *gold, int n, int K, MultiLabelScores *out,
                      LabelScore *per_label) {
    if (K < 1 || n < 0) DIE("multilabel_score: n %d, K %d", n, K);
    memset(out, 0, sizeof *out);
    LabelCounts *c = xmalloc(sizeof *c * (size_t)K);
    label_counts_multi(pred, gold, n, K, c);
    out->micro = label_micro_average(c, K);
    out->macro = label_macro_average(c, K, 0);
    if (per_label) label_scores(c, K, per_label);
    free(c);
    long exact = 0, wrong = 0;
    for (long i = 0; i < n; i++)
        row_score(pred + i * K, gold + i * K, K, &out->samples, &exact, &wrong, &out->empty_predictions,
                  &out->empty_gold);
    if (n == 0) return;
    out->samples.precision /= n;
    out->samples.recall /= n;
    out->samples.f1 /= n;
    out->hamming_loss = (double)wrong / ((double)n * K);
    out->subset_accuracy = (double)exact / n;
}

double multilabel_precision_at_k(const float *score, const uint8_t *gold, int n, int K, int k) {
    if (k < 1 || k > K) DIE("multilabel_precision_at_k: k %d not in [1, %d]", k, K);
    if (n <= 0) return 0.0;
    int *top = xmalloc(sizeof *top * (size_t)k);
    double sum = 0;
    for (long i = 0; i < n; i++) {
        thresholds_top_k_ids(score + i * K, K, k, top);
        long hit = 0;
        for (int r = 0; r < k; r++) hit += gold[i * K + top[r]] != 0;
        sum += (double)hit / k;
    }
    free(top);
    return sum / n;
}

double multilabel_metric(MetricId m, const uint8_t *pred, const uint8_t *gold, int n, int K) {
    MultiLabelScores s;
    switch (m) {
    case METRIC_MACRO_F1:
    case METRIC_MICRO_F1:
    case METRIC_ACC:
        multilabel_score(pred, gold, n, K, &s, NULL);
        return m == METRIC_MACRO_F1 ? s.macro.f1 : m == METRIC_MICRO_F1 ? s.micro.f1 : s.subset_accuracy;
    default:
        DIE("multilabel_metric: %s is not a multi-label metric", metric_name(m));
    }
}
