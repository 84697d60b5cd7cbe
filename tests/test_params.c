/* test_params.c — the parameter arena: 64-byte alignment of every tensor,
 * mirrors at the same offsets, each init spec (exact for zeros/ones/caller,
 * moments for normal/uniform, same seed -> same weights), lookup and counting,
 * zero-grad (dense, and sparse rows touching only what was marked), spans, and
 * that declaration mistakes die instead of corrupting memory. */
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/params.h"
#include "tests/test.h"

/* A small model: weight (3, 5) decayed, bias (5) not, embedding (10, 4) sparse. */
static Params *toy_params(uint64_t seed, int *hw, int *hb, int *he) {
    Params *p = params_create();
    *hw = params_declare(p, "w", PARAM_SHAPE(3, 5), PARAM_INIT_NORMAL(0.5f), 0);
    *hb = params_declare(p, "b", PARAM_SHAPE(5), PARAM_INIT_ONES, PARAM_NO_DECAY);
    *he = params_declare(p, "emb", PARAM_SHAPE(10, 4), PARAM_INIT_UNIFORM(0.1f), PARAM_SPARSE_ROWS);
    Rng rng;
    rng_seed(&rng, seed);
    params_allocate(p, &rng);
    return p;
}

TEST(params_layout_is_aligned_and_mirrored) {
    int hw, hb, he;
    Params *p = toy_params(1, &hw, &hb, &he);
    CHECK_EQ_INT(hw, 0);
    CHECK_EQ_INT(hb, 1);
    CHECK_EQ_INT(he, 2);
    CHECK_EQ_INT(params_num_tensors(p), 3);
    CHECK_EQ_INT(params_count(p), 15 + 5 + 40);
    params_grad_enable(p);
    float *s0 = params_state(p, 0);
    for (int h = 0; h < 3; h++) {
        CHECK_EQ_INT(params_tensor(p, h)->offset % 16, 0);
        CHECK_EQ_INT((uintptr_t)params_data(p, h) % 64, 0);
        CHECK_EQ_INT((uintptr_t)params_grad(p, h) % 64, 0);
        CHECK(params_grad(p, h) - p->grad == params_data(p, h) - p->data);
        CHECK(s0 + params_tensor(p, h)->offset == s0 + (params_data(p, h) - p->data));
    }
    /* Each tensor rounds up to 16 floats: 15 -> 16, 5 -> 16, 40 -> 48. */
    CHECK_EQ_INT(params_tensor(p, hb)->offset, 16);
    CHECK_EQ_INT(params_tensor(p, he)->offset, 32);
    CHECK_EQ_INT(p->total, 80);
    CHECK_EQ_INT(params_find(p, "b"), hb);
    CHECK_EQ_INT(params_find(p, "emb"), he);
    CHECK_EQ_INT(params_find(p, "nope"), -1);
    const ParamTensor *t = params_tensor(p, hw);
    CHECK(strcmp(t->name, "w") == 0 && t->ndim == 2 && t->shape[0] == 3 && t->shape[1] == 5 && t->numel == 15);
    CHECK_EQ_INT(params_tensor(p, he)->rows, 10);
    CHECK_EQ_INT(params_tensor(p, he)->row_size, 4);
    params_free(p);
}

TEST(params_init_specs) {
    Params *p = params_create();
    const int N = 200000;
    int hz = params_declare(p, "zeros", PARAM_SHAPE(7), PARAM_INIT_ZEROS, 0);
    int ho = params_declare(p, "ones", PARAM_SHAPE(7), PARAM_INIT_ONES, 0);
    int hn = params_declare(p, "normal", PARAM_SHAPE(N), PARAM_INIT_NORMAL(0.02f), 0);
    int hu = params_declare(p, "uniform", PARAM_SHAPE(N), PARAM_INIT_UNIFORM(0.3f), 0);
    int hc = params_declare(p, "caller", PARAM_SHAPE(2, 3), PARAM_INIT_CALLER, 0);
    int hs = params_declare(p, "scalar", NULL, 0, PARAM_INIT_ONES, 0);
    Rng rng;
    rng_seed(&rng, 42);
    params_allocate(p, &rng);
    for (int i = 0; i < 7; i++) {
        CHECK(params_data(p, hz)[i] == 0.0f);
        CHECK(params_data(p, ho)[i] == 1.0f);
    }
    for (int i = 0; i < 6; i++) CHECK(params_data(p, hc)[i] == 0.0f);
    CHECK_EQ_INT(params_tensor(p, hs)->numel, 1);
    CHECK(params_data(p, hs)[0] == 1.0f);
    double sn = 0, sn2 = 0, su = 0, su2 = 0, umax = 0;
    for (int i = 0; i < N; i++) {
        double x = params_data(p, hn)[i], u = params_data(p, hu)[i];
        sn += x, sn2 += x * x, su += u, su2 += u * u;
        if (fabs(u) > umax) umax = fabs(u);
    }
    /* Sampling error of the std over 2e5 draws is ~0.16%; allow 1%. */
    CHECK_NEAR(sn / N, 0.0, 0.02 * 0.01);
    CHECK_NEAR(sqrt(sn2 / N), 0.02, 0.02 * 0.01);
    CHECK(umax <= 0.3 && umax > 0.299);
    CHECK_NEAR(su / N, 0.0, 0.3 * 0.01);
    CHECK_NEAR(su2 / N, 0.09 / 3, 0.03 * 0.01);
    params_free(p);
}

TEST(params_same_seed_same_weights) {
    int hw, hb, he;
    Params *a = toy_params(7, &hw, &hb, &he), *b = toy_params(7, &hw, &hb, &he), *c = toy_params(8, &hw, &hb, &he);
    CHECK(memcmp(a->data, b->data, a->total * sizeof(float)) == 0);
    CHECK(memcmp(a->data, c->data, a->total * sizeof(float)) != 0);
    params_free(a);
    params_free(b);
    params_free(c);
}

TEST(params_mirrors_are_lazy_and_zeroed) {
    int hw, hb, he;
    Params *p = toy_params(1, &hw, &hb, &he);
    CHECK(params_grad(p, hw) == NULL);
    CHECK(p->state[0] == NULL && p->state[1] == NULL);
    params_grad_enable(p);
    float *g = p->grad;
    params_grad_enable(p); /* idempotent: keeps the same block */
    CHECK(p->grad == g);
    float *s1 = params_state(p, 1);
    CHECK(params_state(p, 1) == s1);
    CHECK(p->state[0] == NULL);
    int nonzero = 0;
    for (size_t i = 0; i < p->total; i++) nonzero += g[i] != 0.0f || s1[i] != 0.0f;
    CHECK_EQ_INT(nonzero, 0);
    params_free(p);
}

static void fill_grad(Params *p, float v) {
    for (size_t i = 0; i < p->total; i++) p->grad[i] = v;
}

TEST(params_zero_grad_dense_and_sparse_rows) {
    int hw, hb, he;
    Params *p = toy_params(1, &hw, &hb, &he);
    params_grad_enable(p);
    fill_grad(p, 3.0f);
    int rows[] = {7, 2, 7, 2, 9};
    params_touch_rows(p, he, rows, 5);
    const ParamTensor *e = params_tensor(p, he);
    CHECK_EQ_INT(e->n_touched, 3); /* duplicates once, first-seen order */
    CHECK(e->touched_list[0] == 7 && e->touched_list[1] == 2 && e->touched_list[2] == 9);
    CHECK_EQ_INT(params_span_count(p, he, 1), 3);
    CHECK_EQ_INT(params_span_count(p, he, 0), 1);
    CHECK_EQ_INT(params_span_count(p, hw, 1), 1);
    ParamSpan sp = params_span(p, he, 1, 1);
    CHECK_EQ_INT(sp.offset, e->offset + 2 * 4);
    CHECK_EQ_INT(sp.len, 4);
    sp = params_span(p, he, 0, 0);
    CHECK(sp.offset == e->offset && sp.len == 40);

    params_zero_grad(p);
    for (int i = 0; i < 15; i++) CHECK(params_grad(p, hw)[i] == 0.0f);
    for (int i = 0; i < 5; i++) CHECK(params_grad(p, hb)[i] == 0.0f);
    float *ge = params_grad(p, he);
    for (int r = 0; r < 10; r++) {
        int touched = r == 2 || r == 7 || r == 9;
        for (int c = 0; c < 4; c++)
            CHECK_MSG(ge[r * 4 + c] == (touched ? 0.0f : 3.0f), "row %d col %d = %g", r, c, ge[r * 4 + c]);
    }
    CHECK_EQ_INT(e->n_touched, 0);
    CHECK_EQ_INT(params_span_count(p, he, 1), 0);
    /* The bitmap was cleared too: touching row 7 again lists it again. */
    params_touch_rows(p, he, rows, 1);
    CHECK(e->n_touched == 1 && e->touched_list[0] == 7);
    params_free(p);
}

/* Runs fn in a child; 1 when the child died of SIGABRT (DIE). */
static int dies(void (*fn)(void)) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        if (!freopen("/dev/null", "w", stderr)) _exit(3);
        fn();
        _exit(0);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT;
}

static void declare_twice(void) {
    Params *p = params_create();
    params_declare(p, "x", PARAM_SHAPE(2), PARAM_INIT_ZEROS, 0);
    params_declare(p, "x", PARAM_SHAPE(3), PARAM_INIT_ZEROS, 0);
}

static void declare_after_allocate(void) {
    Params *p = params_create();
    Rng rng;
    rng_seed(&rng, 1);
    params_declare(p, "x", PARAM_SHAPE(2), PARAM_INIT_ZEROS, 0);
    params_allocate(p, &rng);
    params_declare(p, "y", PARAM_SHAPE(2), PARAM_INIT_ZEROS, 0);
}

static void touch_dense(void) {
    Params *p = params_create();
    Rng rng;
    rng_seed(&rng, 1);
    int h = params_declare(p, "x", PARAM_SHAPE(4, 2), PARAM_INIT_ZEROS, 0);
    params_allocate(p, &rng);
    int r = 1;
    params_touch_rows(p, h, &r, 1);
}

static void touch_out_of_range(void) {
    Params *p = params_create();
    Rng rng;
    rng_seed(&rng, 1);
    int h = params_declare(p, "x", PARAM_SHAPE(4, 2), PARAM_INIT_ZEROS, PARAM_SPARSE_ROWS);
    params_allocate(p, &rng);
    int r = 4;
    params_touch_rows(p, h, &r, 1);
}

static void bad_handle(void) {
    Params *p = params_create();
    params_tensor(p, 0);
}

static void fine(void) {
    int hw, hb, he;
    params_free(toy_params(1, &hw, &hb, &he));
}

TEST(params_misuse_dies) {
    CHECK(!dies(fine)); /* the harness itself can tell */
    CHECK(dies(declare_twice));
    CHECK(dies(declare_after_allocate));
    CHECK(dies(touch_dense));
    CHECK(dies(touch_out_of_range));
    CHECK(dies(bad_handle));
}
