/* thresholds.c — multi-label predictions from probabilities and the choice of
 * thresholds (see thresholds.h).
 *
 * Tuning sorts each label's dev probabilities once, highest first, and walks
 * the candidate thresholds from the highest down, adding the rows that reach
 * each one: O(n log n) per label whatever the number of candidates. Walking
 * downwards and replacing the best only on a strictly higher F1 is what gives
 * ties to the highest threshold. */
#include "metrics/thresholds.h"

#include "core/common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void thresholds_apply(const float *prob, int n, int K, float t, uint8_t *pred) {
    for (long i = 0; i < (long)n * K; i++) pred[i] = prob[i] >= t;
}

void thresholds_apply_per_label(const float *prob, int n, int K, const float *t, uint8_t *pred) {
    for (long i = 0; i < n; i++)
        for (int k = 0; k < K; k++) pred[i * K + k] = prob[i * K + k] >= t[k];
}

/* 1 when label a ranks before label b in row s (higher score; equal: lower id).
 * A NaN score ranks after every number. */
static int ranks_before(const float *s, int a, int b) {
    if (isnan(s[a]) || isnan(s[b])) return isnan(s[b]) && (!isnan(s[a]) || a < b);
    return s[a] > s[b] || (s[a] == s[b] && a < b);
}

void thresholds_top_k_ids(const float *row, int K, int k, int *top) {
    if (k < 1 || k > K) DIE("thresholds_top_k_ids: k %d not in [1, %d]", k, K);
    int m = 0;   /* top[0..m): the best so far, best first; k is small, so insertion */
    for (int j = 0; j < K; j++) {
        if (m == k && !ranks_before(row, j, top[k - 1])) continue;
        int at = m < k ? m++ : k - 1;
        for (; at > 0 && ranks_before(row, j, top[at - 1]); at--) top[at] = top[at - 1];
        top[at] = j;
    }
}

void thresholds_top_k(const float *prob, int n, int K, int k, uint8_t *pred) {
    int *top = xmalloc(sizeof *top * (size_t)(k > 0 ? k : 1));
    memset(pred, 0, (size_t)n * (size_t)K);
    for (long i = 0; i < n; i++) {
        thresholds_top_k_ids(prob + i * K, K, k, top);
        for (int r = 0; r < k; r++) pred[i * K + top[r]] = 1;
    }
    free(top);
}

int thresholds_grid(double lo, double hi, double step, float *out, int max) {
    int n = 0;
    if (!(step > 0)) return 0;
    for (int i = 0; n < max; i++) {
        double v = lo + i * step;
        if (v > hi + 0.5 * step) break;
        out[n++] = (float)v;
    }
    return n;
}

typedef struct { float p; uint8_t gold; } Cell;

/* Highest first; NaN last (it never reaches a threshold). */
static int cell_cmp(const void *a, const void *b) {
    float x = ((const Cell *)a)->p, y = ((const Cell *)b)->p;
    if (isnan(x) || isnan(y)) return isnan(x) - isnan(y);
    return (x < y) - (x > y);
}

static int float_desc(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    if (isnan(x) || isnan(y)) return isnan(x) - isnan(y);
    return (x < y) - (x > y);
}

/* F1 = num/den as the exact fraction 2tp / (2tp + fp + fn); 1 when a/b > c/d. */
static int f1_above(long long a, long long b, long long c, long long d) {
    if (b == 0) return 0;            /* F1 0 */
    if (d == 0) return a > 0;
    return a * d > c * b;
}

/* One label: cells sorted (c[0..n)), positives its gold count, candidates cand
 * (descending, NULL: the distinct probabilities). */
static float tune_label(const Cell *c, int n, long positives, const float *cand, int ncand, float fallback,
                        double *f1) {
    long long best_num = 0, best_den = 0;
    float best_t = fallback;
    long tp = 0, fp = 0;
    int i = 0;
    for (int j = 0; cand ? j < ncand : i < n; j++) {
        float t = cand ? cand[j] : c[i].p;
        if (isnan(t)) break;
        for (; i < n && c[i].p >= t; i++) {   /* NaN cells fail the test and stay out */
            tp += c[i].gold != 0;
            fp += c[i].gold == 0;
        }
        long long num = 2LL * tp, den = 2LL * tp + fp + (positives - tp);
        if (num > 0 && f1_above(num, den, best_num, best_den)) {
            best_num = num;
            best_den = den;
            best_t = t;
        }
    }
    if (f1) *f1 = best_den ? (double)best_num / (double)best_den : 0.0;
    return best_t;
}

void thresholds_tune(const float *prob, const uint8_t *gold, int n, int K, const float *grid, int ngrid,
                     float fallback, float *t, double *f1) {
    Cell *c = xmalloc(sizeof *c * (size_t)(n > 0 ? n : 1));
    float *cand = NULL;
    if (grid && ngrid > 0) {
        cand = xmalloc(sizeof *cand * (size_t)ngrid);
        memcpy(cand, grid, sizeof *cand * (size_t)ngrid);
        qsort(cand, (size_t)ngrid, sizeof *cand, float_desc);
    }
    for (int k = 0; k < K; k++) {
        long positives = 0;
        for (long i = 0; i < n; i++) {
            c[i] = (Cell){prob[i * K + k], gold[i * K + k]};
            positives += c[i].gold != 0;
        }
        qsort(c, (size_t)n, sizeof *c, cell_cmp);
        t[k] = tune_label(c, n, positives, cand, cand ? ngrid : 0, fallback, f1 ? &f1[k] : NULL);
    }
    free(cand);
    free(c);
}

void thresholds_micro_f1_curve(const float *prob, const uint8_t *gold, int n, int K, const float *grid, int ngrid,
                               double *f1) {
    for (int j = 0; j < ngrid; j++) {
        long tp = 0, fp = 0, fn = 0;
        for (long i = 0; i < (long)n * K; i++) {
            int p = prob[i] >= grid[j], g = gold[i] != 0;
            tp += p && g;
            fp += p && !g;
            fn += !p && g;
        }
        f1[j] = tp ? 2.0 * (double)tp / (double)(2 * tp + fp + fn) : 0.0;
    }
}
