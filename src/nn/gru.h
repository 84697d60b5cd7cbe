/* gru.h — GRU over padded batches of variable-length sequences, and the
 * bidirectional GRU built from two of them.
 *
 * PyTorch's layout and gate order (r, z, n), so weights compare and convert
 * without reshuffling; b_hn sits inside the reset gate's product:
 *   r = sigmoid(x W_ir^T + b_ir + h_prev W_hr^T + b_hr)
 *   z = sigmoid(x W_iz^T + b_iz + h_prev W_hz^T + b_hz)
 *   n = tanh(x W_in^T + b_in + r * (h_prev W_hn^T + b_hn))
 *   h = (1 - z) n + z h_prev,            h starting at zero.
 * The input projection of all time steps is one GEMM over the valid positions
 * (nn/rnn_pack.h); each step then costs one (active rows, H) x (H, 3H) GEMM for
 * the recurrence. Variable lengths, padding and the reverse direction as the
 * LSTM's (nn/lstm.h): padded steps output h = 0 and pass no gradient. */
#ifndef GLUE_NN_GRU_H
#define GLUE_NN_GRU_H

#include "nn/rnn_pack.h"

typedef RnnDims GruDims;

typedef struct {
    const float *w_ih;  /* (3H, C) r | z | n */
    const float *w_hh;  /* (3H, H) */
    const float *b_ih;  /* (3H) */
    const float *b_hh;  /* (3H) */
} GruWeights;

typedef struct { float *w_ih, *w_hh, *b_ih, *b_hh; } GruGrads;  /* same shapes; NULL = skip */

/* Floats of scratch gru_forward/backward need (the larger of the two). */
long gru_scratch_size(GruDims d);

/* h (B, T, ldh) first H columns of each row = outputs; saves gates (B, T, 3H)
 * (r, z, n after their non-linearities) and hn (B, T, H) = h_prev W_hn^T + b_hn.
 * x (B, T, C); lengths (B) in [0, T] or NULL for all T. */
void gru_forward(float *h, float *gates, float *hn, const float *x, const int *lengths, GruWeights w, GruDims d,
                 float *scratch);

/* Adds dx (B, T, C) (may be NULL) and the weight grads given dh (B, T, ldh), the
 * output h and the saved gates and hn of the forward. */
void gru_backward(float *dx, GruGrads g, const float *dh, const float *h, const float *gates, const float *hn,
                  const float *x, const int *lengths, GruWeights w, GruDims d, float *scratch);

/* BiGRU: direction 0 forward, 1 reversed; h (B, T, 2H) holds [forward |
 * backward] per step like PyTorch's bidirectional output; gates (2, B, T, 3H)
 * and hn (2, B, T, H) per direction. d.reverse and d.ldh are ignored. */
void bigru_forward(float *h, float *gates, float *hn, const float *x, const int *lengths, const GruWeights w[2],
                   GruDims d, float *scratch);
void bigru_backward(float *dx, const GruGrads g[2], const float *dh, const float *h, const float *gates,
                    const float *hn, const float *x, const int *lengths, const GruWeights w[2], GruDims d,
                    float *scratch);

#endif
