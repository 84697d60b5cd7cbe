/* relpos.h — relative-position attention (Shaw et al. 2018) with the
 * logarithmic position representation of Ji & Song (LPR), as an extension of
 * the attention core (nn/attention.h): set AttnDims.rel and attention adds
 *
 *     S_ij += q_i · a^K_s(i,j) / sqrt(HS)        (before the softmax)
 *     z_i  += Σ_j P'_ij a^V_s(i,j)               (after P'·v)
 *
 * so z_i = Σ_j softmax((q_i·(k_j + a^K_ij)) / sqrt(HS)) (v_j + a^V_ij).
 * The bucket of query position i and key position j is
 *
 *     s(i,j) = sign(j - i) · ceil(log_k(|j - i| + 1)),  clipped to [-S, S],
 *
 * so distances 0 | 1..k-1 | k..k^2-1 | ... share a bucket: near positions are
 * told apart, far ones only roughly (k = 1 puts every pair in bucket 0). The
 * tables a^K, a^V (2S+1, HS) are shared by all heads, as in Shaw et al. Query i
 * of Tq sits at position i + Tk - Tq, the convention of causal masking, so a
 * decoder step with cached keys gets the distances of the full sequence.
 *
 * Cost: the bucket sums make every term one GEMM with the small table over all
 * B*NH*Tq query rows at once, (R, HS) x (HS, 2S+1), instead of a (Tq, Tk, HS)
 * gather per head. */
#ifndef GLUE_NN_RELPOS_H
#define GLUE_NN_RELPOS_H

#include "nn/attention.h"

typedef struct RelPos {
    int base;            /* k >= 1 */
    int max_bucket;      /* S >= 0: rows of the tables are buckets -S..S (row s + S) */
    const float *ak;     /* (2S+1, HS) relative keys, or NULL: no key term */
    const float *av;     /* (2S+1, HS) relative values, or NULL: no value term */
    float *dak, *dav;    /* (2S+1, HS) the backward adds here; NULL: not wanted */
} RelPos;

/* Signed bucket of a distance d = j - i for base k (exact integer arithmetic:
 * the smallest e with k^e >= |d| + 1), clipped to [-S, S]. */
int relpos_bucket(int d, int base, int max_bucket);
/* The S that gives distances up to max_dist their own (unclipped) bucket. */
int relpos_max_bucket(int max_dist, int base);

/* ---- called by nn/attention.c (need d.rel != NULL) ----
 * qh, oh, doh, dqh are the head-major (B, NH, T, HS) copies; att, p, dp are
 * (B, NH, Tq, Tk). */

/* Floats of scratch the four functions below need. */
long relpos_scratch_size(AttnDims d);
/* att += scale * q_i · a^K_s(i,j)  (no-op without ak). */
void relpos_scores_forward(float *att, const float *qh, AttnDims d, float scale, float *scratch);
/* oh += Σ_j p_ij a^V_s(i,j)  (no-op without av); p = the probabilities after dropout. */
void relpos_values_forward(float *oh, const float *p, AttnDims d, float *scratch);
/* dp += dO_i · a^V_s(i,j); dav += Σ (bucketed p)^T dO. */
void relpos_values_backward(float *dp, const float *p, const float *doh, AttnDims d, float *scratch);
/* Given ds = dL/dS: dqh += scale * Σ_j ds_ij a^K_s(i,j); dak += scale * Σ ds_ij q_i. */
void relpos_scores_backward(float *dqh, const float *ds, const float *qh, AttnDims d, float scale,
                            float *scratch);

#endif
