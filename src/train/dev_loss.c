/* dev_loss.c — the loss of reported outputs on a split (see dev_loss.h). */
#include "train/dev_loss.h"

#include <math.h>

double dev_loss(const Task *t, const Dataset *d, const float *out) {
    if (t->multi_label) return NAN;
    double sum = 0;
    long n = 0;
    for (int i = 0; i < d->n; i++) {
        const Example *e = &d->ex[i];
        if (t->num_labels == 1) {
            double diff = (double)out[i] - e->score;
            sum += diff * diff;
        } else {
            if (e->label < 0 || e->label >= t->num_labels) continue;
            double p = out[(size_t)i * (size_t)t->num_labels + (size_t)e->label];
            sum += -log(p > 1e-12 ? p : 1e-12);
        }
        n++;
    }
    return n && isfinite(sum) ? round(sum / (double)n * 1e6) / 1e6 : NAN;
}
