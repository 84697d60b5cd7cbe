/* lstm.c — LSTM / BiLSTM forward and backward through time (see lstm.h).
 *
 * Cost follows the valid tokens, not the padded (B, T) box, as with PyTorch's
 * packed sequences: the input projection and the weight gradients run over the
 * N = sum(lengths) valid positions gathered into one packed (N, .) matrix (row
 * off[b] + t for step t of sequence b), and the recurrent matmul of step s runs
 * over only the sequences still active at s. On batches of natural sentences
 * (SST-2: mean 9 words, the longest of a batch of 64 ~35) that is 3-4x less
 * work than the padded box.
 *
 * The forward's steps run in one OpenMP region over blocks of sequences
 * (nn/rnn_pack.h's rnn_forward and rnn_row_team): each thread runs the recurrent product (our
 * GEMM's tiles over W_hh^T packed once) and the cells of its own rows, with no
 * barrier per step. The backward's per-step element-wise work stays
 * single-threaded between the BLAS calls of each step: an OpenMP region there
 * leaves libgomp's workers spinning while OpenBLAS's threads need the same
 * cores (measured on 2 cores, B 64, H 256, T 20: 764 ms per forward+backward
 * with the region, 62 ms without). */
#include "nn/lstm.h"

#include <string.h>

#include "core/blas.h"
#include "core/common.h"
#include "core/fastmath.h"
#include "core/kernels.h"

long lstm_scratch_size(LstmDims d) {
    long B = d.B, T = d.T, H = d.H, C = d.C;
    long fwd = B * H + B * 4 * H + B * T * C                        /* hprev, rec, packed x */
               + MATMUL_PACKED_B_FLOATS(H, 4 * H);                  /* W_hh^T packed once */
    long bwd = B * T * 4 * H + B * 4 * H + 3 * B * H + B * T * H    /* dG, dGs, dh_rec, dc_rec, dh_act, Hprev */
               + B * T * C;                                         /* packed x, then packed dx */
    return fwd > bwd ? fwd : bwd;
}

/* Step s of every active sequence: gates (pre-activation, input part) += rec +
 * b_hh, then the cell update (core/kernels' lstm_cell: the gate non-linearities
 * vectorised for the CPU's level). rec (active rows, 4H) is h_prev W_hh^T for
 * the sequences with s < len in batch order, or NULL at s = 0. */
static void lstm_step_forward(float *h, float *gates, float *cell, const float *rec,
                              const int *lengths, const float *b_hh, LstmDims d, int s) {
    int H = d.H, ldh = rnn_ldh(d);
    const ElemKernels *kern = kernels();
    long k = 0;   /* row of rec */
    for (int b = 0; b < d.B; b++) {
        int len = rnn_len(lengths, b, d.T);
        if (s >= len) continue;
        long bt = (long)b * d.T + rnn_pos(len, s, d.reverse);
        const float *cprev = s > 0 ? cell + ((long)b * d.T + rnn_pos(len, s - 1, d.reverse)) * H : NULL;
        const float *r = rec ? rec + k++ * 4 * H : NULL;
        kern->lstm_cell(gates + bt * 4 * H, cell + bt * H, h + bt * ldh, cprev, b_hh, r, H);
    }
}

void lstm_forward(float *h, float *gates, float *cell, const float *x, const int *lengths,
                  LstmWeights w, LstmDims d, float *scratch) {
    rnn_forward(h, gates, cell, x, lengths, w.w_ih, w.w_hh, w.b_ih, w.b_hh, d, 4 * d.H, scratch, lstm_step_forward);
}

/* Step s backwards: reads dh (output grad) + dh_rec, updates dc_rec, writes the
 * pre-activation gate grads of each active row to dGs (active rows, 4H, in batch
 * order; returns their count) and to dG (B, T, 4H). */
static int lstm_step_backward(float *dG, float *dGs, const float *dh_rec, float *dc_rec,
                              const float *dh, const float *gates, const float *cell,
                              const int *lengths, LstmDims d, int s) {
    int H = d.H, ldh = rnn_ldh(d), k = 0;
    for (int b = 0; b < d.B; b++) {
        int len = rnn_len(lengths, b, d.T);
        if (s >= len) continue;
        float *gs = dGs + (long)k++ * 4 * H;
        long bt = (long)b * d.T + rnn_pos(len, s, d.reverse);
        const float *G = gates + bt * 4 * H, *c = cell + bt * H;
        const float *cprev = s > 0 ? cell + ((long)b * d.T + rnn_pos(len, s - 1, d.reverse)) * H : NULL;
        for (int j = 0; j < H; j++) {
            float i = G[j], f = G[H + j], g = G[2 * H + j], o = G[3 * H + j];
            float dhj = dh[bt * ldh + j] + dh_rec[(long)b * H + j];
            float tc = fast_tanhf(c[j]);
            float dc = dc_rec[(long)b * H + j] + dhj * o * (1.0f - tc * tc);
            float cp = cprev ? cprev[j] : 0.0f;
            gs[j] = dc * g * i * (1.0f - i);
            gs[H + j] = dc * cp * f * (1.0f - f);
            gs[2 * H + j] = dc * i * (1.0f - g * g);
            gs[3 * H + j] = dhj * tc * o * (1.0f - o);
            dc_rec[(long)b * H + j] = dc * f;
        }
        memcpy(dG + bt * 4 * H, gs, sizeof(float) * 4 * (size_t)H);
    }
    return k;
}

void lstm_backward(float *dx, LstmGrads g, const float *dh, const float *h, const float *gates,
                   const float *cell, const float *x, const int *lengths, LstmWeights w,
                   LstmDims d, float *scratch) {
    int B = d.B, T = d.T, H = d.H, maxlen;
    float *dG = scratch;                         /* (B, T, 4H) */
    float *dGs = dG + (long)B * T * 4 * H;       /* (active rows, 4H) */
    float *dh_rec = dGs + (long)B * 4 * H;       /* (B, H) */
    float *dc_rec = dh_rec + (long)B * H;        /* (B, H) */
    float *dh_act = dc_rec + (long)B * H;        /* (active rows, H) */
    float *Hprev = dh_act + (long)B * H;         /* (N, H) */
    float *xp = Hprev + (long)B * T * H;         /* (N, C) */
    rnn_count(lengths, d, &maxlen);
    memset(dG, 0, sizeof(float) * (size_t)B * T * 4 * H);
    /* A sequence's dh_rec stays zero until its last step, where it starts. */
    memset(dh_rec, 0, sizeof(float) * 2 * (size_t)B * H);
    for (int s = maxlen - 1; s >= 0; s--) {
        int k = lstm_step_backward(dG, dGs, dh_rec, dc_rec, dh, gates, cell, lengths, d, s);
        if (s == 0) break;
        matmul(dh_act, dGs, w.w_hh, k, H, 4 * H, MAT_N, MAT_N, 1.0f, 0.0f);
        k = 0;   /* back to the active sequences' rows of dh_rec, in batch order */
        for (int b = 0; b < B; b++)
            if (s < rnn_len(lengths, b, T))
                memcpy(dh_rec + (long)b * H, dh_act + (long)k++ * H, sizeof(float) * (size_t)H);
    }
    rnn_backward_weights(dx, g.w_ih, g.b_ih, g.w_hh, g.b_hh, dG, dG, Hprev, xp, h, x, lengths, w.w_ih, w.w_hh, d,
                         4 * H);
}

void bilstm_forward(float *h, float *gates, float *cell, const float *x, const int *lengths,
                    const LstmWeights w[2], LstmDims d, float *scratch) {
    d.ldh = 2 * d.H;
    for (int dir = 0; dir < 2; dir++) {
        d.reverse = dir;
        lstm_forward(h + (long)dir * d.H, gates + (long)dir * d.B * d.T * 4 * d.H,
                     cell + (long)dir * d.B * d.T * d.H, x, lengths, w[dir], d, scratch);
    }
}

void bilstm_backward(float *dx, const LstmGrads g[2], const float *dh, const float *h,
                     const float *gates, const float *cell, const float *x, const int *lengths,
                     const LstmWeights w[2], LstmDims d, float *scratch) {
    d.ldh = 2 * d.H;
    for (int dir = 0; dir < 2; dir++) {
        d.reverse = dir;
        lstm_backward(dx, g[dir], dh + (long)dir * d.H, h + (long)dir * d.H,
                      gates + (long)dir * d.B * d.T * 4 * d.H, cell + (long)dir * d.B * d.T * d.H,
                      x, lengths, w[dir], d, scratch);
    }
}
