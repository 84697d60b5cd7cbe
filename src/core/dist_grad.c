/* dist_grad.c — the data-parallel gradient of a global batch's mean (see dist_grad.h). */
#include "core/dist_grad.h"

#include "core/common.h"
#include "core/dist.h"

#include <stdlib.h>

struct DistGradSum {
    DistBuckets *buckets;
    float *g;
    long n;
    long scaled;    /* [scaled, n) is scaled this step */
    float share;
};

/* g[lo, hi) *= share: this rank's rows' share of the global batch's mean. */
static void dist_grad_scale(float *g, long lo, long hi, float share) {
#pragma omp parallel for schedule(static)
    for (long i = lo; i < hi; i++) g[i] *= share;
}

DistGradSum *dist_grad_sum_create(float *grad, long n, double bucket_mb) {
    if (dist_size() == 1) return NULL;
    DistGradSum *s = xcalloc(1, sizeof *s);
    s->g = grad;
    s->n = n;
    long floats = (long)(bucket_mb * (double)(1 << 20) / sizeof(float));   /* 0: one bucket */
    s->buckets = dist_buckets_create(grad, n, floats);
    s->scaled = n;
    return s;
}

void dist_grad_sum_free(DistGradSum *s) {
    if (!s) return;
    dist_buckets_free(s->buckets);
    free(s);
}

void dist_grad_sum_begin(DistGradSum *s, double share) {
    if (!s) return;
    s->share = (float)share;
    s->scaled = s->n;
    dist_buckets_begin(s->buckets);
}

/* Scales what became final, then starts the buckets wholly inside it. */
void dist_grad_sum_ready(void *ctx, long lo) {
    DistGradSum *s = ctx;
    if (!s || lo >= s->scaled) return;
    dist_grad_scale(s->g, lo, s->scaled, s->share);
    s->scaled = lo;
    dist_buckets_ready(s->buckets, lo);
}

/* A rank without rows ran no backward: all of it is still to scale and start. */
void dist_grad_sum_finish(DistGradSum *s) {
    if (!s) return;
    dist_grad_sum_ready(s, 0);
    dist_buckets_finish(s->buckets);
}
