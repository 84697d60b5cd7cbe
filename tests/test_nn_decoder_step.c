/* test_nn_decoder_step.c — the ops of an attentive decoder's step:
 * finite-difference gradients of the GRU step from a given state
 * (src/nn/gru_cell.c) and of Bahdanau's additive attention
 * (src/nn/additive_attention.c) with memories of different lengths shared
 * by several queries; the cell equals nn/gru.h's sequence op step by step. */
#include <stdlib.h>
#include <string.h>

#include "nn/additive_attention.h"
#include "nn/gru_cell.h"
#include "tests/gradcheck.h"
#include "tests/test.h"

enum { GC_R = 3, GC_C = 4, GC_H = 5 };

typedef struct {
    float x[GC_R * GC_C], hp[GC_R * GC_H], h[GC_R * GC_H], gates[GC_R * 3 * GC_H], hn[GC_R * GC_H];
    float w_ih[3 * GC_H * GC_C], w_hh[3 * GC_H * GC_H], b_ih[3 * GC_H], b_hh[3 * GC_H];
    float dx[GC_R * GC_C], dhp[GC_R * GC_H], g_ih[3 * GC_H * GC_C], g_hh[3 * GC_H * GC_H], gb_ih[3 * GC_H],
        gb_hh[3 * GC_H];
    float scratch[2 * GC_R * 3 * GC_H];
} CellCase;

static GruWeights cell_weights(CellCase *c) { return (GruWeights){c->w_ih, c->w_hh, c->b_ih, c->b_hh}; }

static void cell_forward(void *p) {
    CellCase *c = p;
    gru_cell_forward(c->h, c->gates, c->hn, c->x, c->hp, cell_weights(c), GC_R, GC_C, GC_H, c->scratch);
}

static void cell_backward(void *p, const float *dout) {
    CellCase *c = p;
    GruGrads g = {c->g_ih, c->g_hh, c->gb_ih, c->gb_hh};
    gru_cell_backward(c->dx, c->dhp, g, dout, c->x, c->hp, c->gates, c->hn, cell_weights(c), GC_R, GC_C, GC_H,
                      c->scratch);
}

TEST(nn_gru_cell_gradients) {
    CellCase c;
    gradcheck_fill(c.x, GC_R * GC_C, -1, 1, 1);
    gradcheck_fill(c.hp, GC_R * GC_H, -0.9f, 0.9f, 2);
    gradcheck_fill(c.w_ih, 3 * GC_H * GC_C, -0.6f, 0.6f, 3);
    gradcheck_fill(c.w_hh, 3 * GC_H * GC_H, -0.6f, 0.6f, 4);
    gradcheck_fill(c.b_ih, 3 * GC_H, -0.5f, 0.5f, 5);
    gradcheck_fill(c.b_hh, 3 * GC_H, -0.5f, 0.5f, 6);
    GradCheck g;
    gradcheck_init(&g, &c, cell_forward, cell_backward, c.h, GC_R * GC_H);
    gradcheck_add(&g, "x", c.x, c.dx, GC_R * GC_C);
    gradcheck_add(&g, "h_prev", c.hp, c.dhp, GC_R * GC_H);
    gradcheck_add(&g, "w_ih", c.w_ih, c.g_ih, 3 * GC_H * GC_C);
    gradcheck_add(&g, "w_hh", c.w_hh, c.g_hh, 3 * GC_H * GC_H);
    gradcheck_add(&g, "b_ih", c.b_ih, c.gb_ih, 3 * GC_H);
    gradcheck_add(&g, "b_hh", c.b_hh, c.gb_hh, 3 * GC_H);
    gradcheck_expect(&g, "gru cell");
}

/* Two cell steps from zero are nn/gru.h's forward over a sequence of two. */
TEST(nn_gru_cell_equals_sequence_op) {
    CellCase c;
    gradcheck_fill(c.w_ih, 3 * GC_H * GC_C, -0.6f, 0.6f, 3);
    gradcheck_fill(c.w_hh, 3 * GC_H * GC_H, -0.6f, 0.6f, 4);
    gradcheck_fill(c.b_ih, 3 * GC_H, -0.5f, 0.5f, 5);
    gradcheck_fill(c.b_hh, 3 * GC_H, -0.5f, 0.5f, 6);
    float xs[GC_R * 2 * GC_C], hs[GC_R * 2 * GC_H], gs[GC_R * 2 * 3 * GC_H], hns[GC_R * 2 * GC_H];
    gradcheck_fill(xs, GC_R * 2 * GC_C, -1, 1, 7);
    GruDims d = {.B = GC_R, .T = 2, .C = GC_C, .H = GC_H};
    float *scr = malloc(sizeof(float) * (size_t)gru_scratch_size(d));
    gru_forward(hs, gs, hns, xs, NULL, cell_weights(&c), d, scr);
    free(scr);
    float h1[GC_R * GC_H];
    memset(c.hp, 0, sizeof c.hp);
    for (int t = 0; t < 2; t++) {
        for (int i = 0; i < GC_R; i++) memcpy(c.x + i * GC_C, xs + (i * 2 + t) * GC_C, sizeof(float) * GC_C);
        cell_forward(&c);
        memcpy(h1, c.h, sizeof h1);
        memcpy(c.hp, h1, sizeof h1);
        for (int i = 0; i < GC_R; i++)
            for (int j = 0; j < GC_H; j++) CHECK_NEAR(h1[i * GC_H + j], hs[(i * 2 + t) * GC_H + j], 1e-6);
    }
}

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
