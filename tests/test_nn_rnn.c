/* test_nn_rnn.c — the recurrent sequence ops, GRU and LSTM and their
 * bidirectional forms (src/nn/gru.c, src/nn/lstm.c): finite-difference
 * gradients with variable lengths (including an empty sequence), forward
 * outputs plus all gradients against torch.nn.GRU / torch.nn.LSTM on packed
 * sequences (tests/ref/rnn_ref.py), and the packed path (lengths given) equal
 * to the plain one (no lengths) when every sequence is full.
 *
 * The two ops share their shapes (nn/rnn_pack.h), PyTorch's four weight
 * tensors and one calling convention; they differ only in the gate count (3
 * or 4 blocks of H rows) and in what they save beside the gates (GRU: hn,
 * LSTM: cell). So one harness runs every check on both, given a small table
 * per cell (RnnCell). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nn/gru.h"
#include "nn/lstm.h"
#include "tests/gradcheck.h"
#include "tests/test.h"
#include "tests/torchref.h"

typedef struct RnnCase RnnCase;

/* What differs between the cells. */
typedef struct {
    const char *name;   /* "gru", "lstm": messages, and rnn_ref.py's CELL */
    int gates;          /* blocks of H rows in w_ih: GRU 3 (r, z, n), LSTM 4 (i, f, g, o) */
    long (*scratch_size)(RnnDims d);
    void (*forward)(RnnCase *c);                    /* h, gates, saved from x and w */
    void (*backward)(RnnCase *c, const float *dh);  /* adds into dx and g */
} RnnCell;

struct RnnCase {
    const RnnCell *cell;
    RnnDims d;
    int D;                        /* number of directions: 2 runs the bidirectional op */
    const int *lengths;
    float *x, *dx, *h, *gates, *saved, *scratch;   /* saved: GRU's hn, LSTM's cell */
    float *w[2][4], *g[2][4];     /* per direction: w_ih, w_hh, b_ih, b_hh and grads */
};

/* The ops take GruWeights / LstmWeights (and ...Grads): distinct types with
 * the same four fields. One macro writes each cell's adapters from the case's
 * arrays, so that the two cannot drift apart. */
#define RNN_CELL_ADAPTERS(Type, op)                                                                   \
    static Type##Weights op##_case_weights(const RnnCase *c, int dir) {                              \
        return (Type##Weights){c->w[dir][0], c->w[dir][1], c->w[dir][2], c->w[dir][3]};             \
    }                                                                                                 \
    static void op##_case_forward(RnnCase *c) {                                                       \
        Type##Weights w[2] = {op##_case_weights(c, 0), op##_case_weights(c, c->D - 1)};              \
        if (c->D == 2) bi##op##_forward(c->h, c->gates, c->saved, c->x, c->lengths, w, c->d, c->scratch); \
        else op##_forward(c->h, c->gates, c->saved, c->x, c->lengths, w[0], c->d, c->scratch);       \
    }                                                                                                 \
    static void op##_case_backward(RnnCase *c, const float *dh) {                                     \
        Type##Weights w[2] = {op##_case_weights(c, 0), op##_case_weights(c, c->D - 1)};              \
        Type##Grads g[2];                                                                             \
        for (int dir = 0; dir < 2; dir++)                                                             \
            g[dir] = (Type##Grads){c->g[dir][0], c->g[dir][1], c->g[dir][2], c->g[dir][3]};           \
        if (c->D == 2)                                                                                \
            bi##op##_backward(c->dx, g, dh, c->h, c->gates, c->saved, c->x, c->lengths, w, c->d, c->scratch); \
        else                                                                                          \
            op##_backward(c->dx, g[0], dh, c->h, c->gates, c->saved, c->x, c->lengths, w[0], c->d,    \
                          c->scratch);                                                                \
    }

RNN_CELL_ADAPTERS(Gru, gru)
RNN_CELL_ADAPTERS(Lstm, lstm)

static const RnnCell GRU_CELL = {"gru", 3, gru_scratch_size, gru_case_forward, gru_case_backward};
static const RnnCell LSTM_CELL = {"lstm", 4, lstm_scratch_size, lstm_case_forward, lstm_case_backward};

static const char *const WEIGHT_NAMES[4] = {"w_ih", "w_hh", "b_ih", "b_hh"};

static long rnn_case_wsize(const RnnCase *c, int k) {
    long rows = (long)c->cell->gates * c->d.H;
    return k == 0 ? rows * c->d.C : k == 1 ? rows * c->d.H : rows;
}

static long rnn_case_nx(const RnnCase *c) { return (long)c->d.B * c->d.T * c->d.C; }
static long rnn_case_nh(const RnnCase *c) { return (long)c->d.B * c->d.T * c->d.H * c->D; }

/* Inputs and weights from seed; gradients zeroed, as backward adds into them. */
static void rnn_case_init(RnnCase *c, const RnnCell *cell, RnnDims d, int bidirectional, const int *lengths,
                          uint64_t seed) {
    *c = (RnnCase){.cell = cell, .d = d, .D = bidirectional ? 2 : 1, .lengths = lengths};
    long nx = rnn_case_nx(c), nh = rnn_case_nh(c);
    c->x = malloc(4 * nx); c->dx = calloc((size_t)nx, 4);
    c->h = malloc(4 * nh);
    c->gates = malloc(4 * cell->gates * nh); c->saved = malloc(4 * nh);
    c->scratch = malloc(4 * cell->scratch_size(d));
    gradcheck_fill(c->x, nx, -1, 1, seed);
    for (int dir = 0; dir < c->D; dir++)
        for (int k = 0; k < 4; k++) {
            long n = rnn_case_wsize(c, k);
            c->w[dir][k] = malloc(4 * n);
            c->g[dir][k] = calloc((size_t)n, 4);
            gradcheck_fill(c->w[dir][k], n, -0.6f, 0.6f, seed + 10 * dir + k + 1);
        }
}

static void rnn_case_free(RnnCase *c) {
    free(c->x); free(c->dx); free(c->h); free(c->gates); free(c->saved); free(c->scratch);
    for (int dir = 0; dir < c->D; dir++)
        for (int k = 0; k < 4; k++) { free(c->w[dir][k]); free(c->g[dir][k]); }
}

static void rnn_case_forward(void *p) {
    RnnCase *c = p;
    c->cell->forward(c);
}

static void rnn_case_backward(void *p, const float *dh) {
    RnnCase *c = p;
    c->cell->backward(c, dh);
}

static void rnn_case_gradcheck(RnnCase *c, const char *what) {
    GradCheck g;
    gradcheck_init(&g, c, rnn_case_forward, rnn_case_backward, c->h, rnn_case_nh(c));
    gradcheck_add(&g, "x", c->x, c->dx, rnn_case_nx(c));
    static const char *const names[2][4] = {{"w_ih", "w_hh", "b_ih", "b_hh"},
                                            {"w_ih_reverse", "w_hh_reverse", "b_ih_reverse", "b_hh_reverse"}};
    for (int dir = 0; dir < c->D; dir++)
        for (int k = 0; k < 4; k++) gradcheck_add(&g, names[dir][k], c->w[dir][k], c->g[dir][k], rnn_case_wsize(c, k));
    gradcheck_expect(&g, what);
}

/* One direction, forward then reverse, over an empty, a short and a full sequence. */
static void check_variable_lengths(const RnnCell *cell) {
    const int lengths[3] = {5, 2, 0};
    RnnDims d = {.B = 3, .T = 5, .C = 3, .H = 4};
    RnnCase c;
    char what[64];
    rnn_case_init(&c, cell, d, 0, lengths, 40);
    snprintf(what, sizeof what, "%s forward direction", cell->name);
    rnn_case_gradcheck(&c, what);
    /* Padded steps output exactly zero. */
    CHECK_NEAR(c.h[(1 * d.T + 3) * d.H + 1], 0, 0);
    CHECK_NEAR(c.h[(2 * d.T + 0) * d.H + 0], 0, 0);
    c.d.reverse = 1;
    snprintf(what, sizeof what, "%s reverse direction", cell->name);
    rnn_case_gradcheck(&c, what);
    rnn_case_free(&c);
}

static void check_bidirectional_variable_lengths(const RnnCell *cell) {
    const int lengths[3] = {4, 1, 3};
    RnnDims d = {.B = 3, .T = 4, .C = 3, .H = 3};
    RnnCase c;
    char what[64];
    rnn_case_init(&c, cell, d, 1, lengths, 50);
    snprintf(what, sizeof what, "bi%s", cell->name);
    rnn_case_gradcheck(&c, what);
    rnn_case_free(&c);
}

TEST(nn_gru_gradcheck_variable_lengths) { check_variable_lengths(&GRU_CELL); }
TEST(nn_bigru_gradcheck_variable_lengths) { check_bidirectional_variable_lengths(&GRU_CELL); }
TEST(nn_lstm_gradcheck_variable_lengths) { check_variable_lengths(&LSTM_CELL); }
TEST(nn_bilstm_gradcheck_variable_lengths) { check_bidirectional_variable_lengths(&LSTM_CELL); }

/* Forward output and every gradient of sum(out * R) against torch.nn.GRU or
 * torch.nn.LSTM; the weights travel as <name><direction>, their gradients as
 * d<name><direction>. */
static void compare_torch(const RnnCell *cell, int bidirectional) {
    enum { B = 3, T = 6, C = 5, H = 7 };
    const int lengths[B] = {6, 3, 1};
    RnnDims d = {.B = B, .T = T, .C = C, .H = H};
    RnnCase c;
    rnn_case_init(&c, cell, d, bidirectional, lengths, 60 + bidirectional);
    long nh = rnn_case_nh(&c), nx = rnn_case_nx(&c);
    float *r = malloc(4 * nh), *ref_out = malloc(4 * nh), *ref_dx = malloc(4 * nx), *ref_g[2][4];
    gradcheck_fill(r, nh, -1, 1, 70);
    float flen[B] = {6, 3, 1};
    RefTensor in[2 + 8 + 1] = {{"x", c.x, nx}, {"lengths", flen, B}}, out[2 + 8] = {{"out", ref_out, nh}, {"dx", ref_dx, nx}};
    int n_in = 2, n_out = 2;
    char names[2][4][2][24];
    for (int dir = 0; dir < c.D; dir++)
        for (int k = 0; k < 4; k++) {
            long n = rnn_case_wsize(&c, k);
            ref_g[dir][k] = malloc(4 * n);
            snprintf(names[dir][k][0], 24, "%s%d", WEIGHT_NAMES[k], dir);
            snprintf(names[dir][k][1], 24, "d%s%d", WEIGHT_NAMES[k], dir);
            in[n_in++] = (RefTensor){names[dir][k][0], c.w[dir][k], n};
            out[n_out++] = (RefTensor){names[dir][k][1], ref_g[dir][k], n};
        }
    in[n_in++] = (RefTensor){"r", r, nh};
    char args[64];
    snprintf(args, sizeof args, "%s %d %d %d %d %d", cell->name, B, T, C, H, bidirectional);
    if (torchref_run("rnn_ref.py", args, in, n_in, out, n_out) == 1) {
        cell->forward(&c);
        CHECK_MSG(torchref_max_diff(c.h, ref_out, nh) < 1e-6, "%s bi=%d out: max diff %g", cell->name, bidirectional,
                  torchref_max_diff(c.h, ref_out, nh));
        cell->backward(&c, r);
        CHECK_MSG(torchref_max_diff(c.dx, ref_dx, nx) < 2e-6, "%s bi=%d dx: max diff %g", cell->name, bidirectional,
                  torchref_max_diff(c.dx, ref_dx, nx));
        for (int dir = 0; dir < c.D; dir++)
            for (int k = 0; k < 4; k++) {
                double diff = torchref_max_diff(c.g[dir][k], ref_g[dir][k], rnn_case_wsize(&c, k));
                CHECK_MSG(diff < 2e-6, "%s bi=%d d%s: max diff %g", cell->name, bidirectional, names[dir][k][0], diff);
            }
    }
    for (int dir = 0; dir < c.D; dir++)
        for (int k = 0; k < 4; k++) free(ref_g[dir][k]);
    free(r); free(ref_out); free(ref_dx);
    rnn_case_free(&c);
}

TEST(nn_gru_matches_torch) { compare_torch(&GRU_CELL, 0); }
TEST(nn_bigru_matches_torch) { compare_torch(&GRU_CELL, 1); }
TEST(nn_lstm_matches_torch) { compare_torch(&LSTM_CELL, 0); }
TEST(nn_bilstm_matches_torch) { compare_torch(&LSTM_CELL, 1); }

static double max_abs_diff(const float *a, const float *b, long n) {
    double worst = 0;
    for (long i = 0; i < n; i++) worst = fmax(worst, fabs(a[i] - b[i]));
    return worst;
}

/* The bidirectional op's packed path (lengths given) and its plain one (no
 * lengths) agree to the bit when every sequence is full length, forward and
 * backward: the same seed gives both cases the same x and weights. */
static void packed_matches_unpacked(const RnnCell *cell) {
    RnnDims d = {.B = 3, .T = 4, .C = 5, .H = 6};
    const int full[3] = {4, 4, 4};
    RnnCase plain, packed;
    rnn_case_init(&plain, cell, d, 1, NULL, 1);
    rnn_case_init(&packed, cell, d, 1, full, 1);
    long nh = rnn_case_nh(&plain);
    float *dh = malloc(4 * nh);
    gradcheck_fill(dh, nh, -1, 1, 3);
    RnnCase *both[2] = {&plain, &packed};
    for (int k = 0; k < 2; k++) {
        cell->forward(both[k]);
        cell->backward(both[k], dh);
    }
    double h_diff = max_abs_diff(plain.h, packed.h, nh);
    double dx_diff = max_abs_diff(plain.dx, packed.dx, rnn_case_nx(&plain)), g_diff = 0;
    for (int dir = 0; dir < 2; dir++)
        for (int k = 0; k < 4; k++)
            g_diff = fmax(g_diff, max_abs_diff(plain.g[dir][k], packed.g[dir][k], rnn_case_wsize(&plain, k)));
    CHECK_MSG(h_diff == 0 && dx_diff == 0 && g_diff == 0, "bi%s: h %g dx %g grads %g", cell->name, h_diff, dx_diff,
              g_diff);
    free(dh);
    rnn_case_free(&plain);
    rnn_case_free(&packed);
}

TEST(nn_bigru_packed_matches_unpacked) { packed_matches_unpacked(&GRU_CELL); }
TEST(nn_bilstm_packed_matches_unpacked) { packed_matches_unpacked(&LSTM_CELL); }
