/* test_nn_conv.c — conv1d over time (several filter widths, including W = T and
 * W = 1) against a direct loop and by finite differences; max-over-time pooling
 * with variable lengths. */
#include <stdlib.h>
#include <string.h>

#include "core/rng.h"
#include "nn/conv1d.h"
#include "nn/maxpool.h"
#include "tests/gradcheck.h"
#include "tests/test.h"

typedef struct {
    Conv1dDims d;
    float *x, *w, *b, *y, *dx, *dw, *db, *scratch;
} ConvCase;

static void conv_forward(void *p) {
    ConvCase *c = p;
    conv1d_forward(c->y, c->x, c->w, c->b, c->d, c->scratch);
}

static void conv_backward(void *p, const float *dy) {
    ConvCase *c = p;
    conv1d_backward(c->dx, c->dw, c->db, dy, c->x, c->w, c->d, c->scratch);
}

TEST(nn_conv1d_widths_forward_and_gradcheck) {
    const int widths[] = {1, 2, 3, 5, 7};
    for (unsigned wi = 0; wi < sizeof widths / sizeof widths[0]; wi++) {
        Conv1dDims d = {.B = 2, .T = 7, .C = 4, .F = 3, .W = widths[wi]};
        int TO = d.T - d.W + 1;
        long nx = (long)d.B * d.T * d.C, nw = (long)d.F * d.W * d.C, ny = (long)d.B * TO * d.F;
        ConvCase c = {d, malloc(4 * nx), malloc(4 * nw), malloc(4 * d.F), malloc(4 * ny),
                      malloc(4 * nx), malloc(4 * nw), malloc(4 * d.F),
                      malloc(4 * conv1d_scratch_size(d))};
        gradcheck_fill(c.x, nx, -1, 1, 100 + wi);
        gradcheck_fill(c.w, nw, -1, 1, 200 + wi);
        gradcheck_fill(c.b, d.F, -1, 1, 300 + wi);
        conv_forward(&c);
        double worst = 0;
        for (int b = 0; b < d.B; b++)
            for (int t = 0; t < TO; t++)
                for (int f = 0; f < d.F; f++) {
                    double acc = c.b[f];
                    for (int k = 0; k < d.W; k++)
                        for (int ch = 0; ch < d.C; ch++)
                            acc += (double)c.x[(b * d.T + t + k) * d.C + ch] * c.w[(f * d.W + k) * d.C + ch];
                    worst = fmax(worst, fabs(acc - c.y[(b * TO + t) * d.F + f]));
                }
        CHECK_MSG(worst < 1e-5, "W=%d: forward max diff %g", d.W, worst);
        char what[32];
        snprintf(what, sizeof what, "conv1d W=%d", d.W);
        GradCheck g;
        gradcheck_init(&g, &c, conv_forward, conv_backward, c.y, ny);
        gradcheck_add(&g, "x", c.x, c.dx, nx);
        gradcheck_add(&g, "w", c.w, c.dw, nw);
        gradcheck_add(&g, "b", c.b, c.db, d.F);
        gradcheck_expect(&g, what);
        free(c.x); free(c.w); free(c.b); free(c.y); free(c.dx); free(c.dw); free(c.db); free(c.scratch);
    }
}

enum { MB = 3, MT = 6, MF = 4 };

typedef struct {
    float x[MB * MT * MF], y[MB * MF], dx[MB * MT * MF];
    int argmax[MB * MF];
    const int *lengths;
} PoolCase;

static void pool_forward(void *p) {
    PoolCase *c = p;
    maxpool_time_forward(c->y, c->argmax, c->x, c->lengths, MB, MT, MF);
}

static void pool_backward(void *p, const float *dy) {
    PoolCase *c = p;
    maxpool_time_backward(c->dx, dy, c->argmax, MB, MT, MF);
}

TEST(nn_maxpool_time_lengths_and_gradcheck) {
    PoolCase c;
    /* Values of each (b, f) series are distinct multiples of 0.1, shuffled: no two
     * are within the FD step, so the argmax never flips during the check. */
    Rng rng;
    rng_seed(&rng, 3);
    for (int b = 0; b < MB; b++)
        for (int f = 0; f < MF; f++) {
            int perm[MT];
            for (int t = 0; t < MT; t++) perm[t] = t;
            rng_shuffle_int(&rng, perm, MT);
            for (int t = 0; t < MT; t++) c.x[(b * MT + t) * MF + f] = 0.1f * perm[t] - 0.25f;
        }
    const int lengths[MB] = {6, 3, 0};
    c.lengths = lengths;
    pool_forward(&c);
    for (int b = 0; b < MB; b++)
        for (int f = 0; f < MF; f++) {
            float best = -1e30f;
            int arg = -1;
            for (int t = 0; t < lengths[b]; t++)
                if (c.x[(b * MT + t) * MF + f] > best) { best = c.x[(b * MT + t) * MF + f]; arg = t; }
            CHECK_EQ_INT(c.argmax[b * MF + f], arg);
            CHECK_NEAR(c.y[b * MF + f], arg < 0 ? 0.0f : best, 0);
        }
    GradCheck g;
    gradcheck_init(&g, &c, pool_forward, pool_backward, c.y, MB * MF);
    gradcheck_add(&g, "x", c.x, c.dx, MB * MT * MF);
    gradcheck_expect(&g, "maxpool_time");
    /* Steps past a sequence's length never receive gradient. */
    for (int t = 3; t < MT; t++) CHECK_NEAR(c.dx[(1 * MT + t) * MF + 2], 0, 0);
}

/* ---- windows of size 3, stride 2, pad 1 (DPCNN's downsampling) ---- */

enum { WT = 7, WF = 3 };

typedef struct {
    float x[WT * WF], y[WT * WF], dx[WT * WF];
    int argmax[WT * WF], T, TO;
} WinCase;

static void win_forward(void *p) {
    WinCase *c = p;
    maxpool_window_forward(c->y, c->argmax, c->x, c->T, WF, 3, 2, 1);
}

static void win_backward(void *p, const float *dy) {
    WinCase *c = p;
    maxpool_window_backward(c->dx, dy, c->argmax, c->TO, WF);
}

TEST(nn_maxpool_window_halves_and_gradcheck) {
    /* Lengths 1..7 give ceil(L/2) windows, each the max of steps 2o-1..2o+1 in range. */
    for (int T = 1; T <= WT; T++) {
        WinCase c = {.T = T, .TO = maxpool_window_out_len(T, 3, 2, 1)};
        CHECK_EQ_INT(c.TO, (T + 1) / 2);
        Rng rng;
        rng_seed(&rng, 7 + T);
        for (int f = 0; f < WF; f++) {   /* distinct multiples of 0.1: no argmax flips under the check */
            int perm[WT];
            for (int t = 0; t < WT; t++) perm[t] = t;
            rng_shuffle_int(&rng, perm, WT);
            for (int t = 0; t < T; t++) c.x[t * WF + f] = 0.1f * perm[t] - 0.3f;
        }
        win_forward(&c);
        for (int o = 0; o < c.TO; o++)
            for (int f = 0; f < WF; f++) {
                float best = -1e30f;
                for (int t = 2 * o - 1; t <= 2 * o + 1; t++)
                    if (t >= 0 && t < T && c.x[t * WF + f] > best) best = c.x[t * WF + f];
                CHECK_NEAR(c.y[o * WF + f], best, 0);
            }
        GradCheck g;
        gradcheck_init(&g, &c, win_forward, win_backward, c.y, (long)c.TO * WF);
        gradcheck_add(&g, "x", c.x, c.dx, (long)T * WF);
        gradcheck_expect(&g, "maxpool_window");
    }
}
