/* activation.c — GELU, ReLU, tanh and their backwards (see activation.h). */
#include "nn/activation.h"

#include <math.h>

/* Element-wise loops are memory-bound; threads only pay beyond this size. */
#define ACT_PARALLEL_MIN 65536

static const float ACT_INV_SQRT2 = 0.70710678118654752f;
static const float ACT_INV_SQRT_2PI = 0.39894228040143268f;

void gelu_forward(float *y, const float *x, long n) {
    #pragma omp parallel for if (n > ACT_PARALLEL_MIN)
    for (long i = 0; i < n; i++) y[i] = 0.5f * x[i] * (1.0f + erff(x[i] * ACT_INV_SQRT2));
}

void gelu_backward(float *dx, const float *dy, const float *x, long n) {
    /* d/dx [x Phi(x)] = Phi(x) + x phi(x). */
    #pragma omp parallel for if (n > ACT_PARALLEL_MIN)
    for (long i = 0; i < n; i++) {
        float cdf = 0.5f * (1.0f + erff(x[i] * ACT_INV_SQRT2));
        float pdf = ACT_INV_SQRT_2PI * expf(-0.5f * x[i] * x[i]);
        dx[i] += dy[i] * (cdf + x[i] * pdf);
    }
}

void relu_forward(float *y, const float *x, long n) {
    #pragma omp parallel for if (n > ACT_PARALLEL_MIN)
    for (long i = 0; i < n; i++) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

void relu_backward(float *dx, const float *dy, const float *y, long n) {
    #pragma omp parallel for if (n > ACT_PARALLEL_MIN)
    for (long i = 0; i < n; i++) dx[i] += y[i] > 0.0f ? dy[i] : 0.0f;
}

void tanh_forward(float *y, const float *x, long n) {
    #pragma omp parallel for if (n > ACT_PARALLEL_MIN)
    for (long i = 0; i < n; i++) y[i] = tanhf(x[i]);
}

void tanh_backward(float *dx, const float *dy, const float *y, long n) {
    #pragma omp parallel for if (n > ACT_PARALLEL_MIN)
    for (long i = 0; i < n; i++) dx[i] += dy[i] * (1.0f - y[i] * y[i]);
}
