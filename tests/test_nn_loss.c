/* test_nn_loss.c — softmax, fused softmax + cross-entropy (with ignore index and
 * row weights) and MSE: values from the definition, gradients by finite differences. */
#include <stdlib.h>
#include <string.h>

#include "nn/mse.h"
#include "nn/softmax_xent.h"
#include "tests/gradcheck.h"
#include "tests/test.h"

enum { XN = 6, XK = 5, IGNORE = -100 };

typedef struct {
    float logits[XN * XK], dlogits[XN * XK], loss;
    int labels[XN];
    const float *weights;
} XentCase;

static void xent_forward(void *p) {
    XentCase *c = p;
    c->loss = softmax_xent_forward_backward(NULL, c->logits, c->labels, c->weights, XN, XK, IGNORE);
}

static void xent_backward(void *p, const float *dout) {
    /* The fused op yields d(loss)/dlogits; the checker's loss is loss * dout[0]. */
    XentCase *c = p;
    float tmp[XN * XK] = {0};
    softmax_xent_forward_backward(tmp, c->logits, c->labels, c->weights, XN, XK, IGNORE);
    for (int i = 0; i < XN * XK; i++) c->dlogits[i] += dout[0] * tmp[i];
}

/* Reference: weighted mean of -log softmax over non-ignored rows, in double. */
static double xent_reference(const XentCase *c) {
    double num = 0, den = 0;
    for (int n = 0; n < XN; n++) {
        if (c->labels[n] == IGNORE) continue;
        double mx = -1e30, s = 0;
        for (int k = 0; k < XK; k++) mx = fmax(mx, c->logits[n * XK + k]);
        for (int k = 0; k < XK; k++) s += exp(c->logits[n * XK + k] - mx);
        double w = c->weights ? c->weights[n] : 1.0;
        num += w * (mx + log(s) - c->logits[n * XK + c->labels[n]]);
        den += w;
    }
    return num / den;
}

TEST(nn_softmax_xent_ignore_index_and_weights) {
    XentCase c;
    memset(&c, 0, sizeof c);
    gradcheck_fill(c.logits, XN * XK, -3, 3, 8);
    int labels[XN] = {0, 4, IGNORE, 2, IGNORE, 1};
    memcpy(c.labels, labels, sizeof labels);
    const float weights[XN] = {1.0f, 0.5f, 7.0f, 2.0f, 3.0f, 0.25f};
    for (int pass = 0; pass < 2; pass++) {
        c.weights = pass ? weights : NULL;
        xent_forward(&c);
        CHECK_NEAR(c.loss, xent_reference(&c), 1e-5);
        GradCheck g;
        gradcheck_init(&g, &c, xent_forward, xent_backward, &c.loss, 1);
        gradcheck_add(&g, "logits", c.logits, c.dlogits, XN * XK);
        gradcheck_expect(&g, pass ? "xent weighted" : "xent ignore_index");
        /* Ignored rows get exactly zero gradient. */
        CHECK_NEAR(c.dlogits[2 * XK + 1], 0, 0);
        CHECK_NEAR(c.dlogits[4 * XK + 3], 0, 0);
    }
    /* Known value: uniform logits over K classes give log K. */
    float z[XK] = {0};
    int lab = 3;
    CHECK_NEAR(softmax_xent_forward_backward(NULL, z, &lab, NULL, 1, XK, IGNORE), log(XK), 1e-6);
    /* Every row ignored: loss 0, no gradient, no NaN. */
    int none[XN] = {IGNORE, IGNORE, IGNORE, IGNORE, IGNORE, IGNORE};
    float d[XN * XK] = {0};
    CHECK_NEAR(softmax_xent_forward_backward(d, c.logits, none, NULL, XN, XK, IGNORE), 0, 0);
    CHECK_NEAR(d[0], 0, 0);
    /* Large logits do not overflow. */
    float big[2] = {1000.0f, 0.0f};
    int l0 = 1;
    CHECK_NEAR(softmax_xent_forward_backward(NULL, big, &l0, NULL, 1, 2, IGNORE), 1000.0, 1e-3);
}

TEST(nn_softmax_rows_and_masking) {
    float x[4] = {1.0f, 2.0f, -INFINITY, 0.5f}, p[4];
    softmax_forward(p, x, 1, 4);
    double s = exp(1.0) + exp(2.0) + exp(0.5);
    CHECK_NEAR(p[0], exp(1.0) / s, 1e-6);
    CHECK_NEAR(p[2], 0, 0);
    float all_masked[3] = {-INFINITY, -INFINITY, -INFINITY};
    softmax_row(all_masked, 3);
    CHECK(all_masked[0] == 0 && all_masked[1] == 0 && all_masked[2] == 0);
}

typedef struct {
    float pred[7], target[7], dpred[7], loss;
} MseCase;

static void mse_forward(void *p) {
    MseCase *c = p;
    c->loss = mse_forward_backward(NULL, c->pred, c->target, 7);
}

static void mse_backward(void *p, const float *dout) {
    MseCase *c = p;
    float tmp[7] = {0};
    mse_forward_backward(tmp, c->pred, c->target, 7);
    for (int i = 0; i < 7; i++) c->dpred[i] += dout[0] * tmp[i];
}

TEST(nn_mse_value_and_gradcheck) {
    MseCase c;
    gradcheck_fill(c.pred, 7, 0, 5, 1);
    gradcheck_fill(c.target, 7, 0, 5, 2);
    mse_forward(&c);
    double ref = 0;
    for (int i = 0; i < 7; i++) ref += (c.pred[i] - c.target[i]) * (c.pred[i] - c.target[i]);
    CHECK_NEAR(c.loss, ref / 7, 1e-5);
    GradCheck g;
    gradcheck_init(&g, &c, mse_forward, mse_backward, &c.loss, 1);
    gradcheck_add(&g, "pred", c.pred, c.dpred, 7);
    gradcheck_expect(&g, "mse");
}
