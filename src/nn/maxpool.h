/* maxpool.h — max over time (TextCNN): for each sequence and feature, the largest
 * value over the valid time steps. The argmax is saved so the backward routes the
 * gradient to the one step that won. */
#ifndef GLUE_NN_MAXPOOL_H
#define GLUE_NN_MAXPOOL_H

/* y (B, F) = max over t < len_b of x (B, T, F); argmax (B, F) saved (first maximum
 * on ties). lengths (B) or NULL (all T); a sequence with no valid step gets y = 0
 * and argmax = -1 (no gradient). */
void maxpool_time_forward(float *y, int *argmax, const float *x, const int *lengths, int B, int T,
                          int F);

/* dx (B, T, F) += dy (B, F) at the saved argmax positions. */
void maxpool_time_backward(float *dx, const float *dy, const int *argmax, int B, int T, int F);

#endif
