/* stats.c — summary statistics of repeated measurements (see stats.h). */
#include "core/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

Summary summarize(const double *v, int n) {
    CHECK_OR_DIE(n >= 1);
    double *s = xmalloc((size_t)n * sizeof *s);
    memcpy(s, v, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    Summary r = {.n = n, .min = s[0], .max = s[n - 1], .median = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2])};
    free(s);
    double sum = 0, ss = 0;
    for (int i = 0; i < n; i++) sum += v[i];
    r.mean = sum / n;
    for (int i = 0; i < n; i++) ss += (v[i] - r.mean) * (v[i] - r.mean);
    r.std = n > 1 ? sqrt(ss / (n - 1)) : 0.0;
    return r;
}
