/* layernorm.c — row-wise normalisation and its backward (see layernorm.h). */
#include "nn/layernorm.h"

#include "core/kernels.h"

void layernorm_forward(float *y, float *mean, float *rstd, const float *x, const float *gamma,
                       const float *beta, int N, int C, float eps) {
    /* The row (two passes in double, vectorised) is core/kernels'. */
    const ElemKernels *k = kernels();
    #pragma omp parallel for if ((long)N * C > 32768)
    for (int n = 0; n < N; n++)
        k->layernorm_row(y + (long)n * C, &mean[n], &rstd[n], x + (long)n * C, gamma, beta, C, eps);
}

void layernorm_backward(float *dx, float *dgamma, float *dbeta, const float *dy, const float *x,
                        const float *mean, const float *rstd, const float *gamma, int N, int C) {
    if (dx) {
        /* With xhat = (x - mean) * rstd and g = dy * gamma:
         * dx = rstd * (g - mean(g) - xhat * mean(g * xhat)). */
        #pragma omp parallel for if ((long)N * C > 32768)
        for (int n = 0; n < N; n++) {
            const float *xr = x + (long)n * C, *dyr = dy + (long)n * C;
            float *dxr = dx + (long)n * C;
            float m = mean[n], rs = rstd[n];
            float sum_g = 0.0f, sum_gx = 0.0f;
            for (int c = 0; c < C; c++) {
                float g = dyr[c] * gamma[c];
                sum_g += g;
                sum_gx += g * (xr[c] - m) * rs;
            }
            float mg = sum_g / C, mgx = sum_gx / C;
            for (int c = 0; c < C; c++) {
                float xhat = (xr[c] - m) * rs;
                dxr[c] += rs * (dyr[c] * gamma[c] - mg - xhat * mgx);
            }
        }
    }
    if (dgamma || dbeta) {
        /* Column sums over rows: rows outer so the inner loop is contiguous. */
        for (int n = 0; n < N; n++) {
            const float *xr = x + (long)n * C, *dyr = dy + (long)n * C;
            float m = mean[n], rs = rstd[n];
            for (int c = 0; c < C; c++) {
                if (dgamma) dgamma[c] += dyr[c] * (xr[c] - m) * rs;
                if (dbeta) dbeta[c] += dyr[c];
            }
        }
    }
}
