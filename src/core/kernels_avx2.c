/* kernels_avx2.c — core/kernels_body.h for AVX2 + FMA (Haswell, Zen 1-3 and
 * later): 8-float vectors, 16 registers (the fp32 GEMM tile: 6 rows x 16 columns). */
#include <immintrin.h>

/* The Makefile compiles this file with -mavx2 -mfma (a `#pragma GCC target`
 * does not reach `#pragma omp simd` loops in GCC 12: they stay scalar). */
#if !defined(__AVX2__) || !defined(__FMA__)
#error "compile core/kernels_avx2.c with -mavx2 -mfma (Makefile: KERN_FLAGS)"
#endif

#define KERN_OPS kernels_avx2_ops
#define KERN_NAME "avx2"
#define KERN_SG_MR 6
#define KW 8
#define KV_FMA(a, b, c) _mm256_fmadd_ps(a, b, c)
#define KV_SET1(s) _mm256_set1_ps(s)

#include "core/kernels_body.h"
