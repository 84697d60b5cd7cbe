/* maxpool.c — max-over-time pooling (see maxpool.h). */
#include "nn/maxpool.h"

void maxpool_time_forward(float *y, int *argmax, const float *x, const int *lengths, int B, int T,
                          int F) {
    #pragma omp parallel for if ((long)B * T * F > 65536)
    for (int b = 0; b < B; b++) {
        int len = lengths ? lengths[b] : T;
        len = len < 0 ? 0 : len > T ? T : len;
        float *yr = y + (long)b * F;
        int *ar = argmax + (long)b * F;
        for (int f = 0; f < F; f++) { yr[f] = 0.0f; ar[f] = -1; }
        /* Time outer, features inner: contiguous reads of x. */
        for (int t = 0; t < len; t++) {
            const float *xr = x + ((long)b * T + t) * F;
            for (int f = 0; f < F; f++)
                if (ar[f] < 0 || xr[f] > yr[f]) { yr[f] = xr[f]; ar[f] = t; }
        }
    }
}

void maxpool_time_backward(float *dx, const float *dy, const int *argmax, int B, int T, int F) {
    for (int b = 0; b < B; b++)
        for (int f = 0; f < F; f++) {
            int t = argmax[(long)b * F + f];
            if (t >= 0) dx[((long)b * T + t) * F + f] += dy[(long)b * F + f];
        }
}
