/* lstm.c — LSTM / BiLSTM forward and backward through time (see lstm.h). */
#include "nn/lstm.h"

#include <math.h>
#include <string.h>

#include "core/blas.h"
#include "core/common.h"
#include "nn/linear.h"

/* Per-step element-wise work is B*H; below this, thread start-up costs more. */
#define LSTM_PARALLEL_MIN 8192

static int lstm_ldh(LstmDims d) { return d.ldh > 0 ? d.ldh : d.H; }

static int lstm_len(const int *lengths, int b, int T) {
    if (!lengths) return T;
    if (lengths[b] < 0 || lengths[b] > T) DIE("lstm: length %d of sequence %d outside [0, %d]", lengths[b], b, T);
    return lengths[b];
}

/* Position written at step s of a sequence of length len. */
static int lstm_pos(int len, int s, int reverse) { return reverse ? len - 1 - s : s; }

static float lstm_sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }

long lstm_scratch_size(LstmDims d) {
    long B = d.B, T = d.T, H = d.H;
    long fwd = B * H + B * 4 * H;                                 /* hprev, rec */
    long bwd = B * T * 4 * H + B * 4 * H + 2 * B * H + B * T * H; /* dG, dGs, dh_rec, dc_rec, Hprev */
    return fwd > bwd ? fwd : bwd;
}

/* Zeroes h, gates and cell at the padded positions t >= len of every sequence. */
static void lstm_zero_padding(float *h, float *gates, float *cell, const int *lengths, LstmDims d) {
    int H = d.H, ldh = lstm_ldh(d);
    for (int b = 0; b < d.B; b++)
        for (int t = lstm_len(lengths, b, d.T); t < d.T; t++) {
            long bt = (long)b * d.T + t;
            memset(h + bt * ldh, 0, sizeof(float) * (size_t)H);
            memset(gates + bt * 4 * H, 0, sizeof(float) * 4 * (size_t)H);
            memset(cell + bt * H, 0, sizeof(float) * (size_t)H);
        }
}

/* Step s of every valid sequence: gates (pre-activation, input part) += rec + b_hh,
 * then the cell update. rec (B, 4H) is h_prev W_hh^T, or NULL at s = 0. */
static void lstm_step_forward(float *h, float *gates, float *cell, const float *rec,
                              const int *lengths, const float *b_hh, LstmDims d, int s) {
    int H = d.H, ldh = lstm_ldh(d);
    #pragma omp parallel for if ((long)d.B * H > LSTM_PARALLEL_MIN)
    for (int b = 0; b < d.B; b++) {
        int len = lstm_len(lengths, b, d.T);
        if (s >= len) continue;
        long bt = (long)b * d.T + lstm_pos(len, s, d.reverse);
        float *G = gates + bt * 4 * H;
        const float *cprev = s > 0 ? cell + ((long)b * d.T + lstm_pos(len, s - 1, d.reverse)) * H : NULL;
        for (int j = 0; j < 4 * H; j++) G[j] += b_hh[j] + (rec ? rec[(long)b * 4 * H + j] : 0.0f);
        for (int j = 0; j < H; j++) {
            float i = lstm_sigmoid(G[j]), f = lstm_sigmoid(G[H + j]);
            float g = tanhf(G[2 * H + j]), o = lstm_sigmoid(G[3 * H + j]);
            float c = i * g + (cprev ? f * cprev[j] : 0.0f);
            G[j] = i; G[H + j] = f; G[2 * H + j] = g; G[3 * H + j] = o;
            cell[bt * H + j] = c;
            h[bt * ldh + j] = o * tanhf(c);
        }
    }
}

void lstm_forward(float *h, float *gates, float *cell, const float *x, const int *lengths,
                  LstmWeights w, LstmDims d, float *scratch) {
    int B = d.B, H = d.H, ldh = lstm_ldh(d), maxlen = 0;
    float *hprev = scratch, *rec = scratch + (long)B * H; /* (B, H), (B, 4H) */
    for (int b = 0; b < B; b++) {
        int len = lstm_len(lengths, b, d.T);
        maxlen = len > maxlen ? len : maxlen;
    }
    /* Input projection of every time step at once: gates (B*T, 4H) = x W_ih^T + b_ih. */
    linear_forward(gates, x, w.w_ih, w.b_ih, B * d.T, d.C, 4 * H);
    for (int s = 0; s < maxlen; s++) {
        if (s > 0) {
            /* The matmul needs h_prev contiguous; rows of finished sequences are zero. */
            for (int b = 0; b < B; b++) {
                int len = lstm_len(lengths, b, d.T);
                float *dst = hprev + (long)b * H;
                if (s < len) memcpy(dst, h + ((long)b * d.T + lstm_pos(len, s - 1, d.reverse)) * ldh, sizeof(float) * (size_t)H);
                else memset(dst, 0, sizeof(float) * (size_t)H);
            }
            matmul(rec, hprev, w.w_hh, B, 4 * H, H, MAT_N, MAT_T, 1.0f, 0.0f);
        }
        lstm_step_forward(h, gates, cell, s > 0 ? rec : NULL, lengths, w.b_hh, d, s);
    }
    lstm_zero_padding(h, gates, cell, lengths, d);
}

/* Step s backwards: reads dh (output grad) + dh_rec, updates dc_rec, writes the
 * pre-activation gate grads of each valid row to dGs (B, 4H) and dG (B, T, 4H). */
static void lstm_step_backward(float *dG, float *dGs, const float *dh_rec, float *dc_rec,
                               const float *dh, const float *gates, const float *cell,
                               const int *lengths, LstmDims d, int s) {
    int H = d.H, ldh = lstm_ldh(d);
    #pragma omp parallel for if ((long)d.B * H > LSTM_PARALLEL_MIN)
    for (int b = 0; b < d.B; b++) {
        int len = lstm_len(lengths, b, d.T);
        float *gs = dGs + (long)b * 4 * H;
        if (s >= len) { memset(gs, 0, sizeof(float) * 4 * (size_t)H); continue; }
        long bt = (long)b * d.T + lstm_pos(len, s, d.reverse);
        const float *G = gates + bt * 4 * H, *c = cell + bt * H;
        const float *cprev = s > 0 ? cell + ((long)b * d.T + lstm_pos(len, s - 1, d.reverse)) * H : NULL;
        for (int j = 0; j < H; j++) {
            float i = G[j], f = G[H + j], g = G[2 * H + j], o = G[3 * H + j];
            float dhj = dh[bt * ldh + j] + dh_rec[(long)b * H + j];
            float tc = tanhf(c[j]);
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
}

/* Hprev (B, T, H): at each valid position, the h that step consumed (0 at s = 0),
 * so all recurrent weight grads are one matmul dG^T Hprev. */
static void lstm_gather_hprev(float *Hprev, const float *h, const int *lengths, LstmDims d) {
    int H = d.H, ldh = lstm_ldh(d);
    memset(Hprev, 0, sizeof(float) * (size_t)d.B * d.T * H);
    for (int b = 0; b < d.B; b++) {
        int len = lstm_len(lengths, b, d.T);
        for (int s = 1; s < len; s++)
            memcpy(Hprev + ((long)b * d.T + lstm_pos(len, s, d.reverse)) * H,
                   h + ((long)b * d.T + lstm_pos(len, s - 1, d.reverse)) * ldh, sizeof(float) * (size_t)H);
    }
}

void lstm_backward(float *dx, LstmGrads g, const float *dh, const float *h, const float *gates,
                   const float *cell, const float *x, const int *lengths, LstmWeights w,
                   LstmDims d, float *scratch) {
    int B = d.B, T = d.T, H = d.H, maxlen = 0;
    float *dG = scratch;                         /* (B, T, 4H) */
    float *dGs = dG + (long)B * T * 4 * H;       /* (B, 4H) */
    float *dh_rec = dGs + (long)B * 4 * H;       /* (B, H) */
    float *dc_rec = dh_rec + (long)B * H;        /* (B, H) */
    float *Hprev = dc_rec + (long)B * H;         /* (B, T, H) */
    for (int b = 0; b < B; b++) {
        int len = lstm_len(lengths, b, T);
        maxlen = len > maxlen ? len : maxlen;
    }
    memset(dG, 0, sizeof(float) * (size_t)B * T * 4 * H);
    memset(dh_rec, 0, sizeof(float) * 2 * (size_t)B * H);
    for (int s = maxlen - 1; s >= 0; s--) {
        lstm_step_backward(dG, dGs, dh_rec, dc_rec, dh, gates, cell, lengths, d, s);
        if (s > 0) matmul(dh_rec, dGs, w.w_hh, B, H, 4 * H, MAT_N, MAT_N, 1.0f, 0.0f);
    }
    /* Both biases see the same pre-activation gradient. */
    linear_backward(dx, g.w_ih, g.b_ih, dG, x, w.w_ih, B * T, d.C, 4 * H);
    if (g.w_hh) lstm_gather_hprev(Hprev, h, lengths, d);
    linear_backward(NULL, g.w_hh, g.b_hh, dG, Hprev, w.w_hh, B * T, H, 4 * H);
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
