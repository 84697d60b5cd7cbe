/* softmax_focal.h — the focal loss of Lin et al. 2017 on softmax outputs:
 * -(1 - p_y)^gamma log p_y, which lowers the weight of rows the model already
 * gets right, for skewed classes. gamma = 0 is softmax cross-entropy
 * (softmax_xent.h), with the same row weights and normalisation:
 *   loss = sum_n w_n (1 - p_n)^gamma (-log p_n) / sum_n w_n,  p_n = softmax(logits_n)[labels_n]. */
#ifndef GLUE_NN_SOFTMAX_FOCAL_H
#define GLUE_NN_SOFTMAX_FOCAL_H

/* As softmax_xent_forward_backward, with gamma >= 0: rows with labels[n] ==
 * ignore_index do not count; dlogits, if non-NULL, gets the gradient ADDED. */
float softmax_focal_forward_backward(float *dlogits, const float *logits, const int *labels,
                                     const float *row_weights, int N, int K, int ignore_index, float gamma);

#endif
