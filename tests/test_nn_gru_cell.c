/* test_nn_gru_cell.c — one GRU step from a given state (nn/gru_cell.h), as
 * both its users call it: finite-difference gradients with respect to the
 * input, the previous state and every weight, over several rows, with the
 * input projection composed in front by nn/linear.h into the gates' own
 * buffer (the decoder's way); and, with the projection in its own buffer (the
 * DMN's way), cell steps from a zero state equal nn/gru.h's sequence op step
 * by step. */
#include <stdlib.h>
#include <string.h>

#include "nn/gru.h"
#include "nn/gru_cell.h"
#include "nn/linear.h"
#include "tests/gradcheck.h"
#include "tests/test.h"

enum { GC_R = 3, GC_C = 4, GC_H = 5 };

typedef struct {
    float x[GC_R * GC_C], hp[GC_R * GC_H], h[GC_R * GC_H], gates[GC_R * 3 * GC_H], hn[GC_R * GC_H];
    float w_ih[3 * GC_H * GC_C], w_hh[3 * GC_H * GC_H], b_ih[3 * GC_H], b_hh[3 * GC_H];
    float dx[GC_R * GC_C], dhp[GC_R * GC_H], g_ih[3 * GC_H * GC_C], g_hh[3 * GC_H * GC_H], gb_ih[3 * GC_H],
        gb_hh[3 * GC_H];
    float dxp[GC_R * 3 * GC_H], scratch[GC_R * 3 * GC_H];
} CellCase;

static void cell_forward(void *p) {
    CellCase *c = p;
    linear_forward(c->gates, c->x, c->w_ih, c->b_ih, GC_R, GC_C, 3 * GC_H);   /* xp, overwritten by the gates */
    gru_cell_forward(c->h, c->gates, c->hn, c->gates, c->hp, c->w_hh, c->b_hh, GC_R, GC_H, c->scratch);
}

static void cell_backward(void *p, const float *dout) {
    CellCase *c = p;
    gru_cell_backward(c->dxp, c->dhp, c->g_hh, c->gb_hh, dout, c->hp, c->gates, c->hn, c->w_hh, GC_R, GC_H,
                      c->scratch);
    linear_backward(c->dx, c->g_ih, c->gb_ih, c->dxp, c->x, c->w_ih, GC_R, GC_C, 3 * GC_H);
}

TEST(nn_gru_cell_gradients) {
    CellCase c;
    CHECK(gru_cell_scratch_size(GC_R, GC_H) <= (long)(sizeof c.scratch / sizeof(float)));
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

/* Two cell steps from zero are nn/gru.h's forward over a sequence of two:
 * the same equations, gate order and weight layout. */
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
    gru_forward(hs, gs, hns, xs, NULL, (GruWeights){c.w_ih, c.w_hh, c.b_ih, c.b_hh}, d, scr);
    free(scr);
    float xp[GC_R * 3 * GC_H];
    memset(c.hp, 0, sizeof c.hp);
    for (int t = 0; t < 2; t++) {
        for (int i = 0; i < GC_R; i++) memcpy(c.x + i * GC_C, xs + (i * 2 + t) * GC_C, sizeof(float) * GC_C);
        linear_forward(xp, c.x, c.w_ih, c.b_ih, GC_R, GC_C, 3 * GC_H);
        gru_cell_forward(c.h, c.gates, c.hn, xp, c.hp, c.w_hh, c.b_hh, GC_R, GC_H, c.scratch);
        for (int i = 0; i < GC_R; i++)
            for (int j = 0; j < GC_H; j++) CHECK_NEAR(c.h[i * GC_H + j], hs[(i * 2 + t) * GC_H + j], 1e-6);
        memcpy(c.hp, c.h, sizeof c.h);
    }
}
