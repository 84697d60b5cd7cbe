/* blas.h — the one matrix-multiply entry point (DESIGN §4.7). Row-major,
 * C (M,N) = alpha * op(A) · op(B) + beta * C, with op(A) (M,K), op(B) (K,N).
 * matmul() goes to OpenBLAS cblas_sgemm; matmul_naive() is the plain triple loop
 * the tests compare it with. */
#ifndef GLUE_BLAS_H
#define GLUE_BLAS_H

typedef enum { MAT_N = 0, MAT_T = 1 } MatTrans;

void matmul(float *C, const float *A, const float *B, int M, int N, int K,
            MatTrans ta, MatTrans tb, float alpha, float beta);
void matmul_naive(float *C, const float *A, const float *B, int M, int N, int K,
                  MatTrans ta, MatTrans tb, float alpha, float beta);

/* One product with explicit row strides (lda, ldb, ldc: elements between rows),
 * for operands that are column slices of wider matrices (e.g. one attention head
 * of a fused q|k|v). Runs on the calling thread: for callers that split their
 * own work over the pool. */
void matmul_ld(float *C, int ldc, const float *A, int lda, const float *B, int ldb, int M, int N, int K,
               MatTrans ta, MatTrans tb, float alpha, float beta);

/* Batched over `batch` independent products laid out at fixed strides (elements),
 * e.g. attention heads. */
void matmul_strided(float *C, const float *A, const float *B, int M, int N, int K,
                    MatTrans ta, MatTrans tb, float alpha, float beta, int batch,
                    long stride_c, long stride_a, long stride_b);

/* For a B that many products share (a recurrent weight, at every time step):
 * matmul_pack_b packs op(B) (K, N) once into buf (MATMUL_PACKED_B_FLOATS(K, N)
 * floats, any alignment) and returns bp, the packing's 64-byte aligned start
 * in buf; matmul_packed_b then multiplies by it without packing it again,
 * C (M, N) = alpha op(A) op(B) + beta C on our own GEMM's tiles (core/sgemm.h),
 * split over the OpenMP team by column blocks like matmul. fp32 whatever
 * matmul's precision; the same numbers at any thread count. Pack again after
 * kernels_force. */
#define MATMUL_PACKED_B_FLOATS(K, N) ((long)(K) * ((long)(N) + 32) + 16)
float *matmul_pack_b(float *buf, const float *B, int K, int N, MatTrans tb);
void matmul_packed_b(float *C, const float *A, const float *bp, int M, int N, int K, MatTrans ta, float alpha,
                     float beta);

/* The precision of matmul()'s products (not matmul_ld's or matmul_strided's:
 * attention's per-head products stay fp32). MATMUL_FP32 is the default.
 * MATMUL_BF16 rounds both operands to bf16 and sums the products in fp32
 * (PyTorch's bf16 autocast does the same for a linear layer; C, the weights
 * and everything outside the products stay fp32): mixed-precision training,
 * about twice the multiply-adds per second where vdpbf16ps is fast, several
 * times on AMX tiles. Only at the amx kernel level (core/gemm_amx) and the
 * avx512bf16 one (core/gemm_bf16's pairs): matmul_set_precision refuses it
 * elsewhere and returns -1. Inside a parallel region matmul runs
 * fp32 either way. Returns the previous precision. */
typedef enum { MATMUL_FP32 = 0, MATMUL_BF16 = 1 } MatmulPrecision;
int matmul_set_precision(MatmulPrecision p);
MatmulPrecision matmul_precision(void);
/* "fp32", "bf16" (NULL-terminated, by MatmulPrecision): the training
 * settings' `precision` choices and the name results record. */
extern const char *const MATMUL_PRECISION_NAMES[];
/* A training run's precision setting as it can run here: MATMUL_BF16 at the
 * amx and avx512bf16 levels, else MATMUL_FP32 after one warning
 * line (when `speak`). Does not change the current precision. */
MatmulPrecision matmul_training_precision(MatmulPrecision wanted, int speak);

#endif
