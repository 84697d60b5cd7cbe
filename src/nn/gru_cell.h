/* gru_cell.h — one GRU step from a given previous state, for recurrences
 * whose input at step t depends on the state of step t - 1 (a decoder that
 * attends with its state, models/baselines/seq2seq_attn.h), where nn/gru.h's
 * whole-sequence op, which starts from zero and reads every input up front,
 * does not apply. The same equations, weight layout and gate order (r, z, n)
 * as nn/gru.h and PyTorch's GRUCell:
 *   r = sigmoid(x W_ir^T + b_ir + h W_hr^T + b_hr)
 *   z = sigmoid(x W_iz^T + b_iz + h W_hz^T + b_hz)
 *   n = tanh(x W_in^T + b_in + r * (h W_hn^T + b_hn))
 *   h' = (1 - z) n + z h
 * over R rows at once (two GEMMs), nothing allocated. */
#ifndef GLUE_NN_GRU_CELL_H
#define GLUE_NN_GRU_CELL_H

#include "nn/gru.h"

/* Floats of scratch gru_cell_forward/backward need for R rows of H. */
long gru_cell_scratch_size(int R, int H);

/* h (R, H) from x (R, C) and h_prev (R, H) (may not alias h); saves gates
 * (R, 3H) = r, z, n after their non-linearities and hn (R, H) = h_prev W_hn^T
 * + b_hn for the backward. */
void gru_cell_forward(float *h, float *gates, float *hn, const float *x, const float *h_prev, GruWeights w, int R,
                      int C, int H, float *scratch);

/* Given dh (R, H), ADDS dx (R, C) (may be NULL), dh_prev (R, H) (may be NULL)
 * and the weight gradients (any may be NULL). */
void gru_cell_backward(float *dx, float *dh_prev, GruGrads g, const float *dh, const float *x, const float *h_prev,
                       const float *gates, const float *hn, GruWeights w, int R, int C, int H, float *scratch);

#endif
