/* gemm_amx.h — matmul's bf16 products (core/blas.h's MATMUL_BF16) on AMX tiles.
 *
 * Why: on Intel Xeons with AMX (Sapphire Rapids and later) vdpbf16ps does no
 * more multiply-adds per second than fp32 FMAs (core/gemm_bf16.h), so the bf16
 * training products gained nothing there; one tdpbf16ps multiplies a 16 x 32
 * bf16 block by a 32 x 16 one into 16 x 16 fp32 sums. The definition is the
 * pairs path's: both operands rounded to bf16 (nearest even), the products
 * summed in fp32 (in another order: the tiles sum 32 k at a time).
 *
 * How: op(A) is packed once per product as bf16 pairs [row][pair] and op(B)
 * as [pair][column] (the layouts the tiles load), the pair count padded to 16
 * and rows and columns to 32 with zeros; a transposed operand is paired and
 * turned 16 x 16 lanes at a time. Then each 32 x 32 block of C is four tiles
 * summed over all of K, and written through alpha and beta. A block's sums do
 * not depend on the thread that computes it: the same numbers at any thread
 * count.
 *
 * Only at core/kernels.h's amx level (the CPU has AMX-BF16 and the kernel
 * granted the tile state). Call from the main thread, outside parallel regions. */
#ifndef GLUE_GEMM_AMX_H
#define GLUE_GEMM_AMX_H

/* C (M, N, row stride ldc) = alpha op(A) op(B) + beta C, as cblas_sgemm
 * (row-major; ta/tb nonzero for a transposed operand; beta 0 never reads C),
 * with bf16 operands, over `team` threads of the OpenMP pool. */
void gemm_amx(int ta, int tb, int M, int N, int K, float alpha, const float *A, int lda, const float *B, int ldb,
              float beta, float *C, int ldc, int team);

#endif
