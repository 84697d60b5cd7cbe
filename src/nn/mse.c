/* mse.c — mean squared error and its gradient (see mse.h). */
#include "nn/mse.h"

float mse_forward_backward(float *dpred, const float *pred, const float *target, int N) {
    if (N <= 0) return 0.0f;
    double sum = 0.0;
    for (int n = 0; n < N; n++) {
        float d = pred[n] - target[n];
        sum += (double)d * d;
        if (dpred) dpred[n] += 2.0f * d / (float)N;
    }
    return (float)(sum / N);
}
