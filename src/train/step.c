/* step.c — forward, head, backward, gradient sum, update (see step.h). */
#include "train/step.h"

#include "core/common.h"
#include "core/dist.h"
#include "core/dist_grad.h"
#include "train/head.h"

#include <math.h>
#include <stdlib.h>

struct TrainStep {
    const ModelOps *ops;
    Model *m;
    const Dataset *train;
    const Encoded *train_e;
    Head head;
    int cap;                /* rows the logits buffers hold */
    float *logits, *dlogits;
    DistGradSum *sum;       /* data parallel: made at the first step (NULL in one process) */
};

/* The model's backward says floats [lo, n) of its gradients are final. */
static void train_step_ready(void *ctx, long lo) { dist_grad_sum_ready(((TrainStep *)ctx)->sum, lo); }

TrainStep *train_step_create(const ModelOps *ops, Model *m, const Dataset *train, const Encoded *train_e) {
    TrainStep *s = xcalloc(1, sizeof *s);
    *s = (TrainStep){.ops = ops, .m = m, .train = train, .train_e = train_e};
    head_init(&s->head, train->task->num_labels, train->task->multi_label, ops->score_scale ? ops->score_scale(m) : 1.0f);
    return s;
}

void train_step_configure(TrainStep *s, const cJSON *config) {
    if (s->ops->forward) head_configure(&s->head, config, s->train);
}

Head *train_step_head(TrainStep *s) { return s->ops->forward ? &s->head : NULL; }

cJSON *train_step_describe(const TrainStep *s) { return s->ops->forward ? head_describe(&s->head) : NULL; }

void train_step_free(TrainStep *s) {
    if (!s) return;
    head_free(&s->head);
    dist_grad_sum_free(s->sum);
    free(s->logits);
    free(s->dlogits);
    free(s);
}

/* Data parallel: the sum over the model's gradients, once they exist (after
 * its first training forward); its backward then tells when they are final. */
static void train_step_sum_make(TrainStep *s, const TrainState *st) {
    if (s->sum || dist_size() == 1 || !s->ops->data_parallel) return;
    long n = 0;
    float *grad = s->ops->data_parallel(s->m, &n, train_step_ready, s);
    s->sum = dist_grad_sum_create(grad, n, st->bucket_mb);
}

float train_step_run(TrainStep *s, const int *rows, int n, const TrainState *st) {
    const ModelOps *ops = s->ops;
    if (!ops->forward) return ops->train_step(s->m, s->train_e, rows, n, st);
    if (n > s->cap) {
        size_t size = sizeof(float) * (size_t)n * (size_t)s->head.K;
        s->logits = xrealloc(s->logits, size);
        s->dlogits = xrealloc(s->dlogits, size);
        s->cap = n;
    }
    ops->forward(s->m, s->train_e, rows, n, st, s->logits);
    train_step_sum_make(s, st);
    float loss = head_loss(&s->head, s->train, rows, n, s->logits, s->dlogits);
    dist_grad_sum_begin(s->sum, st->share);
    if (n > 0) ops->backward(s->m, s->dlogits);
    dist_grad_sum_finish(s->sum);   /* the global batch's gradient, on every rank */
    return ops->update(s->m, st) == 0 ? loss : NAN;
}
