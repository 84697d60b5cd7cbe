/* ctxrnn.h — the recurrent context of RCNN (Lai et al. 2015, "Recurrent
 * Convolutional Neural Networks for Text Classification", eq. 1-2): for each
 * word the context to its left,
 *   c(w_i) = tanh(W c(w_{i-1}) + W_s e(w_{i-1})),   c(w_1) = c0 (learned),
 * and, reversed (d.reverse), to its right: c(w_i) from w_{i+1}, c(w_n) = c0.
 * That is a plain tanh RNN h_t = tanh(W_s x_t + W h_{t-1}), h_{-1} = c0, whose
 * state BEFORE step t is the context of word t; no biases, as the paper.
 *
 * Packed variable lengths and the reverse direction as the LSTM's
 * (nn/rnn_pack.h); the input projection of all steps is one GEMM. The context
 * is written at stride d.ldh (RCNN writes it into its [c_l; e; c_r] rows);
 * padded steps are left untouched and pass no gradient. */
#ifndef GLUE_NN_CTXRNN_H
#define GLUE_NN_CTXRNN_H

#include "nn/rnn_pack.h"

typedef struct {
    const float *w_s;  /* (H, C) input */
    const float *w;    /* (H, H) recurrent */
    const float *c0;   /* (H) the context of a sequence's first word */
} CtxRnnWeights;

typedef struct { float *w_s, *w, *c0; } CtxRnnGrads;  /* same shapes; NULL = skip */

long ctxrnn_scratch_size(RnnDims d);

/* ctx (B, T, ldh): the first H columns of each valid row; hs (B, T, H) the
 * states h_t, saved for the backward. x (B, T, C). */
void ctxrnn_forward(float *ctx, float *hs, const float *x, const int *lengths, CtxRnnWeights w, RnnDims d,
                    float *scratch);
/* Adds dx (B, T, C) (may be NULL) and the weight grads given dctx (B, T, ldh). */
void ctxrnn_backward(float *dx, CtxRnnGrads g, const float *dctx, const float *hs, const float *x,
                     const int *lengths, CtxRnnWeights w, RnnDims d, float *scratch);

#endif
