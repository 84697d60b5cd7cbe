/* test_nn_episodic.c — finite-difference gradients of the DMN's ops
 * (nn/episodic.h): the attention gate and the gated episode step. (The GRU
 * cell under the episode step is tests/test_nn_gru_cell.c.) */
#include <math.h>

#include "nn/episodic.h"
#include "tests/gradcheck.h"
#include "tests/test.h"

enum { EH = 5, EN = 4, EA = 6 };

/* ---- the attention gate ---- */

typedef struct {
    float c[EN * EH], q[EH], m[EH], w1[EA * 4 * EH], b1[EA], w2[EA], b2[1];
    float dc[EN * EH], dq[EH], dm[EH], dw1[EA * 4 * EH], db1[EA], dw2[EA], db2[1];
    float g[EN], z[EN * 4 * EH], t[EN * EA], scratch[EN * (1 + EA + 4 * EH)];
} GateCase;

static void gate_forward(void *p) {
    GateCase *c = p;
    episodic_gate_forward(c->g, c->z, c->t, c->c, c->q, c->m, c->w1, c->b1, c->w2, c->b2, EN, EH, EA);
}

static void gate_backward(void *p, const float *dg) {
    GateCase *c = p;
    episodic_gate_backward(c->dc, c->dq, c->dm, c->dw1, c->db1, c->dw2, c->db2, dg, c->g, c->z, c->t, c->c, c->q,
                           c->m, c->w1, c->w2, EN, EH, EA, c->scratch);
}

TEST(nn_episodic_gate_gradcheck) {
    GateCase c;
    CHECK(episodic_gate_scratch(EN, EH, EA) <= (long)(sizeof c.scratch / sizeof *c.scratch));
    gradcheck_fill(c.c, EN * EH, -1, 1, 11);
    /* q and m at least eps away from every fact: |c - q| has a kink at 0 */
    for (int j = 0; j < EH; j++) { c.q[j] = 1.5f + 0.1f * j; c.m[j] = -1.4f - 0.1f * j; }
    gradcheck_fill(c.w1, EA * 4 * EH, -0.5f, 0.5f, 12);
    gradcheck_fill(c.b1, EA, -0.5f, 0.5f, 13);
    gradcheck_fill(c.w2, EA, -1, 1, 14);
    c.b2[0] = 0.1f;
    gate_forward(&c);
    float pre = c.b2[0];   /* one fact's gate by hand */
    for (int a = 0; a < EA; a++) {
        float s = c.b1[a];
        for (int j = 0; j < EH; j++) {
            float cj = c.c[EH + j];
            s += c.w1[a * 4 * EH + j] * cj * c.q[j] + c.w1[a * 4 * EH + EH + j] * cj * c.m[j] +
                 c.w1[a * 4 * EH + 2 * EH + j] * fabsf(cj - c.q[j]) + c.w1[a * 4 * EH + 3 * EH + j] * fabsf(cj - c.m[j]);
        }
        pre += c.w2[a] * tanhf(s);
    }
    CHECK_NEAR(c.g[1], 1.0f / (1.0f + expf(-pre)), 1e-6);
    GradCheck gc;
    gradcheck_init(&gc, &c, gate_forward, gate_backward, c.g, EN);
    gradcheck_add(&gc, "c", c.c, c.dc, EN * EH);
    gradcheck_add(&gc, "q", c.q, c.dq, EH);
    gradcheck_add(&gc, "m", c.m, c.dm, EH);
    gradcheck_add(&gc, "w1", c.w1, c.dw1, EA * 4 * EH);
    gradcheck_add(&gc, "b1", c.b1, c.db1, EA);
    gradcheck_add(&gc, "w2", c.w2, c.dw2, EA);
    gradcheck_add(&gc, "b2", c.b2, c.db2, 1);
    gradcheck_expect(&gc, "episodic gate");
}

/* ---- the gated episode step ---- */

typedef struct {
    float xp[3 * EH], hp[EH], g[1], whh[3 * EH * EH], bhh[3 * EH];
    float dxp[3 * EH], dhp[EH], dg[1], dwhh[3 * EH * EH], dbhh[3 * EH];
    float h[EH], hc[EH], gates[3 * EH], hn[EH], scratch[4 * EH];
} StepCase;

static void step_forward(void *p) {
    StepCase *c = p;
    episodic_step_forward(c->h, c->hc, c->gates, c->hn, c->xp, c->hp, c->g[0], c->whh, c->bhh, EH, c->scratch);
}

static void step_backward(void *p, const float *dh) {
    StepCase *c = p;
    float dxp[3 * EH];
    episodic_step_backward(dxp, c->dhp, c->dg, c->dwhh, c->dbhh, dh, c->hp, c->hc, c->gates, c->hn, c->g[0], c->whh,
                           EH, c->scratch);
    for (int i = 0; i < 3 * EH; i++) c->dxp[i] += dxp[i];
}

TEST(nn_episodic_step_gradcheck) {
    StepCase c;
    gradcheck_fill(c.xp, 3 * EH, -1, 1, 21);
    gradcheck_fill(c.hp, EH, -1, 1, 22);
    gradcheck_fill(c.whh, 3 * EH * EH, -0.6f, 0.6f, 23);
    gradcheck_fill(c.bhh, 3 * EH, -0.5f, 0.5f, 24);
    c.g[0] = 0.3f;
    step_forward(&c);
    for (int j = 0; j < EH; j++) CHECK_NEAR(c.h[j], 0.3f * c.hc[j] + 0.7f * c.hp[j], 1e-6);
    GradCheck gc;
    gradcheck_init(&gc, &c, step_forward, step_backward, c.h, EH);
    gradcheck_add(&gc, "xp", c.xp, c.dxp, 3 * EH);
    gradcheck_add(&gc, "h_prev", c.hp, c.dhp, EH);
    gradcheck_add(&gc, "g", c.g, c.dg, 1);
    gradcheck_add(&gc, "w_hh", c.whh, c.dwhh, 3 * EH * EH);
    gradcheck_add(&gc, "b_hh", c.bhh, c.dbhh, 3 * EH);
    gradcheck_expect(&gc, "episode step");
}
