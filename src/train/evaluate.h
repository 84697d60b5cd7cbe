/* evaluate.h — running a model over a whole split and scoring it: the part of
 * the training loop that `glue eval`, `glue predict` and `glue compare` share.
 *
 * Predictions are made in batches sorted by length when the model tells lengths
 * (ModelOps.length), cut where the lengths change (train/length_batches.h), so
 * a model that pads to the longest row of a batch pads little, however mixed
 * the rows of one call are (a server's batch of requests); outputs land back
 * in the split's row order. */
#ifndef GLUE_EVALUATE_H
#define GLUE_EVALUATE_H

#include "models/model.h"

typedef struct Decision Decision;

/* Rows per prediction batch unless the config says "eval_batch". */
#define EVALUATE_BATCH_DEFAULT 64

/* Outputs per row: K classes, or 1 score for regression (num_labels == 1). */
int evaluate_num_outputs(const Task *t);
/* out (n, num_outputs) for rows[0..n) of e, as reported: probabilities, or
 * scores — the model's logits (ModelOps.forward) through the head (head.h),
 * or its own predict (fastText). */
void evaluate_rows(const ModelOps *ops, Model *m, const Encoded *e, const int *rows, int n, int num_outputs,
                   float *out);
/* evaluate_rows for a task: sigmoid probabilities for a multi-label one. */
void evaluate_rows_task(const ModelOps *ops, Model *m, const Encoded *e, const int *rows, int n, const Task *t,
                        float *out);
/* out (n, evaluate_num_outputs(t)) for rows 0..n) of e, in row order. *seconds (may be
 * NULL) gets the wall time spent predicting. */
void evaluate_predict_all(const ModelOps *ops, Model *m, const Encoded *e, int n, const Task *t, int batch,
                          float *out, double *seconds);
/* Encode d, predict every row, free the features: out (d->n, evaluate_num_outputs),
 * caller frees; NULL when the model could not encode d (it said why). */
float *evaluate_predict_dataset(const ModelOps *ops, Model *m, const Dataset *d, int batch, double *seconds);
/* Index of the largest of p[0..k). */
int evaluate_argmax(const float *p, int k);
/* The task's metrics of out (n, evaluate_num_outputs) against d's labels, as
 * {"accuracy": 91.2, ...} (×100, metric_name keys, primary first). */
cJSON *evaluate_metrics(const Task *t, const Dataset *d, const float *out);
/* The same with a multi-label task's prediction rule (decision.h; NULL: the
 * default threshold); a single-label task ignores it. */
cJSON *evaluate_metrics_rule(const Task *t, const Dataset *d, const float *out, const Decision *rule);
/* Beyond the task's metrics (x100 but hamming_loss): a classification
 * split's per-label table ("per_label": label, precision, recall, f1,
 * support, predicted) and averages — multi-label: micro/macro/samples
 * precision, recall and F1, hamming_loss, subset_accuracy, empty_predictions
 * and the rule; single-label: macro precision/recall/F1 and accuracy. NULL
 * for regression. Caller frees. */
cJSON *evaluate_details(const Task *t, const Dataset *d, const float *out, const Decision *rule);
/* Selection score of a metrics object: the mean of the task's metrics in it
 * (×100 like them), a multi-label task's primary metric alone (macro-F1:
 * micro-F1 follows the frequent labels); NaN if one is missing. */
double evaluate_score(const Task *t, const cJSON *metrics);
/* Majority baseline on d: the most frequent training class (ties: lowest
 * index), or the mean training score for regression; multi-label: each
 * label's training frequency as its probability. Fills out like a model's
 * predictions (n, evaluate_num_outputs). */
void evaluate_majority_predict(const Task *t, const Dataset *train, int n, float *out);

#endif
