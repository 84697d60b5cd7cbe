/* kernels_portable.c — core/kernels_body.h for the build's baseline (x86-64-v2:
 * SSE4.2, 4-float vectors, no FMA): the level every x86-64 CPU runs. */
#include <immintrin.h>

#define KERN_OPS kernels_portable_ops
#define KERN_NAME "portable"
#define KERN_SG_MR 6
#define KW 4
#define KV_FMA(a, b, c) ((a) * (b) + (c))
#define KV_SET1(s) _mm_set1_ps(s)

#include "core/kernels_body.h"
