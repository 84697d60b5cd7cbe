/* gru_cell.h — one GRU step from a given state, for recurrences that nn/gru.h's
 * sequence op cannot express: a state that starts elsewhere than zero (the
 * DMN's memory, m_0 = q) or that is mixed with its previous value between
 * steps (the DMN's gated episode). Same gates, order and layout as nn/gru.h
 * (PyTorch's GRUCell):
 *   r = sigmoid(xp_r + h_prev W_hr^T + b_hr)
 *   z = sigmoid(xp_z + h_prev W_hz^T + b_hz)
 *   n = tanh(xp_n + r * (h_prev W_hn^T + b_hn))
 *   h = (1 - z) n + z h_prev
 * where xp (3H) = x W_ih^T + b_ih is the caller's (all steps' at once as one
 * GEMM). One row; nothing is allocated (scratch: 3H floats). */
#ifndef GLUE_NN_GRU_CELL_H
#define GLUE_NN_GRU_CELL_H

/* h (H) from xp (3H) and hp (H); saves gates (3H: r, z, n after their
 * non-linearities) and hn (H) = hp W_hn^T + b_hn. h may not alias hp. */
void gru_cell_forward(float *h, float *gates, float *hn, const float *xp, const float *hp, const float *w_hh,
                      const float *b_hh, int H, float *scratch);

/* Given dh (H): dxp (3H) WRITTEN; dhp (H), dw_hh (3H, H), db_hh (3H) ADDED
 * (dhp, dw_hh, db_hh may be NULL). */
void gru_cell_backward(float *dxp, float *dhp, float *dw_hh, float *db_hh, const float *dh, const float *hp,
                       const float *gates, const float *hn, const float *w_hh, int H, float *scratch);

#endif
