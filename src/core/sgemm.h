/* sgemm.h — the project's own fp32 GEMM (row-major, cblas_sgemm's arguments),
 * and the choice between it and OpenBLAS for core/blas.c.
 *
 * Why a GEMM of our own: Debian's OpenBLAS picks its kernels from a table of
 * CPU models it knows. On a CPU newer than the library (an Intel Xeon of
 * family 6 model 207 with OpenBLAS 0.3.21) it falls back to its SSE3
 * "Prescott" kernels, about a quarter of what the CPU can do, and a BERT
 * training step ran 3.4x slower than on a Zen core of the same kind. The only
 * switch OpenBLAS offers is an environment variable read at load time, which
 * the project does not set. So when OpenBLAS names no kernel of the CPU's
 * vector level, matmul runs this GEMM instead: BLIS's loop order (pack a
 * KC x NC block of B and an MC x KC block of A, then a register tile over
 * them), with the packers and the tile compiled per instruction-set level in
 * core/kernels_body.h and chosen at run time with the other kernels. */
#ifndef GLUE_SGEMM_H
#define GLUE_SGEMM_H

/* C (M,N) = alpha * op(A) op(B) + beta * C on the calling thread; ta/tb
 * nonzero for a transposed operand; lda/ldb/ldc as cblas_sgemm (row-major).
 * beta == 0 never reads C. */
void sgemm_own(int ta, int tb, int M, int N, int K, float alpha, const float *A, int lda, const float *B, int ldb,
               float beta, float *C, int ldc);

/* A register tile (core/kernels.h's sgemm_tile has this signature). */
typedef void (*SgemmTile)(float *c, long ldc, int mr, int nc, const float *a, long a_rs, long a_cs,
                          const float *bp, long kc, float alpha, float beta);

/* sgemm_own's blocking and packers with another tile over the same 32-bit
 * elements: core/gemm_bf16's training products, whose elements are pairs of
 * bf16 (K counts pairs) and whose tile multiplies them with vdpbf16ps. The
 * tile must fit the current kernel level's packers (sgemm_mr x sgemm_nr). */
void sgemm_own_tile(SgemmTile tile, int ta, int tb, int M, int N, int K, float alpha, const float *A, int lda,
                    const float *B, int ldb, float beta, float *C, int ldc);

/* A B that many products share (core/blas.h's matmul_packed_b), packed once
 * into the panels sgemm_own's tiles read, so that no product packs it again.
 * MATMUL_PACKED_B_FLOATS bounds the size at any kernel level (panels are at
 * most 32 columns wide); the packing belongs to the kernel level current when
 * it was made. dst = op(B) (K, N) (tb: B is stored (N, K), B[j * ldb + k]). */
void sgemm_pack_b_all(float *dst, int tb, int K, int N, const float *B, int ldb);
/* Columns [j0, j1) of C (M, N) = alpha op(A) op(B) + beta C with op(B) from
 * sgemm_pack_b_all (K, N); j0 a multiple of kernels()->sgemm_nr. The same
 * numbers as sgemm_own on the unpacked B. */
void sgemm_own_packed_b(int ta, int M, int N, int K, float alpha, const float *A, int lda, const float *bp, float beta,
                        float *C, int ldc, int j0, int j1);

typedef enum { GEMM_OPENBLAS, GEMM_OWN } GemmBackend;

/* The backend matmul uses: GLUE_GEMM=openblas|own forces one; otherwise our
 * own when OpenBLAS's kernels are below the CPU's vector level (its core name
 * is not one of the AVX2 / AVX-512 ones it has). Decided once. */
GemmBackend gemm_backend(void);
/* Use `b` from now on (tests, benchmarks); returns the previous one. */
GemmBackend gemm_backend_force(GemmBackend b);
/* "openblas (SkylakeX)" or "own (avx512)": for --version, benchmarks and results. */
const char *gemm_backend_describe(void);

#endif
