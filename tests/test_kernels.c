/* test_kernels.c — core/kernels: every CPU-specific build of the hot loops
 * (AVX2, AVX-512) gives the portable build's numbers on the same inputs, at every level this CPU
 * runs, so a CPU-specific path cannot drift unseen. And the level choice:
 * GLUE_KERNELS lowers it, an unknown name is refused, `glue --version` names it.
 *
 * Tolerances, from how the builds differ:
 *   - element-wise kernels (add, add_rows, masked scale, scale, GELU and its backward,
 *     AdamW): EQUAL bit for bit. Each element goes through the
 *     same IEEE operations in the same order at every width (-std=c11 means
 *     -ffp-contract=off: no FMA contraction; sqrt and division are correctly
 *     rounded in vector form too);
 *   - kernels with a sum (softmax, LayerNorm, its backward, softmax backward,
 *     the MLM cross-entropy, the sum of squares): the lanes add in a different
 *     order. Reordering a
 *     float sum of n terms moves it by at most about n * 2^-24 of the sum of
 *     their magnitudes; the tolerances below are that bound (times 2 for the
 *     two sides) scaled to what each output depends on, and so they do not
 *     hide a wrong element, which is off by O(1) of the scale;
 *   - our fp32 GEMM's levels: tests/test_sgemm.c, each against the exact product;
 *   - the bf16 GEMM (AVX512-BF16 only): tests/test_gemm_bf16.c, against the exact
 *     product of the rounded operands. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/kernels.h"
#include "core/rng.h"
#include "tests/test.h"

static const double ULP = 0x1p-24;
static const int LENGTHS[] = {1, 3, 8, 17, 33, 128, 515, 1000};
enum { NLEN = sizeof LENGTHS / sizeof LENGTHS[0], MAXN = 1000 };

static void fill(float *a, long n, float scale, Rng *r) {
    for (long i = 0; i < n; i++) a[i] = scale * rng_normal(r);
}

/* max |a - b| (b NULL: max |a|), or INFINITY when one has a NaN where the other has not. */
static double max_diff_or_abs(const float *a, const float *b, long n) {
    double m = 0;
    for (long i = 0; i < n; i++) {
        float o = b ? b[i] : 0.0f;
        if (isnan(a[i]) != isnan(o)) return INFINITY;
        m = isnan(a[i]) ? m : fmax(m, fabs((double)a[i] - o));
    }
    return m;
}
#define max_abs(a, n) max_diff_or_abs(a, NULL, n)
#define max_diff(a, b, n) max_diff_or_abs(a, b, n)

#define CHECK_SAME(a, b, n, what, lvl, len)                                                                  \
    CHECK_MSG(memcmp(a, b, sizeof(float) * (size_t)(n)) == 0, "%s at %s, n %d: differs from portable by %g", \
              what, lvl, len, max_diff(a, b, n))

/* One level's element-wise kernels against the portable ones. */
static void compare_elementwise(const ElemKernels *k, const ElemKernels *p) {
    Rng r;
    rng_seed(&r, 19);
    float x[MAXN], y0[MAXN], a[MAXN], b[MAXN], a2[MAXN], b2[MAXN], m0[MAXN], v0[MAXN];
    unsigned char mask[MAXN];
    for (int li = 0; li < NLEN; li++) {
        int n = LENGTHS[li];
        fill(x, n, 3.0f, &r);
        fill(y0, n, 1.0f, &r);
        for (int i = 0; i < n; i++) mask[i] = rng_below(&r, 10) != 0;
        x[0] = n > 1 ? -30.0f : x[0];   /* deep in GELU's left tail */

        memcpy(a, y0, sizeof a); memcpy(b, y0, sizeof b);
        k->add(a, x, n); p->add(b, x, n);
        CHECK_SAME(a, b, n, "add", k->name, n);
        memcpy(a, y0, sizeof a); memcpy(b, y0, sizeof b);
        int rows = n >= 3 ? 3 : 1, cols = n - rows + 1;   /* overlapping rows of x, stride 1 */
        k->add_rows(a, x, rows, 1, cols); p->add_rows(b, x, rows, 1, cols);
        CHECK_SAME(a, b, n, "add_rows", k->name, n);
        k->masked_scale(a, x, mask, 1.25f, n); p->masked_scale(b, x, mask, 1.25f, n);
        CHECK_SAME(a, b, n, "masked_scale", k->name, n);
        memcpy(a, y0, sizeof a); memcpy(b, y0, sizeof b);
        k->masked_scale_add(a, x, mask, 1.25f, n); p->masked_scale_add(b, x, mask, 1.25f, n);
        CHECK_SAME(a, b, n, "masked_scale_add", k->name, n);
        memcpy(a, y0, sizeof a); memcpy(b, y0, sizeof b);
        k->bias_gelu(a, a2, x, n); p->bias_gelu(b, b2, x, n);
        CHECK_SAME(a, b, n, "bias_gelu pre", k->name, n);
        CHECK_SAME(a2, b2, n, "bias_gelu act", k->name, n);
        memcpy(a, y0, sizeof a); memcpy(b, y0, sizeof b);
        k->gelu_backward_inplace(a, x, n); p->gelu_backward_inplace(b, x, n);
        CHECK_SAME(a, b, n, "gelu_backward", k->name, n);

        AdamwCoef c = {.decay_mul = 0.999f, .beta1 = 0.9f, .one_beta1 = 0.1f, .beta2 = 0.999f,
                       .one_beta2 = 0.001f, .step_size = 1e-3f, .bc2_sqrt = 0.3f, .eps = 1e-8f};
        for (int i = 0; i < n; i++) { m0[i] = 0.1f * rng_normal(&r); v0[i] = 0.01f * fabsf(rng_normal(&r)); }
        float xa[MAXN], xb[MAXN], ma[MAXN], mb[MAXN], va[MAXN], vb[MAXN];
        memcpy(xa, y0, sizeof xa); memcpy(xb, y0, sizeof xb);
        memcpy(ma, m0, sizeof ma); memcpy(mb, m0, sizeof mb);
        memcpy(va, v0, sizeof va); memcpy(vb, v0, sizeof vb);
        k->adamw(xa, x, ma, va, n, c); p->adamw(xb, x, mb, vb, n, c);
        CHECK_SAME(xa, xb, n, "adamw x", k->name, n);
        CHECK_SAME(ma, mb, n, "adamw m", k->name, n);
        CHECK_SAME(va, vb, n, "adamw v", k->name, n);
        memcpy(a, x, sizeof a); memcpy(b, x, sizeof b);
        k->scale(a, n, 0.3f); p->scale(b, n, 0.3f);
        CHECK_SAME(a, b, n, "scale", k->name, n);
    }
}

/* One level's kernels with sums against the portable ones. */
static void compare_reductions(const ElemKernels *k, const ElemKernels *p) {
    Rng r;
    rng_seed(&r, 23);
    float x[MAXN], g[MAXN], gam[MAXN], bet[MAXN], a[MAXN], b[MAXN];
    for (int li = 0; li < NLEN; li++) {
        int n = LENGTHS[li];
        double tol = 2.0 * (n + 2) * ULP;   /* relative to each output's scale (header) */
        fill(x, n, 4.0f, &r);
        fill(g, n, 1.0f, &r);
        fill(gam, n, 1.0f, &r);
        fill(bet, n, 1.0f, &r);

        /* sum of squares in double: reordering n double terms moves it by n 2^-53 relative. */
        double qa = k->sumsq(x, n), qb = p->sumsq(x, n);
        CHECK_MSG(fabs(qa - qb) <= (n + 2) * 0x1p-52 * qb, "sumsq at %s, n %d: %.17g %.17g", k->name, n, qa, qb);

        /* softmax: p_i = e_i / sum; the sum's order moves every p_i by <= tol relative. */
        memcpy(a, x, sizeof a); memcpy(b, x, sizeof b);
        if (n > 2) a[1] = b[1] = -INFINITY;   /* a masked key */
        k->softmax_row(a, n); p->softmax_row(b, n);
        CHECK_MSG(max_diff(a, b, n) <= tol * max_abs(b, n) && (n <= 2 || a[1] == 0.0f),
                  "softmax_row at %s, n %d: %g", k->name, n, max_diff(a, b, n));

        /* the MLM cross-entropy row: max exact, sum and gradient within tol relative. */
        float mxa, mxb;
        float sa = k->xent_row(a, x, n, 7, &mxa), sb = p->xent_row(b, x, n, 7, &mxb);
        CHECK_MSG(mxa == mxb && fabs((double)sa - sb) <= tol * sb && max_diff(a, b, n) <= tol * max_abs(b, n),
                  "xent_row at %s, n %d: sums %.9g %.9g, gradient %g", k->name, n, sa, sb, max_diff(a, b, n));
        CHECK_MSG(fabsf(k->xent_row(NULL, x, n, 7, &mxa) - sb) <= tol * sb, "xent_row (no gradient) at %s", k->name);
        /* ELECTRA's sampler's block sums: the same sum of exps from a given max. */
        CHECK_MSG(fabsf(k->exp_sum(x, n, mxb) - sb) <= tol * sb && fabsf(p->exp_sum(x, n, mxb) - sb) <= tol * sb,
                  "exp_sum at %s, n %d: %.9g vs %.9g", k->name, n, k->exp_sum(x, n, mxb), sb);

        /* LayerNorm: mean and variance summed in double; y = (x - m) rs gamma + beta
         * within a few float roundings of |x - m| rs |gamma| + |beta|. */
        float ma, mb, ra, rb;
        k->layernorm_row(a, &ma, &ra, x, gam, bet, n, 1e-12f);
        p->layernorm_row(b, &mb, &rb, x, gam, bet, n, 1e-12f);
        double lscale = 0;
        for (int i = 0; i < n; i++) lscale = fmax(lscale, fabs((x[i] - mb) * rb * gam[i]) + fabs(bet[i]));
        CHECK_MSG(fabsf(ma - mb) <= 4 * ULP * max_abs(x, n) && fabsf(ra - rb) <= 4 * ULP * rb &&
                      max_diff(a, b, n) <= 8 * ULP * lscale,
                  "layernorm_row at %s, n %d: mean %g/%g rstd %g/%g y %g", k->name, n, ma, mb, ra, rb,
                  max_diff(a, b, n));

        /* Its backward: o = rs (g - mean(g) - xhat mean(g xhat)), the two means
         * float sums; sg, sb element-wise (equal). */
        float sga[MAXN] = {0}, sgb[MAXN] = {0}, sba[MAXN] = {0}, sbb[MAXN] = {0};
        k->layernorm_backward_row(a, sga, sba, g, x, gam, mb, rb, n);
        p->layernorm_backward_row(b, sgb, sbb, g, x, gam, mb, rb, n);
        double sum_g = 0, sum_gx = 0, xhat_max = 0;
        for (int i = 0; i < n; i++) {
            double xh = (x[i] - mb) * rb;
            sum_g += fabs(g[i] * gam[i]);
            sum_gx += fabs(g[i] * gam[i] * xh);
            xhat_max = fmax(xhat_max, fabs(xh));
        }
        double bscale = rb * (sum_g / n + xhat_max * sum_gx / n) + max_abs(b, n);
        CHECK_MSG(max_diff(a, b, n) <= tol * bscale, "layernorm_backward_row at %s, n %d: %g (scale %g)", k->name,
                  n, max_diff(a, b, n), bscale);
        CHECK_SAME(sga, sgb, n, "layernorm_backward_row dgamma", k->name, n);
        CHECK_SAME(sba, sbb, n, "layernorm_backward_row dbeta", k->name, n);

        /* softmax backward: g_i = p_i (g_i - dot); dot a float sum. */
        float prob[MAXN];
        memcpy(prob, x, sizeof prob);
        p->softmax_row(prob, n);
        memcpy(a, g, sizeof a); memcpy(b, g, sizeof b);
        k->softmax_backward_row(a, prob, n);
        p->softmax_backward_row(b, prob, n);
        double dot_mag = 0;
        for (int i = 0; i < n; i++) dot_mag += fabs(g[i] * prob[i]);
        double sscale = max_abs(prob, n) * dot_mag + max_abs(b, n);
        CHECK_MSG(max_diff(a, b, n) <= tol * sscale, "softmax_backward_row at %s, n %d: %g", k->name, n,
                  max_diff(a, b, n));
    }
}

TEST(kernels_cpu_builds_match_portable) {
    const ElemKernels *p = kernels_at(KERN_PORTABLE);
    CHECK(p != NULL && strcmp(p->name, "portable") == 0);
    int compared = 0;
    for (int l = KERN_AVX2; l <= (int)KERN_AVX512; l++) {
        const ElemKernels *k = kernels_at((KernLevel)l);
        if (!k) continue;   /* this CPU cannot run it */
        CHECK(strcmp(k->name, kernels_level_name((KernLevel)l)) == 0);
        compare_elementwise(k, p);
        compare_reductions(k, p);
        compared++;
    }
    /* The portable build against itself too: the checks must hold trivially. */
    compare_elementwise(p, p);
    printf("  compared %d CPU-specific level(s) with the portable one (CPU up to %s)\n", compared,
           kernels_level_name(kernels_cpu_level()));
}

TEST(kernels_level_choice) {
    int st;
    char cmd[512];
    snprintf(cmd, sizeof cmd, "GLUE_KERNELS=portable %s --version 2>&1", test_glue_bin());
    char *out = test_run(cmd, &st);
    CHECK_MSG(st == 0 && strstr(out, "kernels: portable") && strstr(out, "cpu: "), "%s", out);
    free(out);
    snprintf(cmd, sizeof cmd, "GLUE_KERNELS=avx3 %s --version 2>&1", test_glue_bin());
    out = test_run(cmd, &st);
    CHECK_MSG(st != 0 && strstr(out, "GLUE_KERNELS=avx3") && strstr(out, "hint:"), "%s", out);
    free(out);
    snprintf(cmd, sizeof cmd, "env -u GLUE_KERNELS %s --version 2>&1", test_glue_bin());
    out = test_run(cmd, &st);
    char want[64];
    /* the CPU's level, but avx512 where its bf16 dot product is slower than FMAs */
    KernLevel deflt = kernels_cpu_level() == KERN_AVX512BF16 && !kernels_bf16_dot_fast() ? KERN_AVX512
                                                                                         : kernels_cpu_level();
    snprintf(want, sizeof want, "kernels: %s ", kernels_level_name(deflt));
    CHECK_MSG(st == 0 && strstr(out, want), "want '%s' in: %s", want, out);
    free(out);
    /* Forcing in-process: a level the CPU has is taken, and restored. */
    KernLevel prev = kernels_force(KERN_PORTABLE);
    CHECK(kernels_level() == KERN_PORTABLE && kernels() == kernels_at(KERN_PORTABLE));
    kernels_force(prev);
    CHECK(kernels_level() == prev);
}
