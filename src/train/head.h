/* head.h — the output head of every classifier the harness trains: the loss
 * of a model's logits against the task's labels, its gradient, and what is
 * reported from logits (probabilities, scores). Models compute logits
 * (models/model.h ModelOps.forward) and take their gradient back
 * (ModelOps.backward); this is the one place that turns logits into a loss and
 * into predictions, so a loss is written once for every model. The losses
 * themselves are nn/'s ops; the head chooses and composes them.
 *
 * Kinds (from the task's outputs):
 *   HEAD_SOFTMAX     K >= 2 classes, one per row: mean softmax cross-entropy
 *                    (nn/softmax_xent.h) over rows whose label is not -1
 *                    (unlabelled); reports the softmax probabilities.
 *   HEAD_REGRESSION  K = 1 score: mean squared error (nn/mse.h) against the
 *                    row's score; reports the score.
 * The targets are the Dataset's own (Example.label, .score), read for the
 * batch's rows, so a model's features never carry labels.
 *
 * score_scale (regression): a model whose output is on another scale than
 * the task's scores (BERT's siamese head outputs a cosine in [-1, 1], STS-B's
 * scores are 0..5) says so (ModelOps.score_scale): the loss compares the output
 * with score / scale, and the reported score is output * scale.
 *
 *   HEAD_SIGMOID     a multi-label task (Task.multi_label): K independent
 *                    sigmoid outputs, mean binary cross-entropy with logits
 *                    (nn/sigmoid_bce.h) against each row's label set
 *                    (Example.labels), over the labelled rows; reports the
 *                    sigmoid probabilities (the prediction rule that turns
 *                    them into label sets: decision.h).
 *
 * The run's loss settings (models/run_config.h RUN_SETTINGS_LOSS), set by
 * head_configure from the config and the training split, with no model
 * changed:
 *   loss=focal        the focal term (1 - p_t)^focal_gamma (Lin et al. 2017)
 *                     on softmax (nn/softmax_focal.h) or sigmoid outputs;
 *   class_weights     softmax: each row weighted by its class's weight, the
 *                     mean normalised by the weights' sum (PyTorch's
 *                     CrossEntropyLoss(weight=)); "balanced" is scikit-learn's
 *                     n_samples / (K count_k) over train's labelled rows;
 *   pos_weight        sigmoid: each label's positive term weighted (PyTorch's
 *                     BCEWithLogitsLoss(pos_weight=)); "balanced" is
 *                     negatives / positives of the label in train.
 *   boost=label_error softmax: brightmart's label-error reweighting: the class
 *                     weights start at 1 and, after every epoch, the trainer
 *                     sets each class's to min(1.5, 1 / (acc_k + 0.001)), acc_k
 *                     the class's accuracy on dev (head_label_error_update; a
 *                     class absent from dev keeps 1); not with class_weights.
 * A weight of a class or label absent from train is 1 (nothing to balance).
 *
 * Per-example weights (stacked boosting, experiments/boost.h): example_weight,
 * when set, is one weight per row of the training split (the head's Dataset);
 * a row's weight is then its class weight times its own, and the batch's
 * loss is the sum of the weighted row losses over its labelled rows' count
 * (not their weighted mean: with weights of mean 1 over the split, a batch
 * estimates the split's weighted loss). Softmax only (head_example_weights).
 * Settings that do not apply (class_weights on a multi-label or regression
 * task, pos_weight on a single-label one, focal on regression) are refused by
 * head_settings_check, before a run writes anything. */
#ifndef GLUE_HEAD_H
#define GLUE_HEAD_H

#include "tasks/task.h"

typedef enum { HEAD_SOFTMAX, HEAD_REGRESSION, HEAD_SIGMOID } HeadKind;
typedef struct cJSON cJSON;

typedef struct Head {
    HeadKind kind;
    int K;              /* outputs per row: classes, or 1 score */
    float score_scale;  /* regression: the model's outputs are scores / this (1: the scores themselves) */
    int focal;          /* loss=focal */
    float gamma;        /* its exponent (0: plain cross-entropy) */
    float *class_weight;/* softmax: (K) per class, or NULL (all 1) */
    float *pos_weight;  /* sigmoid: (K) per label, or NULL (all 1) */
    int label_error;    /* boost=label_error: class_weight follows dev accuracy */
    const float *example_weight;  /* (rows of the training split) or NULL: not owned */
    int cap;            /* rows the scratch below holds */
    int *labels;        /* (cap) a batch's classes */
    float *targets;     /* (cap) a batch's scores / score_scale; sigmoid: (cap, K) 0/1 */
    float *weights;     /* (cap) a batch's row weights (class weights) */
    unsigned char *mask;/* (cap) sigmoid: the batch's labelled rows */
} Head;

/* A head for num_outputs outputs per row (1: regression, else classes; with
 * multi_label: K sigmoid labels) and a model's score_scale (1 when it has
 * none; must be > 0). Plain cross-entropy until head_configure. */
void head_init(Head *h, int num_outputs, int multi_label, float score_scale);
void head_free(Head *h);
/* 0, or -1 after one message (a usage error), for the loss settings of
 * config (absent keys: the defaults) on task t: values, and where they apply. */
int head_settings_check(const cJSON *config, const Task *t);
/* The loss settings of config (checked by head_settings_check: dies on a bad
 * one), with the weights "balanced" computes from train. */
void head_configure(Head *h, const cJSON *config, const Dataset *train);
/* What the head computes, as the run records it: {"kind": "sigmoid", "loss":
 * "bce", "pos_weight": [...], ...}. Caller frees. */
cJSON *head_describe(const Head *h);

/* boost=label_error: the class weights from dev's outputs probs (d->n, K) of
 * the split d: min(1.5, 1 / (acc_k + 0.001)) per class present in d, else 1. */
void head_label_error_update(Head *h, const Dataset *d, const float *probs);
/* Class weights set as given (K): a resumed run's last label-error weights. */
void head_set_class_weights(Head *h, const float *w);
/* Per-example weights w (one per row of the training split, >= 0, not owned,
 * kept by the caller while the head is used). 0, or -1 after a usage error:
 * the head is not softmax. */
int head_example_weights(Head *h, const float *w);

/* The mean loss of logits (n, K) for rows[0..n) of d (their labels or
 * scores); dlogits (n, K), if non-NULL, gets the loss's gradient WRITTEN. n = 0
 * returns 0 (a data-parallel rank given no rows). */
float head_loss(Head *h, const Dataset *d, const int *rows, int n, const float *logits, float *dlogits);
/* out (n, K): what logits (n, K) say, as reported — class probabilities, or
 * scores. out may be logits. */
void head_outputs(const Head *h, const float *logits, int n, float *out);

#endif
