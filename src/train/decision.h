/* decision.h — the prediction rule of a multi-label task: from each row's K
 * sigmoid probabilities (head.h) to the set of labels predicted.
 *
 * Three rules (models/run_config.h RUN_SETTINGS_DECISION):
 *   threshold=T   every label with probability >= T (default 0.5);
 *   top_k=k       the k most probable labels of each row;
 *   threshold=tuned  one threshold per label, chosen after each evaluation of
 *                 the selection split (dev) to maximise that label's F1 on it
 *                 (metrics/thresholds.h, grid 0.01..0.99), as the GoEmotions
 *                 paper tunes on dev. The thresholds of the kept checkpoint
 *                 are stored in the run directory (DECISION_FILE) and used
 *                 unchanged on test and by predict: the test split never
 *                 chooses anything.
 * A row may get no label (a threshold nothing reaches): allowed, and counted
 * in the metrics (empty_predictions). Single-label tasks take the arg-max and
 * refuse these settings. */
#ifndef GLUE_DECISION_H
#define GLUE_DECISION_H

#include <stdint.h>

#include "tasks/task.h"

typedef struct cJSON cJSON;

/* The tuned thresholds in a run directory. */
#define DECISION_FILE "thresholds.json"

typedef enum { DECISION_THRESHOLD, DECISION_TOP_K, DECISION_TUNED } DecisionRule;

typedef struct Decision {
    DecisionRule rule;
    int K;
    float threshold;                 /* DECISION_THRESHOLD */
    int top_k;                       /* DECISION_TOP_K */
    float tuned[TASK_MAX_LABELS];    /* DECISION_TUNED: per label, once chosen */
    int have_tuned;                  /* tuned[] holds thresholds chosen on dev */
} Decision;

/* The default rule: threshold 0.5. */
void decision_default(Decision *d, int K);
/* The rule of config (absent keys: the defaults) for task t. 0, or -1 after
 * one message (a usage error): a value out of range, both a threshold and
 * top_k, or either on a task that is not multi-label. */
int decision_read(Decision *d, const cJSON *config, const Task *t);
/* DECISION_TUNED: choose the thresholds on prob (n, K) against gold (n, K)
 * (the selection split's; never test's). Other rules: nothing. */
void decision_tune(Decision *d, const float *prob, const uint8_t *gold, int n);
/* pred (n, K) 0/1 from prob (n, K). An untuned DECISION_TUNED uses 0.5. */
void decision_apply(const Decision *d, const float *prob, int n, uint8_t *pred);
/* Label sets of d's rows as an (n, K) 0/1 matrix (caller frees). */
uint8_t *decision_gold(const Dataset *data, int K);
/* The rule as results.json records it: {"rule": "tuned", "thresholds":
 * {"admiration": 0.31, ...}}. Caller frees. */
cJSON *decision_json(const Decision *d, const Task *t);
/* DECISION_FILE in dir: write the tuned thresholds (nothing for other
 * rules); read them back (0; -1 after a message when a tuned run has none). */
int decision_save(const Decision *d, const Task *t, const char *dir);
int decision_load(Decision *d, const Task *t, const char *dir);
/* The rule a trained run predicts with: its config.json's settings and, for
 * threshold=tuned, its DECISION_FILE; the default rule when dir is "" (a
 * model given by --init) or t is not multi-label. 0, or -1 after a message. */
int decision_of_run(Decision *d, const Task *t, const char *dir);

#endif
