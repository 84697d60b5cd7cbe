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
 * The per-step element-wise work is single-threaded on purpose: it sits between
 * two small BLAS calls of every step, and an OpenMP region there leaves libgomp's
 * workers spinning while OpenBLAS's threads need the same cores (measured on 2
 * cores, B 64, H 256, T 20: 764 ms per forward+backward with the region, 62 ms
 * without). */
#include "nn/lstm.h"

#include <math.h>
#include <string.h>

#include "core/blas.h"
#include "core/common.h"
#include "nn/linear.h"

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
    long B = d.B, T = d.T, H = d.H, C = d.C;
    long fwd = B * H + B * 4 * H + B * T * C;                       /* hprev, rec, packed x */
    long bwd = B * T * 4 * H + B * 4 * H + 3 * B * H + B * T * H    /* dG, dGs, dh_rec, dc_rec, dh_act, Hprev */
               + B * T * C;                                         /* packed x, then packed dx */
    return fwd > bwd ? fwd : bwd;
}

/* Valid positions N = sum of lengths; *maxlen gets the longest. */
static long lstm_count(const int *lengths, LstmDims d, int *maxlen) {
    long n = 0;
    *maxlen = 0;
    for (int b = 0; b < d.B; b++) {
        int len = lstm_len(lengths, b, d.T);
        n += len;
        *maxlen = len > *maxlen ? len : *maxlen;
    }
    return n;
}

/* dst (N, width) = the valid rows of src (B, T, width), packed in (b, t) order. */
static void lstm_pack(float *dst, const float *src, const int *lengths, LstmDims d, int width) {
    for (int b = 0; b < d.B; b++) {
        int len = lstm_len(lengths, b, d.T);
        memcpy(dst, src + (long)b * d.T * width, sizeof(float) * (size_t)len * (size_t)width);
        dst += (long)len * width;
    }
}

/* x (B, T, width) packed rows in its first N rows spread out to their padded
 * positions, in place. Last sequence first: a row's padded position is never
 * before its packed one, so no row is overwritten before it is moved. */
static void lstm_unpack_inplace(float *x, const int *lengths, LstmDims d, int width, long N) {
    long p = N;
    for (int b = d.B - 1; b >= 0; b--) {
        int len = lstm_len(lengths, b, d.T);
        p -= len;
        if (p != (long)b * d.T)
            memmove(x + (long)b * d.T * width, x + p * width, sizeof(float) * (size_t)len * (size_t)width);
    }
}

/* The inverse: valid rows of x (B, T, width) packed into its first N rows, in
 * place (first sequence first: a packed position is never after the padded one). */
static void lstm_pack_inplace(float *x, const int *lengths, LstmDims d, int width) {
    long p = 0;
    for (int b = 0; b < d.B; b++) {
        int len = lstm_len(lengths, b, d.T);
        if (p != (long)b * d.T)
            memmove(x + p * width, x + (long)b * d.T * width, sizeof(float) * (size_t)len * (size_t)width);
        p += len;
    }
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

/* gates (B, T, 4H) = x W_ih^T + b_ih at the valid positions, computed over the
 * packed rows only. xp (B*T, C) is scratch. */
static void lstm_input_projection(float *gates, const float *x, const int *lengths, long N, LstmWeights w,
                                  LstmDims d, float *xp) {
    int H4 = 4 * d.H;
    int packed = N < (long)d.B * d.T;
    if (packed) lstm_pack(xp, x, lengths, d, d.C);
    /* The bias first, then the GEMM accumulates (beta 1); single-threaded for
     * the reason in the file header. */
    for (long n = 0; n < N; n++) memcpy(gates + n * H4, w.b_ih, sizeof(float) * (size_t)H4);
    if (N > 0) matmul(gates, packed ? xp : x, w.w_ih, (int)N, H4, d.C, MAT_N, MAT_T, 1.0f, 1.0f);
    if (packed) lstm_unpack_inplace(gates, lengths, d, H4, N);
}

/* Step s of every active sequence: gates (pre-activation, input part) += rec +
 * b_hh, then the cell update. rec (active rows, 4H) is h_prev W_hh^T for the
 * sequences with s < len in batch order, or NULL at s = 0. */
static void lstm_step_forward(float *h, float *gates, float *cell, const float *rec,
                              const int *lengths, const float *b_hh, LstmDims d, int s) {
    int H = d.H, ldh = lstm_ldh(d);
    long k = 0;   /* row of rec */
    for (int b = 0; b < d.B; b++) {
        int len = lstm_len(lengths, b, d.T);
        if (s >= len) continue;
        long bt = (long)b * d.T + lstm_pos(len, s, d.reverse);
        float *G = gates + bt * 4 * H;
        const float *cprev = s > 0 ? cell + ((long)b * d.T + lstm_pos(len, s - 1, d.reverse)) * H : NULL;
        const float *r = rec ? rec + k++ * 4 * H : NULL;
        for (int j = 0; j < 4 * H; j++) G[j] += b_hh[j] + (r ? r[j] : 0.0f);
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
    int B = d.B, H = d.H, ldh = lstm_ldh(d), maxlen;
    float *hprev = scratch;                  /* (active rows, H) */
    float *rec = hprev + (long)B * H;        /* (active rows, 4H) */
    float *xp = rec + (long)B * 4 * H;       /* (N, C) packed input */
    long N = lstm_count(lengths, d, &maxlen);
    lstm_input_projection(gates, x, lengths, N, w, d, xp);
    for (int s = 0; s < maxlen; s++) {
        if (s > 0) {
            /* The matmul needs h_prev contiguous: gather the active sequences'. */
            int k = 0;
            for (int b = 0; b < B; b++) {
                int len = lstm_len(lengths, b, d.T);
                if (s < len)
                    memcpy(hprev + (long)k++ * H, h + ((long)b * d.T + lstm_pos(len, s - 1, d.reverse)) * ldh,
                           sizeof(float) * (size_t)H);
            }
            matmul(rec, hprev, w.w_hh, k, 4 * H, H, MAT_N, MAT_T, 1.0f, 0.0f);
        }
        lstm_step_forward(h, gates, cell, s > 0 ? rec : NULL, lengths, w.b_hh, d, s);
    }
    lstm_zero_padding(h, gates, cell, lengths, d);
}

/* Step s backwards: reads dh (output grad) + dh_rec, updates dc_rec, writes the
 * pre-activation gate grads of each active row to dGs (active rows, 4H, in batch
 * order; returns their count) and to dG (B, T, 4H). */
static int lstm_step_backward(float *dG, float *dGs, const float *dh_rec, float *dc_rec,
                              const float *dh, const float *gates, const float *cell,
                              const int *lengths, LstmDims d, int s) {
    int H = d.H, ldh = lstm_ldh(d), k = 0;
    for (int b = 0; b < d.B; b++) {
        int len = lstm_len(lengths, b, d.T);
        if (s >= len) continue;
        float *gs = dGs + (long)k++ * 4 * H;
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
    return k;
}

/* Hprev (N, H) packed like the valid positions: at each, the h that step
 * consumed (0 at s = 0), so all recurrent weight grads are one matmul dG^T Hprev. */
static void lstm_gather_hprev(float *Hprev, const float *h, const int *lengths, LstmDims d) {
    int H = d.H, ldh = lstm_ldh(d);
    for (int b = 0; b < d.B; b++) {
        int len = lstm_len(lengths, b, d.T);
        if (len > 0) memset(Hprev + (long)lstm_pos(len, 0, d.reverse) * H, 0, sizeof(float) * (size_t)H);
        for (int s = 1; s < len; s++)
            memcpy(Hprev + (long)lstm_pos(len, s, d.reverse) * H,
                   h + ((long)b * d.T + lstm_pos(len, s - 1, d.reverse)) * ldh, sizeof(float) * (size_t)H);
        Hprev += (long)len * H;
    }
}

/* The packed weight and input gradients once dG (B, T, 4H) is complete: dG is
 * packed in place, xp (B*T, C) holds the packed x and then the packed dx. */
static void lstm_backward_weights(float *dx, LstmGrads g, float *dG, float *Hprev, float *xp, const float *h,
                                  const float *x, const int *lengths, long N, LstmWeights w, LstmDims d) {
    int H4 = 4 * d.H;
    if (N == 0) return;
    int packed = N < (long)d.B * d.T;
    if (packed) {
        lstm_pack_inplace(dG, lengths, d, H4);
        lstm_pack(xp, x, lengths, d, d.C);
    }
    /* Both biases see the same pre-activation gradient. */
    linear_backward(NULL, g.w_ih, g.b_ih, dG, packed ? xp : x, w.w_ih, (int)N, d.C, H4);
    if (g.w_hh || g.b_hh) {
        if (g.w_hh) lstm_gather_hprev(Hprev, h, lengths, d);
        linear_backward(NULL, g.w_hh, g.b_hh, dG, Hprev, w.w_hh, (int)N, d.H, H4);
    }
    if (!dx) return;
    if (!packed) {
        matmul(dx, dG, w.w_ih, (int)N, d.C, H4, MAT_N, MAT_N, 1.0f, 1.0f);
        return;
    }
    matmul(xp, dG, w.w_ih, (int)N, d.C, H4, MAT_N, MAT_N, 1.0f, 0.0f);   /* packed dx (N, C) */
    const float *src = xp;
    for (int b = 0; b < d.B; b++) {
        long n = (long)lstm_len(lengths, b, d.T) * d.C;
        float *dst = dx + (long)b * d.T * d.C;
        for (long i = 0; i < n; i++) dst[i] += src[i];
        src += n;
    }
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
    long N = lstm_count(lengths, d, &maxlen);
    memset(dG, 0, sizeof(float) * (size_t)B * T * 4 * H);
    /* A sequence's dh_rec stays zero until its last step, where it starts. */
    memset(dh_rec, 0, sizeof(float) * 2 * (size_t)B * H);
    for (int s = maxlen - 1; s >= 0; s--) {
        int k = lstm_step_backward(dG, dGs, dh_rec, dc_rec, dh, gates, cell, lengths, d, s);
        if (s == 0) break;
        matmul(dh_act, dGs, w.w_hh, k, H, 4 * H, MAT_N, MAT_N, 1.0f, 0.0f);
        k = 0;   /* back to the active sequences' rows of dh_rec, in batch order */
        for (int b = 0; b < B; b++)
            if (s < lstm_len(lengths, b, T))
                memcpy(dh_rec + (long)b * H, dh_act + (long)k++ * H, sizeof(float) * (size_t)H);
    }
    lstm_backward_weights(dx, g, dG, Hprev, xp, h, x, lengths, N, w, d);
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
