/* linear.c — y = x W^T + b via the one matmul entry point (see linear.h). */
#include "nn/linear.h"

#include <string.h>

#include "core/blas.h"
#include "core/gemm_bf16.h"
#include "core/kernels.h"

/* y starts as the bias and the GEMM accumulates (beta = 1): one pass over y. */
static void linear_bias_fill(float *y, const float *b, int N, int OC) {
    #pragma omp parallel for if ((long)N * OC > 65536)
    for (int n = 0; n < N; n++) memcpy(y + (long)n * OC, b, sizeof(float) * (size_t)OC);
}

void linear_forward(float *y, const float *x, const float *w, const float *b, int N, int C, int OC) {
    if (b) linear_bias_fill(y, b, N, OC);
    matmul(y, x, w, N, OC, C, MAT_N, MAT_T, 1.0f, b ? 1.0f : 0.0f);
}

void linear_forward_bf16(float *y, const float *x, const struct Bf16Weights *packed, const float *b, int N) {
    matmul_bf16(y, x, packed, N, 0.0f, b, 0);   /* the GEMM adds the bias to each tile */
}

void linear_bias_backward(float *db, const float *dy, int N, int OC) {
    /* Rows outer, columns inner (core/kernels' add_rows): contiguous and
     * vectorised; O(N*OC) is small next to the O(N*OC*C) weight gradient, so
     * no threading. */
    kernels()->add_rows(db, dy, N, OC, OC);
}

void linear_backward(float *dx, float *dw, float *db, const float *dy, const float *x,
                     const float *w, int N, int C, int OC) {
    if (dx) matmul(dx, dy, w, N, C, OC, MAT_N, MAT_N, 1.0f, 1.0f);   /* (N,OC)(OC,C) */
    if (dw) matmul(dw, dy, x, OC, C, N, MAT_T, MAT_N, 1.0f, 1.0f);   /* (OC,N)(N,C) */
    if (db) linear_bias_backward(db, dy, N, OC);
}
