/* conv1d.c — convolution over time as im2col + linear (see conv1d.h). */
#include "nn/conv1d.h"

#include <string.h>

#include "core/common.h"
#include "nn/linear.h"

static int conv1d_out_len(Conv1dDims d) {
    /* Shorter inputs are the model's bug: it must pad every batch to at least the
     * widest filter (Kim pads sentences the same way). */
    if (d.T < d.W) DIE("conv1d: %d time steps is less than the filter width %d", d.T, d.W);
    return d.T - d.W + 1;
}

long conv1d_scratch_size(Conv1dDims d) {
    return (long)d.B * conv1d_out_len(d) * d.W * d.C;
}

/* col (B*TO, W*C): row (b, t) is the window x[b, t .. t+W-1, :], contiguous in x. */
static void conv1d_im2col(float *col, const float *x, Conv1dDims d, int TO) {
    long row = (long)d.W * d.C;
    #pragma omp parallel for collapse(2) if ((long)d.B * TO * row > 65536)
    for (int b = 0; b < d.B; b++)
        for (int t = 0; t < TO; t++)
            memcpy(col + ((long)b * TO + t) * row, x + ((long)b * d.T + t) * d.C,
                   sizeof(float) * (size_t)row);
}

/* dx[b, p, :] += sum over windows t covering p of dcol[(b, t), (p - t) * C ...];
 * looping over the destination p keeps threads from writing the same row. */
static void conv1d_col2im(float *dx, const float *dcol, Conv1dDims d, int TO) {
    long row = (long)d.W * d.C;
    #pragma omp parallel for collapse(2) if ((long)d.B * TO * row > 65536)
    for (int b = 0; b < d.B; b++)
        for (int p = 0; p < d.T; p++) {
            float *dxr = dx + ((long)b * d.T + p) * d.C;
            int t_lo = p - d.W + 1 > 0 ? p - d.W + 1 : 0, t_hi = p < TO - 1 ? p : TO - 1;
            for (int t = t_lo; t <= t_hi; t++) {
                const float *src = dcol + ((long)b * TO + t) * row + (long)(p - t) * d.C;
                for (int c = 0; c < d.C; c++) dxr[c] += src[c];
            }
        }
}

void conv1d_forward(float *y, const float *x, const float *w, const float *b, Conv1dDims d,
                    float *scratch) {
    int TO = conv1d_out_len(d);
    conv1d_im2col(scratch, x, d, TO);
    linear_forward(y, scratch, w, b, d.B * TO, d.W * d.C, d.F);
}

void conv1d_backward(float *dx, float *dw, float *db, const float *dy, const float *x,
                     const float *w, Conv1dDims d, float *scratch) {
    int TO = conv1d_out_len(d), N = d.B * TO, K = d.W * d.C;
    if (dw) conv1d_im2col(scratch, x, d, TO);
    linear_backward(NULL, dw, db, dy, scratch, w, N, K, d.F);
    if (dx) {
        /* The column matrix is no longer needed: reuse its space for dcol. */
        memset(scratch, 0, sizeof(float) * (size_t)N * K);
        linear_backward(scratch, NULL, NULL, dy, NULL, w, N, K, d.F);
        conv1d_col2im(dx, scratch, d, TO);
    }
}
