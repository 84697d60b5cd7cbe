/* sgemm.c — the project's fp32 GEMM and the choice of backend (see sgemm.h).
 *
 * Loop order (BLIS): for each NC-wide block of columns, for each KC-deep
 * slice of k, B's KC x NC block is packed into NR-wide panels (kept in L2/L3);
 * for each MC-tall block of rows, A's MC x KC block is packed into MR-tall
 * panels (kept in L2; narrow products skip this: SG_UNPACKED_MAX_N); then
 * every MR x NR tile of C is updated from one A panel and one B panel (the B
 * panel stays in L1 across the MC/MR tiles). The first k
 * slice applies beta, later ones add. Packing buffers are per thread and grow
 * to the largest block seen, so small products (attention heads) allocate
 * nothing after the first call. Results are deterministic: the summation order
 * depends only on the shape and the kernel level. */
#include "core/sgemm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/common.h"
#include "core/kernels.h"
#include "core/thread_scratch.h"

extern char *openblas_get_corename(void);

/* KC x (MR or NR) panels: KC = 256 keeps a 32-wide B panel (32 KB) in L1; MC
 * rows of A (MC x KC, <= 192 KB) in L2; NC columns of B (<= 4 MB) in L3. */
enum { SG_KC = 256, SG_MC_PANELS = 16, SG_NC = 4096 };

/* A packed A block is reused by every NR-wide column tile; for a product at
 * most this wide (attention's per-head products: N = 64 or 128) that is two
 * to four tiles, too few to repay the copy, and the tile reads A where it
 * lies (one Xeon core, 128 x 64 x 128: 1.18x; at N >= 256 packing wins, to
 * 1.5x where A's rows are 4 KB apart). Except a transposed A whose k steps
 * are more than SG_UNPACKED_MAX_LDA floats apart: there the tile would read
 * MR floats from a new page at every k (the tied vocabulary's gradient,
 * 30522 x 128 x 608: 1.10-1.17x packed with the AVX2 tile, 2 threads of an
 * AMD EPYC family 25 model 17; the AVX-512 tile reads 12 floats and does not
 * notice). The sums are the same either way. */
enum { SG_UNPACKED_MAX_N = 128, SG_UNPACKED_MAX_LDA = 1024 };

/* C = beta * C, for K == 0 (no product to add). */
static void sg_scale_only(float *C, int ldc, int M, int N, float beta) {
    for (int i = 0; i < M; i++) {
        float *row = C + (long)i * ldc;
        if (beta == 0.0f) memset(row, 0, sizeof(float) * (size_t)N);
        else for (int j = 0; j < N; j++) row[j] *= beta;
    }
}

/* A's block of rows ic.. (mc) and k slice pc.. (kc) as the tiles read it: tile
 * row ir's (r, k) at a[ir * step + r * rs + k * cs]. Where it lies
 * (SG_UNPACKED_MAX_N), else packed into apack. */
typedef struct {
    const float *a;
    long rs, cs, step;
} SgA;

static SgA sg_a_block(const ElemKernels *k, int ta, int N, const float *A, int lda, float *apack, int ic, int mc,
                      int pc, int kc) {
    if (N <= SG_UNPACKED_MAX_N && !(ta && lda > SG_UNPACKED_MAX_LDA))
        return ta ? (SgA){A + (long)pc * lda + ic, 1, lda, 1} : (SgA){A + (long)ic * lda + pc, lda, 1, lda};
    const int MR = k->sgemm_mr;
    for (int ir = 0; ir < mc; ir += MR) {
        int rows = mc - ir < MR ? mc - ir : MR;
        const float *src = ta ? A + (long)pc * lda + ic + ir : A + (long)(ic + ir) * lda + pc;
        k->sgemm_pack_a(apack + (long)ir * kc, src, lda, ta, rows, kc);
    }
    return (SgA){apack, 1, MR, kc};
}

void sgemm_own(int ta, int tb, int M, int N, int K, float alpha, const float *A, int lda, const float *B, int ldb,
               float beta, float *C, int ldc) {
    sgemm_own_tile(kernels()->sgemm_tile, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

void sgemm_own_tile(SgemmTile tile, int ta, int tb, int M, int N, int K, float alpha, const float *A, int lda,
                    const float *B, int ldb, float beta, float *C, int ldc) {
    if (M <= 0 || N <= 0) return;
    if (K <= 0) { sg_scale_only(C, ldc, M, N, beta); return; }
    const ElemKernels *k = kernels();
    const int MR = k->sgemm_mr, NR = k->sgemm_nr, MC = MR * SG_MC_PANELS;
    const int NC = SG_NC / NR * NR;
    int ncb = N < NC ? N : NC, mcb = M < MC ? M : MC, kcb = K < SG_KC ? K : SG_KC;
    float *bpack = thread_scratch(SCRATCH_SGEMM_B, sizeof(float) * (size_t)kcb * (size_t)((ncb + NR - 1) / NR * NR));
    float *apack = thread_scratch(SCRATCH_SGEMM_A, sizeof(float) * (size_t)kcb * (size_t)((mcb + MR - 1) / MR * MR));
    for (int jc = 0; jc < N; jc += NC) {
        int nc = N - jc < NC ? N - jc : NC;
        for (int pc = 0; pc < K; pc += SG_KC) {
            int kc = K - pc < SG_KC ? K - pc : SG_KC;
            float beta_here = pc == 0 ? beta : 1.0f;
            /* op(B) rows pc.., columns jc..: B[k][j] or, transposed, B[j][k]. */
            for (int jr = 0; jr < nc; jr += NR) {
                int cols = nc - jr < NR ? nc - jr : NR;
                const float *src = tb ? B + (long)(jc + jr) * ldb + pc : B + (long)pc * ldb + jc + jr;
                k->sgemm_pack_b(bpack + (long)jr * kc, src, ldb, tb, cols, kc);
            }
            for (int ic = 0; ic < M; ic += MC) {
                int mc = M - ic < MC ? M - ic : MC;
                SgA a = sg_a_block(k, ta, N, A, lda, apack, ic, mc, pc, kc);
                for (int jr = 0; jr < nc; jr += NR) {
                    int cols = nc - jr < NR ? nc - jr : NR;
                    for (int ir = 0; ir < mc; ir += MR) {
                        int rows = mc - ir < MR ? mc - ir : MR;
                        tile(C + (long)(ic + ir) * ldc + jc + jr, ldc, rows, cols, a.a + ir * a.step, a.rs,
                               a.cs, bpack + (long)jr * kc, kc, alpha, beta_here);
                    }
                }
            }
        }
    }
}

/* ---- a B packed once (sgemm.h) ---- */

/* Panel (pc, jr) of a packed B: every k slice before pc is SG_KC deep and
 * holds all Np (N rounded up to NR) columns. */
static const float *sg_packed_panel(const float *bp, int N, int NR, int pc, int jr, int kc) {
    long np = (long)(N + NR - 1) / NR * NR;
    return bp + (long)pc * np + (long)jr * kc;
}

void sgemm_pack_b_all(float *dst, int tb, int K, int N, const float *B, int ldb) {
    const ElemKernels *k = kernels();
    int NR = k->sgemm_nr;
    for (int pc = 0; pc < K; pc += SG_KC) {
        int kc = K - pc < SG_KC ? K - pc : SG_KC;
        for (int jr = 0; jr < N; jr += NR) {
            int cols = N - jr < NR ? N - jr : NR;
            const float *src = tb ? B + (long)jr * ldb + pc : B + (long)pc * ldb + jr;
            k->sgemm_pack_b((float *)sg_packed_panel(dst, N, NR, pc, jr, kc), src, ldb, tb, cols, kc);
        }
    }
}

/* sgemm_own_tile's loops without the packing of B: the same tiles over the
 * same k slices, so the same sums. */
void sgemm_own_packed_b(int ta, int M, int N, int K, float alpha, const float *A, int lda, const float *bp, float beta,
                        float *C, int ldc, int j0, int j1) {
    if (M <= 0 || j1 <= j0) return;
    if (K <= 0) { sg_scale_only(C + j0, ldc, M, j1 - j0, beta); return; }
    const ElemKernels *k = kernels();
    const int MR = k->sgemm_mr, NR = k->sgemm_nr, MC = MR * SG_MC_PANELS;
    int mcb = M < MC ? M : MC, kcb = K < SG_KC ? K : SG_KC;
    float *apack = thread_scratch(SCRATCH_SGEMM_A, sizeof(float) * (size_t)kcb * (size_t)((mcb + MR - 1) / MR * MR));
    for (int pc = 0; pc < K; pc += SG_KC) {
        int kc = K - pc < SG_KC ? K - pc : SG_KC;
        float beta_here = pc == 0 ? beta : 1.0f;
        for (int ic = 0; ic < M; ic += MC) {
            int mc = M - ic < MC ? M - ic : MC;
            SgA a = sg_a_block(k, ta, N, A, lda, apack, ic, mc, pc, kc);
            for (int jr = j0; jr < j1; jr += NR) {
                int cols = j1 - jr < NR ? j1 - jr : NR;
                const float *panel = sg_packed_panel(bp, N, NR, pc, jr, kc);
                for (int ir = 0; ir < mc; ir += MR) {
                    int rows = mc - ir < MR ? mc - ir : MR;
                    k->sgemm_tile(C + (long)(ic + ir) * ldc + jr, ldc, rows, cols, a.a + ir * a.step, a.rs, a.cs, panel,
                                  kc, alpha, beta_here);
                }
            }
        }
    }
}

/* ---- which backend ---- */

static int g_backend = -1;

/* OpenBLAS 0.3's x86-64 cores with AVX2 or AVX-512 kernels. */
static int openblas_core_is_vector(const char *core) {
    static const char *const FAST[] = {"haswell", "zen", "skylakex", "cooperlake", "sapphirerapids"};
    for (size_t i = 0; i < sizeof FAST / sizeof FAST[0]; i++)
        if (core && strcasecmp(core, FAST[i]) == 0) return 1;
    return 0;
}

static GemmBackend gemm_choose(void) {
    const char *env = getenv("GLUE_GEMM");
    if (env && *env) {
        if (strcmp(env, "openblas") == 0) return GEMM_OPENBLAS;
        if (strcmp(env, "own") == 0) return GEMM_OWN;
        fprintf(stderr, "glue: error: GLUE_GEMM=%s is not a GEMM backend\n"
                        "  hint: GLUE_GEMM=openblas or GLUE_GEMM=own (unset: chosen from the CPU)\n", env);
        exit(2);
    }
    if (kernels_cpu_level() >= KERN_AVX2 && !openblas_core_is_vector(openblas_get_corename())) return GEMM_OWN;
    return GEMM_OPENBLAS;
}

GemmBackend gemm_backend(void) {
    if (g_backend < 0) g_backend = gemm_choose();
    return (GemmBackend)g_backend;
}

GemmBackend gemm_backend_force(GemmBackend b) {
    GemmBackend prev = gemm_backend();
    g_backend = (int)b;
    return prev;
}

const char *gemm_backend_describe(void) {
    static _Thread_local char buf[64];
    if (gemm_backend() == GEMM_OWN) snprintf(buf, sizeof buf, "own (%s)", kernels()->name);
    else snprintf(buf, sizeof buf, "openblas (%s)", openblas_get_corename());
    return buf;
}
