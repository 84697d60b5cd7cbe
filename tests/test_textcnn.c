/* test_textcnn.c — TextCNN: the gradient of the whole model (single and pair)
 * against finite differences, learning synthetic tasks only word order or the
 * relation of two texts can solve, regression, pre-trained vectors (static
 * stays frozen), save/load and exact resume, and bad settings / files. */
#include "tests/scratch.h"
#include "tests/test.h"
#include "tests/zoo_checks.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/common.h"
#include "models/baselines/textcnn.h"
#include "nn/conv1d.h"
#include "tests/capture.h"
#include "tests/gradcheck.h"
#include "tests/synth_task.h"
#include "train/evaluate.h"

/* Noise "n<k>" (k < 50) around the signal, which stands as one phrase so that a
 * window sees it whole. ORDER: label 1 iff "x y" rather than "y x" (same bag of
 * words: only an order-aware model can tell); SAME (pairs): label 1 iff a's
 * topic word equals b's; COUNT (regression): the score is the number of
 * class-1 words, 0..3. 3 to 10 noise words besides the signal; for COUNT 6 to
 * 13 words in all, so that the length tells nothing of the score. */
static const SynthTask TC_ORDER = {.name = "textcnn order", .task = &SYNTH_TASK2, .kind = SYNTH_ORDER,
                                   .noise_words = 50, .len_min = 5, .len_max = 12, .phrase = 1};
static const SynthTask TC_SAME = {.name = "textcnn pair", .task = &SYNTH_TASK2, .kind = SYNTH_SAME_TOPIC,
                                  .class_words = 1, .noise_words = 50, .len_min = 4, .len_max = 11,
                                  .signal_min = 1, .signal_max = 1, .phrase = 1};
static const SynthTask TC_COUNT = {.name = "textcnn count", .task = &SYNTH_TASKR, .kind = SYNTH_COUNT,
                                   .class_words = 1, .noise_words = 50, .len_min = 6, .len_max = 13,
                                   .signal_min = 0, .signal_max = 3, .phrase = 1};

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

TEST(textcnn_learns_word_order) {
    cJSON *cfg = small_config(&SYNTH_TASK2, 4);
    double acc = synth_learn(&TEXTCNN_OPS, &TC_ORDER, cfg, 2000, 400, 1);
    CHECK_MSG(acc >= 95.0, "order task (bag of words: 50%%): dev accuracy %.1f", acc);
    cJSON_Delete(cfg);
}

TEST(textcnn_learns_pairs) {
    cJSON *cfg = small_config(&SYNTH_TASK2, 6);
    double acc = synth_learn(&TEXTCNN_OPS, &TC_SAME, cfg, 2000, 400, 1);
    CHECK_MSG(acc >= 95.0, "same-word pair task: dev accuracy %.1f", acc);
    cJSON_Delete(cfg);
}

TEST(textcnn_learns_regression) {
    cJSON *cfg = small_config(&SYNTH_TASKR, 4);
    double r = synth_learn(&TEXTCNN_OPS, &TC_COUNT, cfg, 1500, 300, 3);
    CHECK_MSG(r > 0.95, "count regression: dev Pearson %.3f", r);
    cJSON_Delete(cfg);
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

/* The check's perturbation: at these sizes float rounding, divided by eps,
 * stays within 0.75 of the tolerance (measured over 20 data seeds); a larger
 * step has a larger reach (below), so fewer draws of the weights keep every
 * kink out of it. */
#define TC_GRAD_EPS 1e-3f

/* Windows at output positions a and b of width W (seen through the width's
 * shift s into the packed layout) read the same words: they are then one
 * function of the weights, equal and moving together under any perturbation,
 * so a tie between them is no kink. */
static int tc_same_words(const TcWork *w, long a, long b, int W, int s) {
    for (int u = 0; u < W; u++)
        if (w->ids[a + s + u] != w->ids[b + s + u]) return 0;
    return 1;
}

/* The smallest distance of the model to a kink at its current point, after a
 * forward of its n rows. Each pooled value is relu(max_t z_t) over the
 * pre-activations z_t of its sentence's windows (ReLU after the max,
 * textcnn_step.c), so its kinks are the largest z at 0 (distance |top|) and,
 * when the pool is not clamped at 0, the largest tied with the second (top -
 * second; clamped, ties do not matter until top reaches 0). Pairs add |u - v|
 * where u and v are both positive (one clamped: |u - v| is the other, already
 * >= |top|; both: u - v stays 0). Windows reading the same words never count
 * as a tie, nor do u and v won by such windows.
 * w.conv keeps only the last width's z, so every width's z is recomputed from
 * the forward's embedded layout w.x by the same conv1d call: bit-identical. */
static double tc_kink_margin(const TextCnn *m, int n) {
    const TcConfig *c = &m->cfg;
    const TcWork *w = &m->w;
    int B = w->B, T = w->T, F = c->filters, NW = c->num_windows, P = c->max_window - 1;
    long npool = (long)NW * B * F;
    float *z = xmalloc((size_t)T * F * sizeof *z), *top = xmalloc((size_t)npool * sizeof *top);
    long *won = xmalloc((size_t)npool * sizeof *won);   /* the winning window's position */
    double margin = INFINITY;
    for (int k = 0; k < NW; k++) {
        int W = c->window[k], s = c->max_window - W;
        Conv1dDims d = {.B = 1, .T = T, .C = tc_width(c), .F = F, .W = W};
        float *col = xmalloc((size_t)conv1d_scratch_size(d) * sizeof *col);
        conv1d_forward(z, w->x + (long)s * tc_width(c), m->conv_w[k], m->conv_b[k], d, col);
        free(col);
        for (int j = 0; j < B; j++) {
            long o0 = w->start[j] - P, nt = w->len[j] + W - 1;   /* the sentence's windows */
            for (int f = 0; f < F; f++) {
                long pool = ((long)k * B + j) * F + f, best = -1;
                for (long o = o0; o < o0 + nt; o++)
                    if (best < 0 || z[o * F + f] > z[best * F + f]) best = o;
                won[pool] = best;
                top[pool] = best < 0 ? 0.0f : z[best * F + f];
                if (best < 0) continue;   /* no window: pooled is 0 whatever the weights */
                margin = fmin(margin, fabs(top[pool]));
                if (top[pool] <= 0) continue;
                for (long o = o0; o < o0 + nt; o++)
                    if (o != best && !tc_same_words(w, o, best, W, s))
                        margin = fmin(margin, (double)top[pool] - z[o * F + f]);
            }
        }
    }
    for (int i = 0; m->base.pair && i < n; i++)
        for (int k = 0; k < NW; k++)
            for (int f = 0; f < F; f++) {
                long a = ((long)k * B + i) * F + f, b = ((long)k * B + n + i) * F + f;
                if (top[a] > 0 && top[b] > 0 &&
                    !tc_same_words(w, won[a], won[b], c->window[k], c->max_window - c->window[k]))
                    margin = fmin(margin, fabs((double)top[a] - top[b]));
            }
    free(z);
    free(top);
    free(won);
    return margin;
}

/* The most one perturbation of the check (eps on one weight) can move any of
 * the quantities above, at the current weights. Each pre-activation z is
 * linear in any one weight, with coefficient 1 for its bias, an embedding
 * value for a filter weight, and the sum of the filter weights that meet the
 * word in its window for an embedding value (at most W times the largest).
 * |top| moves by at most eps times the largest coefficient; a gap z_a - z_b,
 * and u - v, by eps times the largest difference of two coefficients: the
 * bias cancels, two embedding values differ by at most twice the largest, and
 * the filter weights of positions where both windows hold the word cancel, so
 * the rest is again at most W times the largest. With the model's init (Kim's
 * |emb| <= 0.25, PyTorch's |w| <= 1 / sqrt(W D)) at dim 5 and widths <= 4 it
 * is eps: the bias. */
static double tc_kink_reach(const TextCnn *m, double eps) {
    const TcConfig *c = &m->cfg;
    long ne = (long)word_vocab_size(&m->base.vocab) * c->dim;
    double emb = 0, coef = 1.0;
    for (long i = 0; i < ne; i++) emb = fmax(emb, fabs(m->emb[i]));
    for (long i = 0; m->emb_static && i < ne; i++) emb = fmax(emb, fabs(m->emb_static[i]));
    coef = fmax(coef, 2 * emb);
    for (int k = 0; k < c->num_windows; k++) {
        long nw = (long)c->filters * c->window[k] * tc_width(c);
        double w = 0;
        for (long i = 0; i < nw; i++) w = fmax(w, fabs(m->conv_w[k][i]));
        coef = fmax(coef, c->window[k] * w);
    }
    return eps * coef;
}

/* Points are checked at TC_KINK_ROOM times that reach from every kink. The
 * reach is a worst case, but it is attained: on unfiltered draws (both tasks,
 * 40 data seeds) every failing check had a kink within one reach (one at
 * 0.998 of it), and every draw with none that close passed (measured). 2 leaves
 * about 12% of draws qualifying for the single task, 2% for pairs (more
 * kinks): a few dozen draws, at most 150 over 20 data seeds. */
#define TC_KINK_ROOM 2.0

/* Loss-free check: logits (n, K) against every parameter (the embedding without
 * its padding row, which is held at zero by design). A difference quotient
 * across a kink (ReLU, a max over time, |u - v|) measures nothing, so the
 * weights are the first draw of the model's own init (seeds 11, 12, ...) that
 * keeps every kink TC_KINK_ROOM reaches away: the data seed is arbitrary, and
 * the check cannot pass or fail by where a kink happens to fall. The init's
 * scale, not O(1) weights, for the filters and embeddings: with O(1) logits at
 * eps 1e-3, float rounding alone exceeds the tolerance (measured). */
static char *write_vectors(const char *text);

/* Multichannel (vectors != NULL): the frozen channel gets no gradient, the
 * trained one and the (2-channel) filters are checked. */
static void gradcheck_model(const SynthTask *st, const char *windows, const char *vectors) {
    Dataset d = synth_dataset(st, 6, 3);
    cJSON *cfg = TEXTCNN_OPS.default_config(&SYNTH_TASK2);
    set_num(cfg, "dim", 5);
    set_num(cfg, "filters", 4);
    cJSON_ReplaceItemInObjectCaseSensitive(cfg, "windows", cJSON_Parse(windows));
    char *vec = vectors ? write_vectors(vectors) : NULL;
    if (vec) {
        set_str(cfg, "embedding", "multichannel");
        set_str(cfg, "vectors", vec);
    }
    StderrCapture cap;   /* the coverage line of each create */
    stderr_capture_begin(&cap);
    int rows[6] = {5, 0, 3, 1, 4, 2};
    TextCnn *m = NULL;
    WordSeqs *s = NULL;
    double margin = 0, need = INFINITY;
    uint64_t seed = 11;
    for (int tries = 0; tries < 5000 && !(margin >= need); tries++, seed++) {
        if (m) {
            TEXTCNN_OPS.encoded_free((Encoded *)s);
            TEXTCNN_OPS.free((Model *)m);
        }
        m = (TextCnn *)TEXTCNN_OPS.create(cfg, &SYNTH_TASK2, &d, seed);
        if (!m) break;
        /* Kim starts it at zero: no signal below. It has no kink: any draw. */
        gradcheck_fill(m->out_w, (long)m->K * m->FC, -1, 1, seed);
        s = (WordSeqs *)TEXTCNN_OPS.encode((Model *)m, &d);
        tc_batch_forward(m, s, rows, 6, 0);
        margin = tc_kink_margin(m, 6);
        need = TC_KINK_ROOM * tc_kink_reach(m, TC_GRAD_EPS);
    }
    free(stderr_capture_end(&cap));
    if (vec) {
        unlink(vec);
        free(vec);
    }
    if (!CHECK(m != NULL)) { cJSON_Delete(cfg); synth_free(&d); return; }
    if (CHECK_MSG(margin >= need, "%s: no draw of the weights keeps every kink %g away (last: %g)", st->name, need,
                  margin)) {
        GcCtx ctx = {m, s, rows, 6};
        GradCheck g;
        gradcheck_init(&g, &ctx, gc_forward, gc_backward, m->w.logits, 6L * m->K);
        g.eps = TC_GRAD_EPS;
        int V = word_vocab_size(&m->base.vocab), D = m->cfg.dim;
        gradcheck_add(&g, "emb", m->emb + D, params_grad(m->base.params, m->h_emb) + D, (long)(V - 1) * D);
        for (int k = 0; k < m->cfg.num_windows; k++) {
            const ParamTensor *w = params_tensor(m->base.params, m->h_conv_w[k]);
            gradcheck_add(&g, w->name, m->conv_w[k], params_grad(m->base.params, m->h_conv_w[k]), w->numel);
            gradcheck_add(&g, "conv.b", m->conv_b[k], params_grad(m->base.params, m->h_conv_b[k]), m->cfg.filters);
        }
        gradcheck_add(&g, "out.w", m->out_w, params_grad(m->base.params, m->h_out_w), (long)m->K * m->FC);
        gradcheck_add(&g, "out.b", m->out_b, params_grad(m->base.params, m->h_out_b), m->K);
        gradcheck_expect(&g, st->name);
        if (m->emb_static) {   /* frozen: never a gradient */
            const float *gs = params_grad(m->base.params, m->h_emb_static);
            int nonzero = 0;
            for (long i = 0; i < (long)V * D; i++) nonzero += gs[i] != 0.0f;
            CHECK_MSG(nonzero == 0, "emb_static: %d gradient values written", nonzero);
        }
    }
    TEXTCNN_OPS.encoded_free((Encoded *)s);
    TEXTCNN_OPS.free((Model *)m);
    cJSON_Delete(cfg);
    synth_free(&d);
}

TEST(textcnn_gradient_single) { gradcheck_model(&TC_ORDER, "[1, 3, 2]", NULL); }
TEST(textcnn_gradient_pair) { gradcheck_model(&TC_SAME, "[2, 4]", NULL); }
/* Two words from a file (the rest random, the same in both channels) */
#define TC_GC_VECTORS "2 5\nx 0.1 -0.2 0.05 0.2 -0.1\ny -0.15 0.1 0.2 -0.05 0.1\n"
TEST(textcnn_gradient_multichannel) { gradcheck_model(&TC_ORDER, "[1, 3, 2]", TC_GC_VECTORS); }
TEST(textcnn_gradient_multichannel_pair) { gradcheck_model(&TC_SAME, "[2, 4]", TC_GC_VECTORS); }

/* A row's output depends on its own words only, not on its batch (bit for
 * bit: the padding never reaches the pooled windows), in batches of every
 * shape (zoo_checks.h). */
TEST(textcnn_batch_independent) {
    cJSON *cfg = small_config(&SYNTH_TASK2, 1);
    zoo_check_batch_independent(&TEXTCNN_OPS, &TC_SAME, cfg, 0);
    cJSON_Delete(cfg);
}

/* ---- checkpoints ---- */

static char *temp_path(const char *tag) {
    char *p = xmalloc(SCRATCH_PATH_MAX), full_tag[64];
    snprintf(full_tag, sizeof full_tag, "tc_%s", tag);
    int fd = scratch_file(full_tag, p, SCRATCH_PATH_MAX);
    CHECK(fd >= 0);
    close(fd);
    return p;
}

TEST(textcnn_save_load_same_predictions) {
    Dataset tr = synth_dataset(&TC_SAME, 300, 31);
    cJSON *cfg = small_config(&SYNTH_TASK2, 1);
    Model *m = TEXTCNN_OPS.create(cfg, &SYNTH_TASK2, &tr, 4);
    char *path = temp_path("ckpt");
    if (CHECK(m != NULL)) {
        Encoded *e = TEXTCNN_OPS.encode(m, &tr);
        synth_train_epochs(&TEXTCNN_OPS, m, &tr, e, cfg, 3, 0, 1);
        TEXTCNN_OPS.encoded_free(e);
        CHECK(TEXTCNN_OPS.save(m, path) == 0);
        Model *l = TEXTCNN_OPS.load(path, &SYNTH_TASK2);
        if (CHECK(l != NULL)) {
            float *a = synth_predict(&TEXTCNN_OPS, m, &tr, 0), *b = synth_predict(&TEXTCNN_OPS, l, &tr, 0);
            CHECK(memcmp(a, b, (size_t)tr.n * 2 * sizeof *a) == 0);
            CHECK_EQ_INT(TEXTCNN_OPS.num_params(l), TEXTCNN_OPS.num_params(m));
            free(a); free(b);
            TEXTCNN_OPS.free(l);
        }
        /* another task's checkpoint is refused with a message */
        StderrCapture cap;
        stderr_capture_begin(&cap);
        Model *x = TEXTCNN_OPS.load(path, &SYNTH_TASKR);
        char *err = stderr_capture_end(&cap);
        CHECK(x == NULL);
        CHECK_MSG(strstr(err, "trained for task synth2") != NULL, "message: %s", err);
        free(err);
        TEXTCNN_OPS.free(m);
    }
    unlink(path);
    free(path);
    cJSON_Delete(cfg);
    synth_free(&tr);
}

/* Interrupted after epoch 1, saved, loaded, continued: bit-identical to an
 * uninterrupted run, for both optimizers. */
static void resume_exact(const char *optimizer, double lr) {
    Dataset tr = synth_dataset(&TC_ORDER, 300, 41), dv = synth_dataset(&TC_ORDER, 100, 42);
    cJSON *cfg = small_config(&SYNTH_TASK2, 2);
    set_str(cfg, "optimizer", optimizer);
    set_num(cfg, "lr", lr);
    Model *a = TEXTCNN_OPS.create(cfg, &SYNTH_TASK2, &tr, 8), *b = TEXTCNN_OPS.create(cfg, &SYNTH_TASK2, &tr, 8);
    char *ckpt = temp_path("resume"), *state = temp_path("state");
    if (CHECK(a && b)) {
        Encoded *ea = TEXTCNN_OPS.encode(a, &tr);
        synth_train_epochs(&TEXTCNN_OPS, a, &tr, ea, cfg, 5, 0, 2);
        Encoded *eb = TEXTCNN_OPS.encode(b, &tr);
        synth_train_epochs(&TEXTCNN_OPS, b, &tr, eb, cfg, 5, 0, 1);
        CHECK(TEXTCNN_OPS.save(b, ckpt) == 0 && TEXTCNN_OPS.save_state(b, state) == 0);
        TEXTCNN_OPS.free(b);
        b = TEXTCNN_OPS.load(ckpt, &SYNTH_TASK2);
        if (CHECK(b != NULL) && CHECK(TEXTCNN_OPS.load_state(b, state) == 0)) {
            synth_train_epochs(&TEXTCNN_OPS, b, &tr, eb, cfg, 5, 1, 2);
            float *pa = synth_predict(&TEXTCNN_OPS, a, &dv, 0), *pb = synth_predict(&TEXTCNN_OPS, b, &dv, 0);
            CHECK_MSG(memcmp(pa, pb, (size_t)dv.n * 2 * sizeof *pa) == 0, "%s: resumed run differs", optimizer);
            const Params *p = ((TextCnn *)a)->base.params, *q = ((TextCnn *)b)->base.params;
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
    synth_free(&tr);
    synth_free(&dv);
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
    Dataset tr = synth_dataset(&TC_ORDER, 200, 51);
    cJSON *cfg = small_config(&SYNTH_TASK2, 1);
    set_num(cfg, "dim", 3);
    char *vec = write_vectors("2 3\nx 0.5 -1 2\nY 1 1 1\n");   /* "Y" matches "y" lower-cased */
    set_str(cfg, "vectors", vec);
    set_str(cfg, "embedding", "static");
    StderrCapture cap;
    stderr_capture_begin(&cap);
    TextCnn *m = (TextCnn *)TEXTCNN_OPS.create(cfg, &SYNTH_TASK2, &tr, 3);
    char *err = stderr_capture_end(&cap);
    CHECK_MSG(strstr(err, "2 of 52 words") != NULL, "coverage report: %s", err);
    free(err);
    if (CHECK(m != NULL)) {
        int V = word_vocab_size(&m->base.vocab), x = word_vocab_id(&m->base.vocab, "x", 1), y = word_vocab_id(&m->base.vocab, "y", 1);
        CHECK_NEAR(m->emb[x * 3 + 2], 2.0, 0);
        CHECK_NEAR(m->emb[y * 3 + 0], 1.0, 0);
        float *before = xmalloc((size_t)V * 3 * sizeof *before);
        memcpy(before, m->emb, (size_t)V * 3 * sizeof *before);
        float conv0 = m->conv_w[0][0];
        Encoded *e = TEXTCNN_OPS.encode((Model *)m, &tr);
        synth_train_epochs(&TEXTCNN_OPS, (Model *)m, &tr, e, cfg, 1, 0, 1);
        TEXTCNN_OPS.encoded_free(e);
        CHECK(memcmp(before, m->emb, (size_t)V * 3 * sizeof *before) == 0);   /* static: unchanged */
        CHECK(m->conv_w[0][0] != conv0);                                       /* the rest trains */
        free(before);
        TEXTCNN_OPS.free((Model *)m);
    }
    /* non-static: the vectors are a start, then trained */
    set_str(cfg, "embedding", "non-static");
    stderr_capture_begin(&cap);
    m = (TextCnn *)TEXTCNN_OPS.create(cfg, &SYNTH_TASK2, &tr, 3);
    free(stderr_capture_end(&cap));
    if (CHECK(m != NULL)) {
        int x = word_vocab_id(&m->base.vocab, "x", 1);
        Encoded *e = TEXTCNN_OPS.encode((Model *)m, &tr);
        synth_train_epochs(&TEXTCNN_OPS, (Model *)m, &tr, e, cfg, 1, 0, 1);
        TEXTCNN_OPS.encoded_free(e);
        CHECK(m->emb[x * 3 + 2] != 2.0f);
        for (int c = 0; c < 3; c++) CHECK(m->emb[WF_PAD * 3 + c] == 0.0f);   /* padding stays zero */
        TEXTCNN_OPS.free((Model *)m);
    }
    unlink(vec);
    free(vec);
    cJSON_Delete(cfg);
    synth_free(&tr);
}

/* create must fail with one message containing `want`. */
static void expect_create_error(cJSON *cfg, const Dataset *tr, const char *want) {
    StderrCapture cap;
    stderr_capture_begin(&cap);
    Model *m = TEXTCNN_OPS.create(cfg, &SYNTH_TASK2, tr, 1);
    char *err = stderr_capture_end(&cap);
    CHECK_MSG(m == NULL, "accepted; wanted '%s'", want);
    CHECK_MSG(strstr(err, want) != NULL, "message '%s' lacks '%s'", err, want);
    if (m) TEXTCNN_OPS.free(m);
    free(err);
}

TEST(textcnn_bad_vectors_and_settings) {
    Dataset tr = synth_dataset(&TC_ORDER, 50, 61);
    cJSON *cfg = small_config(&SYNTH_TASK2, 1);
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
    synth_free(&tr);
}
