/* test_nn_attention.c — multi-head attention core: finite-difference gradients
 * for self, causal, cross (Tq != Tk), key-padding (lengths, incl. an empty
 * sequence, and a 0/1 mask with holes), attention dropout with a fixed mask and
 * q/k/v as views of one fused (B, T, 3C) buffer, ALiBi's distance penalty
 * (self, and causal with a key cache); forward, probabilities and gradients
 * against explicit PyTorch ops (tests/ref/attention_ref.py); ALiBi's slopes. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/rng.h"
#include "nn/attention.h"
#include "tests/gradcheck.h"
#include "tests/test.h"
#include "tests/torchref.h"

typedef struct {
    AttnDims d;
    float *q, *k, *v, *dq, *dk, *dv;   /* separate tensors, or views into qkv */
    float *qkv, *dqkv;                 /* (B, T, 3C) when fused */
    float *out, *att, *scratch;
    unsigned char *drop_mask;
    uint64_t seed;
} AttnCase;

static void attn_case_init(AttnCase *c, AttnDims d, int fused, uint64_t seed) {
    memset(c, 0, sizeof *c);
    c->d = d;
    c->seed = seed;
    long C = (long)d.NH * d.HS, nq = (long)d.B * d.Tq * C, nk = (long)d.B * d.Tk * C;
    long na = (long)d.B * d.NH * d.Tq * d.Tk;
    if (fused) {
        /* Self-attention only: q, k, v are column blocks of one row of width 3C. */
        c->qkv = malloc(4 * 3 * nq); c->dqkv = malloc(4 * 3 * nq);
        gradcheck_fill(c->qkv, 3 * nq, -1.5f, 1.5f, seed);
        c->q = c->qkv; c->k = c->qkv + C; c->v = c->qkv + 2 * C;
        c->dq = c->dqkv; c->dk = c->dqkv + C; c->dv = c->dqkv + 2 * C;
        c->d.ldq = c->d.ldk = c->d.ldv = (int)(3 * C);
    } else {
        c->q = malloc(4 * nq); c->k = malloc(4 * nk); c->v = malloc(4 * nk);
        c->dq = malloc(4 * nq); c->dk = malloc(4 * nk); c->dv = malloc(4 * nk);
        gradcheck_fill(c->q, nq, -1.5f, 1.5f, seed);
        gradcheck_fill(c->k, nk, -1.5f, 1.5f, seed + 1);
        gradcheck_fill(c->v, nk, -1.5f, 1.5f, seed + 2);
    }
    c->out = malloc(4 * nq);
    c->att = malloc(4 * na);
    c->drop_mask = malloc(na);
    c->scratch = malloc(4 * attention_scratch_size(c->d));
}

static void attn_case_free(AttnCase *c) {
    if (c->qkv) { free(c->qkv); free(c->dqkv); }
    else { free(c->q); free(c->k); free(c->v); free(c->dq); free(c->dk); free(c->dv); }
    free(c->out); free(c->att); free(c->drop_mask); free(c->scratch);
}

static void attn_case_forward(void *p) {
    AttnCase *c = p;
    Rng rng;
    rng_seed(&rng, c->seed);   /* the same dropout mask on every call */
    attention_forward(c->out, c->att, c->drop_mask, c->q, c->k, c->v, c->d, &rng, c->scratch);
}

static void attn_case_backward(void *p, const float *dout) {
    AttnCase *c = p;
    attention_backward(c->dq, c->dk, c->dv, dout, c->att, c->drop_mask, c->q, c->k, c->v, c->d, c->scratch);
}

static void attn_case_gradcheck(AttnCase *c, const char *what) {
    long C = (long)c->d.NH * c->d.HS, nq = (long)c->d.B * c->d.Tq * C, nk = (long)c->d.B * c->d.Tk * C;
    GradCheck g;
    gradcheck_init(&g, c, attn_case_forward, attn_case_backward, c->out, nq);
    if (c->qkv) {
        gradcheck_add(&g, "qkv", c->qkv, c->dqkv, 3 * nq);
    } else {
        gradcheck_add(&g, "q", c->q, c->dq, nq);
        gradcheck_add(&g, "k", c->k, c->dk, nk);
        gradcheck_add(&g, "v", c->v, c->dv, nk);
    }
    gradcheck_expect(&g, what);
}

static void attn_gradcheck_mode(const char *what, AttnDims d, int fused) {
    AttnCase c;
    attn_case_init(&c, d, fused, 90);
    attn_case_gradcheck(&c, what);
    attn_case_free(&c);
}

TEST(nn_attention_gradcheck_self) {
    attn_gradcheck_mode("self", (AttnDims){.B = 2, .Tq = 5, .Tk = 5, .NH = 2, .HS = 3}, 0);
    /* Larger heads (sampled elements, peakier softmax). */
    attn_gradcheck_mode("self HS=16", (AttnDims){.B = 2, .Tq = 16, .Tk = 16, .NH = 2, .HS = 16}, 0);
}

TEST(nn_attention_gradcheck_causal) {
    attn_gradcheck_mode("causal", (AttnDims){.B = 2, .Tq = 5, .Tk = 5, .NH = 2, .HS = 3, .causal = 1}, 0);
}

TEST(nn_attention_gradcheck_cross) {
    const int lengths[2] = {7, 4};
    attn_gradcheck_mode("cross", (AttnDims){.B = 2, .Tq = 3, .Tk = 7, .NH = 2, .HS = 4, .key_lengths = lengths}, 0);
}

TEST(nn_attention_gradcheck_padding) {
    const int lengths[3] = {5, 2, 0};   /* the empty sequence gets output 0, no gradient */
    const int mask[3 * 5] = {1, 0, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
    AttnDims d = {.B = 3, .Tq = 5, .Tk = 5, .NH = 2, .HS = 3, .key_lengths = lengths, .key_mask = mask};
    AttnCase c;
    attn_case_init(&c, d, 0, 91);
    attn_case_gradcheck(&c, "padding");
    long C = 6;
    for (int t = 0; t < 5; t++) CHECK_NEAR(c.out[(2 * 5 + t) * C + 1], 0, 0);
    CHECK_NEAR(c.att[((0 * 2 + 1) * 5 + 3) * 5 + 1], 0, 0);    /* masked hole */
    CHECK_NEAR(c.att[((1 * 2 + 0) * 5 + 0) * 5 + 2], 0, 0);    /* past the length */
    /* Keys that no query may see get exactly zero gradient: sequence 0's holes
     * (keys 1 and 4), sequence 1 past its length 2, and all of the empty sequence 2
     * (whose queries get none either). */
    const int hidden[][2] = {{0, 1}, {0, 4}, {1, 2}, {1, 3}, {1, 4}, {2, 0}, {2, 3}};
    for (unsigned i = 0; i < sizeof hidden / sizeof hidden[0]; i++)
        for (int e = 0; e < C; e++) {
            long at = ((long)hidden[i][0] * 5 + hidden[i][1]) * C + e;
            CHECK_MSG(c.dk[at] == 0 && c.dv[at] == 0, "seq %d key %d got a gradient", hidden[i][0], hidden[i][1]);
        }
    for (int e = 0; e < 5 * C; e++) CHECK_NEAR(c.dq[2 * 5 * C + e], 0, 0);
    attn_case_free(&c);
}

TEST(nn_attention_gradcheck_dropout_fused_qkv) {
    AttnDims d = {.B = 2, .Tq = 4, .Tk = 4, .NH = 2, .HS = 3, .causal = 1, .dropout = 0.25f};
    AttnCase c;
    attn_case_init(&c, d, 1, 92);
    attn_case_gradcheck(&c, "dropout + fused qkv");
    long na = 2 * 2 * 4 * 4;
    int dropped = 0;
    for (long i = 0; i < na; i++) dropped += !c.drop_mask[i];
    CHECK_MSG(dropped > 0 && dropped < na, "dropout dropped %d of %ld", dropped, na);
    attn_case_free(&c);
}

/* Slopes for the heads of a test (any values: the op must not assume the
 * geometric sequence). */
static const float test_alibi[4] = {0.9f, 0.35f, 0.05f, 0.0f};

TEST(nn_attention_gradcheck_alibi) {
    const int lengths[2] = {6, 4};
    attn_gradcheck_mode("alibi", (AttnDims){.B = 2, .Tq = 6, .Tk = 6, .NH = 2, .HS = 3, .key_lengths = lengths,
                                            .alibi = test_alibi}, 0);
    attn_gradcheck_mode("alibi causal Tq<Tk", (AttnDims){.B = 2, .Tq = 3, .Tk = 6, .NH = 2, .HS = 3, .causal = 1,
                                                         .alibi = test_alibi}, 0);
}

/* The penalty itself: with q = 0 the scores are all 0, so the probabilities
 * are exactly softmax(-slope |i - j|) over the visible keys. */
TEST(nn_attention_alibi_penalty) {
    AttnDims d = {.B = 1, .Tq = 4, .Tk = 4, .NH = 2, .HS = 2, .alibi = test_alibi};
    AttnCase c;
    attn_case_init(&c, d, 0, 95);
    memset(c.q, 0, 4 * 4 * 4);
    attn_case_forward(&c);
    for (int h = 0; h < 2; h++)
        for (int i = 0; i < 4; i++) {
            double z = 0;
            for (int j = 0; j < 4; j++) z += exp(-test_alibi[h] * abs(i - j));
            for (int j = 0; j < 4; j++)
                CHECK_NEAR(c.att[(h * 4 + i) * 4 + j], exp(-test_alibi[h] * abs(i - j)) / z, 1e-6);
        }
    attn_case_free(&c);
    /* glue's slopes: 2^(-8h/(NH-1)), from 1 down to 1/256; one head 1/16. */
    float s[9];
    attention_alibi_slopes(s, 1);
    CHECK_NEAR(s[0], 1.0 / 16, 0);
    attention_alibi_slopes(s, 2);
    CHECK_NEAR(s[0], 1.0, 0);
    CHECK_NEAR(s[1], 1.0 / 256, 0);
    attention_alibi_slopes(s, 9);
    for (int h = 0; h < 9; h++) CHECK_NEAR(s[h], 1.0 / (1 << h), 0);
}

/* Forward output, probabilities and gradients of sum(out * R) against PyTorch. */
static void attn_compare_torch(const char *what, AttnDims d, const int *lengths, const int *mask) {
    d.key_lengths = lengths;
    d.key_mask = mask;
    AttnCase c;
    attn_case_init(&c, d, 0, 93);
    long C = (long)d.NH * d.HS, nq = (long)d.B * d.Tq * C, nk = (long)d.B * d.Tk * C;
    long na = (long)d.B * d.NH * d.Tq * d.Tk;
    float *r = malloc(4 * nq), *flen = calloc(d.B, 4), *fmask = calloc(d.B * d.Tk, 4);
    float *ro = malloc(4 * nq), *ra = malloc(4 * na), *rdq = malloc(4 * nq), *rdk = malloc(4 * nk), *rdv = malloc(4 * nk);
    gradcheck_fill(r, nq, -1, 1, 94);
    for (int b = 0; b < d.B; b++) flen[b] = lengths ? (float)lengths[b] : 0;
    for (int i = 0; i < d.B * d.Tk; i++) fmask[i] = mask ? (float)mask[i] : 0;
    float falibi[8] = {0};
    for (int h = 0; h < d.NH && d.alibi; h++) falibi[h] = d.alibi[h];
    RefTensor in[] = {{"q", c.q, nq}, {"k", c.k, nk}, {"v", c.v, nk}, {"r", r, nq},
                      {"key_lengths", flen, d.B}, {"key_mask", fmask, (long)d.B * d.Tk}, {"alibi", falibi, d.NH}};
    RefTensor out[] = {{"out", ro, nq}, {"att", ra, na}, {"dq", rdq, nq}, {"dk", rdk, nk}, {"dv", rdv, nk}};
    char args[96];
    snprintf(args, sizeof args, "%d %d %d %d %d %d %d %d %d", d.B, d.Tq, d.Tk, d.NH, d.HS, d.causal,
             lengths != NULL, mask != NULL, d.alibi != NULL);
    if (torchref_run("attention_ref.py", args, in, 7, out, 5) == 1) {
        attn_case_forward(&c);
        memset(c.dq, 0, 4 * nq); memset(c.dk, 0, 4 * nk); memset(c.dv, 0, 4 * nk);
        attn_case_backward(&c, r);
        const float *mine[] = {c.out, c.att, c.dq, c.dk, c.dv};
        const double tol[] = {2e-6, 1e-6, 2e-6, 2e-6, 2e-6};   /* measured: <= 2.4e-7 */
        for (int i = 0; i < 5; i++) {
            double diff = torchref_max_diff(mine[i], out[i].data, out[i].n);
            CHECK_MSG(diff < tol[i], "%s %s: max diff %g", what, out[i].name, diff);
        }
    }
    free(r); free(flen); free(fmask); free(ro); free(ra); free(rdq); free(rdk); free(rdv);
    attn_case_free(&c);
}

TEST(nn_attention_matches_torch) {
    const int lengths[3] = {9, 4, 7};
    const int mask[3 * 9] = {1, 1, 0, 1, 1, 1, 1, 0, 1,  1, 1, 1, 1, 0, 0, 0, 0, 0,  0, 1, 1, 1, 1, 1, 1, 1, 1};
    attn_compare_torch("self+padding", (AttnDims){.B = 3, .Tq = 9, .Tk = 9, .NH = 4, .HS = 8}, lengths, mask);
    attn_compare_torch("causal", (AttnDims){.B = 2, .Tq = 9, .Tk = 9, .NH = 3, .HS = 5, .causal = 1}, NULL, NULL);
    attn_compare_torch("cross", (AttnDims){.B = 3, .Tq = 4, .Tk = 9, .NH = 2, .HS = 6}, lengths, NULL);
    /* Decoding with a key/value cache: the last Tq of Tk positions, causal. */
    attn_compare_torch("causal Tq<Tk", (AttnDims){.B = 2, .Tq = 3, .Tk = 7, .NH = 2, .HS = 4, .causal = 1}, NULL, NULL);
    attn_compare_torch("alibi+padding", (AttnDims){.B = 3, .Tq = 9, .Tk = 9, .NH = 4, .HS = 8, .alibi = test_alibi},
                       lengths, mask);
    attn_compare_torch("alibi causal Tq<Tk", (AttnDims){.B = 2, .Tq = 3, .Tk = 7, .NH = 2, .HS = 4, .causal = 1,
                                                        .alibi = test_alibi}, NULL, NULL);
}
