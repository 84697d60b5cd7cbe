/* additive_attention.h — Bahdanau et al. (2015) additive attention, one
 * decoder step: a query q (the decoder state's projection W_a s) scores each
 * memory position j by
 *     e_j = v^T tanh(q + k_j),     k_j = U_a h_j + b (projected once per text),
 *     alpha = softmax over the valid positions,  ctx = sum_j alpha_j h_j.
 * The projections are `linear` (the caller's); this is the part that is not.
 * Neither nn/attention.h (scaled dot products, q . k) nor nn/seqpool.h's
 * attention pooling (one learned vector scoring fixed keys, no query) nor
 * nn/episodic.h's gate (a sigmoid per fact, no softmax) scores this way; the
 * masked softmax is nn/softmax_xent.h's softmax_row.
 *
 * Queries are rows r = 0..R-1; query r reads memory mem[r] (mem NULL: r), so
 * that several queries (the hypotheses of a beam) share one text's memory.
 * The backward recomputes tanh(q + k_j) instead of saving (R, Tk, A) floats. */
#ifndef GLUE_NN_ADDITIVE_ATTENTION_H
#define GLUE_NN_ADDITIVE_ATTENTION_H

typedef struct {
    int R;   /* queries */
    int Tk;  /* padded memory positions */
    int A;   /* attention size (q, k, v) */
    int E;   /* memory value size */
} AddAttnDims;

/* ctx (R, E), alpha (R, Tk) (0 past the memory's length) from q (R, A), keys
 * (Bm, Tk, A), values (Bm, Tk, E), v (A), lengths (Bm) each in [1, Tk]. */
void addattn_forward(float *ctx, float *alpha, const float *q, const float *keys, const float *values, const float *v,
                     const int *lengths, const int *mem, AddAttnDims d);

/* Floats of scratch of the backward. */
long addattn_scratch_size(AddAttnDims d);

/* ADDS dq (R, A), dkeys (Bm, Tk, A), dvalues (Bm, Tk, E) and dv (A) (any may
 * be NULL) given dctx (R, E) and the forward's alpha. */
void addattn_backward(float *dq, float *dkeys, float *dvalues, float *dv, const float *dctx, const float *alpha,
                      const float *q, const float *keys, const float *values, const float *v, const int *lengths,
                      const int *mem, AddAttnDims d, float *scratch);

#endif
