/* label_smoothing.h — label-smoothed cross-entropy (Szegedy et al. 2016), the
 * translation model's loss, defined as PyTorch's
 * CrossEntropyLoss(label_smoothing=eps): the target distribution is
 *     q = (1 - eps) onehot(y) + eps / K
 * and a row's loss is -Σ_k q_k log softmax(z)_k
 *                   = lse(z) - (1 - eps) z_y - (eps / K) Σ_k z_k.
 * Vaswani et al. use eps = 0.1: it costs perplexity but gains BLEU.
 *
 * The vocabulary projection is the largest tensor of a translation step
 * ((tokens, V) logits), so the model runs it in row chunks and wants the
 * gradient IN PLACE of the logits: this function WRITES dlogits (which may be
 * the logits array itself) instead of adding to it, and returns SUMS so the
 * caller can normalise over the whole batch. */
#ifndef GLUE_NN_LABEL_SMOOTHING_H
#define GLUE_NN_LABEL_SMOOTHING_H

/* Over rows n of logits (N, K) whose labels[n] != ignore_index (labels in
 * [0, K)): returns the sum of the smoothed losses and adds to *nll_sum (if
 * non-NULL) the sum of the plain -log softmax(z)_y (for perplexity). If dlogits
 * is non-NULL it is written: grad_scale * (softmax(z) - q) on counted rows, 0 on
 * ignored ones (grad_scale = 1 / tokens gives the gradient of the mean). The
 * sums are in double, in row order: the same for any thread count. */
double label_smoothing_xent(float *dlogits, const float *logits, const int *labels, int N, int K, float eps,
                            int ignore_index, float grad_scale, double *nll_sum);

#endif
