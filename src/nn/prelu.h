/* prelu.h — PReLU (He et al. 2015) with one learned slope per feature, as
 * PyTorch's nn.PReLU(num_parameters=C): y = x for x > 0, a_c x otherwise.
 * The Recurrent Entity Network's non-linearity (Henaff et al. 2017). */
#ifndef GLUE_NN_PRELU_H
#define GLUE_NN_PRELU_H

/* y (N, C) from x (N, C) and the slopes a (C); y may alias x. */
void prelu_forward(float *y, const float *x, const float *a, int N, int C);

/* ADDS dx (N, C) and da (C) given dy (N, C) and the forward's input x
 * (either output may be NULL). d/dx at x = 0 is a, as PyTorch's. */
void prelu_backward(float *dx, float *da, const float *dy, const float *x, const float *a, int N, int C);

#endif
