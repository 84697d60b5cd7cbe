/* dev_loss.c — the loss of reported outputs on a split (see dev_loss.h). */
#include "train/dev_loss.h"

#include <math.h>

/* -log of probability p, floored so a confident mistake costs 27.6, not inf. */
static double neg_log(double p) { return -log(p > 1e-12 ? p : 1e-12); }

/* A multi-label row's binary cross-entropy, summed over its K labels. */
static double row_bce(const Example *e, const float *p, int K) {
    double sum = 0;
    for (int j = 0, at = 0; j < K; j++) {
        int gold = at < e->nlabels && e->labels[at] == j;   /* labels ascending */
        at += gold;
        sum += neg_log(gold ? p[j] : 1.0 - p[j]);
    }
    return sum;
}

double dev_loss(const Task *t, const Dataset *d, const float *out) {
    double sum = 0;
    long n = 0;
    for (int i = 0; i < d->n; i++) {
        const Example *e = &d->ex[i];
        if (t->multi_label) {   /* mean over rows and labels, as the sigmoid head's training loss */
            sum += row_bce(e, out + (size_t)i * (size_t)t->num_labels, t->num_labels) / t->num_labels;
        } else if (t->num_labels == 1) {
            double diff = (double)out[i] - e->score;
            sum += diff * diff;
        } else {
            if (e->label < 0 || e->label >= t->num_labels) continue;
            sum += neg_log(out[(size_t)i * (size_t)t->num_labels + (size_t)e->label]);
        }
        n++;
    }
    return n && isfinite(sum) ? round(sum / (double)n * 1e6) / 1e6 : NAN;
}
