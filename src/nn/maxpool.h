/* maxpool.h — max pooling over time: over a whole sequence (TextCNN's max over
 * time), or in windows of `size` steps every `stride` steps with `pad` steps of
 * padding at both ends that never win (DPCNN's downsampling: size 3, stride 2,
 * pad 1 halves a length L to ceil(L/2), as PyTorch's MaxPool1d(3, 2, padding=1)).
 * The argmax is saved so the backward routes the gradient to the one step that
 * won. */
#ifndef GLUE_NN_MAXPOOL_H
#define GLUE_NN_MAXPOOL_H

/* y (B, F) = max over t < len_b of x (B, T, F); argmax (B, F) saved (first maximum
 * on ties). lengths (B) or NULL (all T); a sequence with no valid step gets y = 0
 * and argmax = -1 (no gradient). */
void maxpool_time_forward(float *y, int *argmax, const float *x, const int *lengths, int B, int T,
                          int F);

/* dx (B, T, F) += dy (B, F) at the saved argmax positions. */
void maxpool_time_backward(float *dx, const float *dy, const int *argmax, int B, int T, int F);

/* Windows of maxpool_window_forward over T steps: (T + 2 pad - size) / stride + 1,
 * or 0 when T + 2 pad < size. */
int maxpool_window_out_len(int T, int size, int stride, int pad);

/* One sequence: y (TO, F), TO = maxpool_window_out_len(T, size, stride, pad),
 * y[o] = max of x (T, F) over steps [o stride - pad, o stride - pad + size) that
 * lie in [0, T); argmax (TO, F) the winning step (first maximum on ties). Dies
 * unless 2 pad <= size (every window then holds a real step, as PyTorch requires). */
void maxpool_window_forward(float *y, int *argmax, const float *x, int T, int F, int size, int stride, int pad);

/* dx (T, F) += dy (TO, F) at the saved argmax steps (overlapping windows add). */
void maxpool_window_backward(float *dx, const float *dy, const int *argmax, int TO, int F);

#endif
