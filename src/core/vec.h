/* vec.h — the two vector kernels of every sparse SGD update (fastText's
 * Hogwild steps, skip-gram word vectors): inlined, since they are the whole
 * cost of those trainings. n floats. */
#ifndef GLUE_VEC_H
#define GLUE_VEC_H

static inline float vec_dot(const float *restrict a, const float *restrict b, int n) {
    float s = 0.0f;
#pragma omp simd reduction(+ : s)
    for (int i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}

/* y += alpha x */
static inline void vec_axpy(float *restrict y, float alpha, const float *restrict x, int n) {
#pragma omp simd
    for (int i = 0; i < n; i++) y[i] += alpha * x[i];
}

#endif
