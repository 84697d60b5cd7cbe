/* blas.c — matmul over cblas_sgemm, and the naive reference (see blas.h). */
#include "core/blas.h"

#include <cblas.h>

void matmul(float *C, const float *A, const float *B, int M, int N, int K,
            MatTrans ta, MatTrans tb, float alpha, float beta) {
    if (M == 0 || N == 0) return;
    int lda = ta == MAT_N ? K : M;
    int ldb = tb == MAT_N ? N : K;
    cblas_sgemm(CblasRowMajor, ta == MAT_N ? CblasNoTrans : CblasTrans,
                tb == MAT_N ? CblasNoTrans : CblasTrans, M, N, K, alpha, A, lda, B, ldb,
                beta, C, N);
}

void matmul_naive(float *C, const float *A, const float *B, int M, int N, int K,
                  MatTrans ta, MatTrans tb, float alpha, float beta) {
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double acc = 0.0;
            for (int k = 0; k < K; k++) {
                float a = ta == MAT_N ? A[(long)i * K + k] : A[(long)k * M + i];
                float b = tb == MAT_N ? B[(long)k * N + j] : B[(long)j * K + k];
                acc += (double)a * b;
            }
            float prev = beta == 0.0f ? 0.0f : beta * C[(long)i * N + j];
            C[(long)i * N + j] = (float)(alpha * acc) + prev;
        }
}

void matmul_strided(float *C, const float *A, const float *B, int M, int N, int K,
                    MatTrans ta, MatTrans tb, float alpha, float beta, int batch,
                    long stride_c, long stride_a, long stride_b) {
    for (int b = 0; b < batch; b++)
        matmul(C + b * stride_c, A + b * stride_a, B + b * stride_b, M, N, K, ta, tb, alpha, beta);
}
