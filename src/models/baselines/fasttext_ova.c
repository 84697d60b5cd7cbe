/* fasttext_ova.c — fastText's one-vs-all output layer (`-loss ova` of the
 * official tool): K independent binary logistic classifiers on the hidden
 * vector, one per label, each trained towards 1 when the row has the label
 * and 0 otherwise. What multi-label tasks train with (a row may have
 * several labels, or its probabilities may all be low); each label's
 * probability is its own sigmoid, not a share of a softmax. */
#include "models/baselines/fasttext.h"

#include <math.h>

#include "core/common.h"

/* Inside the reference's logs too: -log(p + eps) never overflows. */
#define OVA_LOG_EPS 1e-5f

static inline float ova_sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }

float ft_ova_update(float *wo, const float *h, float *grad, int C, int K, const uint8_t *target, float lr) {
    float loss = 0.0f;
    for (int k = 0; k < K; k++) {
        float *w = wo + (size_t)k * C;
        float s = ova_sigmoid(vec_dot(w, h, C));
        float y = target[k] ? 1.0f : 0.0f;
        float alpha = lr * (y - s);
        vec_axpy(grad, alpha, w, C);   /* before w moves, as in the reference */
        vec_axpy(w, alpha, h, C);
        loss -= logf((target[k] ? s : 1.0f - s) + OVA_LOG_EPS);
    }
    return loss;
}

void ft_ova_probs(const float *wo, const float *h, int C, int K, float *probs) {
    for (int k = 0; k < K; k++) probs[k] = ova_sigmoid(vec_dot(wo + (size_t)k * C, h, C));
}
