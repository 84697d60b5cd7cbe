/* lstm.h — LSTM over padded batches of variable-length sequences, and the
 * bidirectional LSTM built from two of them.
 *
 * PyTorch's layout and gate order (i, f, g, o), so weights compare and convert
 * without reshuffling:
 *   gates = x W_ih^T + b_ih + h_prev W_hh^T + b_hh          (4H: i | f | g | o)
 *   i, f, o = sigmoid(.), g = tanh(.), c = f c_prev + i g,  h = o tanh(c)
 * with h, c starting at zero. The input projection of all time steps is one
 * matmul; each step then costs one (B, H) x (H, 4H) matmul for the recurrence.
 *
 * Sequence b is valid for t < lengths[b]; padded steps produce h = 0 and pass no
 * gradient. A reverse LSTM reads each sequence from its last valid step back to
 * t = 0 (not from the padded end), exactly like PyTorch's packed sequences, and
 * writes its outputs at the positions it read. */
#ifndef GLUE_NN_LSTM_H
#define GLUE_NN_LSTM_H

#include "nn/rnn_pack.h"

/* B, T, C, H, reverse and ldh (the row stride of h and dh: 2H when the two
 * directions of a BiLSTM write one (B, T, 2H) output): nn/rnn_pack.h. */
typedef RnnDims LstmDims;

typedef struct {
    const float *w_ih;  /* (4H, C) */
    const float *w_hh;  /* (4H, H) */
    const float *b_ih;  /* (4H) */
    const float *b_hh;  /* (4H) */
} LstmWeights;

typedef struct { float *w_ih, *w_hh, *b_ih, *b_hh; } LstmGrads;  /* same shapes; NULL = skip */

/* Floats of scratch lstm_forward/backward need (the larger of the two). */
long lstm_scratch_size(LstmDims d);

/* h (B, T, ldh) first H columns of each row = outputs; saves gates (B, T, 4H)
 * (after their non-linearities) and cell (B, T, H). x (B, T, C); lengths (B) in
 * [0, T] or NULL for all T. */
void lstm_forward(float *h, float *gates, float *cell, const float *x, const int *lengths,
                  LstmWeights w, LstmDims d, float *scratch);

/* Adds dx (B, T, C) (may be NULL) and the weight grads given dh (B, T, ldh), the
 * output h and the saved gates and cell of the forward. */
void lstm_backward(float *dx, LstmGrads g, const float *dh, const float *h, const float *gates,
                   const float *cell, const float *x, const int *lengths, LstmWeights w,
                   LstmDims d, float *scratch);

/* BiLSTM: direction 0 forward, direction 1 reversed; h (B, T, 2H) holds
 * [forward | backward] per step like PyTorch's bidirectional output. gates
 * (2, B, T, 4H) and cell (2, B, T, H) are saved per direction. d.reverse and d.ldh
 * are ignored; scratch is lstm_scratch_size(d) floats. */
void bilstm_forward(float *h, float *gates, float *cell, const float *x, const int *lengths,
                    const LstmWeights w[2], LstmDims d, float *scratch);
void bilstm_backward(float *dx, const LstmGrads g[2], const float *dh, const float *h,
                     const float *gates, const float *cell, const float *x, const int *lengths,
                     const LstmWeights w[2], LstmDims d, float *scratch);

#endif
