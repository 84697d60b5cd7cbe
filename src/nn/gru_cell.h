/* gru_cell.h — one GRU step from a given state, for recurrences that nn/gru.h's
 * whole-sequence op (which starts from zero and reads every input up front)
 * cannot express: a state that starts elsewhere than zero (the DMN's memory,
 * m_0 = q), that is mixed with its previous value between steps (the DMN's
 * gated episode, nn/episodic.h), or whose input at step t depends on the state
 * of step t - 1 (a decoder that attends with its state,
 * models/baselines/seq2seq_attn.h). Same gates, order (r, z, n) and weight
 * layout as nn/gru.h and PyTorch's GRUCell:
 *   r = sigmoid(xp_r + h_prev W_hr^T + b_hr)
 *   z = sigmoid(xp_z + h_prev W_hz^T + b_hz)
 *   n = tanh(xp_n + r * (h_prev W_hn^T + b_hn))
 *   h = (1 - z) n + z h_prev
 * where xp (R, 3H) = x W_ih^T + b_ih is the caller's (nn/linear.h): the DMN
 * projects all its facts in one GEMM up front, a decoder step by step. R rows
 * at once (one GEMM for the recurrent product); nothing is allocated. */
#ifndef GLUE_NN_GRU_CELL_H
#define GLUE_NN_GRU_CELL_H

/* Floats of scratch gru_cell_forward and gru_cell_backward need for R rows of H. */
long gru_cell_scratch_size(int R, int H);

/* h (R, H) from xp (R, 3H) and h_prev (R, H) (may not alias h); saves gates
 * (R, 3H: r, z, n after their non-linearities; gates may be xp itself, which
 * it then overwrites) and hn (R, H) = h_prev W_hn^T + b_hn for the backward. */
void gru_cell_forward(float *h, float *gates, float *hn, const float *xp, const float *h_prev, const float *w_hh,
                      const float *b_hh, int R, int H, float *scratch);

/* Given dh (R, H): dxp (R, 3H) WRITTEN (the input projection's gradient, for
 * linear_backward); dh_prev (R, H), dw_hh (3H, H), db_hh (3H) ADDED (any of
 * them may be NULL). */
void gru_cell_backward(float *dxp, float *dh_prev, float *dw_hh, float *db_hh, const float *dh, const float *h_prev,
                       const float *gates, const float *hn, const float *w_hh, int R, int H, float *scratch);

#endif
