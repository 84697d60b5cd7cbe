/* attention.c — multi-head attention core (see attention.h).
 *
 * Forward, per (sequence b, head h), in head-major copies of q, k, v:
 *   1. S = q k^T / sqrt(HS)                      (Tq, Tk)  batched matmul
 *   2. P = softmax over visible keys of S        masks (and ALiBi's penalty) applied here
 *   3. P' = dropout(P)                           training only
 *   4. O = P' v                                  (Tq, HS)  batched matmul
 * Relative-position attention (Shaw et al., LPR; nn/relpos.h, when d.rel is set)
 * adds a term to S between steps 1 and 2 (q · a^K_ij) and a term to O after
 * step 4 (sum_j P'_ij a^V_ij); its scratch follows the core's own.
 *
 * The matmuls go through matmul_strided over the B*NH heads (OpenBLAS threads
 * each product); the element-wise passes are threaded over rows with OpenMP. */
#include "nn/attention.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/blas.h"
#include "core/common.h"
#include "core/kernels.h"
#include "nn/dropout.h"
#include "nn/relpos.h"
#include "nn/softmax_xent.h"

#define ATTN_PARALLEL_MIN 32768  /* elements below which threads do not pay */

static int attn_ld(int ld, AttnDims d) { return ld > 0 ? ld : d.NH * d.HS; }

void attention_alibi_slopes(float *slopes, int NH) {
    if (NH == 1) { slopes[0] = exp2f(-4.0f); return; }
    for (int h = 0; h < NH; h++) slopes[h] = exp2f(-8.0f * (float)h / (float)(NH - 1));
}

long attention_scratch_size(AttnDims d) {
    long C = (long)d.NH * d.HS, nq = (long)d.B * d.Tq * C, nk = (long)d.B * d.Tk * C;
    long na = (long)d.B * d.NH * d.Tq * d.Tk, nd = d.dropout > 0.0f ? na : 0;
    long fwd = 2 * nq + 2 * nk + nd;          /* qh, kh, vh, oh, dropped P */
    long bwd = 3 * nq + 4 * nk + na + nd;     /* qh, kh, vh, doh, dqh, dkh, dvh, dP, dropped P */
    long rel = d.rel ? relpos_scratch_size(d) : 0;
    return (fwd > bwd ? fwd : bwd) + rel;
}

/* dst (B, NH, T, HS) = src (B, T, ld) split into heads. */
static void attn_to_heads(float *dst, const float *src, int ld, int T, AttnDims d) {
    #pragma omp parallel for collapse(2) if ((long)d.B * T * d.NH * d.HS > ATTN_PARALLEL_MIN)
    for (int b = 0; b < d.B; b++)
        for (int t = 0; t < T; t++)
            for (int h = 0; h < d.NH; h++)
                memcpy(dst + (((long)b * d.NH + h) * T + t) * d.HS,
                       src + ((long)b * T + t) * ld + (long)h * d.HS, sizeof(float) * (size_t)d.HS);
}

/* dst (B, T, ld) = (or +=, if accumulate) src (B, NH, T, HS) with heads merged. */
static void attn_from_heads(float *dst, const float *src, int ld, int T, int accumulate, AttnDims d) {
    const ElemKernels *k = kernels();
    #pragma omp parallel for collapse(2) if ((long)d.B * T * d.NH * d.HS > ATTN_PARALLEL_MIN)
    for (int b = 0; b < d.B; b++)
        for (int t = 0; t < T; t++)
            for (int h = 0; h < d.NH; h++) {
                float *o = dst + ((long)b * T + t) * ld + (long)h * d.HS;
                const float *s = src + (((long)b * d.NH + h) * T + t) * d.HS;
                if (accumulate) k->add(o, s, d.HS);
                else memcpy(o, s, sizeof(float) * (size_t)d.HS);
            }
}

/* Step 2 for one row of scores (sequence b, head h, query i) -> probabilities
 * in place, after the ALiBi penalty when there is one. Keys at or past the
 * visible limit (length, causal) are skipped outright; holes from key_mask
 * become -inf so softmax_row gives them 0. */
static void attn_softmax_row_masked(float *row, int b, int h, int i, AttnDims d) {
    int lim = d.Tk;
    if (d.key_lengths) {
        int len = d.key_lengths[b];
        if (len < 0 || len > d.Tk) DIE("attention: key length %d outside [0, %d]", len, d.Tk);
        lim = len < lim ? len : lim;
    }
    if (d.causal) {
        int c = i + d.Tk - d.Tq + 1;
        lim = c < lim ? (c > 0 ? c : 0) : lim;
    }
    if (d.alibi) {
        float slope = d.alibi[h];
        int qpos = d.q_pos ? d.q_pos[(long)b * d.Tq + i] : i + d.Tk - d.Tq;
        for (int j = 0; j < lim; j++) row[j] -= slope * (float)abs(qpos - j);
    }
    if (d.key_mask) {
        const int *m = d.key_mask + (long)b * d.Tk;
        for (int j = 0; j < lim; j++) if (!m[j]) row[j] = -INFINITY;
    }
    softmax_row(row, lim);
    memset(row + lim, 0, sizeof(float) * (size_t)(d.Tk - lim));
}

/* Step 2 over all scores (B, NH, Tq, Tk). */
static void attn_softmax_masked(float *att, AttnDims d) {
    #pragma omp parallel for collapse(3) if ((long)d.B * d.NH * d.Tq * d.Tk > ATTN_PARALLEL_MIN)
    for (int b = 0; b < d.B; b++)
        for (int h = 0; h < d.NH; h++)
            for (int i = 0; i < d.Tq; i++)
                attn_softmax_row_masked(att + (((long)b * d.NH + h) * d.Tq + i) * d.Tk, b, h, i, d);
}

/* Steps 1, 2 and 4 one head at a time, straight from the row-strided q, k, v
 * into out: no head-major copies, and each head's (Tq, Tk) scores are still in
 * cache when the softmax and P v read them (for BERT-mini, B=32, T=128, the
 * scores are 8 MB a layer, which the step-by-step path streams through memory
 * three times). Only without dropout (its mask is drawn in one sequence over
 * all scores) and relative positions (nn/relpos works on head-major copies). */
static void attention_forward_fused(float *out, float *att, const float *q, const float *k, const float *v,
                                    AttnDims d, float scale) {
    int C = d.NH * d.HS, ldq = attn_ld(d.ldq, d), ldk = attn_ld(d.ldk, d), ldv = attn_ld(d.ldv, d);
    #pragma omp parallel for collapse(2) if ((long)d.B * d.NH * d.Tq * d.Tk * d.HS > ATTN_PARALLEL_MIN * 64)
    for (int b = 0; b < d.B; b++)
        for (int h = 0; h < d.NH; h++) {
            float *s = att + ((long)b * d.NH + h) * d.Tq * d.Tk;
            const float *qh = q + (long)b * d.Tq * ldq + (long)h * d.HS;
            const float *kh = k + (long)b * d.Tk * ldk + (long)h * d.HS;
            const float *vh = v + (long)b * d.Tk * ldv + (long)h * d.HS;
            matmul_ld(s, d.Tk, qh, ldq, kh, ldk, d.Tq, d.Tk, d.HS, MAT_N, MAT_T, scale, 0.0f);
            for (int i = 0; i < d.Tq; i++) attn_softmax_row_masked(s + (long)i * d.Tk, b, h, i, d);
            matmul_ld(out + (long)b * d.Tq * C + (long)h * d.HS, C, s, d.Tk, vh, ldv, d.Tq, d.HS, d.Tk, MAT_N,
                      MAT_N, 1.0f, 0.0f);
        }
}

void attention_forward(float *out, float *att, unsigned char *drop_mask, const float *q,
                       const float *k, const float *v, AttnDims d, Rng *rng, float *scratch) {
    int C = d.NH * d.HS, BH = d.B * d.NH;
    long nq = (long)d.B * d.Tq * C, nk = (long)d.B * d.Tk * C, na = (long)BH * d.Tq * d.Tk;
    float *qh = scratch, *kh = qh + nq, *vh = kh + nk, *oh = vh + nk, *pd = oh + nq;
    float *rel_scratch = pd + (d.dropout > 0.0f ? na : 0);
    float scale = 1.0f / sqrtf((float)d.HS);
    kernels();   /* softmax_row's level chosen before the threads call it */
    if (d.dropout == 0.0f && !d.rel) {
        attention_forward_fused(out, att, q, k, v, d, scale);
        return;
    }
    attn_to_heads(qh, q, attn_ld(d.ldq, d), d.Tq, d);
    attn_to_heads(kh, k, attn_ld(d.ldk, d), d.Tk, d);
    attn_to_heads(vh, v, attn_ld(d.ldv, d), d.Tk, d);
    /* 1. S = q k^T * scale: (Tq, HS) x (HS, Tk) per head. */
    matmul_strided(att, qh, kh, d.Tq, d.Tk, d.HS, MAT_N, MAT_T, scale, 0.0f, BH,
                   (long)d.Tq * d.Tk, (long)d.Tq * d.HS, (long)d.Tk * d.HS);
    if (d.rel) relpos_scores_forward(att, qh, d, scale, rel_scratch);
    /* 2. */
    attn_softmax_masked(att, d);
    /* 3. */
    const float *p = att;
    if (d.dropout > 0.0f) {
        dropout_forward(pd, drop_mask, att, na, d.dropout, rng);
        p = pd;
    }
    /* 4. O = P' v: (Tq, Tk) x (Tk, HS) per head. */
    matmul_strided(oh, p, vh, d.Tq, d.HS, d.Tk, MAT_N, MAT_N, 1.0f, 0.0f, BH,
                   (long)d.Tq * d.HS, (long)d.Tq * d.Tk, (long)d.Tk * d.HS);
    if (d.rel) relpos_values_forward(oh, p, d, rel_scratch);
    attn_from_heads(out, oh, C, d.Tq, 0, d);
}

/* Softmax backward in place: dS = P * (dP - sum_j dP_j P_j) per row. Masked
 * entries have P = 0 and so get no gradient. */
static void attn_softmax_backward(float *dp, const float *att, long rows, int Tk) {
    const ElemKernels *k = kernels();
    #pragma omp parallel for if (rows * Tk > ATTN_PARALLEL_MIN)
    for (long r = 0; r < rows; r++) k->softmax_backward_row(dp + r * Tk, att + r * Tk, Tk);
}

void attention_backward(float *dq, float *dk, float *dv, const float *dout, const float *att,
                        const unsigned char *drop_mask, const float *q, const float *k,
                        const float *v, AttnDims d, float *scratch) {
    int C = d.NH * d.HS, BH = d.B * d.NH;
    long nq = (long)d.B * d.Tq * C, nk = (long)d.B * d.Tk * C, na = (long)BH * d.Tq * d.Tk;
    long sq = (long)d.Tq * d.HS, sk = (long)d.Tk * d.HS, sa = (long)d.Tq * d.Tk;
    float *qh = scratch, *kh = qh + nq, *vh = kh + nk, *doh = vh + nk;
    float *dqh = doh + nq, *dkh = dqh + nq, *dvh = dkh + nk, *dp = dvh + nk, *pd = dp + na;
    float *rel_scratch = pd + (d.dropout > 0.0f ? na : 0);
    float scale = 1.0f / sqrtf((float)d.HS);
    attn_to_heads(qh, q, attn_ld(d.ldq, d), d.Tq, d);
    attn_to_heads(kh, k, attn_ld(d.ldk, d), d.Tk, d);
    attn_to_heads(vh, v, attn_ld(d.ldv, d), d.Tk, d);
    attn_to_heads(doh, dout, C, d.Tq, d);
    const float *p = att;
    if (d.dropout > 0.0f) {
        /* Rebuild P' = P * mask * scale rather than saving a second (Tq, Tk) tensor. */
        memset(pd, 0, sizeof(float) * (size_t)na);
        dropout_backward(pd, att, drop_mask, na, d.dropout);
        p = pd;
    }
    /* dv = P'^T dO: (Tk, Tq) x (Tq, HS);  dP' = dO v^T: (Tq, HS) x (HS, Tk). */
    matmul_strided(dvh, p, doh, d.Tk, d.HS, d.Tq, MAT_T, MAT_N, 1.0f, 0.0f, BH, sk, sa, sq);
    matmul_strided(dp, doh, vh, d.Tq, d.Tk, d.HS, MAT_N, MAT_T, 1.0f, 0.0f, BH, sa, sq, sk);
    if (d.rel) relpos_values_backward(dp, p, doh, d, rel_scratch);
    if (d.dropout > 0.0f) {
        /* dP = dP' * mask * scale, into the space P' no longer needs. */
        memset(pd, 0, sizeof(float) * (size_t)na);
        dropout_backward(pd, dp, drop_mask, na, d.dropout);
        memcpy(dp, pd, sizeof(float) * (size_t)na);
    }
    attn_softmax_backward(dp, att, (long)BH * d.Tq, d.Tk);
    /* dq = dS k * scale: (Tq, Tk) x (Tk, HS);  dk = dS^T q * scale: (Tk, Tq) x (Tq, HS). */
    matmul_strided(dqh, dp, kh, d.Tq, d.HS, d.Tk, MAT_N, MAT_N, scale, 0.0f, BH, sq, sa, sk);
    matmul_strided(dkh, dp, qh, d.Tk, d.HS, d.Tq, MAT_T, MAT_N, scale, 0.0f, BH, sk, sa, sq);
    if (d.rel) relpos_scores_backward(dqh, dp, qh, d, scale, rel_scratch);
    attn_from_heads(dq, dqh, attn_ld(d.ldq, d), d.Tq, 1, d);
    attn_from_heads(dk, dkh, attn_ld(d.ldk, d), d.Tk, 1, d);
    attn_from_heads(dv, dvh, attn_ld(d.ldv, d), d.Tk, 1, d);
}
