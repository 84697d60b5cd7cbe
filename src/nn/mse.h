/* mse.h — mean squared error for regression heads (STS-B, K = 1). */
#ifndef GLUE_NN_MSE_H
#define GLUE_NN_MSE_H

/* Returns mean over n of (pred - target)^2 for pred, target (N); dpred (N), if
 * non-NULL, gets its gradient 2 (pred - target) / N ADDED. N = 0 returns 0. */
float mse_forward_backward(float *dpred, const float *pred, const float *target, int N);

#endif
