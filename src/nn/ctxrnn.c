/* ctxrnn.c — RCNN's left / right recurrent context (see ctxrnn.h): a tanh
 * RNN from a learned initial state whose output at t is its state before t. */
#include "nn/ctxrnn.h"

#include <math.h>
#include <string.h>

#include "core/blas.h"
#include "core/common.h"

long ctxrnn_scratch_size(RnnDims d) {
    long B = d.B, T = d.T, H = d.H, C = d.C;
    long fwd = 2 * B * H + H + B * T * C;                  /* hprev, rec, c0 W^T, packed x */
    long bwd = B * T * H + 2 * B * H + B * T * H + B * T * C;   /* dP, dh_rec, dh_act, Hprev, packed x / dx */
    return fwd > bwd ? fwd : bwd;
}

void ctxrnn_forward(float *ctx, float *hs, const float *x, const int *lengths, CtxRnnWeights w, RnnDims d,
                    float *scratch) {
    int B = d.B, H = d.H, ldc = rnn_ldh(d), maxlen;
    RnnDims dh = d;
    dh.ldh = H;   /* the states' own stride */
    float *hprev = scratch, *rec = hprev + (long)B * H, *rec0 = rec + (long)B * H, *xp = rec0 + H;
    long N = rnn_count(lengths, d, &maxlen);
    rnn_input_projection(hs, x, lengths, N, w.w_s, NULL, d, H, xp);   /* hs = x W_s^T, then the recurrence */
    matmul(rec0, w.c0, w.w, 1, H, H, MAT_N, MAT_T, 1.0f, 0.0f);       /* c0 W^T, every sequence's first */
    for (int s = 0; s < maxlen; s++) {
        int k = 0;
        if (s > 0) {
            k = rnn_gather_prev(hprev, hs, lengths, dh, s);
            matmul(rec, hprev, w.w, k, H, H, MAT_N, MAT_T, 1.0f, 0.0f);
        }
        k = 0;
        for (int b = 0; b < B; b++) {
            int len = rnn_len(lengths, b, d.T);
            if (s >= len) continue;
            long bt = (long)b * d.T + rnn_pos(len, s, d.reverse);
            const float *r = s > 0 ? rec + (long)k++ * H : rec0;
            const float *before = s > 0 ? hs + ((long)b * d.T + rnn_pos(len, s - 1, d.reverse)) * H : w.c0;
            memcpy(ctx + bt * ldc, before, sizeof(float) * (size_t)H);
            float *h = hs + bt * H;
            for (int j = 0; j < H; j++) h[j] = tanhf(h[j] + r[j]);
        }
    }
}

void ctxrnn_backward(float *dx, CtxRnnGrads g, const float *dctx, const float *hs, const float *x,
                     const int *lengths, CtxRnnWeights w, RnnDims d, float *scratch) {
    int B = d.B, T = d.T, H = d.H, ldc = rnn_ldh(d), maxlen;
    RnnDims dh = d;
    dh.ldh = H;
    float *dP = scratch;                       /* (B, T, H) pre-activation grads */
    float *dh_rec = dP + (long)B * T * H;      /* (B, H) */
    float *dh_act = dh_rec + (long)B * H;      /* (active rows, H) */
    float *Hprev = dh_act + (long)B * H;       /* (N, H) */
    float *xp = Hprev + (long)B * T * H;       /* (N, C) */
    rnn_count(lengths, d, &maxlen);
    memset(dP, 0, sizeof(float) * (size_t)B * T * H);
    memset(dh_rec, 0, sizeof(float) * (size_t)B * H);
    for (int s = maxlen - 1; s >= 0; s--) {
        int k = 0;
        for (int b = 0; b < B; b++) {   /* h_s gets the context of step s + 1 and the recurrence */
            int len = rnn_len(lengths, b, T);
            if (s >= len) continue;
            long bt = (long)b * T + rnn_pos(len, s, d.reverse);
            const float *dnext = s + 1 < len ? dctx + ((long)b * T + rnn_pos(len, s + 1, d.reverse)) * ldc : NULL;
            const float *h = hs + bt * H;
            float *dp = dP + bt * H, *dr = dh_rec + (long)b * H, *row = dh_act + (long)k++ * H;
            for (int j = 0; j < H; j++) dp[j] = (dr[j] + (dnext ? dnext[j] : 0.0f)) * (1.0f - h[j] * h[j]);
            memcpy(row, dp, sizeof(float) * (size_t)H);
        }
        /* dh_{s-1} = dP_s W, for the active rows (in place: gathered above). */
        float *tmp = Hprev;   /* free until the weight gradients */
        matmul(tmp, dh_act, w.w, k, H, H, MAT_N, MAT_N, 1.0f, 0.0f);
        k = 0;
        for (int b = 0; b < B; b++) {
            int len = rnn_len(lengths, b, T);
            if (s >= len) continue;
            const float *src = tmp + (long)k * H, *dp = dh_act + (long)k * H;
            k++;
            if (s > 0) {
                memcpy(dh_rec + (long)b * H, src, sizeof(float) * (size_t)H);
                continue;
            }
            /* s = 0: the state before was c0, whose context is word 0's too. */
            const float *d0 = dctx + ((long)b * T + rnn_pos(len, 0, d.reverse)) * ldc;
            for (int j = 0; j < H; j++) {
                if (g.c0) g.c0[j] += src[j] + d0[j];
                if (g.w)
                    for (int i = 0; i < H; i++) g.w[(long)j * H + i] += dp[j] * w.c0[i];
            }
        }
    }
    /* W's gradient over the steps s > 0 (rnn_backward_weights puts h_{-1} = 0:
     * the c0 part was added above) and W_s's and dx over all. */
    rnn_backward_weights(dx, g.w_s, NULL, g.w, NULL, dP, dP, Hprev, xp, hs, x, lengths, w.w_s, w.w, dh, H);
}
