/* test_bilstm.c — the BiLSTM baseline (textrnn cell=lstm pool=max, src/models/baselines/textrnn*): finite-difference
 * gradients of the whole network (single and pair features), learning small
 * synthetic tasks (single sentence, a pair task that needs both texts,
 * regression), invariance to padding (a row's prediction does not depend on
 * the rows batched with it), checkpoint round trip, exact resume through the
 * optimizer state, and clear errors for bad settings and files. Tiny sizes:
 * all of it runs in a few seconds. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/checkpoint.h"
#include "core/common.h"
#include "core/rng.h"
#include "models/baselines/textrnn.h"
#include "tests/capture.h"
#include "tests/gradcheck.h"
#include "tests/synth_task.h"
#include "tests/scratch.h"
#include "tests/test.h"
#include "train/evaluate.h"

/* ---- synthetic data ---- */

/* Class words "c<class>k<k>" (k < 4) among noise "n<k>" (k < 100). Single
 * sentence: 1 or 2 class words say the label, lengths 3..14. Pair: a and b
 * each carry one of 4 topics; label 1 when the topics agree, so neither text
 * alone tells it. Regression: the score is the number of class-1 words among
 * 6 (0..5). */
static const SynthTask BL_SINGLE = {.name = "single", .task = &SYNTH_TASK2, .kind = SYNTH_CLASS,
                                    .class_words = 4, .noise_words = 100, .len_min = 3, .len_max = 14,
                                    .signal_min = 1, .signal_max = 2};
static const SynthTask BL_PAIR = {.name = "pair", .task = &SYNTH_TASK2, .kind = SYNTH_SAME_TOPIC,
                                  .class_words = 4, .noise_words = 100, .len_min = 3, .len_max = 10,
                                  .signal_min = 1, .signal_max = 1};
static const SynthTask BL_COUNT = {.name = "regression", .task = &SYNTH_TASKR, .kind = SYNTH_COUNT,
                                   .class_words = 4, .noise_words = 100, .len_min = 6, .len_max = 6,
                                   .signal_min = 0, .signal_max = 5};

/* stderr muted while a test provokes messages; stderr_quiet_end returns what
 * was written (caller frees). */
static StderrCapture quiet;
static void stderr_quiet(void) { stderr_capture_begin(&quiet); }
static char *stderr_quiet_end(void) { return stderr_capture_end(&quiet); }

static void config_set(cJSON *c, const char *key, double v) {
    cJSON_ReplaceItemInObjectCaseSensitive(c, key, cJSON_CreateNumber(v));
}

/* A small config: seconds, not hours. */
static cJSON *small_config(const Task *t, int epochs) {
    cJSON *c = BILSTM_OPS.default_config(t);
    config_set(c, "epochs", epochs);
    config_set(c, "batch", 32);
    config_set(c, "dim", 16);
    config_set(c, "hidden", 16);
    config_set(c, "mlp", 16);
    config_set(c, "lr", 0.01);
    config_set(c, "dropout", 0.1);
    config_set(c, "emb_dropout", 0.1);
    return c;
}

/* ---- gradients ---- */

typedef struct {
    TextRnn *m;
    WordSeqs *s;
    int rows[4], n, T;
} NetCase;

static void net_forward(void *p) {
    NetCase *c = p;
    c->T = tr_forward(c->m, c->s, c->rows, c->n, 1);
}

static void net_backward(void *p, const float *dout) {
    NetCase *c = p;
    memcpy(c->m->buf.dout, dout, sizeof(float) * (size_t)c->n * (size_t)c->m->K);
    tr_backward(c->m, c->n, c->T);
}

/* n (<= 4) short rows of unequal lengths (1..3 words; pairs: b too). Short, so
 * that a max over time has few candidates and no perturbation of the check
 * moves one (a kink the central difference would straddle). */
static Dataset gradcheck_dataset(const SynthTask *st, int n) {
    static const char *const A[4] = {"n1 n2 n3", "n4", "n5 n6", "c1k0"};
    static const char *const B[4] = {"n7", "n9 n1", "c0k1", "n3"};
    Dataset d = {.task = st->task, .n = n};
    d.ex = xcalloc((size_t)n, sizeof *d.ex);
    for (int i = 0; i < n; i++) {
        d.ex[i].a = xstrdup(A[i]);
        d.ex[i].b = st->kind == SYNTH_SAME_TOPIC ? xstrdup(B[i]) : NULL;
        d.ex[i].label = i % 2;
        d.ex[i].score = (float)i;
    }
    return d;
}

/* The smallest distance of the network to a kink at its current point: the
 * gap between the largest and second largest step of every max over time, and
 * |u - v| of every pair feature. */
static double net_kink_margin(const TextRnn *m, int n, int T) {
    int R = n * (m->base.pair ? 2 : 1), H2 = 2 * m->cfg.hidden;
    double margin = INFINITY;
    for (int r = 0; r < R; r++)
        for (int f = 0; f < H2; f++) {
            double top = -INFINITY, second = -INFINITY;
            for (int t = 0; t < m->buf.lengths[r]; t++) {
                double x = m->buf.h[((long)r * T + t) * H2 + f];
                if (x > top) { second = top; top = x; }
                else if (x > second) second = x;
            }
            if (isfinite(second)) margin = fmin(margin, top - second);
        }
    for (int i = 0; m->base.pair && i < n; i++)
        for (int f = 0; f < H2; f++)
            margin = fmin(margin, fabs(m->buf.pooled[(long)i * H2 + f] - m->buf.pooled[(long)(n + i) * H2 + f]));
    return margin;
}

/* What one perturbation of the check (eps 1e-2 on one weight) can move a pooled
 * value by, with room to spare: points closer to a kink are skipped. */
#define NET_KINK_MARGIN 0.02

/* Every parameter tensor against central differences of the outputs (dropout
 * off: the check needs a deterministic function). Weights of O(1), not the
 * small init, so gradients stand well above the check's noise; the first
 * weight draw (from seed on) that keeps every max and |u - v| at least
 * NET_KINK_MARGIN from its kink is checked, as a difference across a kink
 * measures nothing. */
static void net_gradcheck(const SynthTask *st, int n, int hidden, uint64_t seed) {
    const Task *t = st->task;
    Dataset d = gradcheck_dataset(st, n);
    cJSON *cfg = small_config(t, 1);
    config_set(cfg, "dim", 5);
    config_set(cfg, "hidden", hidden);
    config_set(cfg, "mlp", 6);
    config_set(cfg, "dropout", 0);
    config_set(cfg, "emb_dropout", 0);
    TextRnn *m = (TextRnn *)BILSTM_OPS.create(cfg, t, &d, seed);
    if (CHECK(m != NULL)) {
        NetCase c = {.m = m, .s = (WordSeqs *)BILSTM_OPS.encode((Model *)m, &d), .rows = {0, 1, 2, 3}, .n = n};
        Params *p = m->base.params;
        double margin = 0;
        for (int tries = 0; tries < 5000 && margin < NET_KINK_MARGIN; tries++, seed += 1000) {
            for (int h = 0; h < params_num_tensors(p); h++) {
                float a = h == m->p.emb ? 2.0f : 1.2f;
                gradcheck_fill(params_data(p, h), params_tensor(p, h)->numel, -a, a, seed + (uint64_t)h);
            }
            net_forward(&c);
            margin = net_kink_margin(m, c.n, c.T);
        }
        if (CHECK_MSG(margin >= NET_KINK_MARGIN, "%s: no weights away from kinks (margin %g)", st->name, margin)) {
            GradCheck g;
            gradcheck_init(&g, &c, net_forward, net_backward, m->buf.out, (long)c.n * m->K);
            g.seed = seed;
            for (int h = 0; h < params_num_tensors(p); h++)
                gradcheck_add(&g, params_tensor(p, h)->name, params_data(p, h), params_grad(p, h),
                              params_tensor(p, h)->numel);
            gradcheck_expect(&g, st->name);
        }
        word_seqs_free(c.s);
        BILSTM_OPS.free((Model *)m);
    }
    cJSON_Delete(cfg);
    synth_free(&d);
}

TEST(bilstm_gradcheck_single) { net_gradcheck(&BL_SINGLE, 4, 4, 3); }
TEST(bilstm_gradcheck_pair) { net_gradcheck(&BL_PAIR, 4, 4, 4); }
TEST(bilstm_gradcheck_regression) { net_gradcheck(&BL_COUNT, 4, 4, 3); }

/* ---- learning ---- */

TEST(bilstm_learns_single_sentence) {
    cJSON *cfg = small_config(BL_SINGLE.task, 3);
    double acc = synth_learn(&BILSTM_OPS, &BL_SINGLE, cfg, 1500, 400, 11);
    CHECK_MSG(acc >= 95.0, "dev accuracy %.1f", acc);
    cJSON_Delete(cfg);
}

TEST(bilstm_learns_pairs) {
    /* Neither text alone says the label (chance is 50%): the |u - v| and u * v
     * features must carry it. */
    cJSON *cfg = small_config(BL_PAIR.task, 8);
    double acc = synth_learn(&BILSTM_OPS, &BL_PAIR, cfg, 2000, 400, 12);
    CHECK_MSG(acc >= 95.0, "pair dev accuracy %.1f", acc);
    cJSON_Delete(cfg);
}

TEST(bilstm_learns_regression) {
    cJSON *cfg = small_config(BL_COUNT.task, 4);
    double r = synth_learn(&BILSTM_OPS, &BL_COUNT, cfg, 1200, 300, 21);
    CHECK_MSG(r >= 0.95, "dev Pearson %.3f", r);
    cJSON_Delete(cfg);
}

/* ---- padding ---- */

/* A row predicted alone (no padding) and in a batch padded to a much longer
 * row, in either position, gives the same output. */
static void padding_invariance(const SynthTask *st) {
    const Task *t = st->task;
    Dataset d = synth_dataset(st, 40, 31);
    free(d.ex[0].a);   /* one long row: 40 words, the others pad to it */
    Rng r;
    rng_seed(&r, 32);
    d.ex[0].a = synth_text(&r, st, 1, 40, 2);
    cJSON *cfg = small_config(t, 1);
    Model *m = synth_train(&BILSTM_OPS, &d, cfg, 33);   /* trained a little: not a symmetric init */
    if (CHECK(m != NULL)) {
        int K = t->num_labels;
        Encoded *e = BILSTM_OPS.encode(m, &d);
        float alone[3], batched[2 * 3];
        double worst = 0;
        for (int i = 1; i < d.n; i++) {
            int rows[2] = {0, i}, rev[2] = {i, 0};
            evaluate_rows(&BILSTM_OPS, m, e, &i, 1, K, alone);
            evaluate_rows(&BILSTM_OPS, m, e, rows, 2, K, batched);
            for (int k = 0; k < K; k++) worst = fmax(worst, fabs(alone[k] - batched[K + k]));
            evaluate_rows(&BILSTM_OPS, m, e, rev, 2, K, batched);
            for (int k = 0; k < K; k++) worst = fmax(worst, fabs(alone[k] - batched[k]));
        }
        CHECK_MSG(worst < 1e-6, "%s: padding changed an output by %g", st->name, worst);
        BILSTM_OPS.encoded_free(e);
        BILSTM_OPS.free(m);
    }
    cJSON_Delete(cfg);
    synth_free(&d);
}

TEST(bilstm_padding_invariance) {
    padding_invariance(&BL_SINGLE);
    padding_invariance(&BL_PAIR);
}

/* ---- checkpoints ---- */

/* A fresh scratch file (tests/scratch.h) for a checkpoint or state the test writes; name tags it. */
static void temp_path(char *out, size_t cap, const char *name) {
    int fd = scratch_file(name, out, cap);
    CHECK(fd >= 0);
    if (fd >= 0) close(fd);
}

TEST(bilstm_save_load_same_predictions) {
    static const SynthTask *const tasks[] = {&BL_PAIR, &BL_COUNT};
    for (int k = 0; k < 2; k++) {
        const Task *t = tasks[k]->task;
        Dataset tr = synth_dataset(tasks[k], 300, 41 + k), dv = synth_dataset(tasks[k], 100, 51 + k);
        cJSON *cfg = small_config(t, 1);
        char path[512];
        temp_path(path, sizeof path, "model.ckpt");
        Model *m = synth_train(&BILSTM_OPS, &tr, cfg, 9);
        if (!CHECK(m != NULL)) continue;
        CHECK_EQ_INT(BILSTM_OPS.save(m, path), 0);
        Model *back = BILSTM_OPS.load(path, t);
        if (CHECK(back != NULL)) {
            int K = t->num_labels;
            float *a = synth_predict(&BILSTM_OPS, m, &dv, 64), *b = synth_predict(&BILSTM_OPS, back, &dv, 64);
            CHECK_MSG(memcmp(a, b, (size_t)dv.n * (size_t)K * sizeof *a) == 0, "%s: identical predictions", tasks[k]->name);
            CHECK_EQ_INT(BILSTM_OPS.num_params(back), BILSTM_OPS.num_params(m));
            free(a);
            free(b);
            BILSTM_OPS.free(back);
        }
        /* Another task's model, a truncated file, a missing one: clean NULLs. */
        stderr_quiet();
        CHECK(BILSTM_OPS.load(path, t == &SYNTH_TASKR ? &SYNTH_TASK2 : &SYNTH_TASKR) == NULL);
        FILE *f = fopen(path, "r+b");
        if (f) { CHECK(ftruncate(fileno(f), 100) == 0); fclose(f); }
        CHECK(BILSTM_OPS.load(path, t) == NULL);
        CHECK(BILSTM_OPS.load("/nonexistent/model.ckpt", t) == NULL);
        free(stderr_quiet_end());
        BILSTM_OPS.free(m);
        unlink(path);
        cJSON_Delete(cfg);
        synth_free(&tr);
        synth_free(&dv);
    }
}

/* Epochs 0-1 in one go, or epoch 0, save weights + state, free, load both,
 * epoch 1: the same weights to the bit (Adam's moments, step count and the
 * dropout stream all continue). */
TEST(bilstm_resume_is_exact) {
    const Task *t = BL_SINGLE.task;
    Dataset tr = synth_dataset(&BL_SINGLE, 300, 61);
    cJSON *cfg = small_config(t, 2);
    char wpath[512], spath[512];
    temp_path(wpath, sizeof wpath, "resume.ckpt");
    temp_path(spath, sizeof spath, "resume.state");
    Model *whole = synth_train(&BILSTM_OPS, &tr, cfg, 5);
    Model *half = BILSTM_OPS.create(cfg, t, &tr, 5);
    if (CHECK(whole && half)) {
        Encoded *e = BILSTM_OPS.encode(half, &tr);
        synth_train_epochs(&BILSTM_OPS, half, &tr, e, cfg, 5, 0, 1);
        CHECK_EQ_INT(BILSTM_OPS.save(half, wpath), 0);
        CHECK_EQ_INT(BILSTM_OPS.save_state(half, spath), 0);
        BILSTM_OPS.encoded_free(e);
        BILSTM_OPS.free(half);
        half = BILSTM_OPS.load(wpath, t);
        if (CHECK(half != NULL) && CHECK(BILSTM_OPS.load_state(half, spath) == 0)) {
            e = BILSTM_OPS.encode(half, &tr);
            synth_train_epochs(&BILSTM_OPS, half, &tr, e, cfg, 5, 1, 2);
            BILSTM_OPS.encoded_free(e);
            const Params *a = ((TextRnn *)whole)->base.params, *b = ((TextRnn *)half)->base.params;
            CHECK(a->total == b->total && memcmp(a->data, b->data, a->total * sizeof(float)) == 0);
        }
        /* A state file that is not one, or a weights file given as state. */
        stderr_quiet();
        if (half) CHECK(BILSTM_OPS.load_state(half, wpath) != 0);
        CHECK(BILSTM_OPS.load_state(whole, "/nonexistent/state") != 0);
        free(stderr_quiet_end());
    }
    BILSTM_OPS.free(whole);
    BILSTM_OPS.free(half);
    unlink(wpath);
    unlink(spath);
    cJSON_Delete(cfg);
    synth_free(&tr);
}

/* ---- user errors ---- */

/* create must fail with one message that names `expect`. */
static void expect_refused(const cJSON *cfg, const Dataset *tr, const char *expect) {
    stderr_quiet();
    Model *m = BILSTM_OPS.create(cfg, &SYNTH_TASK2, tr, 1);
    char *msg = stderr_quiet_end();
    CHECK_MSG(m == NULL && msg && strstr(msg, expect), "refused naming '%s': %s", expect, msg ? msg : "");
    if (m) BILSTM_OPS.free(m);
    free(msg);
}

TEST(bilstm_bad_config) {
    Dataset tr = synth_dataset(&BL_SINGLE, 50, 71);
    cJSON *cfg = small_config(&SYNTH_TASK2, 1);
    cJSON_ReplaceItemInObjectCaseSensitive(cfg, "activation", cJSON_CreateString("sigmoid"));
    expect_refused(cfg, &tr, "activation 'sigmoid'");
    cJSON_ReplaceItemInObjectCaseSensitive(cfg, "activation", cJSON_CreateString("relu"));
    config_set(cfg, "dropout", 1.0);   /* would drop everything */
    expect_refused(cfg, &tr, "dropout");
    config_set(cfg, "dropout", 0.5);
    config_set(cfg, "hidden", 2.5);
    expect_refused(cfg, &tr, "hidden");
    config_set(cfg, "hidden", 16);
    config_set(cfg, "min_count", 1000000);   /* every word pruned */
    expect_refused(cfg, &tr, "min_count");
    config_set(cfg, "min_count", 1);
    cJSON_ReplaceItemInObjectCaseSensitive(cfg, "vectors", cJSON_CreateString("/nonexistent/vectors.vec"));
    expect_refused(cfg, &tr, "/nonexistent/vectors.vec");
    cJSON_Delete(cfg);
    synth_free(&tr);
}

/* Vectors from a .vec file land in the embedding rows of their words. */
TEST(bilstm_vectors_init) {
    Dataset tr = synth_dataset(&BL_SINGLE, 50, 81);
    cJSON *cfg = small_config(&SYNTH_TASK2, 1);
    config_set(cfg, "dim", 3);
    char path[512];
    temp_path(path, sizeof path, "vectors.vec");
    FILE *f = fopen(path, "w");
    if (!CHECK(f != NULL)) return;
    fprintf(f, "2 3\nc1k0 0.5 -0.25 2\nnotaword 1 1 1\n");
    fclose(f);
    cJSON_ReplaceItemInObjectCaseSensitive(cfg, "vectors", cJSON_CreateString(path));
    stderr_quiet();
    TextRnn *m = (TextRnn *)BILSTM_OPS.create(cfg, &SYNTH_TASK2, &tr, 1);
    free(stderr_quiet_end());
    if (CHECK(m != NULL)) {
        int id = word_vocab_id(&m->base.vocab, "c1k0", 4);
        const float *row = params_data(m->base.params, m->p.emb) + (long)id * 3;
        CHECK(id >= WF_NUM_RESERVED);
        CHECK(row[0] == 0.5f && row[1] == -0.25f && row[2] == 2.0f);
        BILSTM_OPS.free((Model *)m);
    }
    unlink(path);
    cJSON_Delete(cfg);
    synth_free(&tr);
}
