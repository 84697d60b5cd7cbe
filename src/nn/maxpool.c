/* maxpool.c — max-over-time pooling (see maxpool.h). */
#include "nn/maxpool.h"

#include "core/common.h"

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

int maxpool_window_out_len(int T, int size, int stride, int pad) {
    long span = (long)T + 2L * pad - size;
    return span < 0 ? 0 : (int)(span / stride + 1);
}

void maxpool_window_forward(float *y, int *argmax, const float *x, int T, int F, int size, int stride, int pad) {
    if (size < 1 || stride < 1 || pad < 0 || 2 * pad > size) DIE("maxpool_window: size %d, stride %d, pad %d", size, stride, pad);
    int TO = maxpool_window_out_len(T, size, stride, pad);
    for (int o = 0; o < TO; o++) {
        int lo = o * stride - pad, hi = lo + size;
        lo = lo < 0 ? 0 : lo;
        hi = hi > T ? T : hi;
        float *yr = y + (long)o * F;
        int *ar = argmax + (long)o * F;
        for (int f = 0; f < F; f++) { yr[f] = x[(long)lo * F + f]; ar[f] = lo; }
        for (int t = lo + 1; t < hi; t++) {
            const float *xr = x + (long)t * F;
            for (int f = 0; f < F; f++)
                if (xr[f] > yr[f]) { yr[f] = xr[f]; ar[f] = t; }
        }
    }
}

void maxpool_window_backward(float *dx, const float *dy, const int *argmax, int TO, int F) {
    for (long i = 0; i < (long)TO * F; i++) dx[(long)argmax[i] * F + i % F] += dy[i];
}
