/* kernels_avx512.c — core/kernels_body.h for AVX-512 (F, BW, DQ, VL: Skylake-X,
 * Ice Lake, Zen 4 and later): 16-float vectors, 32 registers (the fp32 GEMM
 * tile: 12 rows x 32 columns). */
#include <immintrin.h>

/* The Makefile compiles this file with -mavx512f -mavx512bw -mavx512dq
 * -mavx512vl -mavx2 -mfma (see kernels_avx2.c for why not a pragma). */
#if !defined(__AVX512F__) || !defined(__AVX512BW__) || !defined(__AVX512DQ__) || !defined(__AVX512VL__)
#error "compile core/kernels_avx512.c with -mavx512f -mavx512bw -mavx512dq -mavx512vl (Makefile: KERN_FLAGS)"
#endif

#define KERN_OPS kernels_avx512_ops
#define KERN_NAME "avx512"
#define KERN_SG_MR 12
#define KW 16
#define KV_FMA(a, b, c) _mm512_fmadd_ps(a, b, c)
#define KV_SET1(s) _mm512_set1_ps(s)

#include "core/kernels_body.h"
