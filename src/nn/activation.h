/* activation.h — element-wise non-linearities: GELU (exact erf form, as in BERT),
 * ReLU (TextCNN), tanh (BERT pooler). n elements; backward adds into dx.
 * Each backward takes what it needs: GELU the input x, ReLU and tanh the output y
 * (so the caller may keep only the output). */
#ifndef GLUE_NN_ACTIVATION_H
#define GLUE_NN_ACTIVATION_H

/* y = x * Phi(x) = 0.5 x (1 + erf(x / sqrt 2)). y may alias x. */
void gelu_forward(float *y, const float *x, long n);
void gelu_backward(float *dx, const float *dy, const float *x, long n);

/* y = max(x, 0). y may alias x. Backward: dx += dy where y > 0. */
void relu_forward(float *y, const float *x, long n);
void relu_backward(float *dx, const float *dy, const float *y, long n);

/* y = tanh(x). y may alias x. Backward: dx += dy (1 - y^2). */
void tanh_forward(float *y, const float *x, long n);
void tanh_backward(float *dx, const float *dy, const float *y, long n);

#endif
