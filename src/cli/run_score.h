/* run_score.h — scoring a trained run on a labelled split under the run's own
 * prediction rule (a multi-label run's thresholds.json): what `glue eval`
 * does for dev and for a test split with public labels (GoEmotions, a
 * user's --test file), and what `glue compare` reuses for its test columns,
 * cached in the run directory so a second compare does not score again. */
#ifndef GLUE_RUN_SCORE_H
#define GLUE_RUN_SCORE_H

#include "models/model.h"
#include "train/decision.h"

/* The cache of a run's test metrics (run_score_test). */
#define RUN_SCORE_TEST_FILE "test_metrics.json"

/* The eval batch the run in dir was configured with (config.json), else the default. */
int run_score_batch(const char *dir);
/* 1 when t's test split has labels that are scored here (a user's --test
 * file, GoEmotions' public labels), 0 when they are hidden (GLUE's). */
int run_score_test_public(const Task *t);
/* Scores m (ops) on d, a labelled split of t, under rule: out[split name]
 * gets the task's metrics, out["details"][split name] the per-label table and
 * averages (written beside the run as <split>_per_label.json/.md when dir is
 * not ""). *pred (may be NULL; caller frees) gets the outputs, *seconds (may
 * be NULL) the predicting time. 0, or 1 after a message. */
int run_score_dataset(const ModelOps *ops, Model *m, const Task *t, const Dataset *d, int batch,
                      const Decision *rule, const char *dir, cJSON *out, float **pred, double *seconds);
/* The finished run in dir scored on t's public test split, as `glue eval
 * --split test --run DIR` scores it: {"test": {metrics}, "details": {"test":
 * ...}}. Read from dir/RUN_SCORE_TEST_FILE when that was made from the run's
 * present results.json and thresholds.json, else computed and written there
 * (atomically). NULL after a message. Caller frees. */
cJSON *run_score_test(const ModelOps *ops, const Task *t, const char *dir);

#endif
