/* gru.c — GRU / BiGRU forward and backward through time (see gru.h). The
 * packing, the input projection, the forward's loop over the steps (blocks of
 * sequences, one per thread) and the weight gradients are the recurrent ops'
 * shared ones (rnn_pack.c); what is the GRU's own is the step. As in lstm.c,
 * the backward's element-wise step work stays single-threaded between the
 * BLAS calls, and nothing is allocated: every buffer is the caller's scratch. */
#include "nn/gru.h"

#include <string.h>

#include "core/blas.h"
#include "core/common.h"
#include "core/kernels.h"

long gru_scratch_size(GruDims d) {
    long B = d.B, T = d.T, H = d.H, C = d.C;
    long fwd = B * H + B * 3 * H + B * T * C                       /* hprev, rec, packed x */
               + MATMUL_PACKED_B_FLOATS(H, 3 * H);                 /* W_hh^T packed once */
    long bwd = 2 * B * T * 3 * H + B * 3 * H + 2 * B * H           /* dGi, dGh, dGs, dh_rec, dh_act */
               + B * T * H + B * T * C;                            /* Hprev, packed x / dx */
    return fwd > bwd ? fwd : bwd;
}

/* Step s of every active sequence (core/kernels' gru_cell: the gate
 * non-linearities vectorised for the CPU's level). gates holds the input
 * projections; rec (active rows, 3H) is h_prev W_hh^T in batch order, or NULL
 * at s = 0. */
static void gru_step_forward(float *h, float *gates, float *hn, const float *rec, const int *lengths,
                             const float *b_hh, GruDims d, int s) {
    int H = d.H, ldh = rnn_ldh(d);
    const ElemKernels *kern = kernels();
    long k = 0;
    for (int b = 0; b < d.B; b++) {
        int len = rnn_len(lengths, b, d.T);
        if (s >= len) continue;
        long bt = (long)b * d.T + rnn_pos(len, s, d.reverse);
        const float *hp = s > 0 ? h + ((long)b * d.T + rnn_pos(len, s - 1, d.reverse)) * ldh : NULL;
        const float *r = rec ? rec + k++ * 3 * H : NULL;
        kern->gru_cell(gates + bt * 3 * H, hn + bt * H, h + bt * ldh, hp, b_hh, r, H);
    }
}

void gru_forward(float *h, float *gates, float *hn, const float *x, const int *lengths, GruWeights w, GruDims d,
                 float *scratch) {
    rnn_forward(h, gates, hn, x, lengths, w.w_ih, w.w_hh, w.b_ih, w.b_hh, d, 3 * d.H, scratch, gru_step_forward);
}

/* Step s backwards: the output's gradient dh plus dh_rec (carried from step
 * s + 1) into the pre-activation gradients of the input side dGi and of the
 * recurrent side dGh (B, T, 3H; they differ in n: the recurrent one is scaled
 * by r), the latter also to dGs (active rows, 3H); dh_rec becomes the direct
 * part z * dh of the gradient of h_prev. Returns the active rows. */
static int gru_step_backward(float *dGi, float *dGh, float *dGs, float *dh_rec, const float *dh, const float *h,
                             const float *gates, const float *hn, const int *lengths, GruDims d, int s) {
    int H = d.H, ldh = rnn_ldh(d), k = 0;
    for (int b = 0; b < d.B; b++) {
        int len = rnn_len(lengths, b, d.T);
        if (s >= len) continue;
        float *gs = dGs + (long)k++ * 3 * H, *gi = dGi + ((long)b * d.T + rnn_pos(len, s, d.reverse)) * 3 * H;
        long bt = (long)b * d.T + rnn_pos(len, s, d.reverse);
        const float *G = gates + bt * 3 * H, *HN = hn + bt * H;
        const float *hp = s > 0 ? h + ((long)b * d.T + rnn_pos(len, s - 1, d.reverse)) * ldh : NULL;
        float *dr = dh_rec + (long)b * H;
        for (int j = 0; j < H; j++) {
            float rg = G[j], zg = G[H + j], ng = G[2 * H + j], hpj = hp ? hp[j] : 0.0f;
            float dht = dh[bt * ldh + j] + dr[j];
            float dn = dht * (1.0f - zg) * (1.0f - ng * ng);
            float dzp = dht * (hpj - ng) * zg * (1.0f - zg);
            float drp = dn * HN[j] * rg * (1.0f - rg);
            gi[j] = drp; gi[H + j] = dzp; gi[2 * H + j] = dn;
            gs[j] = drp; gs[H + j] = dzp; gs[2 * H + j] = dn * rg;
            dr[j] = dht * zg;
        }
        memcpy(dGh + bt * 3 * H, gs, sizeof(float) * 3 * (size_t)H);
    }
    return k;
}

void gru_backward(float *dx, GruGrads g, const float *dh, const float *h, const float *gates, const float *hn,
                  const float *x, const int *lengths, GruWeights w, GruDims d, float *scratch) {
    int B = d.B, T = d.T, H = d.H, maxlen;
    float *dGi = scratch;                        /* (B, T, 3H) */
    float *dGh = dGi + (long)B * T * 3 * H;      /* (B, T, 3H) */
    float *dGs = dGh + (long)B * T * 3 * H;      /* (active rows, 3H) */
    float *dh_rec = dGs + (long)B * 3 * H;       /* (B, H) */
    float *dh_act = dh_rec + (long)B * H;        /* (active rows, H) */
    float *Hprev = dh_act + (long)B * H;         /* (N, H) */
    float *xp = Hprev + (long)B * T * H;         /* (N, C) */
    rnn_count(lengths, d, &maxlen);
    memset(dGi, 0, sizeof(float) * 2 * (size_t)B * T * 3 * H);
    memset(dh_rec, 0, sizeof(float) * (size_t)B * H);   /* zero until a sequence's last step */
    for (int s = maxlen - 1; s >= 0; s--) {
        int k = gru_step_backward(dGi, dGh, dGs, dh_rec, dh, h, gates, hn, lengths, d, s);
        if (s == 0) break;
        matmul(dh_act, dGs, w.w_hh, k, H, 3 * H, MAT_N, MAT_N, 1.0f, 0.0f);
        k = 0;   /* added to the direct part, in the active sequences' rows */
        for (int b = 0; b < B; b++)
            if (s < rnn_len(lengths, b, T)) {
                const float *src = dh_act + (long)k++ * H;
                float *dst = dh_rec + (long)b * H;
                for (int j = 0; j < H; j++) dst[j] += src[j];
            }
    }
    rnn_backward_weights(dx, g.w_ih, g.b_ih, g.w_hh, g.b_hh, dGi, dGh, Hprev, xp, h, x, lengths, w.w_ih, w.w_hh, d,
                         3 * H);
}

void bigru_forward(float *h, float *gates, float *hn, const float *x, const int *lengths, const GruWeights w[2],
                   GruDims d, float *scratch) {
    d.ldh = 2 * d.H;
    for (int dir = 0; dir < 2; dir++) {
        d.reverse = dir;
        gru_forward(h + (long)dir * d.H, gates + (long)dir * d.B * d.T * 3 * d.H, hn + (long)dir * d.B * d.T * d.H,
                    x, lengths, w[dir], d, scratch);
    }
}

void bigru_backward(float *dx, const GruGrads g[2], const float *dh, const float *h, const float *gates,
                    const float *hn, const float *x, const int *lengths, const GruWeights w[2], GruDims d,
                    float *scratch) {
    d.ldh = 2 * d.H;
    for (int dir = 0; dir < 2; dir++) {
        d.reverse = dir;
        gru_backward(dx, g[dir], dh + (long)dir * d.H, h + (long)dir * d.H, gates + (long)dir * d.B * d.T * 3 * d.H,
                     hn + (long)dir * d.B * d.T * d.H, x, lengths, w[dir], d, scratch);
    }
}
