/* test_nn_linear.c — linear and embedding: forward against a direct loop,
 * finite-difference gradients, and proof that the gradient checker itself fails
 * on a wrong gradient (scaled, one element off, or a missing bias term). */
#include <stdlib.h>
#include <string.h>

#include "nn/embedding.h"
#include "nn/linear.h"
#include "tests/gradcheck.h"
#include "tests/test.h"

typedef struct {
    int N, C, OC;
    float *x, *w, *b, *y, *dx, *dw, *db;
    int break_mode;  /* 0 correct; 1 dw scaled by 1.03; 2 one dx element off; 3 db dropped */
} LinearCase;

static void linear_case_init(LinearCase *c, int N, int C, int OC, uint64_t seed) {
    memset(c, 0, sizeof *c);
    c->N = N; c->C = C; c->OC = OC;
    c->x = malloc(sizeof(float) * N * C); c->dx = malloc(sizeof(float) * N * C);
    c->w = malloc(sizeof(float) * OC * C); c->dw = malloc(sizeof(float) * OC * C);
    c->b = malloc(sizeof(float) * OC); c->db = malloc(sizeof(float) * OC);
    c->y = malloc(sizeof(float) * N * OC);
    gradcheck_fill(c->x, (long)N * C, -1, 1, seed);
    gradcheck_fill(c->w, (long)OC * C, -1, 1, seed + 1);
    gradcheck_fill(c->b, OC, -1, 1, seed + 2);
}

static void linear_case_free(LinearCase *c) {
    free(c->x); free(c->dx); free(c->w); free(c->dw); free(c->b); free(c->db); free(c->y);
}

static void linear_case_forward(void *p) {
    LinearCase *c = p;
    linear_forward(c->y, c->x, c->w, c->b, c->N, c->C, c->OC);
}

static void linear_case_backward(void *p, const float *dy) {
    LinearCase *c = p;
    linear_backward(c->dx, c->dw, c->break_mode == 3 ? NULL : c->db, dy, c->x, c->w, c->N, c->C, c->OC);
    if (c->break_mode == 1) for (long i = 0; i < (long)c->OC * c->C; i++) c->dw[i] *= 1.03f;
    if (c->break_mode == 2) c->dx[5] += 0.05f;
}

static void linear_case_gradcheck(GradCheck *g, LinearCase *c) {
    gradcheck_init(g, c, linear_case_forward, linear_case_backward, c->y, (long)c->N * c->OC);
    gradcheck_add(g, "x", c->x, c->dx, (long)c->N * c->C);
    gradcheck_add(g, "w", c->w, c->dw, (long)c->OC * c->C);
    gradcheck_add(g, "b", c->b, c->db, c->OC);
}

TEST(nn_linear_forward_matches_loop) {
    LinearCase c;
    linear_case_init(&c, 7, 13, 5, 11);
    linear_case_forward(&c);
    double worst = 0;
    for (int n = 0; n < c.N; n++)
        for (int o = 0; o < c.OC; o++) {
            double acc = c.b[o];
            for (int k = 0; k < c.C; k++) acc += (double)c.x[n * c.C + k] * c.w[o * c.C + k];
            worst = fmax(worst, fabs(acc - c.y[n * c.OC + o]));
        }
    CHECK_MSG(worst < 1e-5, "max diff %g", worst);
    /* No bias: plain x W^T. */
    linear_forward(c.y, c.x, c.w, NULL, c.N, c.C, c.OC);
    double acc = 0;
    for (int k = 0; k < c.C; k++) acc += (double)c.x[2 * c.C + k] * c.w[3 * c.C + k];
    CHECK_NEAR(c.y[2 * c.OC + 3], acc, 1e-5);
    linear_case_free(&c);
}

TEST(nn_linear_gradcheck) {
    LinearCase c;
    linear_case_init(&c, 6, 9, 4, 21);
    GradCheck g;
    linear_case_gradcheck(&g, &c);
    gradcheck_expect(&g, "linear");
    linear_case_free(&c);
}

TEST(nn_linear_gradcheck_sampled) {
    /* x (1536) and w (1920) exceed max_samples: 256 sampled elements each. */
    LinearCase c;
    linear_case_init(&c, 32, 48, 40, 41);
    GradCheck g;
    linear_case_gradcheck(&g, &c);
    GcResult res[GRADCHECK_MAX_TENSORS];
    CHECK_EQ_INT(gradcheck_run(&g, res), 0);
    CHECK_EQ_INT(res[0].checked, 256);
    CHECK_EQ_INT(res[2].checked, 40);
    c.break_mode = 1;   /* a 3% error in dW is still caught through the sample */
    gradcheck_run(&g, res);
    CHECK_MSG(res[1].failures > 0, "scaled dW passed the sampled check");
    linear_case_free(&c);
}

TEST(nn_gradcheck_catches_wrong_gradients) {
    LinearCase c;
    linear_case_init(&c, 6, 9, 4, 31);
    GradCheck g;
    linear_case_gradcheck(&g, &c);
    GcResult res[GRADCHECK_MAX_TENSORS];
    CHECK_EQ_INT(gradcheck_run(&g, res), 0);
    for (int mode = 1; mode <= 3; mode++) {
        c.break_mode = mode;
        long failures = gradcheck_run(&g, res);
        CHECK_MSG(failures > 0, "broken gradient (mode %d) went unnoticed", mode);
    }
    c.break_mode = 2;
    gradcheck_run(&g, res);
    CHECK_EQ_INT(res[0].failures, 1);          /* exactly the one bad dx element */
    CHECK_EQ_INT(res[0].worst_index, 5);
    linear_case_free(&c);
}

typedef struct {
    int N, V, C;
    int *ids;
    float *w, *dw, *out;
} EmbCase;

static void emb_forward(void *p) {
    EmbCase *e = p;
    embedding_forward(e->out, e->ids, e->w, e->N, e->V, e->C);
}

static void emb_backward(void *p, const float *dout) {
    EmbCase *e = p;
    embedding_backward(e->dw, NULL, NULL, dout, e->ids, e->N, e->V, e->C);
}

TEST(nn_embedding_forward_backward) {
    enum { N = 7, V = 10, C = 3 };
    int ids[N] = {4, 1, 4, 9, 0, 1, 4};
    float w[V * C], dw[V * C], out[N * C];
    gradcheck_fill(w, V * C, -1, 1, 5);
    EmbCase e = {N, V, C, ids, w, dw, out};
    emb_forward(&e);
    for (int n = 0; n < N; n++)
        for (int c = 0; c < C; c++) CHECK_EQ_INT(out[n * C + c] == w[ids[n] * C + c], 1);
    /* forward_add sums a second table lookup onto the first. */
    int pos[N] = {0, 1, 2, 3, 4, 5, 6};
    embedding_forward_add(out, pos, w, N, V, C);
    CHECK_NEAR(out[2 * C + 1], w[4 * C + 1] + w[2 * C + 1], 1e-7);

    GradCheck g;
    gradcheck_init(&g, &e, emb_forward, emb_backward, out, N * C);
    gradcheck_add(&g, "weight", w, dw, V * C);
    gradcheck_expect(&g, "embedding");

    /* Sparse report: distinct rows in first-seen order, seen[] left zeroed. */
    float dout[N * C];
    for (int i = 0; i < N * C; i++) dout[i] = 1.0f;
    memset(dw, 0, sizeof dw);
    int touched[N];
    unsigned char seen[V] = {0};
    int k = embedding_backward(dw, touched, seen, dout, ids, N, V, C);
    CHECK_EQ_INT(k, 4);
    int expect[4] = {4, 1, 9, 0};
    for (int i = 0; i < 4 && i < k; i++) CHECK_EQ_INT(touched[i], expect[i]);
    for (int v = 0; v < V; v++) CHECK_EQ_INT(seen[v], 0);
    CHECK_NEAR(dw[4 * C], 3.0, 0);   /* id 4 appears three times */
    CHECK_NEAR(dw[7 * C], 0.0, 0);   /* untouched row */
}
