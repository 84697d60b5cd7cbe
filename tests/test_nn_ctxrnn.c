/* test_nn_ctxrnn.c — RCNN's recurrent context (src/nn/ctxrnn.c): finite-
 * difference gradients of the context w.r.t. the input, both weights and the
 * initial context, forward and reversed, with variable lengths (an empty
 * sequence too) and a context stride wider than H (as RCNN writes it); and the
 * recurrence itself against a direct evaluation of Lai et al.'s equation. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nn/ctxrnn.h"
#include "tests/gradcheck.h"
#include "tests/test.h"

typedef struct {
    RnnDims d;
    const int *lengths;
    float *x, *dx, *ctx, *hs, *scratch, *w[3], *g[3];
} CtxCase;

static long ctx_wsize(const RnnDims *d, int k) { return k == 0 ? (long)d->H * d->C : k == 1 ? (long)d->H * d->H : d->H; }

static void ctx_forward(void *p) {
    CtxCase *c = p;
    ctxrnn_forward(c->ctx, c->hs, c->x, c->lengths, (CtxRnnWeights){c->w[0], c->w[1], c->w[2]}, c->d, c->scratch);
}

static void ctx_backward(void *p, const float *dctx) {
    CtxCase *c = p;
    ctxrnn_backward(c->dx, (CtxRnnGrads){c->g[0], c->g[1], c->g[2]}, dctx, c->hs, c->x, c->lengths,
                    (CtxRnnWeights){c->w[0], c->w[1], c->w[2]}, c->d, c->scratch);
}

static void ctx_case(RnnDims d, const int *lengths, uint64_t seed, const char *what) {
    CtxCase c = {.d = d, .lengths = lengths};
    long nx = (long)d.B * d.T * d.C, nc = (long)d.B * d.T * d.ldh;
    c.x = malloc(4 * nx); c.dx = calloc((size_t)nx, 4);
    c.ctx = calloc((size_t)nc, 4); c.hs = calloc((size_t)d.B * d.T * d.H, 4);
    c.scratch = malloc(4 * ctxrnn_scratch_size(d));
    gradcheck_fill(c.x, nx, -1, 1, seed);
    for (int k = 0; k < 3; k++) {
        c.w[k] = malloc(4 * ctx_wsize(&d, k));
        c.g[k] = calloc((size_t)ctx_wsize(&d, k), 4);
        gradcheck_fill(c.w[k], ctx_wsize(&d, k), -0.8f, 0.8f, seed + 1 + k);
    }
    /* Lai et al.'s equation step by step for sequence 0. */
    ctx_forward(&c);
    int len = lengths[0];
    float prev[16], cur[16];
    memcpy(prev, c.w[2], sizeof(float) * (size_t)d.H);
    double worst = 0;
    for (int s = 0; s < len; s++) {
        int t = d.reverse ? len - 1 - s : s;
        for (int j = 0; j < d.H; j++) worst = fmax(worst, fabs(c.ctx[(long)t * d.ldh + j] - prev[j]));
        for (int j = 0; j < d.H; j++) {
            double a = 0;
            for (int i = 0; i < d.H; i++) a += c.w[1][j * d.H + i] * prev[i];
            for (int i = 0; i < d.C; i++) a += c.w[0][j * d.C + i] * c.x[(long)t * d.C + i];
            cur[j] = tanhf((float)a);
        }
        memcpy(prev, cur, sizeof prev);
    }
    CHECK_MSG(worst < 1e-5, "%s: context differs from the equation by %g", what, worst);
    GradCheck g;
    gradcheck_init(&g, &c, ctx_forward, ctx_backward, c.ctx, nc);
    gradcheck_add(&g, "x", c.x, c.dx, nx);
    gradcheck_add(&g, "w_s", c.w[0], c.g[0], ctx_wsize(&d, 0));
    gradcheck_add(&g, "w", c.w[1], c.g[1], ctx_wsize(&d, 1));
    gradcheck_add(&g, "c0", c.w[2], c.g[2], ctx_wsize(&d, 2));
    gradcheck_expect(&g, what);
    free(c.x); free(c.dx); free(c.ctx); free(c.hs); free(c.scratch);
    for (int k = 0; k < 3; k++) { free(c.w[k]); free(c.g[k]); }
}

TEST(nn_ctxrnn_gradcheck_left_context) {
    const int lengths[3] = {5, 2, 0};
    ctx_case((RnnDims){.B = 3, .T = 5, .C = 3, .H = 4, .ldh = 4}, lengths, 80, "left context");
}

TEST(nn_ctxrnn_gradcheck_right_context_strided) {
    const int lengths[3] = {4, 1, 3};
    ctx_case((RnnDims){.B = 3, .T = 4, .C = 3, .H = 4, .reverse = 1, .ldh = 11}, lengths, 90, "right context");
}
