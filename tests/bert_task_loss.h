/* bert_task_loss.h — the fine-tuning losses over BERT's task heads for the
 * encoder tests (tests only): each head's forward (models/bert/bert.h), the
 * loss of its outputs as the harness's head computes it (nn/softmax_xent,
 * nn/mse; src/train/head.h), and with backward = 1 the head's backward from
 * that loss's gradient (bert_backward is the caller's). The same calls as a
 * fine-tuning step, without a Dataset. */
#ifndef GLUE_TESTS_BERT_TASK_LOSS_H
#define GLUE_TESTS_BERT_TASK_LOSS_H

#include "models/bert/bert.h"

/* Classifier (K > 1: mean cross-entropy of labels (B), -1 ignored) or
 * regressor (K = 1: mean squared error against targets (B)) on the pooled
 * vectors; dropout when rng. */
float test_bert_head_loss(Bert *m, const int *labels, const float *targets, Rng *rng, int backward);
/* The pair-features head on n pairs: mean cross-entropy of labels (n). */
float test_bert_pair_loss(Bert *m, int n, const int *labels, Rng *rng, int backward);
/* The siamese head on n pairs: mean of (cos - target)^2 over targets (n). */
float test_bert_siamese_loss(Bert *m, int n, const float *targets, int backward);

#endif
