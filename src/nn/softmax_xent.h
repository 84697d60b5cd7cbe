/* softmax_xent.h — softmax over K classes and the fused softmax + cross-entropy
 * loss (classification heads, MLM). Fusing avoids storing probabilities for the
 * backward: dL/dlogits = w * (softmax - onehot) / sum(w). softmax_row is also
 * the masked-row softmax of attention. */
#ifndef GLUE_NN_SOFTMAX_XENT_H
#define GLUE_NN_SOFTMAX_XENT_H

/* In place over n values; entries equal to -INFINITY (masked) get probability 0,
 * and a row with no finite entry becomes all zeros instead of NaN. */
void softmax_row(float *x, int n);

/* probs (N, K) = softmax of each row of logits (N, K). probs may alias logits. */
void softmax_forward(float *probs, const float *logits, int N, int K);

/* Mean cross-entropy of rows n with labels[n] != ignore_index (labels (N) in
 * [0, K)), weighted by row_weights (N) if non-NULL:
 *   loss = sum_n w_n * (-log softmax(logits_n)[labels_n]) / sum_n w_n,
 * the same normalisation as PyTorch's weighted/ignore_index mean. Returns 0 (and
 * adds no gradient) when no row counts. dlogits (N, K), if non-NULL, gets the
 * gradient of the returned loss ADDED; ignored rows get nothing. */
float softmax_xent_forward_backward(float *dlogits, const float *logits, const int *labels,
                                    const float *row_weights, int N, int K, int ignore_index);

#endif
