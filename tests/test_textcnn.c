/* test_textcnn.c — TextCNN: the gradient of the whole model (single and pair)
 * against finite differences, learning synthetic tasks only word order or the
 * relation of two texts can solve, regression, pre-trained vectors (static
 * stays frozen), save/load and exact resume, and bad settings / files. */
#include "tests/test.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/common.h"
#include "core/rng.h"
#include "eval/metrics.h"
#include "models/textcnn.h"
#include "tests/capture.h"
#include "tests/gradcheck.h"

static const Task TC_TASK2 = {.name = "tc2", .display = "TC-2", .num_labels = 2, .metrics = {METRIC_ACC, METRIC_NONE}};
static const Task TC_TASKR = {.name = "tcr", .display = "TC-R", .num_labels = 1,
                              .metrics = {METRIC_PEARSON, METRIC_NONE}};

enum { SYN_ORDER, SYN_SAME, SYN_COUNT };

/* `len` noise words "n<k>" with `ins` spliced in at a random position. */
static char *syn_text(Rng *r, int len, const char *ins) {
    char *s = xmalloc((size_t)len * 8 + strlen(ins) + 8), *p = s;
    int at = (int)rng_below(r, (uint32_t)len + 1);
    *p = '\0';
    for (int i = 0; i <= len; i++) {
        if (i == at && *ins) p += sprintf(p, "%s%s", p == s ? "" : " ", ins);
        if (i < len) p += sprintf(p, "%sn%u", p == s ? "" : " ", rng_below(r, 50));
    }
    return s;
}

/* SYN_ORDER: label 1 iff the text holds "x y" rather than "y x" (same bag of
 * words: only an order-aware model can tell). SYN_SAME (pairs): label 1 iff
 * a's "s<k>" equals b's "s<j>". SYN_COUNT (regression): the score is the
 * number of "good" among the words. */
static Dataset syn_dataset(int kind, int n, uint64_t seed) {
    Dataset d = {.task = kind == SYN_COUNT ? &TC_TASKR : &TC_TASK2, .n = n};
    d.ex = xcalloc((size_t)n, sizeof *d.ex);
    Rng r;
    rng_seed(&r, seed);
    for (int i = 0; i < n; i++) {
        Example *x = &d.ex[i];
        int len = 3 + (int)rng_below(&r, 8);
        char ins[64];
        if (kind == SYN_ORDER) {
            x->label = (int)rng_below(&r, 2);
            x->a = syn_text(&r, len, x->label ? "x y" : "y x");
        } else if (kind == SYN_SAME) {
            int k = (int)rng_below(&r, 4), same = (int)rng_below(&r, 2);
            int j = same ? k : (k + 1 + (int)rng_below(&r, 3)) % 4;
            x->label = same;
            snprintf(ins, sizeof ins, "s%d", k);
            x->a = syn_text(&r, len, ins);
            snprintf(ins, sizeof ins, "s%d", j);
            x->b = syn_text(&r, 3 + (int)rng_below(&r, 8), ins);
        } else {
            int k = (int)rng_below(&r, 4);
            ins[0] = '\0';
            for (int g = 0; g < k; g++) strcat(ins, g ? " good" : "good");
            x->score = (float)k;
            x->a = syn_text(&r, len, ins);
        }
    }
    return d;
}

static void syn_free(Dataset *d) {
    for (int i = 0; i < d->n; i++) { free(d->ex[i].a); free(d->ex[i].b); }
    free(d->ex);
}

static void set_num(cJSON *c, const char *key, double v) { cJSON_ReplaceItemInObjectCaseSensitive(c, key, cJSON_CreateNumber(v)); }
static void set_str(cJSON *c, const char *key, const char *v) { cJSON_ReplaceItemInObjectCaseSensitive(c, key, cJSON_CreateString(v)); }

/* A small, fast model: the architecture of the default, narrower. */
static cJSON *small_config(const Task *t, int epochs) {
    cJSON *c = TEXTCNN_OPS.default_config(t);
    set_num(c, "dim", 16);
    set_num(c, "filters", 12);
    set_num(c, "epochs", epochs);
    set_num(c, "batch", 25);
    return c;
}

/* What the trainer does: shuffled batches per epoch, st.lr from the config. */
static void train_epochs(Model *m, const Encoded *e, int n, const cJSON *cfg, int from, int to, uint64_t seed) {
    int batch = cJSON_GetObjectItem(cfg, "batch")->valueint;
    float lr = (float)cJSON_GetObjectItem(cfg, "lr")->valuedouble;
    int *rows = xmalloc((size_t)n * sizeof *rows);
    for (int ep = from; ep < to; ep++) {
        for (int i = 0; i < n; i++) rows[i] = i;
        Rng r;
        rng_seed_stream(&r, seed, (uint64_t)ep);
        rng_shuffle_int(&r, rows, n);
        for (int s = 0; s < n; s += batch) {
            TrainState st = {.lr = lr, .epoch = ep};
            float loss = TEXTCNN_OPS.train_step(m, e, rows + s, n - s < batch ? n - s : batch, &st);
            if (!CHECK_MSG(loss == loss && loss >= 0, "loss %g", loss)) { free(rows); return; }
        }
    }
    free(rows);
}

/* out (d->n, K) for every row. */
static float *predict_all(Model *m, const Dataset *d, int K) {
    Encoded *e = TEXTCNN_OPS.encode(m, d);
    int *rows = xmalloc((size_t)d->n * sizeof *rows);
    for (int i = 0; i < d->n; i++) rows[i] = i;
    float *out = xmalloc((size_t)d->n * K * sizeof *out);
    TEXTCNN_OPS.predict(m, e, rows, d->n, out);
    free(rows);
    TEXTCNN_OPS.encoded_free(e);
    return out;
}

static double accuracy(const float *out, const Dataset *d) {
    int ok = 0;
    for (int i = 0; i < d->n; i++) ok += (out[2 * i + 1] > out[2 * i]) == d->ex[i].label;
    return 100.0 * ok / d->n;
}

/* Trains a fresh model on kind; returns dev accuracy. */
static double learn(int kind, cJSON *cfg, int n_train) {
    Dataset tr = syn_dataset(kind, n_train, 1), dv = syn_dataset(kind, 400, 2);
    Model *m = TEXTCNN_OPS.create(cfg, &TC_TASK2, &tr, 7);
    double acc = -1;
    if (CHECK(m != NULL)) {
        Encoded *e = TEXTCNN_OPS.encode(m, &tr);
        train_epochs(m, e, tr.n, cfg, 0, cJSON_GetObjectItem(cfg, "epochs")->valueint, 3);
        TEXTCNN_OPS.encoded_free(e);
        float *out = predict_all(m, &dv, 2);
        acc = accuracy(out, &dv);
        free(out);
        TEXTCNN_OPS.free(m);
    }
    syn_free(&tr);
    syn_free(&dv);
    return acc;
}

TEST(textcnn_learns_word_order) {
    cJSON *cfg = small_config(&TC_TASK2, 4);
    double acc = learn(SYN_ORDER, cfg, 2000);
    CHECK_MSG(acc >= 95.0, "order task (bag of words: 50%%): dev accuracy %.1f", acc);
    cJSON_Delete(cfg);
}

TEST(textcnn_learns_pairs) {
    cJSON *cfg = small_config(&TC_TASK2, 6);
    double acc = learn(SYN_SAME, cfg, 2000);
    CHECK_MSG(acc >= 95.0, "same-word pair task: dev accuracy %.1f", acc);
    cJSON_Delete(cfg);
}

TEST(textcnn_learns_regression) {
    Dataset tr = syn_dataset(SYN_COUNT, 1500, 3), dv = syn_dataset(SYN_COUNT, 300, 4);
    cJSON *cfg = small_config(&TC_TASKR, 4);
    Model *m = TEXTCNN_OPS.create(cfg, &TC_TASKR, &tr, 5);
    if (CHECK(m != NULL)) {
        Encoded *e = TEXTCNN_OPS.encode(m, &tr);
        train_epochs(m, e, tr.n, cfg, 0, 4, 3);
        TEXTCNN_OPS.encoded_free(e);
        float *out = predict_all(m, &dv, 1);
        double *x = xmalloc((size_t)dv.n * sizeof *x), *y = xmalloc((size_t)dv.n * sizeof *y);
        for (int i = 0; i < dv.n; i++) { x[i] = out[i]; y[i] = dv.ex[i].score; }
        double r = metric_pearson(x, y, dv.n);
        CHECK_MSG(r > 0.95, "count regression: dev Pearson %.3f", r);
        free(x); free(y); free(out);
        TEXTCNN_OPS.free(m);
    }
    cJSON_Delete(cfg);
    syn_free(&tr);
    syn_free(&dv);
}

/* ---- gradient of the whole model ---- */

typedef struct {
    TextCnn *m;
    const WordSeqs *s;
    const int *rows;
    int n;
} GcCtx;

static void gc_forward(void *ctx) {
    GcCtx *g = ctx;
    tc_batch_forward(g->m, g->s, g->rows, g->n, 0);
}

static void gc_backward(void *ctx, const float *dout) {
    GcCtx *g = ctx;
    memcpy(g->m->w.dlogits, dout, (size_t)g->n * g->m->K * sizeof *dout);
    tc_batch_backward(g->m);
}

/* Loss-free check: logits (n, K) against every parameter (the embedding without
 * its padding row, which is held at zero by design). */
static void gradcheck_model(int kind, const char *windows) {
    Dataset d = syn_dataset(kind, 6, 9);
    cJSON *cfg = TEXTCNN_OPS.default_config(&TC_TASK2);
    set_num(cfg, "dim", 5);
    set_num(cfg, "filters", 4);
    cJSON_ReplaceItemInObjectCaseSensitive(cfg, "windows", cJSON_Parse(windows));
    TextCnn *m = (TextCnn *)TEXTCNN_OPS.create(cfg, &TC_TASK2, &d, 11);
    if (!CHECK(m != NULL)) { cJSON_Delete(cfg); syn_free(&d); return; }
    gradcheck_fill(m->out_w, (long)m->K * m->FC, -1, 1, 3);   /* Kim starts it at zero: no signal below */
    WordSeqs *s = (WordSeqs *)TEXTCNN_OPS.encode((Model *)m, &d);
    int rows[6] = {5, 0, 3, 1, 4, 2};
    GcCtx ctx = {m, s, rows, 6};
    tc_batch_forward(m, s, rows, 6, 0);
    GradCheck g;
    gradcheck_init(&g, &ctx, gc_forward, gc_backward, m->w.logits, 6L * m->K);
    /* Max-pooling and ReLU have a kink wherever two windows tie or a pooled
     * value is 0; with a handful of windows per row, eps 1e-2 crosses some
     * (measured: ~5% of elements off), 1e-3 none, and rounding stays far below
     * the tolerance. A wrong sign or shift still fails (checked by mutation). */
    g.eps = 1e-3f;
    int V = word_vocab_size(&m->vocab), D = m->cfg.dim;
    gradcheck_add(&g, "emb", m->emb + D, params_grad(m->params, m->h_emb) + D, (long)(V - 1) * D);
    for (int k = 0; k < m->cfg.num_windows; k++) {
        const ParamTensor *w = params_tensor(m->params, m->h_conv_w[k]);
        gradcheck_add(&g, w->name, m->conv_w[k], params_grad(m->params, m->h_conv_w[k]), w->numel);
        gradcheck_add(&g, "conv.b", m->conv_b[k], params_grad(m->params, m->h_conv_b[k]), m->cfg.filters);
    }
    gradcheck_add(&g, "out.w", m->out_w, params_grad(m->params, m->h_out_w), (long)m->K * m->FC);
    gradcheck_add(&g, "out.b", m->out_b, params_grad(m->params, m->h_out_b), m->K);
    gradcheck_expect(&g, kind == SYN_SAME ? "textcnn pair" : "textcnn single");
    TEXTCNN_OPS.encoded_free((Encoded *)s);
    TEXTCNN_OPS.free((Model *)m);
    cJSON_Delete(cfg);
    syn_free(&d);
}

TEST(textcnn_gradient_single) { gradcheck_model(SYN_ORDER, "[1, 3, 2]"); }
TEST(textcnn_gradient_pair) { gradcheck_model(SYN_SAME, "[2, 4]"); }

/* A row's output depends on its own words only, not on its batch: the padding
 * never reaches the pooled windows. */
TEST(textcnn_batch_independent) {
    Dataset d = syn_dataset(SYN_SAME, 40, 21);
    cJSON *cfg = small_config(&TC_TASK2, 1);
    Model *m = TEXTCNN_OPS.create(cfg, &TC_TASK2, &d, 2);
    if (CHECK(m != NULL)) {
        float *all = predict_all(m, &d, 2);
        Encoded *e = TEXTCNN_OPS.encode(m, &d);
        for (int i = 0; i < d.n; i++) {
            float one[2];
            TEXTCNN_OPS.predict(m, e, &i, 1, one);
            if (!CHECK_MSG(one[0] == all[2 * i] && one[1] == all[2 * i + 1], "row %d alone %g, in batch %g", i,
                           one[0], all[2 * i]))
                break;
        }
        TEXTCNN_OPS.encoded_free(e);
        free(all);
        TEXTCNN_OPS.free(m);
    }
    cJSON_Delete(cfg);
    syn_free(&d);
}

/* ---- checkpoints ---- */

static char *temp_path(const char *tag) {
    char *p = xmalloc(64);
    snprintf(p, 64, "/tmp/glue_tc_%s_XXXXXX", tag);
    int fd = mkstemp(p);
    CHECK(fd >= 0);
    close(fd);
    return p;
}

TEST(textcnn_save_load_same_predictions) {
    Dataset tr = syn_dataset(SYN_SAME, 300, 31);
    cJSON *cfg = small_config(&TC_TASK2, 1);
    Model *m = TEXTCNN_OPS.create(cfg, &TC_TASK2, &tr, 4);
    char *path = temp_path("ckpt");
    if (CHECK(m != NULL)) {
        Encoded *e = TEXTCNN_OPS.encode(m, &tr);
        train_epochs(m, e, tr.n, cfg, 0, 1, 3);
        TEXTCNN_OPS.encoded_free(e);
        CHECK(TEXTCNN_OPS.save(m, path) == 0);
        Model *l = TEXTCNN_OPS.load(path, &TC_TASK2);
        if (CHECK(l != NULL)) {
            float *a = predict_all(m, &tr, 2), *b = predict_all(l, &tr, 2);
            CHECK(memcmp(a, b, (size_t)tr.n * 2 * sizeof *a) == 0);
            CHECK_EQ_INT(TEXTCNN_OPS.num_params(l), TEXTCNN_OPS.num_params(m));
            free(a); free(b);
            TEXTCNN_OPS.free(l);
        }
        /* another task's checkpoint is refused with a message */
        StderrCapture cap;
        stderr_capture_begin(&cap);
        Model *x = TEXTCNN_OPS.load(path, &TC_TASKR);
        char *err = stderr_capture_end(&cap);
        CHECK(x == NULL);
        CHECK_MSG(strstr(err, "trained for task tc2") != NULL, "message: %s", err);
        free(err);
        TEXTCNN_OPS.free(m);
    }
    unlink(path);
    free(path);
    cJSON_Delete(cfg);
    syn_free(&tr);
}

/* Interrupted after epoch 1, saved, loaded, continued: bit-identical to an
 * uninterrupted run, for both optimizers. */
static void resume_exact(const char *optimizer, double lr) {
    Dataset tr = syn_dataset(SYN_ORDER, 300, 41), dv = syn_dataset(SYN_ORDER, 100, 42);
    cJSON *cfg = small_config(&TC_TASK2, 2);
    set_str(cfg, "optimizer", optimizer);
    set_num(cfg, "lr", lr);
    Model *a = TEXTCNN_OPS.create(cfg, &TC_TASK2, &tr, 8), *b = TEXTCNN_OPS.create(cfg, &TC_TASK2, &tr, 8);
    char *ckpt = temp_path("resume"), *state = temp_path("state");
    if (CHECK(a && b)) {
        Encoded *ea = TEXTCNN_OPS.encode(a, &tr);
        train_epochs(a, ea, tr.n, cfg, 0, 2, 5);
        Encoded *eb = TEXTCNN_OPS.encode(b, &tr);
        train_epochs(b, eb, tr.n, cfg, 0, 1, 5);
        CHECK(TEXTCNN_OPS.save(b, ckpt) == 0 && TEXTCNN_OPS.save_state(b, state) == 0);
        TEXTCNN_OPS.free(b);
        b = TEXTCNN_OPS.load(ckpt, &TC_TASK2);
        if (CHECK(b != NULL) && CHECK(TEXTCNN_OPS.load_state(b, state) == 0)) {
            train_epochs(b, eb, tr.n, cfg, 1, 2, 5);
            float *pa = predict_all(a, &dv, 2), *pb = predict_all(b, &dv, 2);
            CHECK_MSG(memcmp(pa, pb, (size_t)dv.n * 2 * sizeof *pa) == 0, "%s: resumed run differs", optimizer);
            const Params *p = ((TextCnn *)a)->params, *q = ((TextCnn *)b)->params;
            CHECK_MSG(memcmp(p->data, q->data, p->total * sizeof *p->data) == 0, "%s: weights differ", optimizer);
            free(pa); free(pb);
        }
        TEXTCNN_OPS.encoded_free(ea);
        TEXTCNN_OPS.encoded_free(eb);
    }
    if (a) TEXTCNN_OPS.free(a);
    if (b) TEXTCNN_OPS.free(b);
    unlink(ckpt); unlink(state);
    free(ckpt); free(state);
    cJSON_Delete(cfg);
    syn_free(&tr);
    syn_free(&dv);
}

TEST(textcnn_resume_exact) {
    resume_exact("adadelta", 1.0);
    resume_exact("adamw", 1e-3);
}

/* ---- pre-trained vectors ---- */

static char *write_vectors(const char *text) {
    char *p = temp_path("vec");
    FILE *f = fopen(p, "w");
    if (CHECK(f != NULL)) { fputs(text, f); fclose(f); }
    return p;
}

TEST(textcnn_static_vectors_stay_frozen) {
    Dataset tr = syn_dataset(SYN_ORDER, 200, 51);
    cJSON *cfg = small_config(&TC_TASK2, 1);
    set_num(cfg, "dim", 3);
    char *vec = write_vectors("2 3\nx 0.5 -1 2\nY 1 1 1\n");   /* "Y" matches "y" lower-cased */
    set_str(cfg, "vectors", vec);
    set_str(cfg, "embedding", "static");
    StderrCapture cap;
    stderr_capture_begin(&cap);
    TextCnn *m = (TextCnn *)TEXTCNN_OPS.create(cfg, &TC_TASK2, &tr, 3);
    char *err = stderr_capture_end(&cap);
    CHECK_MSG(strstr(err, "2 of 52 words") != NULL, "coverage report: %s", err);
    free(err);
    if (CHECK(m != NULL)) {
        int V = word_vocab_size(&m->vocab), x = word_vocab_id(&m->vocab, "x", 1), y = word_vocab_id(&m->vocab, "y", 1);
        CHECK_NEAR(m->emb[x * 3 + 2], 2.0, 0);
        CHECK_NEAR(m->emb[y * 3 + 0], 1.0, 0);
        float *before = xmalloc((size_t)V * 3 * sizeof *before);
        memcpy(before, m->emb, (size_t)V * 3 * sizeof *before);
        float conv0 = m->conv_w[0][0];
        Encoded *e = TEXTCNN_OPS.encode((Model *)m, &tr);
        train_epochs((Model *)m, e, tr.n, cfg, 0, 1, 1);
        TEXTCNN_OPS.encoded_free(e);
        CHECK(memcmp(before, m->emb, (size_t)V * 3 * sizeof *before) == 0);   /* static: unchanged */
        CHECK(m->conv_w[0][0] != conv0);                                       /* the rest trains */
        free(before);
        TEXTCNN_OPS.free((Model *)m);
    }
    /* non-static: the vectors are a start, then trained */
    set_str(cfg, "embedding", "non-static");
    stderr_capture_begin(&cap);
    m = (TextCnn *)TEXTCNN_OPS.create(cfg, &TC_TASK2, &tr, 3);
    free(stderr_capture_end(&cap));
    if (CHECK(m != NULL)) {
        int x = word_vocab_id(&m->vocab, "x", 1);
        Encoded *e = TEXTCNN_OPS.encode((Model *)m, &tr);
        train_epochs((Model *)m, e, tr.n, cfg, 0, 1, 1);
        TEXTCNN_OPS.encoded_free(e);
        CHECK(m->emb[x * 3 + 2] != 2.0f);
        for (int c = 0; c < 3; c++) CHECK(m->emb[WF_PAD * 3 + c] == 0.0f);   /* padding stays zero */
        TEXTCNN_OPS.free((Model *)m);
    }
    unlink(vec);
    free(vec);
    cJSON_Delete(cfg);
    syn_free(&tr);
}

/* create must fail with one message containing `want`. */
static void expect_create_error(cJSON *cfg, const Dataset *tr, const char *want) {
    StderrCapture cap;
    stderr_capture_begin(&cap);
    Model *m = TEXTCNN_OPS.create(cfg, &TC_TASK2, tr, 1);
    char *err = stderr_capture_end(&cap);
    CHECK_MSG(m == NULL, "accepted; wanted '%s'", want);
    CHECK_MSG(strstr(err, want) != NULL, "message '%s' lacks '%s'", err, want);
    if (m) TEXTCNN_OPS.free(m);
    free(err);
}

TEST(textcnn_bad_vectors_and_settings) {
    Dataset tr = syn_dataset(SYN_ORDER, 50, 61);
    cJSON *cfg = small_config(&TC_TASK2, 1);
    set_str(cfg, "embedding", "non-static");
    char *vec = write_vectors("2 300\nx 1 2 3\n");
    set_str(cfg, "vectors", vec);
    expect_create_error(cfg, &tr, "vectors have 300 dimensions, the model's embeddings 16");
    unlink(vec);
    free(vec);
    vec = write_vectors("x 1 2 3\n");
    set_str(cfg, "vectors", vec);
    expect_create_error(cfg, &tr, ":1: expected a word and 16 numbers, got 4 fields");
    unlink(vec);
    free(vec);
    set_str(cfg, "vectors", "/nonexistent/v.vec");
    expect_create_error(cfg, &tr, "/nonexistent/v.vec");
    set_str(cfg, "vectors", "");
    expect_create_error(cfg, &tr, "embedding non-static needs a vectors file");
    set_str(cfg, "embedding", "dynamic");
    expect_create_error(cfg, &tr, "unknown embedding 'dynamic'");
    set_str(cfg, "embedding", "rand");
    cJSON_ReplaceItemInObjectCaseSensitive(cfg, "windows", cJSON_Parse("[3, 0]"));
    expect_create_error(cfg, &tr, "window widths");
    cJSON_ReplaceItemInObjectCaseSensitive(cfg, "windows", cJSON_Parse("[3]"));
    set_num(cfg, "dropout", 1.0);
    expect_create_error(cfg, &tr, "dropout must be a number in [0, 1)");
    cJSON_Delete(cfg);
    syn_free(&tr);
}
