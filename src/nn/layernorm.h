/* layernorm.h — layer normalisation over the last dimension (BERT uses
 * eps = 1e-12, PyTorch's default is 1e-5; the caller says which).
 * y = (x - mean) * rstd * gamma + beta, rstd = 1 / sqrt(var + eps), var biased. */
#ifndef GLUE_NN_LAYERNORM_H
#define GLUE_NN_LAYERNORM_H

/* x, y (N, C); gamma, beta (C); saves mean, rstd (N) for the backward. */
void layernorm_forward(float *y, float *mean, float *rstd, const float *x, const float *gamma,
                       const float *beta, int N, int C, float eps);

/* Adds dx (N, C), dgamma (C), dbeta (C) given dy (N, C); any grad may be NULL. */
void layernorm_backward(float *dx, float *dgamma, float *dbeta, const float *dy, const float *x,
                        const float *mean, const float *rstd, const float *gamma, int N, int C);

#endif
