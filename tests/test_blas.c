/* test_blas.c — matmul (OpenBLAS) equals the naive reference for every
 * transpose combination, alpha/beta, and odd shapes. */
#include "core/blas.h"
#include "tests/test.h"

#include <stdlib.h>

static void fill(float *x, int n, unsigned *s) {
    for (int i = 0; i < n; i++) { *s = *s * 1103515245u + 12345u; x[i] = (float)((*s >> 9) % 2001) / 1000.0f - 1.0f; }
}

TEST(blas_matches_naive) {
    unsigned seed = 7;
    const int shapes[][3] = {{1, 1, 1}, {3, 5, 7}, {17, 33, 9}, {64, 1, 128}, {5, 70, 1}};
    for (unsigned s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        int M = shapes[s][0], N = shapes[s][1], K = shapes[s][2];
        float *A = malloc(sizeof(float) * M * K), *B = malloc(sizeof(float) * K * N);
        float *C1 = malloc(sizeof(float) * M * N), *C2 = malloc(sizeof(float) * M * N);
        for (int ta = 0; ta < 2; ta++)
            for (int tb = 0; tb < 2; tb++) {
                fill(A, M * K, &seed); fill(B, K * N, &seed); fill(C1, M * N, &seed);
                for (int i = 0; i < M * N; i++) C2[i] = C1[i];
                matmul(C1, A, B, M, N, K, (MatTrans)ta, (MatTrans)tb, 0.5f, 2.0f);
                matmul_naive(C2, A, B, M, N, K, (MatTrans)ta, (MatTrans)tb, 0.5f, 2.0f);
                double worst = 0;
                for (int i = 0; i < M * N; i++) worst = fmax(worst, fabs(C1[i] - C2[i]));
                CHECK_MSG(worst < 1e-4, "M%d N%d K%d ta%d tb%d: max diff %g", M, N, K, ta, tb, worst);
            }
        free(A); free(B); free(C1); free(C2);
    }
}
