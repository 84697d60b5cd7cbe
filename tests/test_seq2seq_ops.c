/* test_seq2seq_ops.c — the translation model's own ops: sinusoidal positions
 * (exact values), the learned position table's gradient, label-smoothed
 * cross-entropy (finite differences, eps = 0 equals plain cross-entropy, in-place
 * gradient, PyTorch's label_smoothing definition via tests/ref/seq2seq_ref.py). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nn/label_smoothing.h"
#include "nn/positions.h"
#include "nn/softmax_xent.h"
#include "tests/gradcheck.h"
#include "tests/test.h"
#include "tests/torchref.h"

TEST(seq2seq_positions_sinusoid_values) {
    enum { T = 50, C = 8 };
    float pe[T * C];
    positions_sinusoid(pe, T, C);
    for (int t = 0; t < T; t++)
        for (int i = 0; i < C / 2; i++) {
            double f = 1.0 / pow(10000.0, 2.0 * i / C);
            CHECK_NEAR(pe[t * C + 2 * i], sin(t * f), 1e-6);
            CHECK_NEAR(pe[t * C + 2 * i + 1], cos(t * f), 1e-6);
        }
    CHECK_NEAR(pe[0], 0, 0);
    CHECK_NEAR(pe[1], 1, 0);
    CHECK_NEAR(pe[1 * C + 0], 0.8414709848, 1e-7);   /* sin(1) */
}

typedef struct {
    float *x0, *x, *table, *dtable;
    int B, T, C, offset;
} PosCase;

static void pos_forward(void *p) {
    PosCase *c = p;
    memcpy(c->x, c->x0, sizeof(float) * (size_t)c->B * c->T * c->C);
    positions_add(c->x, c->table, c->B, c->T, c->C, c->offset);
}

static void pos_backward(void *p, const float *dout) {
    PosCase *c = p;
    positions_backward(c->dtable, dout, c->B, c->T, c->C, c->offset);
}

TEST(seq2seq_positions_learned_gradcheck) {
    PosCase c = {.B = 3, .T = 4, .C = 5, .offset = 2};
    int rows = 8;
    c.x0 = malloc(4 * 60); c.x = malloc(4 * 60);
    c.table = malloc(4 * rows * 5); c.dtable = calloc(rows * 5, 4);
    gradcheck_fill(c.x0, 60, -1, 1, 1);
    gradcheck_fill(c.table, rows * 5, -1, 1, 2);
    GradCheck g;
    gradcheck_init(&g, &c, pos_forward, pos_backward, c.x, 60);
    gradcheck_add(&g, "table", c.table, c.dtable, rows * 5);
    gradcheck_expect(&g, "learned positions");
    /* Rows outside [offset, offset + T) get nothing. */
    for (int e = 0; e < 5; e++) CHECK(c.dtable[e] == 0 && c.dtable[7 * 5 + e] == 0);
    free(c.x0); free(c.x); free(c.table); free(c.dtable);
}

typedef struct {
    float *logits, *dlogits, out;
    int *labels;
    int N, K;
    float eps;
} LsCase;

static void ls_forward(void *p) {
    LsCase *c = p;
    c->out = (float)label_smoothing_xent(NULL, c->logits, c->labels, c->N, c->K, c->eps, -1, 0, NULL);
}

static void ls_backward(void *p, const float *dout) {
    LsCase *c = p;
    float *tmp = malloc(sizeof(float) * (size_t)c->N * c->K);
    label_smoothing_xent(tmp, c->logits, c->labels, c->N, c->K, c->eps, -1, dout[0], NULL);
    for (long i = 0; i < (long)c->N * c->K; i++) c->dlogits[i] += tmp[i];
    free(tmp);
}

TEST(seq2seq_label_smoothing_gradcheck) {
    int labels[5] = {2, -1, 0, 6, 3};
    LsCase c = {.N = 5, .K = 7, .eps = 0.1f, .labels = labels};
    c.logits = malloc(4 * 35); c.dlogits = calloc(35, 4);
    gradcheck_fill(c.logits, 35, -3, 3, 3);
    GradCheck g;
    gradcheck_init(&g, &c, ls_forward, ls_backward, &c.out, 1);
    gradcheck_add(&g, "logits", c.logits, c.dlogits, 35);
    gradcheck_expect(&g, "label smoothing");
    for (int k = 0; k < 7; k++) CHECK(c.dlogits[7 + k] == 0);   /* ignored row */
    free(c.logits); free(c.dlogits);
}

TEST(seq2seq_label_smoothing_eps0_and_inplace) {
    enum { N = 6, K = 9 };
    int labels[N] = {1, 8, -1, 0, 4, 4};
    float z[N * K], g0[N * K] = {0}, inplace[N * K];
    gradcheck_fill(z, N * K, -4, 4, 5);
    /* eps = 0 is plain cross-entropy: same loss and gradient as softmax_xent. */
    float mean = softmax_xent_forward_backward(g0, z, labels, NULL, N, K, -1);
    double nll = 0;
    memcpy(inplace, z, sizeof z);
    double sum = label_smoothing_xent(inplace, inplace, labels, N, K, 0.0f, -1, 1.0f / 5, &nll);
    CHECK_NEAR(sum / 5, mean, 1e-5);
    CHECK_NEAR(nll / 5, mean, 1e-5);
    for (int i = 0; i < N * K; i++) CHECK_NEAR(inplace[i], g0[i], 1e-6);
    /* Smoothing costs loss over the plain NLL only when the model is confident:
     * the smoothed loss of uniform logits equals the NLL (log K). */
    float flat[K] = {0};
    int y = 3;
    double n1 = 0, s1 = label_smoothing_xent(NULL, flat, &y, 1, K, 0.1f, -1, 0, &n1);
    CHECK_NEAR(s1, log(K), 1e-6);
    CHECK_NEAR(n1, log(K), 1e-6);
}

TEST(seq2seq_label_smoothing_matches_torch) {
    enum { N = 40, K = 300 };
    float *z = malloc(4 * N * K), *flab = malloc(4 * N), *dz = malloc(4 * N * K), *rdz = malloc(4 * N * K);
    int labels[N];
    gradcheck_fill(z, N * K, -6, 6, 6);
    for (int n = 0; n < N; n++) {
        labels[n] = n % 7 == 3 ? -100 : (n * 37) % K;
        flab[n] = (float)labels[n];
    }
    float rloss, rnll;
    RefTensor in[] = {{"logits", z, N * K}, {"labels", flab, N}};
    RefTensor out[] = {{"loss", &rloss, 1}, {"nll", &rnll, 1}, {"dlogits", rdz, N * K}};
    char args[64];
    snprintf(args, sizeof args, "lsxent %d %d 0.1 -100", N, K);
    if (torchref_run("seq2seq_ref.py", args, in, 2, out, 3) == 1) {
        double nll = 0;
        double loss = label_smoothing_xent(dz, z, labels, N, K, 0.1f, -100, 1.0f, &nll);
        CHECK_NEAR(loss, rloss, 1e-5 * fabs(rloss));
        CHECK_NEAR(nll, rnll, 1e-5 * fabs(rnll));
        double diff = torchref_max_diff(dz, rdz, N * K);
        CHECK_MSG(diff < 1e-6, "dlogits max diff %g", diff);
    }
    free(z); free(flab); free(dz); free(rdz);
}
