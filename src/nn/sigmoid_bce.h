/* sigmoid_bce.h — K independent sigmoid outputs against 0/1 targets: the
 * binary cross-entropy with logits of multi-label heads, with PyTorch's
 * BCEWithLogitsLoss(pos_weight=) per label, and optionally the focal term of
 * Lin et al. 2017 (torchvision's sigmoid_focal_loss without alpha).
 *
 * Per cell (x logit, y target in [0, 1], p the label's positive weight,
 * s = sigmoid(x)):
 *   bce  = p y softplus(-x) + (1 - y) softplus(x)   (= -p y log s - (1-y) log(1-s))
 *   loss = bce * (1 - pt)^gamma,  pt = s y + (1 - s)(1 - y)     (gamma 0: bce)
 * softplus is taken in its stable form, so no logit overflows or takes log(0).
 * The mean is over the counted rows' cells (PyTorch's reduction="mean" over
 * every cell when all rows count). */
#ifndef GLUE_NN_SIGMOID_BCE_H
#define GLUE_NN_SIGMOID_BCE_H

/* probs (N, K) = sigmoid(logits); probs may alias logits. */
void sigmoid_forward(float *probs, const float *logits, int N, int K);

/* Mean loss of logits (N, K) against targets (N, K), over the rows whose
 * row_mask is non-zero (row_mask NULL: every row); pos_weight (K) NULL: 1.
 * Returns 0 (and adds nothing) when no row counts. dlogits (N, K), if
 * non-NULL, gets the gradient of the returned loss ADDED; masked rows get
 * nothing. gamma >= 0. */
float sigmoid_bce_forward_backward(float *dlogits, const float *logits, const float *targets,
                                   const float *pos_weight, const unsigned char *row_mask, int N, int K,
                                   float gamma);

#endif
