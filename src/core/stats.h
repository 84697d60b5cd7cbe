/* stats.h — summary statistics of repeated measurements, in one place for
 * both users: benchmarks report median, min and max of their timings (robust
 * on a shared, noisy machine; eval/bench), and `glue finetune --seeds` reports
 * the mean and sample standard deviation of the seeds' scores with min and max. */
#ifndef GLUE_CORE_STATS_H
#define GLUE_CORE_STATS_H

typedef struct Summary {
    int n;
    double mean;
    double std;      /* sample standard deviation (divisor n - 1); 0 when n == 1 */
    double median;   /* the mean of the middle two when n is even */
    double min, max;
} Summary;

/* Summary of v[0..n), n >= 1 (dies otherwise). */
Summary summarize(const double *v, int n);

#endif
