/* linear.h — fully connected layer y = x W^T + b with PyTorch's weight layout
 * W (OC, C), so checkpoints and reference comparisons need no transposes.
 * Also the building block of conv1d (after im2col) and the LSTM projections. */
#ifndef GLUE_NN_LINEAR_H
#define GLUE_NN_LINEAR_H

/* y (N, OC) = x (N, C) · W^T + b; w (OC, C), b (OC) or NULL for no bias. */
void linear_forward(float *y, const float *x, const float *w, const float *b, int N, int C, int OC);

/* The same with W packed in bf16 (core/gemm_bf16.h, OC = packed->N): inference only. */
struct Bf16Weights;
void linear_forward_bf16(float *y, const float *x, const struct Bf16Weights *packed, const float *b, int N);

/* Adds the gradients of y = x W^T + b given dy (N, OC):
 *   dx (N, C) += dy · W,   dw (OC, C) += dy^T · x,   db (OC) += sum over rows of dy.
 * Any of dx, dw, db may be NULL when not wanted (data input, frozen weight, no bias);
 * x may be NULL when dw is NULL. */
void linear_backward(float *dx, float *dw, float *db, const float *dy, const float *x,
                     const float *w, int N, int C, int OC);

/* db (OC) += column sums of dy (N, OC): the bias gradient, shared with any op that
 * adds a broadcast bias. */
void linear_bias_backward(float *db, const float *dy, int N, int OC);

#endif
