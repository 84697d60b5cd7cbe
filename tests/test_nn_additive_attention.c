/* test_nn_additive_attention.c — finite-difference gradients of Bahdanau's
 * additive attention (nn/additive_attention.h), one decoder step, with
 * memories of different lengths shared by several queries; the weights are a
 * distribution over each memory's valid positions. (The decoder's GRU step
 * is tests/test_nn_gru_cell.c.) */
#include "nn/additive_attention.h"
#include "tests/gradcheck.h"
#include "tests/test.h"

enum { AA_B = 2, AA_R = 3, AA_T = 4, AA_A = 5, AA_E = 6 };

typedef struct {
    float q[AA_R * AA_A], keys[AA_B * AA_T * AA_A], vals[AA_B * AA_T * AA_E], v[AA_A];
    float dq[AA_R * AA_A], dkeys[AA_B * AA_T * AA_A], dvals[AA_B * AA_T * AA_E], dv[AA_A];
    float ctx[AA_R * AA_E], alpha[AA_R * AA_T], scratch[AA_T];
    int lengths[AA_B], mem[AA_R];
} AttCase;

static AddAttnDims att_dims(void) { return (AddAttnDims){.R = AA_R, .Tk = AA_T, .A = AA_A, .E = AA_E}; }

static void att_forward(void *p) {
    AttCase *c = p;
    addattn_forward(c->ctx, c->alpha, c->q, c->keys, c->vals, c->v, c->lengths, c->mem, att_dims());
}

static void att_backward(void *p, const float *dout) {
    AttCase *c = p;
    addattn_backward(c->dq, c->dkeys, c->dvals, c->dv, dout, c->alpha, c->q, c->keys, c->vals, c->v, c->lengths,
                     c->mem, att_dims(), c->scratch);
}

TEST(nn_additive_attention_gradients) {
    AttCase c = {.lengths = {4, 2}, .mem = {1, 0, 1}};   /* two queries share memory 1, of 2 valid positions */
    gradcheck_fill(c.q, AA_R * AA_A, -1, 1, 11);
    gradcheck_fill(c.keys, AA_B * AA_T * AA_A, -1, 1, 12);
    gradcheck_fill(c.vals, AA_B * AA_T * AA_E, -1, 1, 13);
    gradcheck_fill(c.v, AA_A, -1, 1, 14);
    att_forward(&c);
    for (int r = 0; r < AA_R; r++) {   /* a distribution over the valid positions only */
        double s = 0;
        for (int j = 0; j < AA_T; j++) s += c.alpha[r * AA_T + j];
        CHECK_NEAR(s, 1.0, 1e-6);
    }
    CHECK(c.alpha[0 * AA_T + 2] == 0 && c.alpha[2 * AA_T + 3] == 0);
    GradCheck g;
    gradcheck_init(&g, &c, att_forward, att_backward, c.ctx, AA_R * AA_E);
    gradcheck_add(&g, "q", c.q, c.dq, AA_R * AA_A);
    gradcheck_add(&g, "keys", c.keys, c.dkeys, AA_B * AA_T * AA_A);
    gradcheck_add(&g, "values", c.vals, c.dvals, AA_B * AA_T * AA_E);
    gradcheck_add(&g, "v", c.v, c.dv, AA_A);
    gradcheck_expect(&g, "additive attention");
}
