/* gru_cell.c — one GRU step from a given state (see gru_cell.h). The
 * recurrent product is an (R, H) x (H, 3H) GEMM; the gates are nn/gru.c's. */
#include "nn/gru_cell.h"

#include <math.h>

#include "core/blas.h"

static float gru_cell_sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }

long gru_cell_scratch_size(int R, int H) { return 3L * R * H; }

void gru_cell_forward(float *h, float *gates, float *hn, const float *xp, const float *h_prev, const float *w_hh,
                      const float *b_hh, int R, int H, float *scratch) {
    float *rec = scratch;   /* (R, 3H) h_prev W_hh^T */
    matmul(rec, h_prev, w_hh, R, 3 * H, H, MAT_N, MAT_T, 1.0f, 0.0f);
    for (int i = 0; i < R; i++) {
        const float *x = xp + (long)i * 3 * H, *rc = rec + (long)i * 3 * H, *hp = h_prev + (long)i * H;
        float *G = gates + (long)i * 3 * H, *HN = hn + (long)i * H, *out = h + (long)i * H;
        for (int j = 0; j < H; j++) {   /* reads x[j], x[H + j], x[2H + j] before G writes them */
            float r = gru_cell_sigmoid(x[j] + rc[j] + b_hh[j]);
            float z = gru_cell_sigmoid(x[H + j] + rc[H + j] + b_hh[H + j]);
            float hnj = rc[2 * H + j] + b_hh[2 * H + j];
            float n = tanhf(x[2 * H + j] + r * hnj);
            G[j] = r; G[H + j] = z; G[2 * H + j] = n;
            HN[j] = hnj;
            out[j] = (1.0f - z) * n + z * hp[j];
        }
    }
}

void gru_cell_backward(float *dxp, float *dh_prev, float *dw_hh, float *db_hh, const float *dh, const float *h_prev,
                       const float *gates, const float *hn, const float *w_hh, int R, int H, float *scratch) {
    float *dgh = scratch;   /* (R, 3H) the recurrent side's pre-activation gradient */
    for (int i = 0; i < R; i++) {
        const float *G = gates + (long)i * 3 * H, *HN = hn + (long)i * H, *hp = h_prev + (long)i * H;
        const float *d = dh + (long)i * H;
        float *dx = dxp + (long)i * 3 * H, *gh = dgh + (long)i * 3 * H;
        for (int j = 0; j < H; j++) {
            float r = G[j], z = G[H + j], n = G[2 * H + j];
            float dn = d[j] * (1.0f - z) * (1.0f - n * n);
            float dz = d[j] * (hp[j] - n) * z * (1.0f - z);
            float dr = dn * HN[j] * r * (1.0f - r);
            dx[j] = dr; dx[H + j] = dz; dx[2 * H + j] = dn;
            gh[j] = dr; gh[H + j] = dz; gh[2 * H + j] = dn * r;
            if (dh_prev) dh_prev[(long)i * H + j] += d[j] * z;   /* the direct path */
        }
    }
    if (db_hh)
        for (int i = 0; i < R; i++)
            for (int k = 0; k < 3 * H; k++) db_hh[k] += dgh[(long)i * 3 * H + k];
    if (dw_hh) matmul(dw_hh, dgh, h_prev, 3 * H, H, R, MAT_T, MAT_N, 1.0f, 1.0f);
    if (dh_prev) matmul(dh_prev, dgh, w_hh, R, H, 3 * H, MAT_N, MAT_N, 1.0f, 1.0f);
}
