/* gradcheck.c — the finite-difference gradient checker (see gradcheck.h). */
#include "tests/gradcheck.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/rng.h"
#include "tests/test.h"

void gradcheck_init(GradCheck *g, void *ctx, void (*forward)(void *), void (*backward)(void *, const float *),
                    float *out, long n_out) {
    memset(g, 0, sizeof *g);
    g->ctx = ctx;
    g->forward = forward;
    g->backward = backward;
    g->out = out;
    g->n_out = n_out;
    g->eps = 1e-2f;
    g->rtol = 1e-2f;
    g->floor = 1e-2f;
    g->max_samples = 256;
    g->seed = 1234;
}

void gradcheck_add(GradCheck *g, const char *name, float *x, float *grad, long n) {
    if (g->n_tensors == GRADCHECK_MAX_TENSORS) { fprintf(stderr, "gradcheck: too many tensors\n"); abort(); }
    g->tensors[g->n_tensors++] = (GcTensor){name, x, grad, n};
}

static double gc_loss(const GradCheck *g, const float *r) {
    g->forward(g->ctx);
    double l = 0.0;
    for (long i = 0; i < g->n_out; i++) l += (double)g->out[i] * r[i];
    return l;
}

/* Central difference at x[i], dividing by the step actually taken in float. */
static double gc_numeric(const GradCheck *g, const float *r, float *x, long i) {
    float x0 = x[i], xp = x0 + g->eps, xm = x0 - g->eps;
    x[i] = xp;
    double lp = gc_loss(g, r);
    x[i] = xm;
    double lm = gc_loss(g, r);
    x[i] = x0;
    return (lp - lm) / ((double)xp - (double)xm);
}

static void gc_check_tensor(const GradCheck *g, const float *r, const GcTensor *t, Rng *rng, GcResult *res) {
    memset(res, 0, sizeof *res);
    res->worst_index = -1;
    int all = t->n <= g->max_samples;
    long count = all ? t->n : g->max_samples;
    for (long s = 0; s < count; s++) {
        /* Big tensors: one random element from each of `count` equal strata, so the
         * sample is distinct and spread over the whole tensor. */
        long lo = s * t->n / count, hi = (s + 1) * t->n / count;
        long i = all ? s : lo + (long)rng_below(rng, (uint32_t)(hi - lo));
        double a = t->grad[i], n = gc_numeric(g, r, t->x, i);
        double ratio = fabs(a - n) / (g->rtol * fmax(g->floor, fabs(a) + fabs(n)));
        res->checked++;
        if (ratio > 1.0) res->failures++;
        if (ratio > res->worst_ratio || res->worst_index < 0) {
            res->worst_ratio = ratio;
            res->worst_index = i;
            res->worst_analytic = a;
            res->worst_numeric = n;
        }
    }
}

long gradcheck_run(const GradCheck *g, GcResult *res) {
    Rng rng;
    rng_seed(&rng, g->seed);
    float *r = malloc(sizeof(float) * (size_t)(g->n_out > 0 ? g->n_out : 1));
    for (long i = 0; i < g->n_out; i++) r[i] = 2.0f * rng_uniform(&rng) - 1.0f;
    for (int t = 0; t < g->n_tensors; t++)
        if (g->tensors[t].grad) memset(g->tensors[t].grad, 0, sizeof(float) * (size_t)g->tensors[t].n);
    g->forward(g->ctx);
    g->backward(g->ctx, r);
    long failures = 0;
    for (int t = 0; t < g->n_tensors; t++) {
        gc_check_tensor(g, r, &g->tensors[t], &rng, &res[t]);
        failures += res[t].failures;
    }
    free(r);
    return failures;
}

int gradcheck_expect(const GradCheck *g, const char *what) {
    GcResult res[GRADCHECK_MAX_TENSORS];
    long failures = gradcheck_run(g, res);
    for (int t = 0; t < g->n_tensors; t++)
        CHECK_MSG(res[t].failures == 0,
                  "%s: d%s: %ld of %ld elements off; worst [%ld] analytic %.6g numeric %.6g (%.2fx tolerance)",
                  what, g->tensors[t].name, res[t].failures, res[t].checked, res[t].worst_index,
                  res[t].worst_analytic, res[t].worst_numeric, res[t].worst_ratio);
    if (getenv("GRADCHECK_VERBOSE"))
        for (int t = 0; t < g->n_tensors; t++)
            printf("  %s d%s: worst %.3f of tolerance over %ld elements\n", what, g->tensors[t].name,
                   res[t].worst_ratio, res[t].checked);
    return failures == 0;
}

void gradcheck_fill(float *x, long n, float lo, float hi, uint64_t seed) {
    Rng rng;
    rng_seed(&rng, seed);
    for (long i = 0; i < n; i++) x[i] = lo + (hi - lo) * rng_uniform(&rng);
}
