/* attention.h — the multi-head scaled dot-product attention core:
 *     out = softmax(q k^T / sqrt(HS) + mask) v      for each sequence and head,
 * with key padding (per-sequence lengths and/or a 0/1 mask), causal masking and
 * cross-attention (Tq != Tk). The Q/K/V and output projections are `linear`;
 * models compose them (BERT self-attention, the decoder's self and cross attention).
 *
 * Layout: q (B, Tq, NH*HS), k and v (B, Tk, NH*HS) — head h owns columns
 * [h*HS, (h+1)*HS) of each row, i.e. (B, T, NH, HS) — with optional row strides
 * so that q, k, v can be views into one fused (B, T, 3C) QKV projection.
 * Internally heads are copied to (B, NH, T, HS) so that every head is one
 * contiguous batched matmul. The probabilities (B, NH, Tq, Tk) are saved for the
 * backward. Optional dropout on the probabilities (BERT's attention dropout).
 * Optional relative-position terms (Shaw et al. / LPR): AttnDims.rel, see nn/relpos.h.
 * Optional ALiBi (Press et al. 2022): AttnDims.alibi, a fixed distance penalty
 *     S_ij -= slope_h * |i' - j|,   i' = i + Tk - Tq (the position of query i),
 * or i' = q_pos[b, i] when the queries are chosen rows of the keys' sequence,
 * added before the softmax. Symmetric, as MosaicBERT uses it in an encoder: it
 * makes attention local from the first step, where learned positions have to
 * discover locality through q·k (pretrain/README.md). The penalty is a constant,
 * so the backward (which works from the saved probabilities) is unchanged. */
#ifndef GLUE_NN_ATTENTION_H
#define GLUE_NN_ATTENTION_H

#include "core/rng.h"

struct RelPos;   /* nn/relpos.h */

typedef struct {
    int B, Tq, Tk, NH, HS;   /* C = NH * HS; self-attention has Tq == Tk */
    int ldq, ldk, ldv;       /* row strides of q, k, v and of dq, dk, dv; 0 means C */
    int causal;              /* query i sees keys j <= i + (Tk - Tq) (the last Tq of Tk) */
    const int *key_lengths;  /* (B) or NULL: keys j >= key_lengths[b] are padding */
    const int *key_mask;     /* (B, Tk) or NULL: keys with key_mask == 0 are padding */
    float dropout;           /* dropout probability on the attention weights, 0 = none */
    const struct RelPos *rel; /* NULL, or relative-position key/value terms (nn/relpos.h);
                              * the backward adds their table gradients too */
    const float *alibi;      /* NULL, or (NH) ALiBi slopes, one per head (above) */
    const int *q_pos;        /* NULL, or (B, Tq): the key position of each query, for ALiBi
                              * (BERT's last layer computed at chosen rows only) */
} AttnDims;

/* ALiBi slopes for NH heads: slope_h = 2^(-8h / (NH - 1)), h = 0..NH-1, the
 * geometric sequence from 1 down to 1/256 with both ends included (one head:
 * 1/16, the middle). ALiBi's own 2^(-8(h+1) / NH) gives a 2-head model slopes
 * 1/16 and 1/256, nearly as flat as uniform attention, and pretraining
 * BERT-tiny with those barely moved off the plateau; slope 1 (a neighbour
 * weighs e^-1 of the token itself) is what moves it. The other end matters for
 * fine-tuning: with slopes 1 and 1/16 [CLS], at position 0, sees sentence B of
 * a pair 20-60 tokens away at e^-1..e^-4 of itself, and pair tasks scored
 * below learned positions (STS-B 13.5 against 23.6); slope 1/256 keeps one head
 * nearly global. See pretrain/README.md. */
void attention_alibi_slopes(float *slopes, int NH);

/* Floats of scratch attention_forward/backward need (the larger of the two). */
long attention_scratch_size(AttnDims d);

/* out (B, Tq, C) (contiguous); saves att (B, NH, Tq, Tk) = probabilities before
 * dropout, and drop_mask (B, NH, Tq, Tk) when d.dropout > 0 (else may be NULL;
 * rng is only used then). A query with no visible key gets probabilities 0 and
 * output 0. */
void attention_forward(float *out, float *att, unsigned char *drop_mask, const float *q,
                       const float *k, const float *v, AttnDims d, Rng *rng, float *scratch);

/* Adds dq (B, Tq, ldq), dk (B, Tk, ldk), dv (B, Tk, ldv) given dout (B, Tq, C).
 * dq, dk, dv may alias one fused (B, T, 3C) buffer (they touch disjoint columns). */
void attention_backward(float *dq, float *dk, float *dv, const float *dout, const float *att,
                        const unsigned char *drop_mask, const float *q, const float *k,
                        const float *v, AttnDims d, float *scratch);

#endif
