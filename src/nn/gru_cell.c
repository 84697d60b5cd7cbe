/* gru_cell.c — one GRU step from a given state (see gru_cell.h). */
#include "nn/gru_cell.h"

#include <math.h>
#include <string.h>

#include "core/blas.h"
#include "nn/linear.h"

static float gru_cell_sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }

long gru_cell_scratch_size(int R, int H) { return 2L * R * 3 * H; }

void gru_cell_forward(float *h, float *gates, float *hn, const float *x, const float *h_prev, GruWeights w, int R,
                      int C, int H, float *scratch) {
    float *rec = scratch;   /* (R, 3H) h_prev W_hh^T + b_hh */
    linear_forward(gates, x, w.w_ih, w.b_ih, R, C, 3 * H);
    linear_forward(rec, h_prev, w.w_hh, w.b_hh, R, H, 3 * H);
    for (int i = 0; i < R; i++) {
        float *G = gates + (long)i * 3 * H, *HN = hn + (long)i * H, *out = h + (long)i * H;
        const float *r = rec + (long)i * 3 * H, *hp = h_prev + (long)i * H;
        for (int j = 0; j < H; j++) {
            float rg = gru_cell_sigmoid(G[j] + r[j]);
            float zg = gru_cell_sigmoid(G[H + j] + r[H + j]);
            float ng = tanhf(G[2 * H + j] + rg * r[2 * H + j]);
            G[j] = rg; G[H + j] = zg; G[2 * H + j] = ng;
            HN[j] = r[2 * H + j];
            out[j] = (1.0f - zg) * ng + zg * hp[j];
        }
    }
}

void gru_cell_backward(float *dx, float *dh_prev, GruGrads g, const float *dh, const float *x, const float *h_prev,
                       const float *gates, const float *hn, GruWeights w, int R, int C, int H, float *scratch) {
    float *dGi = scratch, *dGh = scratch + (long)R * 3 * H;   /* (R, 3H) input side, recurrent side */
    for (int i = 0; i < R; i++) {
        const float *G = gates + (long)i * 3 * H, *HN = hn + (long)i * H, *hp = h_prev + (long)i * H;
        const float *d = dh + (long)i * H;
        float *gi = dGi + (long)i * 3 * H, *gh = dGh + (long)i * 3 * H;
        for (int j = 0; j < H; j++) {
            float rg = G[j], zg = G[H + j], ng = G[2 * H + j];
            float dn = d[j] * (1.0f - zg) * (1.0f - ng * ng);
            float dzp = d[j] * (hp[j] - ng) * zg * (1.0f - zg);
            float drp = dn * HN[j] * rg * (1.0f - rg);
            gi[j] = drp; gi[H + j] = dzp; gi[2 * H + j] = dn;
            gh[j] = drp; gh[H + j] = dzp; gh[2 * H + j] = dn * rg;
        }
    }
    if (dh_prev)   /* the direct path z * dh, then the recurrent GEMM's */
        for (int i = 0; i < R; i++)
            for (int j = 0; j < H; j++) dh_prev[(long)i * H + j] += dh[(long)i * H + j] * gates[(long)i * 3 * H + H + j];
    linear_backward(dx, g.w_ih, g.b_ih, dGi, x, w.w_ih, R, C, 3 * H);
    linear_backward(dh_prev, g.w_hh, g.b_hh, dGh, h_prev, w.w_hh, R, H, 3 * H);
}
