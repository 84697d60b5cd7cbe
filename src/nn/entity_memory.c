/* entity_memory.c — the Recurrent Entity Network's memory update (see
 * entity_memory.h): the candidate's GEMMs over all M blocks at once, then
 * the gate, the PReLU and the normalisation block by block. */
#include "nn/entity_memory.h"

#include <math.h>
#include <string.h>

#include "core/blas.h"
#include "nn/prelu.h"

static float em_sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }

static float em_dot(const float *a, const float *b, int n) {
    float s = 0;
    for (int i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}

long entity_memory_scratch(int M, int H) { return 3L * M * H + 2L * H; }

void entity_memory_forward(float *h, float *g, float *pre, float *norm, const float *hp, const float *s,
                           EntMemWeights w, int M, int H, float *scratch) {
    float *ws = scratch, *cand = ws + H;   /* W s (H); the PReLU's output (M, H) */
    matmul(ws, s, w.W, 1, H, H, MAT_N, MAT_T, 1.0f, 0.0f);
    matmul(pre, hp, w.U, M, H, H, MAT_N, MAT_T, 1.0f, 0.0f);
    matmul(pre, w.keys, w.V, M, H, H, MAT_N, MAT_T, 1.0f, 1.0f);
    for (int j = 0; j < M; j++)
        for (int k = 0; k < H; k++) pre[(long)j * H + k] += ws[k];
    prelu_forward(cand, pre, w.slope, M, H);
    for (int j = 0; j < M; j++) {
        const float *hj = hp + (long)j * H, *cj = cand + (long)j * H;
        float *oj = h + (long)j * H;
        g[j] = em_sigmoid(em_dot(s, hj, H) + em_dot(s, w.keys + (long)j * H, H));
        for (int k = 0; k < H; k++) oj[k] = hj[k] + g[j] * cj[k];
        norm[j] = sqrtf(em_dot(oj, oj, H));
        float inv = norm[j] > 0 ? 1.0f / norm[j] : 0.0f;
        for (int k = 0; k < H; k++) oj[k] *= inv;
    }
}

void entity_memory_backward(float *dhp, float *ds, EntMemGrads gw, const float *dh, const float *h, const float *g,
                            const float *pre, const float *norm, const float *hp, const float *s, EntMemWeights w,
                            int M, int H, float *scratch) {
    float *cand = scratch, *dpre = cand + (long)M * H, *dcand = dpre + (long)M * H, *sum = dcand + (long)M * H;
    prelu_forward(cand, pre, w.slope, M, H);
    for (int j = 0; j < M; j++) {
        const float *hj = h + (long)j * H, *dhj = dh + (long)j * H, *cj = cand + (long)j * H;
        const float *hpj = hp + (long)j * H, *kj = w.keys + (long)j * H;
        float inv = norm[j] > 0 ? 1.0f / norm[j] : 0.0f, proj = em_dot(hj, dhj, H), dgate = 0;
        float *dcj = dcand + (long)j * H, *dhpj = dhp + (long)j * H;
        for (int k = 0; k < H; k++) {
            float du = (dhj[k] - hj[k] * proj) * inv;   /* through the normalisation */
            dhpj[k] += du;
            dgate += du * cj[k];
            dcj[k] = g[j] * du;
        }
        float dz = dgate * g[j] * (1.0f - g[j]);
        for (int k = 0; k < H; k++) {
            dhpj[k] += dz * s[k];
            ds[k] += dz * (hpj[k] + kj[k]);
            if (gw.keys) gw.keys[(long)j * H + k] += dz * s[k];
        }
    }
    memset(dpre, 0, sizeof(float) * (size_t)M * H);
    prelu_backward(dpre, gw.slope, dcand, pre, w.slope, M, H);
    matmul(gw.U, dpre, hp, H, H, M, MAT_T, MAT_N, 1.0f, 1.0f);
    matmul(dhp, dpre, w.U, M, H, H, MAT_N, MAT_N, 1.0f, 1.0f);
    matmul(gw.V, dpre, w.keys, H, H, M, MAT_T, MAT_N, 1.0f, 1.0f);
    if (gw.keys) matmul(gw.keys, dpre, w.V, M, H, H, MAT_N, MAT_N, 1.0f, 1.0f);
    memset(sum, 0, sizeof(float) * (size_t)H);
    for (int j = 0; j < M; j++)
        for (int k = 0; k < H; k++) sum[k] += dpre[(long)j * H + k];
    matmul(gw.W, sum, s, H, H, 1, MAT_T, MAT_N, 1.0f, 1.0f);
    matmul(ds, sum, w.W, 1, H, H, MAT_N, MAT_N, 1.0f, 1.0f);
}
