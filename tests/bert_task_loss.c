/* bert_task_loss.c — the fine-tuning losses over BERT's task heads, for the
 * encoder tests (see bert_task_loss.h). */
#include "tests/bert_task_loss.h"

#include <stdlib.h>

#include "core/common.h"
#include "models/bert/bert_work.h"
#include "nn/mse.h"
#include "nn/softmax_xent.h"

/* The loss of logits (n, K) against labels or targets; with backward, its
 * gradient into dlogits (zeroed here: the ops add). */
static float task_loss(const float *logits, float *dlogits, const int *labels, const float *targets, int n, int K) {
    if (dlogits)
        for (long i = 0; i < (long)n * K; i++) dlogits[i] = 0;
    return K == 1 ? mse_forward_backward(dlogits, logits, targets, n)
                  : softmax_xent_forward_backward(dlogits, logits, labels, NULL, n, K, -1);
}

float test_bert_head_loss(Bert *m, const int *labels, const float *targets, Rng *rng, int backward) {
    int B = m->work->B, K = m->heads.num_labels;
    float *logits = xmalloc(sizeof(float) * (size_t)B * K), *d = backward ? xmalloc(sizeof(float) * (size_t)B * K) : NULL;
    bert_head_forward(m, rng, logits);
    float loss = task_loss(logits, d, labels, targets, B, K);
    if (backward) bert_head_backward(m, d);
    free(logits);
    free(d);
    return loss;
}

float test_bert_pair_loss(Bert *m, int n, const int *labels, Rng *rng, int backward) {
    int K = m->heads.num_labels;
    float *logits = xmalloc(sizeof(float) * (size_t)n * K), *d = backward ? xmalloc(sizeof(float) * (size_t)n * K) : NULL;
    bert_pair_features_forward(m, n, rng, logits);
    float loss = task_loss(logits, d, labels, NULL, n, K);
    if (backward) bert_pair_features_backward(m, d);
    free(logits);
    free(d);
    return loss;
}

float test_bert_siamese_loss(Bert *m, int n, const float *targets, int backward) {
    float *scores = xmalloc(sizeof(float) * (size_t)n), *d = backward ? xmalloc(sizeof(float) * (size_t)n) : NULL;
    bert_siamese_forward(m, scores);
    float loss = task_loss(scores, d, NULL, targets, n, 1);
    if (backward) bert_siamese_backward(m, d);
    free(scores);
    free(d);
    return loss;
}
