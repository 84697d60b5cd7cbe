/* test_bert_transformer.c — the post-LN transformer sublayers (nn/transformer.h)
 * by finite differences: self-attention with key padding, causal
 * self-attention with hidden and attention dropout (fixed masks), cross-
 * attention over a padded memory (the decoder's), the FFN; and that a
 * BlockAttnCore replaces the attention core. The full BERT stack is compared
 * with PyTorch in test_bert.c. */
#include "tests/test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/fastmath.h"
#include "core/rng.h"
#include "nn/transformer.h"
#include "tests/gradcheck.h"

typedef struct {
    BlockDims d;
    int kind;                   /* 0 self-attention, 1 cross-attention, 2 FFN */
    int dropout;                /* pass an Rng (same seed every call: fixed masks) */
    float *x, *dx, *mem, *dmem; /* (B, T, C), (B, Tk, C) */
    float *w[6], *g[6];         /* the sublayer's six tensors and their gradients */
    long wn[6];
    BlockAttnActs a;
    BlockFfnActs f;
    float *scratch;
} BlockCase;

static BlockAttnParams block_attn_view(float **p) {
    return (BlockAttnParams){.w_qkv = p[0], .b_qkv = p[1], .w_o = p[2], .b_o = p[3], .ln_g = p[4], .ln_b = p[5]};
}
static BlockFfnParams block_ffn_view(float **p) {
    return (BlockFfnParams){.w_in = p[0], .b_in = p[1], .w_out = p[2], .b_out = p[3], .ln_g = p[4], .ln_b = p[5]};
}

static void block_case_init(BlockCase *c, BlockDims d, int kind, int dropout, uint64_t seed) {
    memset(c, 0, sizeof *c);
    c->d = d;
    c->kind = kind;
    c->dropout = dropout;
    long C = d.C, N = (long)d.B * d.T, NK = (long)d.B * d.Tk;
    c->x = malloc(sizeof(float) * N * C);
    c->dx = malloc(sizeof(float) * N * C);
    gradcheck_fill(c->x, N * C, -1.0f, 1.0f, seed);
    if (kind == 1) {
        c->mem = malloc(sizeof(float) * NK * C);
        c->dmem = malloc(sizeof(float) * NK * C);
        gradcheck_fill(c->mem, NK * C, -1.0f, 1.0f, seed + 1);
    }
    if (kind == 2) {
        long n[6] = {d.FF * C, d.FF, C * d.FF, C, C, C};
        memcpy(c->wn, n, sizeof n);
    } else {
        long n[6] = {3 * C * C, 3 * C, C * C, C, C, C};
        memcpy(c->wn, n, sizeof n);
    }
    for (int i = 0; i < 6; i++) {
        c->w[i] = malloc(sizeof(float) * c->wn[i]);
        c->g[i] = malloc(sizeof(float) * c->wn[i]);
        float a = i == 4 ? 0.3f : 0.5f;
        gradcheck_fill(c->w[i], c->wn[i], i == 4 ? 0.7f : -a, i == 4 ? 1.3f : a, seed + 10 + (uint64_t)i);
    }
    if (kind == 2) block_ffn_acts_init(&c->f, &d);
    else block_attn_acts_init(&c->a, &d, kind == 1);
    c->scratch = malloc(sizeof(float) * block_scratch_floats(&d));
}

static void block_case_free(BlockCase *c) {
    free(c->x); free(c->dx); free(c->mem); free(c->dmem); free(c->scratch);
    for (int i = 0; i < 6; i++) { free(c->w[i]); free(c->g[i]); }
    if (c->kind == 2) block_ffn_acts_free(&c->f);
    else block_attn_acts_free(&c->a);
}

static float *block_case_out(BlockCase *c) { return c->kind == 2 ? c->f.out : c->a.out; }

static void block_case_forward(void *p) {
    BlockCase *c = p;
    Rng rng;
    rng_seed(&rng, 77);
    Rng *r = c->dropout ? &rng : NULL;
    if (c->kind == 0) {
        BlockAttnParams w = block_attn_view(c->w);
        block_self_attn_forward(&c->a, c->x, &w, &c->d, r, c->scratch);
    } else if (c->kind == 1) {
        BlockAttnParams w = block_attn_view(c->w);
        block_cross_attn_forward(&c->a, c->x, c->mem, &w, &c->d, r, c->scratch);
    } else {
        BlockFfnParams w = block_ffn_view(c->w);
        block_ffn_forward(&c->f, c->x, &w, &c->d, r, c->scratch);
    }
}

/* dx is written by the sublayer; the checker zeroed it, so written == added. */
static void block_case_backward(void *p, const float *dy) {
    BlockCase *c = p;
    if (c->kind == 0) {
        BlockAttnParams w = block_attn_view(c->w), g = block_attn_view(c->g);
        block_self_attn_backward(c->dx, &g, dy, &c->a, c->x, &w, &c->d, c->scratch);
    } else if (c->kind == 1) {
        BlockAttnParams w = block_attn_view(c->w), g = block_attn_view(c->g);
        block_cross_attn_backward(c->dx, c->dmem, &g, dy, &c->a, c->x, c->mem, &w, &c->d, c->scratch);
    } else {
        BlockFfnParams w = block_ffn_view(c->w), g = block_ffn_view(c->g);
        block_ffn_backward(c->dx, &g, dy, &c->f, c->x, &w, &c->d, c->scratch);
    }
}

static void block_gradcheck(const char *what, BlockDims d, int kind, int dropout) {
    static const char *const attn_names[6] = {"w_qkv", "b_qkv", "w_o", "b_o", "ln_g", "ln_b"};
    static const char *const ffn_names[6] = {"w_in", "b_in", "w_out", "b_out", "ln_g", "ln_b"};
    BlockCase c;
    block_case_init(&c, d, kind, dropout, 40 + (uint64_t)kind);
    block_case_forward(&c);
    GradCheck g;
    gradcheck_init(&g, &c, block_case_forward, block_case_backward, block_case_out(&c), (long)d.B * d.T * d.C);
    gradcheck_add(&g, "x", c.x, c.dx, (long)d.B * d.T * d.C);
    if (kind == 1) gradcheck_add(&g, "mem", c.mem, c.dmem, (long)d.B * d.Tk * d.C);
    for (int i = 0; i < 6; i++) gradcheck_add(&g, kind == 2 ? ffn_names[i] : attn_names[i], c.w[i], c.g[i], c.wn[i]);
    gradcheck_expect(&g, what);
    block_case_free(&c);
}

TEST(transformer_gradcheck_self_attention_padding) {
    const int lengths[2] = {5, 3};
    block_gradcheck("self", (BlockDims){.B = 2, .T = 5, .C = 8, .NH = 2, .FF = 16, .eps = 1e-12f, .lengths = lengths}, 0, 0);
}

TEST(transformer_gradcheck_causal_dropout) {
    BlockDims d = {.B = 2, .T = 4, .C = 8, .NH = 2, .FF = 16, .eps = 1e-5f, .causal = 1, .hidden_dropout = 0.2f,
                .attn_dropout = 0.25f};
    block_gradcheck("causal + dropout", d, 0, 1);
}

TEST(transformer_gradcheck_cross_attention) {
    const int mem_lengths[2] = {6, 4};
    BlockDims d = {.B = 2, .T = 3, .Tk = 6, .C = 8, .NH = 2, .FF = 16, .eps = 1e-12f, .mem_lengths = mem_lengths,
                .hidden_dropout = 0.1f, .attn_dropout = 0.1f};
    block_gradcheck("cross", d, 1, 1);
    block_gradcheck("cross, no dropout", d, 1, 0);
}

TEST(transformer_gradcheck_ffn) {
    BlockDims d = {.B = 2, .T = 3, .C = 8, .NH = 2, .FF = 32, .eps = 1e-12f, .hidden_dropout = 0.2f};
    block_gradcheck("ffn", d, 2, 0);
    block_gradcheck("ffn + dropout", d, 2, 1);
}

/* ---- the attention-core hook: a core that runs nn/attention and counts ---- */

typedef struct { int forwards, backwards; } CoreCount;

static long count_scratch(void *ctx, AttnDims d) { (void)ctx; return attention_scratch_size(d); }
static void count_forward(void *ctx, float *out, float *att, unsigned char *mask, const float *q, const float *k,
                          const float *v, AttnDims d, Rng *rng, float *scratch) {
    ((CoreCount *)ctx)->forwards++;
    attention_forward(out, att, mask, q, k, v, d, rng, scratch);
}
static void count_backward(void *ctx, float *dq, float *dk, float *dv, const float *dout, const float *att,
                           const unsigned char *mask, const float *q, const float *k, const float *v, AttnDims d,
                           float *scratch) {
    ((CoreCount *)ctx)->backwards++;
    attention_backward(dq, dk, dv, dout, att, mask, q, k, v, d, scratch);
}

TEST(transformer_attention_core_hook) {
    const int lengths[2] = {4, 2};
    BlockDims d = {.B = 2, .T = 4, .C = 8, .NH = 2, .FF = 16, .eps = 1e-12f, .lengths = lengths};
    BlockCase plain, hooked;
    block_case_init(&plain, d, 0, 0, 50);
    CoreCount cnt = {0, 0};
    BlockAttnCore core = {&cnt, count_scratch, count_forward, count_backward};
    d.core = &core;
    block_case_init(&hooked, d, 0, 0, 50);
    block_case_forward(&plain);
    block_case_forward(&hooked);
    long n = 2L * 4 * 8;
    CHECK(memcmp(plain.a.out, hooked.a.out, sizeof(float) * n) == 0);
    float *dy = malloc(sizeof(float) * n);
    gradcheck_fill(dy, n, -1, 1, 3);
    for (int i = 0; i < 6; i++) memset(hooked.g[i], 0, sizeof(float) * hooked.wn[i]);
    block_case_backward(&hooked, dy);
    CHECK_EQ_INT(cnt.forwards, 1);
    CHECK_EQ_INT(cnt.backwards, 1);
    free(dy);
    block_case_free(&plain);
    block_case_free(&hooked);
}

/* The vectorisable math against libm (double precision): relative error of
 * e^x over the range softmax uses, and of Phi(x) = 0.5 erfc(-x / sqrt 2)
 * including the left tail, where 1 + erf(x) would lose every digit. */
TEST(transformer_fast_math_accuracy) {
    double worst_exp = 0, worst_cdf = 0;
    for (int i = 0; i <= 200000; i++) {
        float x = -87.0f + 87.0f * (float)i / 200000.0f;   /* softmax arguments are <= 0 */
        double e = exp((double)x), rel = fabs(fast_expf(x) - e) / e;
        worst_exp = rel > worst_exp ? rel : worst_exp;
    }
    /* Float rounding of the exponent argument -x^2/2 costs digits as |x| grows:
     * bands [-12,-5) (Phi < 3e-7, GELU < 1.5e-6 in size), [-5,-2), [-2,12]. */
    const float edge[4] = {-12.0f, -5.0f, -2.0f, 12.0f};
    const double limit[3] = {2e-5, 2e-6, 6e-7};
    for (int band = 0; band < 3; band++) {
        double worst = 0;
        for (int i = 0; i <= 100000; i++) {
            float x = edge[band] + (edge[band + 1] - edge[band]) * (float)i / 100000.0f;
            double p = 0.5 * erfc(-(double)x / sqrt(2.0)), rel = fabs(normal_cdf(x) - p) / p;
            worst = rel > worst ? rel : worst;
        }
        CHECK_MSG(worst < limit[band], "normal_cdf on [%g, %g]: worst relative error %g", edge[band],
                  edge[band + 1], worst);
        worst_cdf = worst;
    }
    printf("  fast_expf worst rel err %.2g; normal_cdf on [-2, 12] %.2g\n", worst_exp, worst_cdf);
    CHECK_MSG(worst_exp < 3e-7, "fast_expf: worst relative error %g", worst_exp);
    CHECK_NEAR(fast_expf(0.0f), 1.0f, 0);
    CHECK(fast_expf(-1000.0f) >= 0.0f && fast_expf(-1000.0f) < 1e-37f);
    CHECK_NEAR(normal_cdf(0.0f), 0.5, 1e-7);
}
