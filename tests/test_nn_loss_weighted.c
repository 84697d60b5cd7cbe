/* test_nn_loss_weighted.c — the losses of multi-label and skewed tasks:
 * sigmoid binary cross-entropy with logits (pos_weight, focal term, masked
 * rows; nn/sigmoid_bce.h) and softmax focal loss with class weights
 * (nn/softmax_focal.h): values from their definitions, finite-difference
 * gradients, PyTorch's BCEWithLogitsLoss / cross_entropy(weight=) and the
 * focal loss written out in tests/ref/loss_weighted_ref.py, and stability
 * at huge logits. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nn/sigmoid_bce.h"
#include "nn/softmax_focal.h"
#include "nn/softmax_xent.h"
#include "tests/gradcheck.h"
#include "tests/test.h"
#include "tests/torchref.h"

enum { LN = 6, LK = 5 };

typedef struct {
    int sigmoid;             /* 1: sigmoid BCE, 0: softmax focal */
    float logits[LN * LK], dlogits[LN * LK], targets[LN * LK], weights[LK], loss, gamma;
    int labels[LN];
    unsigned char mask[LN];
    int use_mask, use_weights;
} LossCase;

static float loss_case_run(LossCase *c, float *d) {
    if (c->sigmoid)
        return sigmoid_bce_forward_backward(d, c->logits, c->targets, c->use_weights ? c->weights : NULL,
                                            c->use_mask ? c->mask : NULL, LN, LK, c->gamma);
    float rw[LN];
    for (int n = 0; n < LN; n++) rw[n] = c->labels[n] >= 0 ? c->weights[c->labels[n]] : 0;
    return softmax_focal_forward_backward(d, c->logits, c->labels, c->use_weights ? rw : NULL, LN, LK, -1, c->gamma);
}

static void loss_case_forward(void *p) {
    LossCase *c = p;
    c->loss = loss_case_run(c, NULL);
}

static void loss_case_backward(void *p, const float *dout) {
    LossCase *c = p;
    float d[LN * LK] = {0};
    loss_case_run(c, d);
    for (int i = 0; i < LN * LK; i++) c->dlogits[i] += dout[0] * d[i];
}

static void loss_case_init(LossCase *c, int sigmoid, float gamma, uint64_t seed) {
    memset(c, 0, sizeof *c);
    c->sigmoid = sigmoid, c->gamma = gamma, c->use_weights = 1;
    gradcheck_fill(c->logits, LN * LK, -3, 3, seed);
    gradcheck_fill(c->weights, LK, 0.3f, 4.0f, seed + 1);
    for (int n = 0; n < LN; n++) {
        c->labels[n] = n == 2 ? -1 : (n * 3 + 1) % LK;   /* row 2 unlabelled */
        c->mask[n] = n != 2;
        for (int k = 0; k < LK; k++) c->targets[n * LK + k] = (float)((n * 7 + k * 3) % 4 == 0);
    }
}

/* The loss from its definition, in double. */
static double loss_case_reference(const LossCase *c) {
    double sum = 0, wsum = 0;
    for (int n = 0; n < LN; n++) {
        if (c->sigmoid) {
            if (c->use_mask && !c->mask[n]) continue;
            for (int k = 0; k < LK; k++) {
                double x = c->logits[n * LK + k], y = c->targets[n * LK + k], s = 1 / (1 + exp(-x));
                double p = c->use_weights ? c->weights[k] : 1;
                double bce = -(p * y * log(s) + (1 - y) * log(1 - s)), pt = s * y + (1 - s) * (1 - y);
                sum += bce * pow(1 - pt, c->gamma);
                wsum += 1;
            }
            continue;
        }
        int y = c->labels[n];
        if (y < 0) continue;
        double mx = -1e30, z = 0;
        for (int k = 0; k < LK; k++) mx = fmax(mx, c->logits[n * LK + k]);
        for (int k = 0; k < LK; k++) z += exp(c->logits[n * LK + k] - mx);
        double q = exp(c->logits[n * LK + y] - mx) / z, w = c->use_weights ? c->weights[y] : 1;
        sum += w * pow(1 - q, c->gamma) * -log(q);
        wsum += w;
    }
    return sum / wsum;
}

static void loss_case_check(LossCase *c, const char *what) {
    loss_case_forward(c);
    CHECK_MSG(fabs(c->loss - loss_case_reference(c)) < 1e-5 * (1 + fabs(loss_case_reference(c))),
              "%s: loss %.7g, definition %.7g", what, (double)c->loss, loss_case_reference(c));
    GradCheck g;
    gradcheck_init(&g, c, loss_case_forward, loss_case_backward, &c->loss, 1);
    gradcheck_add(&g, "logits", c->logits, c->dlogits, LN * LK);
    gradcheck_expect(&g, what);
}

TEST(nn_sigmoid_bce_pos_weight_focal_gradcheck) {
    LossCase c;
    const float gammas[] = {0, 0.5f, 2};
    for (int i = 0; i < 3; i++) {
        loss_case_init(&c, 1, gammas[i], 3 + (uint64_t)i);
        loss_case_check(&c, "sigmoid bce, pos_weight");
        c.use_mask = 1;
        loss_case_check(&c, "sigmoid bce, masked row");
        c.use_weights = 0;
        loss_case_check(&c, "sigmoid bce, no pos_weight");
    }
    /* a masked row gets no gradient */
    float d[LN * LK] = {0};
    loss_case_init(&c, 1, 2, 9);
    c.use_mask = 1;
    loss_case_run(&c, d);
    for (int k = 0; k < LK; k++) CHECK_NEAR(d[2 * LK + k], 0, 0);
    /* every row masked: 0, nothing added */
    memset(c.mask, 0, sizeof c.mask);
    CHECK_NEAR(loss_case_run(&c, d), 0, 0);
}

TEST(nn_softmax_focal_class_weights_gradcheck) {
    LossCase c;
    const float gammas[] = {0, 0.5f, 2};
    for (int i = 0; i < 3; i++) {
        loss_case_init(&c, 0, gammas[i], 13 + (uint64_t)i);
        loss_case_check(&c, "softmax focal, class weights");
        c.use_weights = 0;
        loss_case_check(&c, "softmax focal");
    }
    /* gamma 0 is softmax cross-entropy, weights and all */
    loss_case_init(&c, 0, 0, 21);
    float rw[LN], d1[LN * LK] = {0}, d2[LN * LK] = {0};
    for (int n = 0; n < LN; n++) rw[n] = c.labels[n] >= 0 ? c.weights[c.labels[n]] : 0;
    float a = softmax_focal_forward_backward(d1, c.logits, c.labels, rw, LN, LK, -1, 0);
    float b = softmax_xent_forward_backward(d2, c.logits, c.labels, rw, LN, LK, -1);
    CHECK_NEAR(a, b, 1e-6);
    for (int i = 0; i < LN * LK; i++) CHECK_NEAR(d1[i], d2[i], 1e-7);
}

TEST(nn_losses_finite_at_huge_logits) {
    /* cells (x, y, pos_weight): (200, 0, 3) costs 200, (-200, 1, 0.5) 0.5 * 200, the others ~0 */
    float x[4] = {200, -200, 200, -200}, y[4] = {0, 1, 1, 0}, d[4] = {0}, pw[2] = {3, 0.5f};
    float l = sigmoid_bce_forward_backward(d, x, y, pw, NULL, 2, 2, 0);
    CHECK_MSG(isfinite(l) && fabsf(l - (200 + 0.5f * 200) / 4.0f) < 1e-3, "bce at +-200: %g", (double)l);
    for (int i = 0; i < 4; i++) CHECK(isfinite(d[i]));
    l = sigmoid_bce_forward_backward(d, x, y, pw, NULL, 2, 2, 2);
    CHECK(isfinite(l));
    for (int i = 0; i < 4; i++) CHECK(isfinite(d[i]));
    int lab[1] = {0};
    float z[3] = {300, -300, 0}, dz[3] = {0};
    l = softmax_focal_forward_backward(dz, z, lab, NULL, 1, 3, -1, 0.5f);   /* p_y = 1: loss and gradient 0 */
    CHECK(isfinite(l) && l >= 0 && l < 1e-6f);
    for (int i = 0; i < 3; i++) CHECK(isfinite(dz[i]));
}

/* Loss and dlogits against PyTorch's. */
static void loss_case_torch(LossCase *c, const char *kind) {
    float dl[LN * LK] = {0}, ref_loss, ref_dl[LN * LK], labels[LN];
    c->use_mask = 0, c->use_weights = 1;
    for (int n = 0; n < LN; n++) labels[n] = (float)c->labels[n];
    float loss;
    if (strcmp(kind, "ce") == 0) {
        float rw[LN];
        for (int n = 0; n < LN; n++) rw[n] = c->labels[n] >= 0 ? c->weights[c->labels[n]] : 0;
        loss = softmax_xent_forward_backward(dl, c->logits, c->labels, rw, LN, LK, -1);
    } else {
        loss = loss_case_run(c, dl);
    }
    RefTensor in[] = {{"logits", c->logits, LN * LK}, {"weights", c->weights, LK},
                      {"targets", c->sigmoid ? c->targets : labels, c->sigmoid ? LN * LK : LN}};
    RefTensor out[] = {{"loss", &ref_loss, 1}, {"dlogits", ref_dl, LN * LK}};
    char args[96];
    snprintf(args, sizeof args, "%s %d %d %.9g", kind, LN, LK, (double)c->gamma);
    if (torchref_run("loss_weighted_ref.py", args, in, 3, out, 2) != 1) return;
    CHECK_MSG(fabsf(loss - ref_loss) <= 1e-6f * (1 + fabsf(ref_loss)), "%s: loss %.9g, torch %.9g", kind,
              (double)loss, (double)ref_loss);
    double e = torchref_max_diff(dl, ref_dl, LN * LK);
    CHECK_MSG(e < 1e-7, "%s: dlogits differ from torch by %.3g", kind, e);
}

TEST(nn_weighted_losses_match_torch) {
    LossCase c;
    loss_case_init(&c, 1, 0, 31);
    loss_case_torch(&c, "bce");
    loss_case_init(&c, 1, 2, 32);
    loss_case_torch(&c, "bce_focal");
    loss_case_init(&c, 0, 0, 33);
    loss_case_torch(&c, "ce");
    loss_case_init(&c, 0, 2, 34);
    loss_case_torch(&c, "ce_focal");
}
