/* test_optim.c — optimizers, schedules and clipping against independent
 * references: AdamW against a hand-written double-precision Adam (the
 * textbook m_hat / v_hat form, not our code's order); SGD+momentum, AdamW
 * (weight decay on one tensor, none on a no-decay one, changing lr) and
 * Adadelta against torch.optim over 10 steps; sparse-rows behaviour; every
 * schedule at its key steps; clipping to an exact norm; and a save/resume of
 * optimizer state that continues bit-identically; AdamW on a sharded state
 * (ZeRO-1) against the whole. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/checkpoint.h"
#include "core/params.h"
#include "optim/clip.h"
#include "optim/optim.h"
#include "optim/schedule.h"
#include "tests/capture.h"
#include "tests/scratch.h"
#include "tests/test.h"
#include "tests/torchref.h"

enum { R = 4, C = 6, STEPS = 10 };

/* Weight w (R, C), decayed; bias b (C), PARAM_NO_DECAY. */
static Params *wb_params(int *hw, int *hb) {
    Params *p = params_create();
    *hw = params_declare(p, "w", PARAM_SHAPE(R, C), PARAM_INIT_UNIFORM(1.0f), 0);
    *hb = params_declare(p, "b", PARAM_SHAPE(C), PARAM_INIT_UNIFORM(1.0f), PARAM_NO_DECAY);
    Rng rng;
    rng_seed(&rng, 5);
    params_allocate(p, &rng);
    params_grad_enable(p);
    return p;
}

/* Gradients of step t: gw (STEPS, R, C), gb (STEPS, C), varied in sign and scale. */
static void make_grads(float *gw, float *gb) {
    Rng rng;
    rng_seed(&rng, 99);
    for (int i = 0; i < STEPS * R * C; i++) gw[i] = (2 * rng_uniform(&rng) - 1) * (i % 7 == 0 ? 10.0f : 0.1f);
    for (int i = 0; i < STEPS * C; i++) gb[i] = (2 * rng_uniform(&rng) - 1);
}

/* |a - b| <= rel * |b| + abs_floor for every element; returns the worst ratio. */
static double worst_rel(const float *a, const float *b, long n, double abs_floor) {
    double worst = 0;
    for (long i = 0; i < n; i++) {
        double e = fabs((double)a[i] - b[i]) / (fabs((double)b[i]) + abs_floor);
        if (!(e <= worst)) worst = e;
    }
    return worst;
}

TEST(optim_adamw_matches_double_reference) {
    int hw, hb;
    Params *p = wb_params(&hw, &hb);
    Optimizer o = optim_adamw(0.1);
    const int N = R * C + C, T = 4;
    double x[R * C + C], m[R * C + C] = {0}, v[R * C + C] = {0};
    float gw[STEPS * R * C], gb[STEPS * C];
    make_grads(gw, gb);
    for (int i = 0; i < R * C; i++) x[i] = params_data(p, hw)[i];
    for (int i = 0; i < C; i++) x[R * C + i] = params_data(p, hb)[i];
    for (int t = 1; t <= T; t++) {
        float lr = 0.01f * (float)t;
        memcpy(params_grad(p, hw), gw + (t - 1) * R * C, sizeof(float) * R * C);
        memcpy(params_grad(p, hb), gb + (t - 1) * C, sizeof(float) * C);
        optim_step(&o, p, lr);
        for (int i = 0; i < N; i++) {
            double g = i < R * C ? gw[(t - 1) * R * C + i] : gb[(t - 1) * C + i - R * C];
            double wd = i < R * C ? 0.1 : 0.0;
            m[i] = 0.9 * m[i] + 0.1 * g;
            v[i] = 0.999 * v[i] + 0.001 * g * g;
            double mhat = m[i] / (1 - pow(0.9, t)), vhat = v[i] / (1 - pow(0.999, t));
            x[i] = x[i] - lr * wd * x[i] - lr * mhat / (sqrt(vhat) + 1e-8);
        }
    }
    CHECK_EQ_INT(o.t, T);
    float got[R * C + C];
    memcpy(got, params_data(p, hw), sizeof(float) * R * C);
    memcpy(got + R * C, params_data(p, hb), sizeof(float) * C);
    double worst = 0;
    for (int i = 0; i < N; i++) {
        double e = fabs(got[i] - x[i]) / (fabs(x[i]) + 1e-3);
        if (e > worst) worst = e;
    }
    CHECK_MSG(worst < 1e-6, "AdamW vs double reference: worst relative error %.3g", worst);
    params_free(p);
}

/* Runs `o` for STEPS steps with lrs, and the same in torch; compares w, b and state. */
static void compare_with_torch(Optimizer o, const char *kind, double tol) {
    int hw, hb;
    Params *p = wb_params(&hw, &hb);
    float w0[R * C], b0[C], gw[STEPS * R * C], gb[STEPS * C], lrs[STEPS];
    memcpy(w0, params_data(p, hw), sizeof w0);
    memcpy(b0, params_data(p, hb), sizeof b0);
    make_grads(gw, gb);
    Schedule s = {.kind = SCHEDULE_LINEAR, .lr = 0.05f, .warmup = 3, .total = STEPS};
    for (int t = 0; t < STEPS; t++) {
        lrs[t] = schedule_lr(&s, t);
        memcpy(params_grad(p, hw), gw + t * R * C, sizeof(float) * R * C);
        memcpy(params_grad(p, hb), gb + t * C, sizeof(float) * C);
        optim_step(&o, p, lrs[t]);
    }
    float w1[R * C], b1[C], s0[R * C], s1[R * C];
    RefTensor in[] = {{"w", w0, R * C}, {"b", b0, C}, {"gw", gw, STEPS * R * C}, {"gb", gb, STEPS * C}, {"lrs", lrs, STEPS}};
    RefTensor out[] = {{"w_out", w1, R * C}, {"b_out", b1, C}, {"s0_w", s0, R * C}, {"s1_w", s1, R * C}};
    int n_out = o.kind == OPTIM_SGD ? 3 : 4;
    char args[512];
    snprintf(args, sizeof args, "%s %d %d %d %.17g %.17g %.17g %.17g %.17g %.17g", kind, STEPS, R, C, o.weight_decay,
             o.momentum, o.beta1, o.beta2, o.eps, o.rho);
    if (torchref_run("optim_ref.py", args, in, 5, out, n_out) == 1) {
        double ew = worst_rel(params_data(p, hw), w1, R * C, 1e-3), eb = worst_rel(params_data(p, hb), b1, C, 1e-3);
        double es0 = worst_rel(p->state[0] + params_tensor(p, hw)->offset, s0, R * C, 1e-6);
        double es1 = n_out == 4 ? worst_rel(p->state[1] + params_tensor(p, hw)->offset, s1, R * C, 1e-9) : 0;
        CHECK_MSG(ew < tol && eb < tol && es0 < tol && es1 < tol,
                  "%s vs torch: w %.3g b %.3g state0 %.3g state1 %.3g (tol %g)", kind, ew, eb, es0, es1, tol);
        /* The no-decay bias really went without decay: torch's group has wd 0. */
    }
    params_free(p);
}

TEST(optim_adamw_matches_torch) {
    Optimizer o = optim_adamw(0.01);
    o.eps = 1e-6; /* BERT's */
    compare_with_torch(o, "adamw", 1e-6);
}

TEST(optim_sgd_momentum_matches_torch) { compare_with_torch(optim_sgd(0.9, 0.01), "sgd", 1e-6); }

TEST(optim_adadelta_matches_torch) { compare_with_torch(optim_adadelta(0.01), "adadelta", 1e-6); }

TEST(optim_no_decay_tensor_is_not_decayed) {
    int hw, hb;
    Params *p = wb_params(&hw, &hb);
    float w0 = params_data(p, hw)[0], b0 = params_data(p, hb)[0];
    Optimizer o = optim_adamw(0.5); /* zero gradient: only decay can move a weight */
    optim_step(&o, p, 0.1f);
    CHECK(params_data(p, hb)[0] == b0);
    CHECK_NEAR(params_data(p, hw)[0], w0 * (1 - 0.1 * 0.5), 1e-7);
    Optimizer s = optim_sgd(0, 0.5);
    optim_step(&s, p, 0.1f);
    CHECK(params_data(p, hb)[0] == b0);
    params_free(p);
}

/* Embedding (8, 3) declared sparse-rows, gradient 1 everywhere, rows 1 and 6 touched. */
static Params *sparse_params(int *he) {
    Params *p = params_create();
    *he = params_declare(p, "emb", PARAM_SHAPE(8, 3), PARAM_INIT_ONES, PARAM_SPARSE_ROWS);
    Rng rng;
    rng_seed(&rng, 1);
    params_allocate(p, &rng);
    params_grad_enable(p);
    for (int i = 0; i < 24; i++) params_grad(p, *he)[i] = 1.0f;
    int rows[] = {6, 1};
    params_touch_rows(p, *he, rows, 2);
    return p;
}

TEST(optim_sparse_rows_sgd_and_adamw) {
    int he;
    Params *p = sparse_params(&he);
    Optimizer sgd = optim_sgd(0, 0.1); /* weight decay too: untouched rows keep it off */
    optim_step(&sgd, p, 0.5f);
    const float *x = params_data(p, he);
    for (int r = 0; r < 8; r++) {
        float want = (r == 1 || r == 6) ? 1.0f - 0.5f * (1.0f + 0.1f) : 1.0f;
        for (int c = 0; c < 3; c++) CHECK_MSG(x[r * 3 + c] == want, "sgd row %d: %g vs %g", r, x[r * 3 + c], want);
    }
    params_free(p);

    /* AdamW: dense by default (every row moves), lazy on request. */
    for (int lazy = 0; lazy <= 1; lazy++) {
        p = sparse_params(&he);
        Optimizer a = optim_adamw(0);
        a.lazy = lazy;
        optim_step(&a, p, 0.1f);
        x = params_data(p, he);
        int moved = 0;
        for (int r = 0; r < 8; r++) moved += x[r * 3] != 1.0f;
        CHECK_EQ_INT(moved, lazy ? 2 : 8);
        CHECK_NEAR(x[6 * 3], 1.0 - 0.1, 1e-6); /* first Adam step moves by lr */
        params_free(p);
    }
}

/* Fine-tuning's rates (RUN_SETTING_WARMUP's fraction of the steps, here
 * 10 of 100): the warm-up in float arithmetic, bit for bit the rates that
 * fine-tuned checkpoints were trained with, then the decay; and the re-warm-up
 * of a run continued from weights with a fresh optimizer. */
TEST(optim_schedule_float_warmup_and_rewarm) {
    Schedule s = {.kind = SCHEDULE_LINEAR, .lr = 1.0f, .warmup = 10, .total = 100, .warmup_float = 1};
    CHECK_NEAR(schedule_lr(&s, 0), 0.1, 1e-6);
    CHECK_NEAR(schedule_lr(&s, 9), 1.0, 1e-6);
    CHECK_NEAR(schedule_lr(&s, 10), 1.0, 1e-6);
    CHECK_NEAR(schedule_lr(&s, 55), 0.5, 1e-6);
    CHECK_NEAR(schedule_lr(&s, 99), 1.0 / 90, 1e-6);
    s = (Schedule){.kind = SCHEDULE_COSINE, .lr = 2.0f, .total = 100, .warmup_float = 1};
    CHECK_NEAR(schedule_lr(&s, 50), 1.0, 1e-6);
    CHECK_NEAR(schedule_lr(&s, 0), 2.0, 1e-6);
    /* The float computation, not the double one (they differ in the last bit for 7 of these 37 steps). */
    Schedule f = {.kind = SCHEDULE_LINEAR, .lr = 3e-5f, .warmup = 37, .total = 370, .warmup_float = 1}, d = f;
    d.warmup_float = 0;
    int differ = 0;
    for (long t = 0; t < 37; t++) {
        float want = 3e-5f * (float)(t + 1) / 37.0f;
        CHECK_MSG(schedule_lr(&f, t) == want, "step %ld: %.9g, want %.9g", t, schedule_lr(&f, t), want);
        differ += schedule_lr(&d, t) != want;
    }
    CHECK_EQ_INT(differ, 7);
    /* Re-warm-up from step 12 over 4 steps, on top of the schedule. */
    Schedule r = {.kind = SCHEDULE_CONSTANT, .lr = 1.0f, .total = 100, .rewarm_from = 12, .rewarm = 4};
    CHECK_NEAR(schedule_lr(&r, 12), 0.25, 1e-7);
    CHECK_NEAR(schedule_lr(&r, 13), 0.5, 1e-7);
    CHECK_NEAR(schedule_lr(&r, 15), 1.0, 1e-7);
    CHECK_NEAR(schedule_lr(&r, 90), 1.0, 1e-7);
}

TEST(optim_schedules_key_steps) {
    Schedule s = {.kind = SCHEDULE_LINEAR, .lr = 1.0f, .warmup = 10, .total = 110};
    CHECK_NEAR(schedule_lr(&s, 0), 0.1, 1e-7);
    CHECK_NEAR(schedule_lr(&s, 4), 0.5, 1e-7);
    CHECK_NEAR(schedule_lr(&s, 9), 1.0, 1e-7);  /* warm-up ends at the peak */
    CHECK_NEAR(schedule_lr(&s, 10), 1.0, 1e-7);
    CHECK_NEAR(schedule_lr(&s, 60), 0.5, 1e-7);
    CHECK_NEAR(schedule_lr(&s, 109), 0.01, 1e-7);
    CHECK_NEAR(schedule_lr(&s, 110), 0.0, 1e-7);
    CHECK_NEAR(schedule_lr(&s, 500), 0.0, 1e-7); /* clamped, never negative */
    s.kind = SCHEDULE_COSINE;
    CHECK_NEAR(schedule_lr(&s, 5), 0.6, 1e-7);
    CHECK_NEAR(schedule_lr(&s, 10), 1.0, 1e-7);
    CHECK_NEAR(schedule_lr(&s, 35), 0.5 * (1 + cos(M_PI * 0.25)), 1e-7);
    CHECK_NEAR(schedule_lr(&s, 60), 0.5, 1e-7);
    CHECK_NEAR(schedule_lr(&s, 110), 0.0, 1e-7);
    s.kind = SCHEDULE_CONSTANT;
    CHECK_NEAR(schedule_lr(&s, 2), 0.3, 1e-7);
    CHECK_NEAR(schedule_lr(&s, 1000), 1.0, 1e-7);
    s.warmup = 0;
    CHECK_NEAR(schedule_lr(&s, 0), 1.0, 1e-7);
    /* Vaswani: d^-0.5 * min(s^-0.5, s * w^-1.5), d = 512, w = 4000, s = step + 1. */
    Schedule v = {.kind = SCHEDULE_INV_SQRT, .lr = (float)(1 / sqrt(512.0 * 4000.0)), .warmup = 4000};
    long steps[] = {0, 999, 3999, 4000, 15999, 99999};
    for (int i = 0; i < 6; i++) {
        double st = (double)(steps[i] + 1);
        double want = pow(512, -0.5) * fmin(pow(st, -0.5), st * pow(4000, -1.5));
        CHECK_NEAR(schedule_lr(&v, steps[i]) / want, 1.0, 1e-6);
    }
    ScheduleKind k;
    CHECK(schedule_parse("cosine", &k) == 0 && k == SCHEDULE_COSINE);
    CHECK(schedule_parse("inv_sqrt", &k) == 0 && k == SCHEDULE_INV_SQRT);
    StderrCapture cap;
    stderr_capture_begin(&cap);
    CHECK(schedule_parse("cosin", &k) == -1);
    char *msg = stderr_capture_end(&cap);
    CHECK_MSG(msg && strstr(msg, "'cosin'") && strstr(msg, "inv_sqrt"), "message: %s", msg);
    free(msg);
}

TEST(optim_clip_scales_exactly) {
    int hw, hb;
    Params *p = wb_params(&hw, &hb);
    /* Gradient (3, 4, 12, 0, ...) has norm 13. */
    memset(p->grad, 0, p->total * sizeof(float));
    params_grad(p, hw)[0] = 3, params_grad(p, hw)[7] = 4, params_grad(p, hb)[2] = 12;
    CHECK_NEAR(clip_compute_norm(p), 13.0, 1e-12);
    CHECK_NEAR(clip_grad_norm(p, 20.0f), 13.0, 1e-12); /* under the limit: untouched */
    CHECK(params_grad(p, hw)[0] == 3.0f && params_grad(p, hb)[2] == 12.0f);
    CHECK_NEAR(clip_grad_norm(p, 6.5f), 13.0, 1e-12); /* returns the norm before */
    CHECK(params_grad(p, hw)[0] == 1.5f && params_grad(p, hw)[7] == 2.0f && params_grad(p, hb)[2] == 6.0f);
    CHECK_NEAR(clip_compute_norm(p), 6.5, 1e-6);
    /* Random gradient, many elements: the clipped norm is max_norm to float rounding. */
    Rng rng;
    rng_seed(&rng, 3);
    for (size_t i = 0; i < p->total; i++) p->grad[i] = rng_normal(&rng);
    for (int i = R * C; i < 16; i++) params_grad(p, hw)[i] = 0; /* keep the padding zero */
    for (int i = C; i < 16; i++) params_grad(p, hb)[i] = 0;
    double before = clip_compute_norm(p);
    CHECK_NEAR(clip_grad_norm(p, 1.0f), before, 1e-12);
    CHECK_NEAR(clip_compute_norm(p), 1.0, 1e-6);
    /* Non-finite: reported, nothing scaled. */
    params_grad(p, hb)[1] = NAN;
    float keep = params_grad(p, hw)[0];
    CHECK(isnan(clip_grad_norm(p, 1.0f)));
    CHECK(params_grad(p, hw)[0] == keep);
    params_free(p);
}

TEST(optim_clip_sparse_counts_touched_rows) {
    int he;
    Params *p = sparse_params(&he); /* all ones, rows 1 and 6 touched: 6 elements */
    CHECK_NEAR(clip_compute_norm(p), sqrt(6.0), 1e-12);
    params_free(p);
}

/* A few AdamW steps on wb_params with the step's gradient; t0 = first step index. */
static void adamw_run(Params *p, Optimizer *o, int t0, int n) {
    float gw[STEPS * R * C], gb[STEPS * C];
    make_grads(gw, gb);
    for (int t = t0; t < t0 + n; t++) {
        memcpy(params_grad(p, 0), gw + t * R * C, sizeof(float) * R * C);
        memcpy(params_grad(p, 1), gb + t * C, sizeof(float) * C);
        optim_step(o, p, 0.01f);
    }
}

/* A fresh empty scratch file; its name into path (cap bytes). */
static void make_temp_file(char *path, size_t cap) {
    int fd = scratch_file("optim", path, cap);
    CHECK(fd >= 0);
    close(fd);
}

TEST(optim_state_save_and_resume_is_exact) {
    char path[SCRATCH_PATH_MAX];
    make_temp_file(path, sizeof path);
    int hw, hb;
    Params *a = wb_params(&hw, &hb);
    Optimizer oa = optim_adamw(0.01);
    adamw_run(a, &oa, 0, 3);
    CkptWriter *w = checkpoint_writer_open(path, NULL, -1);
    CHECK(w != NULL);
    checkpoint_write_params(w, a, CKPT_F32);
    optim_save(&oa, a, w);
    CHECK(checkpoint_writer_commit(w) == 0);
    adamw_run(a, &oa, 3, 4);

    Params *b = wb_params(&hw, &hb);
    Optimizer ob = optim_adamw(0.01);
    Checkpoint *c = checkpoint_read(path);
    CHECK(c != NULL);
    if (c) {
        CHECK(checkpoint_load_params(c, b) == 0);
        CHECK(optim_load(&ob, b, c) == 0);
        CHECK_EQ_INT(ob.t, 3);
        adamw_run(b, &ob, 3, 4);
        CHECK(memcmp(a->data, b->data, a->total * sizeof(float)) == 0);
        CHECK(memcmp(a->state[1], b->state[1], a->total * sizeof(float)) == 0);
        /* State of another optimizer kind is refused. */
        Optimizer sgd = optim_sgd(0.9, 0);
        StderrCapture cap;
        stderr_capture_begin(&cap);
        CHECK(optim_load(&sgd, b, c) == -1);
        char *msg = stderr_capture_end(&cap);
        CHECK_MSG(msg && strstr(msg, "adamw") && strstr(msg, "sgd"), "message: %s", msg);
        free(msg);
        checkpoint_free(c);
    }
    params_free(a);
    params_free(b);
    unlink(path);
}

/* A tensor's lr_scale is its own learning rate: one AdamW step on a tensor
 * with scale 0.25 at lr 0.08 equals a step at lr 0.02 with scale 1 (up to the
 * float rounding of the product), and the other tensor is untouched by it. */
TEST(optim_adamw_lr_scale_is_the_tensors_rate) {
    int hw[2], hb[2];
    Params *p[2] = {wb_params(&hw[0], &hb[0]), wb_params(&hw[1], &hb[1])};
    for (int k = 0; k < 2; k++) {
        params_grad_enable(p[k]);
        for (int i = 0; i < params_tensor(p[k], hw[k])->numel; i++) params_grad(p[k], hw[k])[i] = 0.3f + 0.1f * i;
        for (int i = 0; i < params_tensor(p[k], hb[k])->numel; i++) params_grad(p[k], hb[k])[i] = -0.2f;
    }
    p[0]->t[hw[0]].lr_scale = 0.25f;
    Optimizer a = optim_adamw(0.1), b = optim_adamw(0.1);
    optim_step(&a, p[0], 0.08f);
    Params *q = wb_params(&hw[1], &hb[1]);   /* the same start, stepped at lr 0.02 */
    params_grad_enable(q);
    for (int i = 0; i < params_tensor(q, hw[1])->numel; i++) params_grad(q, hw[1])[i] = 0.3f + 0.1f * i;
    optim_step(&b, q, 0.02f);
    for (int i = 0; i < params_tensor(q, hw[1])->numel; i++)
        CHECK_NEAR(params_data(p[0], hw[0])[i], params_data(q, hw[1])[i], 1e-7);
    /* The bias kept scale 1: it moved as at lr 0.08. */
    Optimizer c = optim_adamw(0.1);
    optim_step(&c, p[1], 0.08f);
    CHECK(params_data(p[0], hb[0])[0] == params_data(p[1], hb[1])[0]);
    CHECK(params_data(p[0], hw[0])[0] != params_data(p[1], hw[1])[0]);
    params_free(p[0]);
    params_free(p[1]);
    params_free(q);
}

/* ZeRO-1's sharded state (params_set_shard): two arenas that each update one
 * slice (cut inside tensor w) together take the steps of one whole arena bit
 * for bit, their clipping sums of squares add up to the whole one's, and a
 * sharded arena loading a whole state keeps its slice of it. */
TEST(optim_adamw_sharded_equals_whole) {
    char path[SCRATCH_PATH_MAX];
    make_temp_file(path, sizeof path);
    int hw, hb;
    Params *whole = wb_params(&hw, &hb), *s[2] = {wb_params(&hw, &hb), wb_params(&hw, &hb)};
    const size_t cut = 20;
    params_set_shard(s[0], 0, cut);
    params_set_shard(s[1], cut, s[1]->total);
    Optimizer ow = optim_adamw(0.01), os[2] = {optim_adamw(0.01), optim_adamw(0.01)};
    adamw_run(whole, &ow, 0, 3);
    for (int i = 0; i < 2; i++) adamw_run(s[i], &os[i], 0, 3);
    CHECK(memcmp(whole->data, s[0]->data, cut * sizeof(float)) == 0);
    CHECK(memcmp(whole->data + cut, s[1]->data + cut, (whole->total - cut) * sizeof(float)) == 0);
    CHECK(memcmp(whole->state[0] + cut, s[1]->state[0], (whole->total - cut) * sizeof(float)) == 0);
    CHECK_NEAR(clip_sumsq_many(&s[0], 1) + clip_sumsq_many(&s[1], 1), clip_sumsq_many(&whole, 1), 1e-9);
    CkptWriter *w = checkpoint_writer_open(path, NULL, -1);
    CHECK(w != NULL);
    optim_save(&ow, whole, w);
    CHECK(checkpoint_writer_commit(w) == 0);
    Checkpoint *c = checkpoint_read(path);
    Params *fresh = wb_params(&hw, &hb);
    Optimizer of = optim_adamw(0.01);
    params_set_shard(fresh, cut, fresh->total);
    if (CHECK(c != NULL)) {
        CHECK(optim_load(&of, fresh, c) == 0);
        CHECK(fresh->shard_lo == cut && fresh->shard_hi == fresh->total);
        CHECK(memcmp(whole->state[1] + cut, fresh->state[1], (whole->total - cut) * sizeof(float)) == 0);
        checkpoint_free(c);
    }
    /* Widening keeps the slice where it was and zeroes the rest. */
    params_set_shard(fresh, 0, fresh->total);
    CHECK(fresh->state[1][0] == 0.0f && memcmp(whole->state[1] + cut, fresh->state[1] + cut,
                                                (whole->total - cut) * sizeof(float)) == 0);
    params_free(whole);
    params_free(s[0]);
    params_free(s[1]);
    params_free(fresh);
    unlink(path);
}
