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
 * Where the next cases go (multi-label and imbalanced classes): a
 * HEAD_SIGMOID kind for a multi-label task (K independent sigmoid outputs,
 * binary cross-entropy against each row's label set, reported as sigmoid
 * probabilities), per-class weights as the row weights softmax_xent already
 * takes (weight[label]), a positive weight per label inside the BCE, and a
 * focal term: each a case of head_loss and a field of Head, set from the
 * task and the run's settings, with no model changed. */
#ifndef GLUE_HEAD_H
#define GLUE_HEAD_H

#include "tasks/task.h"

typedef enum { HEAD_SOFTMAX, HEAD_REGRESSION } HeadKind;

typedef struct Head {
    HeadKind kind;
    int K;              /* outputs per row: classes, or 1 score */
    float score_scale;  /* regression: the model's outputs are scores / this (1: the scores themselves) */
    int cap;            /* rows the scratch below holds */
    int *labels;        /* (cap) a batch's classes */
    float *targets;     /* (cap) a batch's scores / score_scale */
} Head;

/* A head for num_outputs outputs per row (1: regression, else classes) and a
 * model's score_scale (1 when it has none; must be > 0). */
void head_init(Head *h, int num_outputs, float score_scale);
void head_free(Head *h);

/* The mean loss of logits (n, K) for rows[0..n) of d (their labels or
 * scores); dlogits (n, K), if non-NULL, gets the loss's gradient WRITTEN. n = 0
 * returns 0 (a data-parallel rank given no rows). */
float head_loss(Head *h, const Dataset *d, const int *rows, int n, const float *logits, float *dlogits);
/* out (n, K): what logits (n, K) say, as reported — class probabilities, or
 * scores. out may be logits. */
void head_outputs(const Head *h, const float *logits, int n, float *out);

#endif
