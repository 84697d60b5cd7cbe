/* episodic.c — the DMN's attention gate and gated episode step (see
 * episodic.h). The gate's layers run over all N facts as GEMMs (nn/linear). */
#include "nn/episodic.h"

#include <math.h>
#include <string.h>

#include "nn/gru_cell.h"
#include "nn/linear.h"

static float ep_sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }
static float ep_sign(float x) { return x > 0 ? 1.0f : x < 0 ? -1.0f : 0.0f; }

void episodic_gate_forward(float *g, float *z, float *t, const float *c, const float *q, const float *m,
                           const float *w1, const float *b1, const float *w2, const float *b2, int N, int H, int A) {
    for (int i = 0; i < N; i++) {
        const float *ci = c + (long)i * H;
        float *zi = z + (long)i * 4 * H;
        for (int j = 0; j < H; j++) {
            zi[j] = ci[j] * q[j];
            zi[H + j] = ci[j] * m[j];
            zi[2 * H + j] = fabsf(ci[j] - q[j]);
            zi[3 * H + j] = fabsf(ci[j] - m[j]);
        }
    }
    linear_forward(t, z, w1, b1, N, 4 * H, A);
    for (long k = 0; k < (long)N * A; k++) t[k] = tanhf(t[k]);
    linear_forward(g, t, w2, b2, N, A, 1);
    for (int i = 0; i < N; i++) g[i] = ep_sigmoid(g[i]);
}

long episodic_gate_scratch(int N, int H, int A) { return (long)N * (1 + A + 4 * H); }

void episodic_gate_backward(float *dc, float *dq, float *dm, float *dw1, float *db1, float *dw2, float *db2,
                            const float *dg, const float *g, const float *z, const float *t, const float *c,
                            const float *q, const float *m, const float *w1, const float *w2, int N, int H, int A,
                            float *scratch) {
    float *dp2 = scratch, *dt = dp2 + N, *dz = dt + (long)N * A;
    for (int i = 0; i < N; i++) dp2[i] = dg[i] * g[i] * (1.0f - g[i]);
    memset(dt, 0, sizeof(float) * (size_t)N * A);
    linear_backward(dt, dw2, db2, dp2, t, w2, N, A, 1);
    for (long k = 0; k < (long)N * A; k++) dt[k] *= 1.0f - t[k] * t[k];
    memset(dz, 0, sizeof(float) * (size_t)N * 4 * H);
    linear_backward(dz, dw1, db1, dt, z, w1, N, 4 * H, A);
    for (int i = 0; i < N; i++) {
        const float *ci = c + (long)i * H, *dzi = dz + (long)i * 4 * H;
        for (int j = 0; j < H; j++) {
            float sq = ep_sign(ci[j] - q[j]) * dzi[2 * H + j], sm = ep_sign(ci[j] - m[j]) * dzi[3 * H + j];
            if (dc) dc[(long)i * H + j] += dzi[j] * q[j] + dzi[H + j] * m[j] + sq + sm;
            if (dq) dq[j] += dzi[j] * ci[j] - sq;
            if (dm) dm[j] += dzi[H + j] * ci[j] - sm;
        }
    }
}

void episodic_step_forward(float *h, float *hc, float *gates, float *hn, const float *xp, const float *hp, float g,
                           const float *w_hh, const float *b_hh, int H, float *scratch) {
    gru_cell_forward(hc, gates, hn, xp, hp, w_hh, b_hh, 1, H, scratch);
    for (int j = 0; j < H; j++) h[j] = g * hc[j] + (1.0f - g) * hp[j];
}

void episodic_step_backward(float *dxp, float *dhp, float *dg, float *dw_hh, float *db_hh, const float *dh,
                            const float *hp, const float *hc, const float *gates, const float *hn, float g,
                            const float *w_hh, int H, float *scratch) {
    float *dhc = scratch + 3 * H, s = 0;   /* scratch: 3H for the cell, H here */
    for (int j = 0; j < H; j++) {
        dhc[j] = g * dh[j];
        dhp[j] += (1.0f - g) * dh[j];
        s += dh[j] * (hc[j] - hp[j]);
    }
    *dg += s;
    gru_cell_backward(dxp, dhp, dw_hh, db_hh, dhc, hp, gates, hn, w_hh, 1, H, scratch);
}
