/* gru_cell.c — one GRU step from a given state (see gru_cell.h). The
 * recurrent product is a (1, H) x (H, 3H) GEMM; the gates are nn/gru.c's. */
#include "nn/gru_cell.h"

#include <math.h>

#include "core/blas.h"

static float cell_sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }

void gru_cell_forward(float *h, float *gates, float *hn, const float *xp, const float *hp, const float *w_hh,
                      const float *b_hh, int H, float *scratch) {
    float *rec = scratch;   /* (3H) hp W_hh^T */
    matmul(rec, hp, w_hh, 1, 3 * H, H, MAT_N, MAT_T, 1.0f, 0.0f);
    for (int j = 0; j < H; j++) {
        float r = cell_sigmoid(xp[j] + rec[j] + b_hh[j]);
        float z = cell_sigmoid(xp[H + j] + rec[H + j] + b_hh[H + j]);
        float hnj = rec[2 * H + j] + b_hh[2 * H + j];
        float n = tanhf(xp[2 * H + j] + r * hnj);
        gates[j] = r; gates[H + j] = z; gates[2 * H + j] = n;
        hn[j] = hnj;
        h[j] = (1.0f - z) * n + z * hp[j];
    }
}

void gru_cell_backward(float *dxp, float *dhp, float *dw_hh, float *db_hh, const float *dh, const float *hp,
                       const float *gates, const float *hn, const float *w_hh, int H, float *scratch) {
    float *dgh = scratch;   /* (3H) the recurrent side's pre-activation gradient */
    for (int j = 0; j < H; j++) {
        float r = gates[j], z = gates[H + j], n = gates[2 * H + j];
        float dn = dh[j] * (1.0f - z) * (1.0f - n * n);
        float dz = dh[j] * (hp[j] - n) * z * (1.0f - z);
        float dr = dn * hn[j] * r * (1.0f - r);
        dxp[j] = dr; dxp[H + j] = dz; dxp[2 * H + j] = dn;
        dgh[j] = dr; dgh[H + j] = dz; dgh[2 * H + j] = dn * r;
        if (dhp) dhp[j] += dh[j] * z;
    }
    if (db_hh)
        for (int i = 0; i < 3 * H; i++) db_hh[i] += dgh[i];
    if (dw_hh) matmul(dw_hh, dgh, hp, 3 * H, H, 1, MAT_T, MAT_N, 1.0f, 1.0f);
    if (dhp) matmul(dhp, dgh, w_hh, 1, H, 3 * H, MAT_N, MAT_N, 1.0f, 1.0f);
}
