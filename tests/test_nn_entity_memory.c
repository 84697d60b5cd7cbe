/* test_nn_entity_memory.c — PReLU (nn/prelu.h) and the Recurrent Entity
 * Network's memory update (nn/entity_memory.h): forward values against the
 * formulas by hand, finite-difference gradients. */
#include <math.h>
#include <string.h>

#include "nn/entity_memory.h"
#include "nn/prelu.h"
#include "tests/gradcheck.h"
#include "tests/test.h"

enum { PN = 3, PC = 7 };

typedef struct {
    float x[PN * PC], a[PC], y[PN * PC], dx[PN * PC], da[PC];
} PreluCase;

static void prelu_case_forward(void *p) {
    PreluCase *c = p;
    prelu_forward(c->y, c->x, c->a, PN, PC);
}

static void prelu_case_backward(void *p, const float *dy) {
    PreluCase *c = p;
    prelu_backward(c->dx, c->da, dy, c->x, c->a, PN, PC);
}

TEST(nn_prelu_forward_and_gradcheck) {
    PreluCase c;
    gradcheck_fill(c.x, PN * PC, -2, 2, 1);
    for (int i = 0; i < PN * PC; i++)
        if (fabsf(c.x[i]) < 0.05f) c.x[i] = 0.5f;   /* away from the kink by more than eps */
    gradcheck_fill(c.a, PC, 0.1f, 0.5f, 2);
    prelu_case_forward(&c);
    for (int i = 0; i < PN * PC; i++) CHECK_NEAR(c.y[i], c.x[i] > 0 ? c.x[i] : c.a[i % PC] * c.x[i], 0);
    GradCheck gc;
    gradcheck_init(&gc, &c, prelu_case_forward, prelu_case_backward, c.y, PN * PC);
    gradcheck_add(&gc, "x", c.x, c.dx, PN * PC);
    gradcheck_add(&gc, "slope", c.a, c.da, PC);
    gradcheck_expect(&gc, "prelu");
}

enum { EM = 4, EH = 5 };

typedef struct {
    float hp[EM * EH], s[EH], keys[EM * EH], U[EH * EH], V[EH * EH], W[EH * EH], slope[EH];
    float dhp[EM * EH], ds[EH], dkeys[EM * EH], dU[EH * EH], dV[EH * EH], dW[EH * EH], dslope[EH];
    float h[EM * EH], g[EM], pre[EM * EH], norm[EM], scratch[3 * EM * EH + 2 * EH];
} MemCase;

static EntMemWeights mem_weights(MemCase *c) { return (EntMemWeights){c->keys, c->U, c->V, c->W, c->slope}; }

static void mem_forward(void *p) {
    MemCase *c = p;
    entity_memory_forward(c->h, c->g, c->pre, c->norm, c->hp, c->s, mem_weights(c), EM, EH, c->scratch);
}

static void mem_backward(void *p, const float *dh) {
    MemCase *c = p;
    entity_memory_backward(c->dhp, c->ds, (EntMemGrads){c->dkeys, c->dU, c->dV, c->dW, c->dslope}, dh, c->h, c->g,
                           c->pre, c->norm, c->hp, c->s, mem_weights(c), EM, EH, c->scratch);
}

TEST(nn_entity_memory_forward_and_gradcheck) {
    MemCase c;
    CHECK(entity_memory_scratch(EM, EH) <= (long)(sizeof c.scratch / sizeof *c.scratch));
    gradcheck_fill(c.hp, EM * EH, -1, 1, 11);
    gradcheck_fill(c.s, EH, -1, 1, 12);
    gradcheck_fill(c.keys, EM * EH, -1, 1, 13);
    gradcheck_fill(c.U, EH * EH, -0.5f, 0.5f, 14);
    gradcheck_fill(c.V, EH * EH, -0.5f, 0.5f, 15);
    gradcheck_fill(c.W, EH * EH, -0.5f, 0.5f, 16);
    gradcheck_fill(c.slope, EH, 0.1f, 0.4f, 17);
    mem_forward(&c);
    /* block 2 by hand */
    int j = 2;
    float gs = 0, u[EH], nrm = 0;
    for (int k = 0; k < EH; k++) gs += c.s[k] * (c.hp[j * EH + k] + c.keys[j * EH + k]);
    float g = 1.0f / (1.0f + expf(-gs));
    for (int k = 0; k < EH; k++) {
        float a = 0;
        for (int i = 0; i < EH; i++)
            a += c.U[k * EH + i] * c.hp[j * EH + i] + c.V[k * EH + i] * c.keys[j * EH + i] + c.W[k * EH + i] * c.s[i];
        u[k] = c.hp[j * EH + k] + g * (a > 0 ? a : c.slope[k] * a);
        nrm += u[k] * u[k];
    }
    CHECK_NEAR(c.g[j], g, 1e-6);
    for (int k = 0; k < EH; k++) CHECK_NEAR(c.h[j * EH + k], u[k] / sqrtf(nrm), 1e-5);
    for (int i = 0; i < EM * EH; i++)   /* the PReLU's kink more than eps away */
        CHECK_MSG(fabsf(c.pre[i]) > 0.02f, "pre-activation %d is %g: move the fixture", i, c.pre[i]);
    GradCheck gc;
    gradcheck_init(&gc, &c, mem_forward, mem_backward, c.h, EM * EH);
    gradcheck_add(&gc, "h_prev", c.hp, c.dhp, EM * EH);
    gradcheck_add(&gc, "s", c.s, c.ds, EH);
    gradcheck_add(&gc, "keys", c.keys, c.dkeys, EM * EH);
    gradcheck_add(&gc, "U", c.U, c.dU, EH * EH);
    gradcheck_add(&gc, "V", c.V, c.dV, EH * EH);
    gradcheck_add(&gc, "W", c.W, c.dW, EH * EH);
    gradcheck_add(&gc, "slope", c.slope, c.dslope, EH);
    gradcheck_expect(&gc, "entity memory");
}
