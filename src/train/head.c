/* head.c — losses of logits and what is reported from them (see head.h). */
#include "train/head.h"

#include "core/common.h"
#include "nn/mse.h"
#include "nn/softmax_xent.h"

#include <stdlib.h>
#include <string.h>

/* The label of a row no loss counts (unlabelled: a test split's rows). */
#define HEAD_IGNORE_LABEL (-1)

void head_init(Head *h, int num_outputs, float score_scale) {
    if (num_outputs < 1 || !(score_scale > 0)) DIE("head_init: %d outputs, score scale %g", num_outputs, score_scale);
    *h = (Head){.kind = num_outputs == 1 ? HEAD_REGRESSION : HEAD_SOFTMAX, .K = num_outputs,
                .score_scale = score_scale};
}

void head_free(Head *h) {
    free(h->labels);
    free(h->targets);
    memset(h, 0, sizeof *h);
}

/* Room for n rows' targets. */
static void head_reserve(Head *h, int n) {
    if (n <= h->cap) return;
    h->labels = xrealloc(h->labels, sizeof(int) * (size_t)n);
    h->targets = xrealloc(h->targets, sizeof(float) * (size_t)n);
    h->cap = n;
}

float head_loss(Head *h, const Dataset *d, const int *rows, int n, const float *logits, float *dlogits) {
    if (n <= 0) return 0.0f;
    head_reserve(h, n);
    if (dlogits) memset(dlogits, 0, sizeof(float) * (size_t)n * (size_t)h->K);   /* the ops add */
    switch (h->kind) {
    case HEAD_SOFTMAX:
        for (int i = 0; i < n; i++) h->labels[i] = d->ex[rows[i]].label;
        return softmax_xent_forward_backward(dlogits, logits, h->labels, NULL, n, h->K, HEAD_IGNORE_LABEL);
    case HEAD_REGRESSION:
        for (int i = 0; i < n; i++) h->targets[i] = d->ex[rows[i]].score / h->score_scale;
        return mse_forward_backward(dlogits, logits, h->targets, n);
    }
    DIE("head_loss: head kind %d", (int)h->kind);
}

void head_outputs(const Head *h, const float *logits, int n, float *out) {
    long count = (long)n * h->K;
    switch (h->kind) {
    case HEAD_SOFTMAX:
        softmax_forward(out, logits, n, h->K);
        return;
    case HEAD_REGRESSION:
        for (long i = 0; i < count; i++) out[i] = logits[i] * h->score_scale;
        return;
    }
}
