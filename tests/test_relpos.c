/* test_relpos.c — relative-position attention with log-bucketed distances
 * (nn/relpos.h through nn/attention.h): the bucket function on exact values,
 * finite-difference gradients of q, k, v and both tables (self, causal with
 * padding and dropout, key-only, value-only, a cached decoding step Tq < Tk),
 * base 1 = plain attention plus a^V, a cached step = the matching row of the
 * full causal computation, and forward + all gradients against the direct
 * PyTorch formulation (tests/ref/relpos_ref.py). */
#include <stdlib.h>
#include <string.h>

#include "nn/attention.h"
#include "nn/relpos.h"
#include "core/rng.h"
#include "tests/gradcheck.h"
#include "tests/test.h"
#include "tests/torchref.h"

TEST(relpos_bucket_values) {
    /* k = 4: distance 0 | 1..3 | 4..15 | 16..63 -> 0 | 1 | 2 | 3, signed. */
    const int d4[] = {0, 1, 2, 3, 4, 15, 16, 63, 64, -1, -3, -4, -16};
    const int s4[] = {0, 1, 1, 1, 2, 2, 3, 3, 4, -1, -1, -2, -3};
    for (unsigned i = 0; i < sizeof d4 / sizeof *d4; i++)
        CHECK_MSG(relpos_bucket(d4[i], 4, 10) == s4[i], "k=4 d=%d: %d, want %d", d4[i], relpos_bucket(d4[i], 4, 10), s4[i]);
    /* k = 2: ceil(log2(|d| + 1)). */
    const int d2[] = {1, 2, 3, 4, 7, 8, -2};
    const int s2[] = {1, 2, 2, 3, 3, 4, -2};
    for (unsigned i = 0; i < sizeof d2 / sizeof *d2; i++)
        CHECK_MSG(relpos_bucket(d2[i], 2, 10) == s2[i], "k=2 d=%d: %d, want %d", d2[i], relpos_bucket(d2[i], 2, 10), s2[i]);
    /* Clipping, and k = 1: one bucket. */
    CHECK_EQ_INT(relpos_bucket(1000, 2, 3), 3);
    CHECK_EQ_INT(relpos_bucket(-1000, 2, 3), -3);
    CHECK_EQ_INT(relpos_bucket(17, 1, 5), 0);
    CHECK_EQ_INT(relpos_bucket(-17, 1, 5), 0);
    CHECK_EQ_INT(relpos_max_bucket(255, 4), 4);   /* 4^4 = 256 >= 256 */
    CHECK_EQ_INT(relpos_max_bucket(256, 4), 5);
    CHECK_EQ_INT(relpos_max_bucket(100, 1), 0);
    CHECK_EQ_INT(relpos_max_bucket(0, 4), 0);
}

typedef struct {
    AttnDims d;
    RelPos rp;
    float *q, *k, *v, *dq, *dk, *dv, *ak, *av, *dak, *dav;
    float *out, *att, *scratch;
    unsigned char *drop_mask;
    uint64_t seed;
} RelCase;

static void rel_case_init(RelCase *c, AttnDims d, int base, int S, int use_k, int use_v, uint64_t seed) {
    memset(c, 0, sizeof *c);
    long C = (long)d.NH * d.HS, nq = (long)d.B * d.Tq * C, nk = (long)d.B * d.Tk * C;
    long na = (long)d.B * d.NH * d.Tq * d.Tk, nt = (2L * S + 1) * d.HS;
    c->seed = seed;
    c->q = malloc(4 * nq); c->k = malloc(4 * nk); c->v = malloc(4 * nk);
    c->dq = calloc(nq, 4); c->dk = calloc(nk, 4); c->dv = calloc(nk, 4);
    c->ak = malloc(4 * nt); c->av = malloc(4 * nt); c->dak = calloc(nt, 4); c->dav = calloc(nt, 4);
    gradcheck_fill(c->q, nq, -1.5f, 1.5f, seed);
    gradcheck_fill(c->k, nk, -1.5f, 1.5f, seed + 1);
    gradcheck_fill(c->v, nk, -1.5f, 1.5f, seed + 2);
    gradcheck_fill(c->ak, nt, -1.5f, 1.5f, seed + 3);
    gradcheck_fill(c->av, nt, -1.5f, 1.5f, seed + 4);
    c->rp = (RelPos){.base = base, .max_bucket = S, .ak = use_k ? c->ak : NULL, .av = use_v ? c->av : NULL,
                     .dak = use_k ? c->dak : NULL, .dav = use_v ? c->dav : NULL};
    c->d = d;
    c->d.rel = &c->rp;
    c->out = malloc(4 * nq);
    c->att = malloc(4 * na);
    c->drop_mask = malloc(na);
    c->scratch = malloc(4 * attention_scratch_size(c->d));
}

static void rel_case_free(RelCase *c) {
    free(c->q); free(c->k); free(c->v); free(c->dq); free(c->dk); free(c->dv);
    free(c->ak); free(c->av); free(c->dak); free(c->dav);
    free(c->out); free(c->att); free(c->drop_mask); free(c->scratch);
}

static void rel_case_forward(void *p) {
    RelCase *c = p;
    Rng rng;
    rng_seed(&rng, c->seed);   /* the same dropout mask every call */
    attention_forward(c->out, c->att, c->drop_mask, c->q, c->k, c->v, c->d, &rng, c->scratch);
}

static void rel_case_backward(void *p, const float *dout) {
    RelCase *c = p;
    attention_backward(c->dq, c->dk, c->dv, dout, c->att, c->drop_mask, c->q, c->k, c->v, c->d, c->scratch);
}

static void rel_gradcheck(const char *what, AttnDims d, int base, int S, int use_k, int use_v) {
    RelCase c;
    rel_case_init(&c, d, base, S, use_k, use_v, 70);
    long C = (long)d.NH * d.HS, nt = (2L * S + 1) * d.HS;
    GradCheck g;
    gradcheck_init(&g, &c, rel_case_forward, rel_case_backward, c.out, (long)d.B * d.Tq * C);
    gradcheck_add(&g, "q", c.q, c.dq, (long)d.B * d.Tq * C);
    gradcheck_add(&g, "k", c.k, c.dk, (long)d.B * d.Tk * C);
    gradcheck_add(&g, "v", c.v, c.dv, (long)d.B * d.Tk * C);
    if (use_k) gradcheck_add(&g, "aK", c.ak, c.dak, nt);
    if (use_v) gradcheck_add(&g, "aV", c.av, c.dav, nt);
    gradcheck_expect(&g, what);
    rel_case_free(&c);
}

TEST(relpos_gradcheck) {
    const int lengths[2] = {6, 3};
    rel_gradcheck("self k=2", (AttnDims){.B = 2, .Tq = 6, .Tk = 6, .NH = 2, .HS = 3}, 2, 3, 1, 1);
    rel_gradcheck("causal+padding+dropout k=4",
                  (AttnDims){.B = 2, .Tq = 6, .Tk = 6, .NH = 2, .HS = 3, .causal = 1, .key_lengths = lengths,
                             .dropout = 0.2f}, 4, 2, 1, 1);
    rel_gradcheck("key only", (AttnDims){.B = 2, .Tq = 5, .Tk = 5, .NH = 2, .HS = 4}, 2, 2, 1, 0);
    rel_gradcheck("value only", (AttnDims){.B = 2, .Tq = 5, .Tk = 5, .NH = 2, .HS = 4}, 2, 2, 0, 1);
    rel_gradcheck("cached step Tq<Tk, clipped",
                  (AttnDims){.B = 2, .Tq = 2, .Tk = 7, .NH = 2, .HS = 3, .causal = 1}, 2, 1, 1, 1);
}

/* Base 1: every pair shares bucket 0, so q·a^K shifts a whole row of scores
 * (softmax does not change) and a^V is added once (the weights sum to 1). */
TEST(relpos_base1_is_plain_attention_plus_av) {
    AttnDims d = {.B = 2, .Tq = 5, .Tk = 5, .NH = 2, .HS = 4, .causal = 1};
    RelCase c;
    rel_case_init(&c, d, 1, 0, 1, 1, 71);
    rel_case_forward(&c);
    AttnDims plain = d;
    float *ref = malloc(4 * 2 * 5 * 8), *att = malloc(4 * 2 * 2 * 5 * 5), *scr = malloc(4 * attention_scratch_size(plain));
    attention_forward(ref, att, NULL, c.q, c.k, c.v, plain, NULL, scr);
    double worst = 0;
    for (int r = 0; r < 2 * 5; r++)
        for (int e = 0; e < 8; e++) {
            double diff = fabs(c.out[r * 8 + e] - (ref[r * 8 + e] + c.av[e % 4]));
            worst = diff > worst ? diff : worst;
        }
    CHECK_MSG(worst < 1e-5, "base 1: max diff %g from attention + aV", worst);
    free(ref); free(att); free(scr);
    rel_case_free(&c);
}

/* A decoding step (query t against keys 0..t) = row t of the full causal pass. */
TEST(relpos_cached_step_matches_full) {
    int B = 2, T = 7, NH = 2, HS = 4, C = NH * HS;
    RelCase c;
    rel_case_init(&c, (AttnDims){.B = B, .Tq = T, .Tk = T, .NH = NH, .HS = HS, .causal = 1}, 2, 2, 1, 1, 72);
    rel_case_forward(&c);
    for (int t = 0; t < T; t++) {
        AttnDims s = {.B = B, .Tq = 1, .Tk = t + 1, .NH = NH, .HS = HS, .causal = 1, .rel = &c.rp};
        float *q = malloc(4 * B * C), *k = malloc(4 * B * (t + 1) * C), *v = malloc(4 * B * (t + 1) * C);
        float *o = malloc(4 * B * C), *att = malloc(4 * B * NH * (t + 1)), *scr = malloc(4 * attention_scratch_size(s));
        for (int b = 0; b < B; b++) {
            memcpy(q + b * C, c.q + ((long)b * T + t) * C, 4 * C);
            memcpy(k + (long)b * (t + 1) * C, c.k + (long)b * T * C, 4 * (t + 1) * C);
            memcpy(v + (long)b * (t + 1) * C, c.v + (long)b * T * C, 4 * (t + 1) * C);
        }
        attention_forward(o, att, NULL, q, k, v, s, NULL, scr);
        for (int b = 0; b < B; b++)
            for (int e = 0; e < C; e++)
                CHECK_NEAR(o[b * C + e], c.out[((long)b * T + t) * C + e], 1e-5);
        free(q); free(k); free(v); free(o); free(att); free(scr);
    }
    rel_case_free(&c);
}

static void rel_compare_torch(const char *what, AttnDims d, const int *lengths, int base, int S, int use_k,
                              int use_v) {
    d.key_lengths = lengths;
    RelCase c;
    rel_case_init(&c, d, base, S, use_k, use_v, 73);
    long C = (long)d.NH * d.HS, nq = (long)d.B * d.Tq * C, nk = (long)d.B * d.Tk * C, nt = (2L * S + 1) * d.HS;
    float *r = malloc(4 * nq), *flen = calloc(d.B, 4);
    float *ro = malloc(4 * nq), *rdq = malloc(4 * nq), *rdk = malloc(4 * nk), *rdv = malloc(4 * nk);
    float *rdak = malloc(4 * nt), *rdav = malloc(4 * nt);
    gradcheck_fill(r, nq, -1, 1, 74);
    for (int b = 0; b < d.B; b++) flen[b] = lengths ? (float)lengths[b] : 0;
    RefTensor in[] = {{"q", c.q, nq}, {"k", c.k, nk}, {"v", c.v, nk}, {"ak", c.ak, nt}, {"av", c.av, nt},
                      {"r", r, nq}, {"key_lengths", flen, d.B}};
    RefTensor out[] = {{"out", ro, nq}, {"dq", rdq, nq}, {"dk", rdk, nk}, {"dv", rdv, nk},
                       {"dak", rdak, nt}, {"dav", rdav, nt}};
    char args[128];
    snprintf(args, sizeof args, "%d %d %d %d %d %d %d %d %d %d %d", d.B, d.Tq, d.Tk, d.NH, d.HS, d.causal,
             lengths != NULL, base, S, use_k, use_v);
    if (torchref_run("relpos_ref.py", args, in, 7, out, 6) == 1) {
        rel_case_forward(&c);
        rel_case_backward(&c, r);
        const float *mine[] = {c.out, c.dq, c.dk, c.dv, c.dak, c.dav};
        for (int i = 0; i < 6; i++) {
            double diff = torchref_max_diff(mine[i], out[i].data, out[i].n);
            CHECK_MSG(diff < 2e-5, "%s %s: max diff %g", what, out[i].name, diff);
        }
    }
    free(r); free(flen); free(ro); free(rdq); free(rdk); free(rdv); free(rdak); free(rdav);
    rel_case_free(&c);
}

TEST(relpos_matches_torch) {
    const int lengths[3] = {11, 6, 9};
    rel_compare_torch("self+padding k=4", (AttnDims){.B = 3, .Tq = 11, .Tk = 11, .NH = 4, .HS = 8}, lengths, 4, 2, 1, 1);
    rel_compare_torch("causal k=2", (AttnDims){.B = 2, .Tq = 9, .Tk = 9, .NH = 3, .HS = 5, .causal = 1}, NULL, 2, 4, 1, 1);
    rel_compare_torch("key only k=2 clipped", (AttnDims){.B = 2, .Tq = 9, .Tk = 9, .NH = 2, .HS = 4}, NULL, 2, 2, 1, 0);
    rel_compare_torch("value only k=3", (AttnDims){.B = 2, .Tq = 9, .Tk = 9, .NH = 2, .HS = 4}, NULL, 3, 2, 0, 1);
    rel_compare_torch("cached Tq<Tk", (AttnDims){.B = 2, .Tq = 3, .Tk = 8, .NH = 2, .HS = 4, .causal = 1}, NULL, 2, 3, 1, 1);
}
