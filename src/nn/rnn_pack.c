/* rnn_pack.c — packed variable-length batches for the recurrent ops (see
 * rnn_pack.h). The projections here are single-threaded GEMMs between the
 * per-step loops of lstm.c and gru.c (the reason is in lstm.c's header). */
#include "nn/rnn_pack.h"

#include <omp.h>
#include <string.h>

#include "core/blas.h"
#include "core/common.h"
#include "nn/linear.h"

int rnn_len(const int *lengths, int b, int T) {
    if (!lengths) return T;
    if (lengths[b] < 0 || lengths[b] > T) DIE("rnn: length %d of sequence %d outside [0, %d]", lengths[b], b, T);
    return lengths[b];
}

long rnn_count(const int *lengths, RnnDims d, int *maxlen) {
    long n = 0;
    *maxlen = 0;
    for (int b = 0; b < d.B; b++) {
        int len = rnn_len(lengths, b, d.T);
        n += len;
        *maxlen = len > *maxlen ? len : *maxlen;
    }
    return n;
}

void rnn_pack(float *dst, const float *src, const int *lengths, RnnDims d, int width) {
    for (int b = 0; b < d.B; b++) {
        int len = rnn_len(lengths, b, d.T);
        memcpy(dst, src + (long)b * d.T * width, sizeof(float) * (size_t)len * (size_t)width);
        dst += (long)len * width;
    }
}

/* Last sequence first: a row's padded position is never before its packed
 * one, so no row is overwritten before it is moved. */
void rnn_unpack_inplace(float *x, const int *lengths, RnnDims d, int width, long N) {
    long p = N;
    for (int b = d.B - 1; b >= 0; b--) {
        int len = rnn_len(lengths, b, d.T);
        p -= len;
        if (p != (long)b * d.T)
            memmove(x + (long)b * d.T * width, x + p * width, sizeof(float) * (size_t)len * (size_t)width);
    }
}

/* First sequence first: a packed position is never after the padded one. */
void rnn_pack_inplace(float *x, const int *lengths, RnnDims d, int width) {
    long p = 0;
    for (int b = 0; b < d.B; b++) {
        int len = rnn_len(lengths, b, d.T);
        if (p != (long)b * d.T)
            memmove(x + p * width, x + (long)b * d.T * width, sizeof(float) * (size_t)len * (size_t)width);
        p += len;
    }
}

void rnn_input_projection(float *gates, const float *x, const int *lengths, long N, const float *w_ih,
                          const float *b_ih, RnnDims d, int G, float *xp) {
    int packed = N < (long)d.B * d.T;
    if (packed) rnn_pack(xp, x, lengths, d, d.C);
    /* The bias first, then the GEMM accumulates (beta 1). */
    for (long n = 0; n < N; n++)
        if (b_ih) memcpy(gates + n * G, b_ih, sizeof(float) * (size_t)G);
        else memset(gates + n * G, 0, sizeof(float) * (size_t)G);
    if (N > 0) matmul(gates, packed ? xp : x, w_ih, (int)N, G, d.C, MAT_N, MAT_T, 1.0f, 1.0f);
    if (packed) rnn_unpack_inplace(gates, lengths, d, G, N);
}

int rnn_gather_prev(float *hprev, const float *h, const int *lengths, RnnDims d, int s) {
    int k = 0, H = d.H, ldh = rnn_ldh(d);
    for (int b = 0; b < d.B; b++) {
        int len = rnn_len(lengths, b, d.T);
        if (s < len)
            memcpy(hprev + (long)k++ * H, h + ((long)b * d.T + rnn_pos(len, s - 1, d.reverse)) * ldh,
                   sizeof(float) * (size_t)H);
    }
    return k;
}

/* Hprev (N, H) packed like the valid positions: at each, the h that step
 * consumed (0 at s = 0), so all recurrent weight grads are one matmul. */
static void rnn_gather_hprev(float *Hprev, const float *h, const int *lengths, RnnDims d) {
    int H = d.H, ldh = rnn_ldh(d);
    for (int b = 0; b < d.B; b++) {
        int len = rnn_len(lengths, b, d.T);
        if (len > 0) memset(Hprev + (long)rnn_pos(len, 0, d.reverse) * H, 0, sizeof(float) * (size_t)H);
        for (int s = 1; s < len; s++)
            memcpy(Hprev + (long)rnn_pos(len, s, d.reverse) * H,
                   h + ((long)b * d.T + rnn_pos(len, s - 1, d.reverse)) * ldh, sizeof(float) * (size_t)H);
        Hprev += (long)len * H;
    }
}

void rnn_backward_weights(float *dx, float *g_w_ih, float *g_b_ih, float *g_w_hh, float *g_b_hh, float *dGi,
                          float *dGh, float *Hprev, float *xp, const float *h, const float *x,
                          const int *lengths, const float *w_ih, const float *w_hh, RnnDims d, int G) {
    int maxlen;
    long N = rnn_count(lengths, d, &maxlen);
    if (N == 0) return;
    int packed = N < (long)d.B * d.T;
    if (packed) {
        rnn_pack_inplace(dGi, lengths, d, G);
        if (dGh != dGi) rnn_pack_inplace(dGh, lengths, d, G);
        rnn_pack(xp, x, lengths, d, d.C);
    }
    linear_backward(NULL, g_w_ih, g_b_ih, dGi, packed ? xp : x, w_ih, (int)N, d.C, G);
    if (g_w_hh || g_b_hh) {
        if (g_w_hh) rnn_gather_hprev(Hprev, h, lengths, d);
        linear_backward(NULL, g_w_hh, g_b_hh, dGh, Hprev, w_hh, (int)N, d.H, G);
    }
    if (!dx) return;
    if (!packed) {
        matmul(dx, dGi, w_ih, (int)N, d.C, G, MAT_N, MAT_N, 1.0f, 1.0f);
        return;
    }
    matmul(xp, dGi, w_ih, (int)N, d.C, G, MAT_N, MAT_N, 1.0f, 0.0f);   /* packed dx (N, C) */
    const float *src = xp;
    for (int b = 0; b < d.B; b++) {
        long n = (long)rnn_len(lengths, b, d.T) * d.C;
        float *dst = dx + (long)b * d.T * d.C;
        for (long i = 0; i < n; i++) dst[i] += src[i];
        src += n;
    }
}

float *rnn_pack_recurrent(float *wp, const float *w_hh, int G, int H, int maxlen) {
    if (maxlen < 2 || matmul_precision() != MATMUL_FP32) return NULL;
    return matmul_pack_b(wp, w_hh, H, G, MAT_T);
}

void rnn_recurrent_product(float *rec, const float *hprev, const float *w_hh, const float *wp, int k, int G, int H) {
    if (wp) matmul_packed_b(rec, hprev, wp, k, G, H, MAT_N, 1.0f, 0.0f);
    else matmul(rec, hprev, w_hh, k, G, H, MAT_N, MAT_T, 1.0f, 0.0f);
}

/* Below this many multiply-adds per step a second thread costs more than it
 * saves (core/blas.c's threshold for one product). */
#define RNN_ROWS_MIN_MACS (1L << 20)

int rnn_row_team(RnnDims d, int G, const float *wp) {
    if (!wp || omp_in_parallel() || (long)d.B * G * d.H < RNN_ROWS_MIN_MACS) return 1;
    int team = omp_get_max_threads();
    return team < d.B ? team : d.B;
}

RnnDims rnn_rows(RnnDims d, int t, int team, int *b0) {
    int lo = (int)((long)d.B * t / team), hi = (int)((long)d.B * (t + 1) / team);
    *b0 = lo;
    d.B = hi - lo;
    return d;
}

/* Zeroes h, gates and aux at the padded positions t >= len of every sequence. */
static void rnn_zero_padding(float *h, float *gates, float *aux, const int *lengths, RnnDims d, int G) {
    int H = d.H, ldh = rnn_ldh(d);
    for (int b = 0; b < d.B; b++)
        for (int t = rnn_len(lengths, b, d.T); t < d.T; t++) {
            long bt = (long)b * d.T + t;
            memset(h + bt * ldh, 0, sizeof(float) * (size_t)H);
            memset(gates + bt * G, 0, sizeof(float) * (size_t)G);
            memset(aux + bt * H, 0, sizeof(float) * (size_t)H);
        }
}

/* Every step of the sequences of d (one thread's block, rnn_rows): h, gates,
 * aux and lengths start at the block's first sequence; hprev and rec are the
 * block's scratch. */
static void rnn_steps(float *h, float *gates, float *aux, const int *lengths, const float *w_hh, const float *b_hh,
                      RnnDims d, int G, const float *wp, float *hprev, float *rec, int maxlen, RnnStepForward step) {
    for (int s = 0; s < maxlen; s++) {
        if (s > 0) {
            int k = rnn_gather_prev(hprev, h, lengths, d, s);   /* contiguous for the matmul */
            rnn_recurrent_product(rec, hprev, w_hh, wp, k, G, d.H);
        }
        step(h, gates, aux, s > 0 ? rec : NULL, lengths, b_hh, d, s);
    }
}

void rnn_forward(float *h, float *gates, float *aux, const float *x, const int *lengths, const float *w_ih,
                 const float *w_hh, const float *b_ih, const float *b_hh, RnnDims d, int G, float *scratch,
                 RnnStepForward step) {
    int B = d.B, H = d.H, ldh = rnn_ldh(d), maxlen;
    float *hprev = scratch;                  /* (active rows, H) */
    float *rec = hprev + (long)B * H;        /* (active rows, G) */
    float *xp = rec + (long)B * G;           /* (N, C) packed input */
    float *wp = xp + (long)B * d.T * d.C;    /* W_hh^T packed for the GEMM tiles */
    long N = rnn_count(lengths, d, &maxlen);
    rnn_input_projection(gates, x, lengths, N, w_ih, b_ih, d, G, xp);
    wp = rnn_pack_recurrent(wp, w_hh, G, H, maxlen);
    int team = rnn_row_team(d, G, wp);
    #pragma omp parallel num_threads(team) if (team > 1)
    {
        int b0;
        RnnDims dr = rnn_rows(d, omp_get_thread_num(), team, &b0);
        rnn_steps(h + (long)b0 * d.T * ldh, gates + (long)b0 * d.T * G, aux + (long)b0 * d.T * H,
                  lengths ? lengths + b0 : NULL, w_hh, b_hh, dr, G, wp, hprev + (long)b0 * H, rec + (long)b0 * G,
                  maxlen, step);
    }
    rnn_zero_padding(h, gates, aux, lengths, d, G);
}
