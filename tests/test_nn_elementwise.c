/* test_nn_elementwise.c — layernorm, GELU, ReLU, tanh and dropout: forward values
 * against direct formulas (and PyTorch's semantics: biased variance, exact GELU,
 * inverted dropout), finite-difference gradients. */
#include <stdlib.h>
#include <string.h>

#include "core/rng.h"
#include "nn/activation.h"
#include "nn/dropout.h"
#include "nn/layernorm.h"
#include "tests/gradcheck.h"
#include "tests/test.h"

typedef struct {
    int N, C;
    float eps;
    float *x, *g, *b, *y, *mean, *rstd, *dx, *dg, *db;
} LnCase;

static void ln_forward(void *p) {
    LnCase *c = p;
    layernorm_forward(c->y, c->mean, c->rstd, c->x, c->g, c->b, c->N, c->C, c->eps);
}

static void ln_backward(void *p, const float *dy) {
    LnCase *c = p;
    layernorm_backward(c->dx, c->dg, c->db, dy, c->x, c->mean, c->rstd, c->g, c->N, c->C);
}

TEST(nn_layernorm_forward_and_gradcheck) {
    enum { N = 5, C = 12 };
    float x[N * C], g[C], b[C], y[N * C], mean[N], rstd[N], dx[N * C], dg[C], db[C];
    gradcheck_fill(x, N * C, -2, 2, 1);
    gradcheck_fill(g, C, 0.5f, 1.5f, 2);
    gradcheck_fill(b, C, -0.5f, 0.5f, 3);
    LnCase c = {N, C, 1e-5f, x, g, b, y, mean, rstd, dx, dg, db};
    ln_forward(&c);
    for (int n = 0; n < N; n++) {
        double m = 0, v = 0;
        for (int k = 0; k < C; k++) m += x[n * C + k];
        m /= C;
        for (int k = 0; k < C; k++) v += (x[n * C + k] - m) * (x[n * C + k] - m);
        v /= C;   /* biased, like PyTorch */
        for (int k = 0; k < C; k++)
            CHECK_NEAR(y[n * C + k], (x[n * C + k] - m) / sqrt(v + 1e-5) * g[k] + b[k], 1e-5);
        CHECK_NEAR(mean[n], m, 1e-6);
    }
    GradCheck gc;
    gradcheck_init(&gc, &c, ln_forward, ln_backward, y, N * C);
    gradcheck_add(&gc, "x", x, dx, N * C);
    gradcheck_add(&gc, "gamma", g, dg, C);
    gradcheck_add(&gc, "beta", b, db, C);
    gradcheck_expect(&gc, "layernorm eps=1e-5");
    c.eps = 1e-12f;   /* BERT's epsilon */
    gradcheck_expect(&gc, "layernorm eps=1e-12");
}

TEST(nn_layernorm_constant_row_is_finite) {
    /* A constant row has variance 0: with eps = 1e-12 the output must be beta,
     * not NaN (x - mean is exactly 0). */
    enum { C = 8 };
    float x[C], g[C], b[C], y[C], mean, rstd;
    for (int k = 0; k < C; k++) { x[k] = 3.25f; g[k] = 1.0f; b[k] = (float)k; }
    layernorm_forward(y, &mean, &rstd, x, g, b, 1, C, 1e-12f);
    for (int k = 0; k < C; k++) CHECK_NEAR(y[k], (float)k, 0);
    CHECK(isfinite(rstd));
}

typedef enum { ACT_GELU, ACT_RELU, ACT_TANH } ActKind;

typedef struct {
    ActKind kind;
    long n;
    float *x, *y, *dx;
} ActCase;

static void act_forward(void *p) {
    ActCase *c = p;
    if (c->kind == ACT_GELU) gelu_forward(c->y, c->x, c->n);
    if (c->kind == ACT_RELU) relu_forward(c->y, c->x, c->n);
    if (c->kind == ACT_TANH) tanh_forward(c->y, c->x, c->n);
}

static void act_backward(void *p, const float *dy) {
    ActCase *c = p;
    if (c->kind == ACT_GELU) gelu_backward(c->dx, dy, c->x, c->n);
    if (c->kind == ACT_RELU) relu_backward(c->dx, dy, c->y, c->n);
    if (c->kind == ACT_TANH) tanh_backward(c->dx, dy, c->y, c->n);
}

TEST(nn_activations_values_and_gradcheck) {
    enum { N = 64 };
    float x[N], y[N], dx[N];
    gradcheck_fill(x, N, -4, 4, 9);
    /* ReLU has a kink at 0: keep inputs clear of it by more than the FD step. */
    for (int i = 0; i < N; i++) if (fabsf(x[i]) < 0.05f) x[i] = x[i] < 0 ? -0.05f : 0.05f;
    const char *names[] = {"gelu", "relu", "tanh"};
    for (int k = ACT_GELU; k <= ACT_TANH; k++) {
        ActCase c = {(ActKind)k, N, x, y, dx};
        act_forward(&c);
        for (int i = 0; i < N; i++) {
            double e = k == ACT_GELU ? 0.5 * x[i] * (1 + erf(x[i] / sqrt(2.0)))
                     : k == ACT_RELU ? fmax(x[i], 0.0) : tanh(x[i]);
            CHECK_NEAR(y[i], e, 2e-6);
        }
        GradCheck g;
        gradcheck_init(&g, &c, act_forward, act_backward, y, N);
        gradcheck_add(&g, "x", x, dx, N);
        gradcheck_expect(&g, names[k]);
    }
    /* Known GELU values (exact erf form, not the tanh approximation). */
    float gx[3] = {1.0f, -1.0f, 2.5f}, gy[3];
    gelu_forward(gy, gx, 3);
    CHECK_NEAR(gy[0], 0.8413447460685429, 1e-6);
    CHECK_NEAR(gy[1], -0.15865525393145707, 1e-6);
    CHECK_NEAR(gy[2], 2.4844760299625946, 1e-6);
}

typedef struct {
    long n;
    float p;
    uint64_t seed;
    float *x, *y, *dx;
    unsigned char *mask;
} DropCase;

static void drop_forward(void *q) {
    DropCase *c = q;
    Rng rng;
    rng_seed(&rng, c->seed);   /* same mask every call: the FD check needs a fixed function */
    dropout_forward(c->y, c->mask, c->x, c->n, c->p, &rng);
}

static void drop_backward(void *q, const float *dy) {
    DropCase *c = q;
    dropout_backward(c->dx, dy, c->mask, c->n, c->p);
}

TEST(nn_dropout_mask_scale_and_gradcheck) {
    enum { N = 200 };
    float x[N], y[N], dx[N];
    unsigned char mask[N];
    gradcheck_fill(x, N, -1, 1, 4);
    DropCase c = {N, 0.3f, 77, x, y, dx, mask};
    drop_forward(&c);
    int kept = 0;
    for (int i = 0; i < N; i++) {
        kept += mask[i];
        CHECK_NEAR(y[i], mask[i] ? x[i] / 0.7 : 0.0, 1e-5);
    }
    CHECK_MSG(kept > 110 && kept < 170, "kept %d of %d at p=0.3", kept, N);
    GradCheck g;
    gradcheck_init(&g, &c, drop_forward, drop_backward, y, N);
    gradcheck_add(&g, "x", x, dx, N);
    gradcheck_expect(&g, "dropout p=0.3");

    /* p = 0 is the identity and leaves the caller's Rng untouched. */
    Rng rng, before;
    rng_seed(&rng, 5);
    before = rng;
    dropout_forward(y, mask, x, N, 0.0f, &rng);
    CHECK(memcmp(&rng, &before, sizeof rng) == 0);
    for (int i = 0; i < N; i++) CHECK_EQ_INT(y[i] == x[i] && mask[i] == 1, 1);
}

TEST(nn_dropout_statistics_and_determinism) {
    /* Large n spans many RNG blocks (threads): keep rate and E[y] = x, and the same
     * seed gives the same mask. */
    const long n = 1L << 20;
    float *x = malloc(sizeof(float) * n), *y = malloc(sizeof(float) * n);
    unsigned char *m1 = malloc(n), *m2 = malloc(n);
    for (long i = 0; i < n; i++) x[i] = 1.0f;
    Rng r1, r2;
    rng_seed(&r1, 42);
    rng_seed(&r2, 42);
    dropout_forward(y, m1, x, n, 0.1f, &r1);
    double sum = 0;
    long kept = 0;
    for (long i = 0; i < n; i++) { sum += y[i]; kept += m1[i]; }
    CHECK_NEAR((double)kept / n, 0.9, 0.002);          /* 3.4 sigma at n = 2^20 is 0.001 */
    CHECK_NEAR(sum / n, 1.0, 0.003);
    dropout_forward(y, m2, x, n, 0.1f, &r2);
    CHECK(memcmp(m1, m2, n) == 0);
    dropout_forward(y, m2, x, n, 0.1f, &r2);            /* next call: a different mask */
    CHECK(memcmp(m1, m2, n) != 0);
    free(x); free(y); free(m1); free(m2);
}
