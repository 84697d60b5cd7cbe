/* test_nn_gru.c — GRU and BiGRU (src/nn/gru.c): finite-difference gradients
 * with variable lengths (including an empty sequence), and forward outputs plus
 * all gradients against torch.nn.GRU on packed sequences (tests/ref/gru_ref.py). */
#include <stdlib.h>
#include <string.h>

#include "nn/gru.h"
#include "tests/gradcheck.h"
#include "tests/test.h"
#include "tests/torchref.h"

typedef struct {
    GruDims d;
    int bidirectional, D;         /* D = number of directions */
    const int *lengths;
    float *x, *dx, *h, *gates, *hn, *scratch;
    float *w[2][4], *g[2][4];     /* per direction: w_ih, w_hh, b_ih, b_hh and grads */
} GruCase;

static const char *const GRU_NAMES[4] = {"w_ih", "w_hh", "b_ih", "b_hh"};

static long gru_case_wsize(const GruDims *d, int k) {
    long H4 = 3L * d->H;
    return k == 0 ? H4 * d->C : k == 1 ? H4 * d->H : H4;
}

static void gru_case_init(GruCase *c, GruDims d, int bidirectional, const int *lengths, uint64_t seed) {
    memset(c, 0, sizeof *c);
    c->d = d;
    c->bidirectional = bidirectional;
    c->D = bidirectional ? 2 : 1;
    c->lengths = lengths;
    long nx = (long)d.B * d.T * d.C, nh = (long)d.B * d.T * d.H * c->D;
    c->x = malloc(4 * nx); c->dx = malloc(4 * nx);
    c->h = malloc(4 * nh);
    c->gates = malloc(4 * 3 * nh); c->hn = malloc(4 * nh);
    c->scratch = malloc(4 * gru_scratch_size(d));
    gradcheck_fill(c->x, nx, -1, 1, seed);
    for (int dir = 0; dir < c->D; dir++)
        for (int k = 0; k < 4; k++) {
            long n = gru_case_wsize(&d, k);
            c->w[dir][k] = malloc(4 * n);
            c->g[dir][k] = malloc(4 * n);
            gradcheck_fill(c->w[dir][k], n, -0.6f, 0.6f, seed + 10 * dir + k + 1);
        }
}

static void gru_case_free(GruCase *c) {
    free(c->x); free(c->dx); free(c->h); free(c->gates); free(c->hn); free(c->scratch);
    for (int dir = 0; dir < c->D; dir++)
        for (int k = 0; k < 4; k++) { free(c->w[dir][k]); free(c->g[dir][k]); }
}

static GruWeights gru_case_weights(const GruCase *c, int dir) {
    return (GruWeights){c->w[dir][0], c->w[dir][1], c->w[dir][2], c->w[dir][3]};
}

static void gru_case_forward(void *p) {
    GruCase *c = p;
    if (c->bidirectional) {
        GruWeights w[2] = {gru_case_weights(c, 0), gru_case_weights(c, 1)};
        bigru_forward(c->h, c->gates, c->hn, c->x, c->lengths, w, c->d, c->scratch);
    } else {
        gru_forward(c->h, c->gates, c->hn, c->x, c->lengths, gru_case_weights(c, 0), c->d, c->scratch);
    }
}

static void gru_case_backward(void *p, const float *dh) {
    GruCase *c = p;
    GruGrads g[2];
    for (int dir = 0; dir < c->D; dir++) g[dir] = (GruGrads){c->g[dir][0], c->g[dir][1], c->g[dir][2], c->g[dir][3]};
    if (c->bidirectional) {
        GruWeights w[2] = {gru_case_weights(c, 0), gru_case_weights(c, 1)};
        bigru_backward(c->dx, g, dh, c->h, c->gates, c->hn, c->x, c->lengths, w, c->d, c->scratch);
    } else {
        gru_backward(c->dx, g[0], dh, c->h, c->gates, c->hn, c->x, c->lengths, gru_case_weights(c, 0),
                      c->d, c->scratch);
    }
}

static void gru_case_gradcheck(GruCase *c, const char *what) {
    GradCheck g;
    gradcheck_init(&g, c, gru_case_forward, gru_case_backward, c->h, (long)c->d.B * c->d.T * c->d.H * c->D);
    gradcheck_add(&g, "x", c->x, c->dx, (long)c->d.B * c->d.T * c->d.C);
    static const char *const names[2][4] = {{"w_ih", "w_hh", "b_ih", "b_hh"},
                                            {"w_ih_reverse", "w_hh_reverse", "b_ih_reverse", "b_hh_reverse"}};
    for (int dir = 0; dir < c->D; dir++)
        for (int k = 0; k < 4; k++) gradcheck_add(&g, names[dir][k], c->w[dir][k], c->g[dir][k], gru_case_wsize(&c->d, k));
    gradcheck_expect(&g, what);
}

TEST(nn_gru_gradcheck_variable_lengths) {
    const int lengths[3] = {5, 2, 0};
    GruDims d = {.B = 3, .T = 5, .C = 3, .H = 4};
    GruCase c;
    gru_case_init(&c, d, 0, lengths, 40);
    gru_case_gradcheck(&c, "gru forward direction");
    /* Padded steps output exactly zero. */
    CHECK_NEAR(c.h[(1 * d.T + 3) * d.H + 1], 0, 0);
    CHECK_NEAR(c.h[(2 * d.T + 0) * d.H + 0], 0, 0);
    c.d.reverse = 1;
    gru_case_gradcheck(&c, "gru reverse direction");
    gru_case_free(&c);
}

TEST(nn_bigru_gradcheck_variable_lengths) {
    const int lengths[3] = {4, 1, 3};
    GruDims d = {.B = 3, .T = 4, .C = 3, .H = 3};
    GruCase c;
    gru_case_init(&c, d, 1, lengths, 50);
    gru_case_gradcheck(&c, "bigru");
    gru_case_free(&c);
}

/* Forward output and every gradient of sum(out * R) against torch.nn.GRU. */
static void gru_compare_torch(int bidirectional) {
    enum { B = 3, T = 6, C = 5, H = 7 };
    const int lengths[B] = {6, 3, 1};
    GruDims d = {.B = B, .T = T, .C = C, .H = H};
    GruCase c;
    gru_case_init(&c, d, bidirectional, lengths, 60 + bidirectional);
    long nh = (long)B * T * H * c.D, nx = (long)B * T * C;
    float *r = malloc(4 * nh), *ref_out = malloc(4 * nh), *ref_dx = malloc(4 * nx), *ref_g[2][4];
    gradcheck_fill(r, nh, -1, 1, 70);
    float flen[B] = {6, 3, 1};
    RefTensor in[2 + 8 + 1] = {{"x", c.x, nx}, {"lengths", flen, B}}, out[2 + 8] = {{"out", ref_out, nh}, {"dx", ref_dx, nx}};
    RefTensor rr = {"r", r, nh};
    int n_in = 2, n_out = 2;
    char names[2][4][2][24];
    for (int dir = 0; dir < c.D; dir++)
        for (int k = 0; k < 4; k++) {
            long n = gru_case_wsize(&d, k);
            ref_g[dir][k] = malloc(4 * n);
            snprintf(names[dir][k][0], 24, "%s%d", GRU_NAMES[k], dir);
            snprintf(names[dir][k][1], 24, "d%s%d", GRU_NAMES[k], dir);
            in[n_in++] = (RefTensor){names[dir][k][0], c.w[dir][k], n};
            out[n_out++] = (RefTensor){names[dir][k][1], ref_g[dir][k], n};
        }
    in[n_in++] = rr;
    char args[64];
    snprintf(args, sizeof args, "%d %d %d %d %d", B, T, C, H, bidirectional);
    if (torchref_run("gru_ref.py", args, in, n_in, out, n_out) == 1) {
        gru_case_forward(&c);
        CHECK_MSG(torchref_max_diff(c.h, ref_out, nh) < 1e-6, "bi=%d out: max diff %g", bidirectional,
                  torchref_max_diff(c.h, ref_out, nh));
        memset(c.dx, 0, 4 * nx);
        for (int dir = 0; dir < c.D; dir++)
            for (int k = 0; k < 4; k++) memset(c.g[dir][k], 0, 4 * gru_case_wsize(&d, k));
        gru_case_backward(&c, r);
        CHECK_MSG(torchref_max_diff(c.dx, ref_dx, nx) < 2e-6, "bi=%d dx: max diff %g", bidirectional,
                  torchref_max_diff(c.dx, ref_dx, nx));
        for (int dir = 0; dir < c.D; dir++)
            for (int k = 0; k < 4; k++) {
                double diff = torchref_max_diff(c.g[dir][k], ref_g[dir][k], gru_case_wsize(&d, k));
                CHECK_MSG(diff < 2e-6, "bi=%d d%s: max diff %g", bidirectional, names[dir][k][0], diff);
            }
    }
    for (int dir = 0; dir < c.D; dir++)
        for (int k = 0; k < 4; k++) free(ref_g[dir][k]);
    free(r); free(ref_out); free(ref_dx);
    gru_case_free(&c);
}

TEST(nn_gru_matches_torch) { gru_compare_torch(0); }
TEST(nn_bigru_matches_torch) { gru_compare_torch(1); }
