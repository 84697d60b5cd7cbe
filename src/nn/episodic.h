/* episodic.h — the two ops of the Dynamic Memory Network's episodic memory
 * (Kumar et al. 2016, "Ask Me Anything", §2.3):
 *
 * The attention gate of N facts c_t (H) for a question q and the memory m
 * of the previous pass (the paper's feature set where it fits a classifier:
 * the products and distances, not its bilinear terms):
 *   z_t = [c_t * q; c_t * m; |c_t - q|; |c_t - m|]        (4H)
 *   g_t = sigmoid(W2 tanh(W1 z_t + b1) + b2)              W1 (A, 4H), W2 (1, A)
 *
 * The gated episode step: the fact's GRU update (nn/gru_cell.h) applied as
 * much as its gate says,
 *   h_t = g_t GRU(c_t, h_{t-1}) + (1 - g_t) h_{t-1}.
 *
 * d|x|/dx is taken as 0 at x = 0, as PyTorch's. Nothing is allocated. */
#ifndef GLUE_NN_EPISODIC_H
#define GLUE_NN_EPISODIC_H

/* g (N) from c (N, H), q (H), m (H); saves z (N, 4H) and t (N, A) = the tanh layer. */
void episodic_gate_forward(float *g, float *z, float *t, const float *c, const float *q, const float *m,
                           const float *w1, const float *b1, const float *w2, const float *b2, int N, int H, int A);

/* Floats of scratch episodic_gate_backward needs. */
long episodic_gate_scratch(int N, int H, int A);

/* Given dg (N): ADDS dc (N, H), dq (H), dm (H) and the weights' gradients
 * (any may be NULL but scratch). */
void episodic_gate_backward(float *dc, float *dq, float *dm, float *dw1, float *db1, float *dw2, float *db2,
                            const float *dg, const float *g, const float *z, const float *t, const float *c,
                            const float *q, const float *m, const float *w1, const float *w2, int N, int H, int A,
                            float *scratch);

/* h (H) from the fact's input projection xp (3H), hp (H) and the gate g;
 * saves hc (H), the GRU's own output, and its gates (3H) and hn (H).
 * scratch: 3H floats (4H for the backward). */
void episodic_step_forward(float *h, float *hc, float *gates, float *hn, const float *xp, const float *hp, float g,
                           const float *w_hh, const float *b_hh, int H, float *scratch);

/* Given dh (H): dxp (3H) WRITTEN; dhp (H), *dg, dw_hh, db_hh ADDED (dw_hh,
 * db_hh may be NULL). */
void episodic_step_backward(float *dxp, float *dhp, float *dg, float *dw_hh, float *db_hh, const float *dh,
                            const float *hp, const float *hc, const float *gates, const float *hn, float g,
                            const float *w_hh, int H, float *scratch);

#endif
