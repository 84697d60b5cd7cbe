/* test_blas_split.c — matmul / matmul_strided when they split the work over
 * the OpenMP threads themselves (core/blas.c: OpenBLAS on one thread, as
 * threads_init sets it): every transpose combination, row splits (M >= N) and
 * column splits (N > M) with ragged last blocks, alpha/beta, against the naive
 * reference and the unsplit product. (Not bit for bit: OpenBLAS's kernels for
 * ragged edges round differently, so results depend on the thread count, as
 * DESIGN allows, but not on anything else.) */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "core/blas.h"
#include "tests/test.h"

extern void openblas_set_num_threads(int n);
extern int openblas_get_num_threads(void);

static void fill(float *x, long n, unsigned *s) {
    for (long i = 0; i < n; i++) {
        *s = *s * 1103515245u + 12345u;
        x[i] = (float)((*s >> 9) % 2001) / 1000.0f - 1.0f;
    }
}

static double max_diff(const float *a, const float *b, long n) {
    double w = 0;
    for (long i = 0; i < n; i++) w = fmax(w, fabs((double)a[i] - b[i]));
    return w;
}

TEST(blas_split_matches_naive) {
    int blas_threads = openblas_get_num_threads(), omp_threads = omp_get_max_threads();
    /* Large enough to be split (>= 2^20 multiply-adds); M >= N splits rows, N > M columns. */
    const int shapes[][3] = {{301, 70, 83}, {37, 333, 97}, {1000, 1000, 2}};
    unsigned seed = 11;
    for (unsigned s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        int M = shapes[s][0], N = shapes[s][1], K = shapes[s][2];
        float *A = malloc(sizeof(float) * M * K), *B = malloc(sizeof(float) * K * N);
        float *C0 = malloc(sizeof(float) * M * N), *C1 = malloc(sizeof(float) * M * N);
        float *C2 = malloc(sizeof(float) * M * N);
        for (int ta = 0; ta < 2; ta++)
            for (int tb = 0; tb < 2; tb++) {
                fill(A, (long)M * K, &seed);
                fill(B, (long)K * N, &seed);
                fill(C0, (long)M * N, &seed);
                memcpy(C1, C0, sizeof(float) * M * N);
                memcpy(C2, C0, sizeof(float) * M * N);
                openblas_set_num_threads(1);
                omp_set_num_threads(1);   /* unsplit */
                matmul(C0, A, B, M, N, K, (MatTrans)ta, (MatTrans)tb, 0.5f, 2.0f);
                omp_set_num_threads(3);   /* three blocks, the last one ragged */
                matmul(C1, A, B, M, N, K, (MatTrans)ta, (MatTrans)tb, 0.5f, 2.0f);
                omp_set_num_threads(omp_threads);
                openblas_set_num_threads(blas_threads);
                matmul_naive(C2, A, B, M, N, K, (MatTrans)ta, (MatTrans)tb, 0.5f, 2.0f);
                CHECK_MSG(max_diff(C1, C2, (long)M * N) < 1e-3, "M%d N%d K%d ta%d tb%d: split vs naive %g", M, N,
                          K, ta, tb, max_diff(C1, C2, (long)M * N));
                CHECK_MSG(max_diff(C0, C1, (long)M * N) < 1e-5, "M%d N%d K%d ta%d tb%d: split vs unsplit %g", M,
                          N, K, ta, tb, max_diff(C0, C1, (long)M * N));
            }
        free(A); free(B); free(C0); free(C1); free(C2);
    }
}

TEST(blas_strided_split_matches_naive) {
    int blas_threads = openblas_get_num_threads(), omp_threads = omp_get_max_threads();
    enum { BATCH = 7, M = 64, N = 48, K = 80 };
    unsigned seed = 5;
    float *A = malloc(sizeof(float) * BATCH * M * K), *B = malloc(sizeof(float) * BATCH * K * N);
    float *C1 = malloc(sizeof(float) * BATCH * M * N), *C2 = malloc(sizeof(float) * BATCH * M * N);
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++) {
            fill(A, (long)BATCH * M * K, &seed);
            fill(B, (long)BATCH * K * N, &seed);
            fill(C1, (long)BATCH * M * N, &seed);
            memcpy(C2, C1, sizeof(float) * BATCH * M * N);
            openblas_set_num_threads(1);
            omp_set_num_threads(2);
            matmul_strided(C1, A, B, M, N, K, (MatTrans)ta, (MatTrans)tb, 1.5f, 1.0f, BATCH, (long)M * N,
                           (long)M * K, (long)K * N);
            omp_set_num_threads(omp_threads);
            openblas_set_num_threads(blas_threads);
            for (int b = 0; b < BATCH; b++)
                matmul_naive(C2 + (long)b * M * N, A + (long)b * M * K, B + (long)b * K * N, M, N, K, (MatTrans)ta,
                             (MatTrans)tb, 1.5f, 1.0f);
            CHECK_MSG(max_diff(C1, C2, (long)BATCH * M * N) < 1e-3, "ta%d tb%d: %g", ta, tb,
                      max_diff(C1, C2, (long)BATCH * M * N));
        }
    free(A); free(B); free(C1); free(C2);
}
