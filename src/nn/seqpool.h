/* seqpool.h — pooling a padded batch of variable-length sequences (B, T, F)
 * into one vector per sequence, over the valid steps t < lengths[b] only
 * (max over time is nn/maxpool.h). A sequence with no valid step pools to 0
 * and passes no gradient.
 *
 *   mean       y = (1/len) sum_t x_t
 *   last       of a bidirectional output [fwd | bwd] (F = 2H): the forward
 *              half at t = len - 1 and the backward half at t = 0, the last
 *              step each direction read (PyTorch's h_n of a BiRNN)
 *   attention  y = sum_t alpha_t v_t, alpha = softmax_t(w . k_t): keys k
 *              (B, T, Fk) score the steps, values v (B, T, F) are summed.
 *              TextRNN's (Zhou et al. 2016) is k = tanh(H), v = H; HAN's
 *              (Yang et al. 2016) k = tanh(H W^T + b), v = H. */
#ifndef GLUE_NN_SEQPOOL_H
#define GLUE_NN_SEQPOOL_H

void meanpool_time_forward(float *y, const float *x, const int *lengths, int B, int T, int F);
/* dx (B, T, F) += the gradient given dy (B, F). */
void meanpool_time_backward(float *dx, const float *dy, const int *lengths, int B, int T, int F);

void lastpool_bi_forward(float *y, const float *x, const int *lengths, int B, int T, int H);
void lastpool_bi_backward(float *dx, const float *dy, const int *lengths, int B, int T, int H);

/* y (B, F); alpha (B, T) saved (0 at padded steps). */
void attnpool_forward(float *y, float *alpha, const float *k, const float *v, const float *w, const int *lengths,
                      int B, int T, int Fk, int F);
/* Adds dk (B, T, Fk), dv (B, T, F) and dw (Fk) (any may be NULL) given dy (B, F). */
void attnpool_backward(float *dk, float *dv, float *dw, const float *dy, const float *alpha, const float *k,
                       const float *v, const float *w, const int *lengths, int B, int T, int Fk, int F);

#endif
