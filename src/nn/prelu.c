/* prelu.c — PReLU forward and backward (see prelu.h). */
#include "nn/prelu.h"

void prelu_forward(float *y, const float *x, const float *a, int N, int C) {
    for (long i = 0; i < (long)N * C; i++) {
        float v = x[i];
        y[i] = v > 0 ? v : a[i % C] * v;
    }
}

void prelu_backward(float *dx, float *da, const float *dy, const float *x, const float *a, int N, int C) {
    for (int r = 0; r < N; r++)
        for (int c = 0; c < C; c++) {
            long i = (long)r * C + c;
            int pos = x[i] > 0;
            if (dx) dx[i] += pos ? dy[i] : a[c] * dy[i];
            if (da && !pos) da[c] += dy[i] * x[i];
        }
}
