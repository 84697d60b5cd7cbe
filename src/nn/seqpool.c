/* seqpool.c — mean, last-step and attention pooling over the valid steps of
 * variable-length sequences (see seqpool.h). */
#include "nn/seqpool.h"

#include <math.h>
#include <string.h>

static int seqpool_len(const int *lengths, int b, int T) { return lengths ? lengths[b] : T; }

void meanpool_time_forward(float *y, const float *x, const int *lengths, int B, int T, int F) {
    for (int b = 0; b < B; b++) {
        int len = seqpool_len(lengths, b, T);
        float *yb = y + (long)b * F;
        memset(yb, 0, sizeof(float) * (size_t)F);
        for (int t = 0; t < len; t++) {
            const float *xt = x + ((long)b * T + t) * F;
            for (int f = 0; f < F; f++) yb[f] += xt[f];
        }
        if (len > 0)
            for (int f = 0; f < F; f++) yb[f] /= (float)len;
    }
}

void meanpool_time_backward(float *dx, const float *dy, const int *lengths, int B, int T, int F) {
    for (int b = 0; b < B; b++) {
        int len = seqpool_len(lengths, b, T);
        const float *db = dy + (long)b * F;
        for (int t = 0; t < len; t++) {
            float *dxt = dx + ((long)b * T + t) * F;
            for (int f = 0; f < F; f++) dxt[f] += db[f] / (float)len;
        }
    }
}

void lastpool_bi_forward(float *y, const float *x, const int *lengths, int B, int T, int H) {
    for (int b = 0; b < B; b++) {
        int len = seqpool_len(lengths, b, T);
        float *yb = y + (long)b * 2 * H;
        if (len == 0) {
            memset(yb, 0, sizeof(float) * 2 * (size_t)H);
            continue;
        }
        memcpy(yb, x + ((long)b * T + len - 1) * 2 * H, sizeof(float) * (size_t)H);
        memcpy(yb + H, x + (long)b * T * 2 * H + H, sizeof(float) * (size_t)H);
    }
}

void lastpool_bi_backward(float *dx, const float *dy, const int *lengths, int B, int T, int H) {
    for (int b = 0; b < B; b++) {
        int len = seqpool_len(lengths, b, T);
        if (len == 0) continue;
        const float *db = dy + (long)b * 2 * H;
        float *fwd = dx + ((long)b * T + len - 1) * 2 * H, *bwd = dx + (long)b * T * 2 * H + H;
        for (int j = 0; j < H; j++) {
            fwd[j] += db[j];
            bwd[j] += db[H + j];
        }
    }
}

void attnpool_forward(float *y, float *alpha, const float *k, const float *v, const float *w, const int *lengths,
                      int B, int T, int Fk, int F) {
    for (int b = 0; b < B; b++) {
        int len = seqpool_len(lengths, b, T);
        float *a = alpha + (long)b * T, *yb = y + (long)b * F, top = -INFINITY;
        memset(a, 0, sizeof(float) * (size_t)T);
        memset(yb, 0, sizeof(float) * (size_t)F);
        for (int t = 0; t < len; t++) {
            const float *kt = k + ((long)b * T + t) * Fk;
            float s = 0;
            for (int f = 0; f < Fk; f++) s += w[f] * kt[f];
            a[t] = s;
            top = s > top ? s : top;
        }
        double sum = 0;   /* softmax, shifted by the largest score */
        for (int t = 0; t < len; t++) sum += a[t] = expf(a[t] - top);
        for (int t = 0; t < len; t++) {
            a[t] = (float)(a[t] / sum);
            const float *vt = v + ((long)b * T + t) * F;
            for (int f = 0; f < F; f++) yb[f] += a[t] * vt[f];
        }
    }
}

void attnpool_backward(float *dk, float *dv, float *dw, const float *dy, const float *alpha, const float *k,
                       const float *v, const float *w, const int *lengths, int B, int T, int Fk, int F) {
    for (int b = 0; b < B; b++) {
        int len = seqpool_len(lengths, b, T);
        const float *a = alpha + (long)b * T, *db = dy + (long)b * F;
        /* da_t = dy . v_t; the softmax's: ds_t = a_t (da_t - sum_u a_u da_u). */
        double mean = 0;
        for (int t = 0; t < len; t++) {
            const float *vt = v + ((long)b * T + t) * F;
            float da = 0;
            for (int f = 0; f < F; f++) da += db[f] * vt[f];
            mean += a[t] * da;
        }
        for (int t = 0; t < len; t++) {
            long bt = (long)b * T + t;
            const float *vt = v + bt * F, *kt = k + bt * Fk;
            float da = 0;
            for (int f = 0; f < F; f++) da += db[f] * vt[f];
            float ds = a[t] * (da - (float)mean);
            if (dv)
                for (int f = 0; f < F; f++) dv[bt * F + f] += a[t] * db[f];
            if (dk)
                for (int f = 0; f < Fk; f++) dk[bt * Fk + f] += ds * w[f];
            if (dw)
                for (int f = 0; f < Fk; f++) dw[f] += ds * kt[f];
        }
    }
}
