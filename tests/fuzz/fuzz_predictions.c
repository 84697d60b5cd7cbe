/* fuzz_predictions.c — leaderboard prediction files for `glue score`
 * (eval/predictions.c), for the task byte 0 picks, then the task's metrics on
 * what was read against a made-up gold standard: no metric may be NaN or
 * infinite (issue 22: a prediction of 1e308 gave 'pearson -nan'). */
#include "metrics/metrics.h"
#include "eval/predictions.h"
#include "tests/fuzz/fuzz_util.h"

#include <math.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    const Task *t = &TASKS[data[0] % NUM_TASKS];
    const char *path = fuzz_path("pred.tsv");
    fuzz_write(path, data + 1, size - 1, data[0] >> 7);
    Predictions p;
    if (predictions_read(path, t, &p) != 0) return 0;
    int n = p.n, K = t->num_labels;
    if (n == 0) {   /* no arrays to score (glue score then reports the missing rows) */
        predictions_free(&p);
        return 0;
    }
    int *gold = malloc(sizeof(int) * (size_t)(n + 1));
    double *gold_score = malloc(sizeof(double) * (size_t)(n + 1));
    for (int i = 0; i < n; i++) {
        if (K > 1 && (p.label[i] < 0 || p.label[i] >= K)) __builtin_trap();
        if (K == 1 && !isfinite(p.score[i])) __builtin_trap();
        gold[i] = (int)(p.index[i] % (K > 1 ? K : 2));
        gold_score[i] = (double)(p.index[i] % 6);
    }
    for (int m = 0; m < 2 && t->metrics[m] != METRIC_NONE; m++) {
        double v = metric_compute(t->metrics[m], n, K > 1 ? K : 2, K > 1 ? p.label : NULL, K > 1 ? gold : NULL,
                                  K == 1 ? p.score : NULL, K == 1 ? gold_score : NULL);
        /* a correlation of constant scores is not a number (as scipy's); every
         * other value is a finite score in [-1, 1] */
        int corr = t->metrics[m] == METRIC_PEARSON || t->metrics[m] == METRIC_SPEARMAN;
        if (isnan(v) ? !corr : (!isfinite(v) || v < -1 || v > 1)) __builtin_trap();
    }
    free(gold);
    free(gold_score);
    predictions_free(&p);
    return 0;
}
