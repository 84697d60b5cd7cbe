/* conv1d.h — 1-D convolution over time, as in Kim (2014) TextCNN: input
 * (B, T, C) word vectors, F filters of width W spanning all C channels, "valid"
 * windows only, output (B, T - W + 1, F). Implemented as im2col + one matmul,
 * reusing linear: a window of W rows of x is one row of the column matrix.
 * Filters are (F, W, C) = PyTorch's Conv1d weight (F, C, W) with the last two
 * axes swapped (ours keeps each window contiguous). ReLU and pooling are separate ops. */
#ifndef GLUE_NN_CONV1D_H
#define GLUE_NN_CONV1D_H

typedef struct {
    int B, T, C;   /* batch, time steps (padded length), input channels */
    int F, W;      /* filters, filter width in time steps; T >= W */
} Conv1dDims;

/* Floats of scratch conv1d_forward/backward need: the (B*(T-W+1), W*C) column matrix. */
long conv1d_scratch_size(Conv1dDims d);

/* y (B, T-W+1, F) = sum over window of x (B, T, C) · w (F, W, C) + b (F, or NULL). */
void conv1d_forward(float *y, const float *x, const float *w, const float *b, Conv1dDims d,
                    float *scratch);

/* Adds dx (B, T, C), dw (F, W, C), db (F) given dy (B, T-W+1, F); any grad may be NULL. */
void conv1d_backward(float *dx, float *dw, float *db, const float *dy, const float *x,
                     const float *w, Conv1dDims d, float *scratch);

#endif
