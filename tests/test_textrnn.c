/* test_textrnn.c — the recurrent classifiers on TextRNN's network
 * (src/models/baselines/textrnn*): textrnn for each cell and pooling, bilstm
 * (its cell=lstm pool=max configuration, the BiLSTM baseline), and RCNN and
 * HAN (their encoders on this network). Finite-difference gradients of the
 * whole network, and its logits and parameter gradients against a PyTorch
 * reference (tests/ref/textrnn_ref.py: nn.LSTM / nn.GRU on packed sequences,
 * the pooling, the pair features, the classifier); learning small synthetic
 * tasks (single sentence, a pair task that needs both texts, regression); a
 * row's prediction independent of the rows padded with it; checkpoint round
 * trip, exact resume through the optimizer state, and clean refusals of bad
 * files and settings; pretrained vectors. One file because the four models
 * are one network: every helper below serves all of them. Tiny sizes: all of
 * it runs in seconds. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/common.h"
#include "core/rng.h"
#include "models/baselines/textrnn.h"
#include "tasks/task.h"
#include "tests/capture.h"
#include "tests/gradcheck.h"
#include "tests/synth_task.h"
#include "tests/scratch.h"
#include "tests/test.h"
#include "tests/zoo_checks.h"
#include "tests/torchref.h"
#include "train/evaluate.h"

/* Class words "c<class>k<k>" (k < 4) among noise "n<k>" (k < 100). Single
 * sentence: 1 or 2 class words say the label, lengths 3..14. Pair: a and b
 * each carry one of 4 topics; label 1 when the topics agree, so neither text
 * alone tells it. Regression: the score is the number of class-1 words among
 * 6 (0..5). */
static const SynthTask TR_SINGLE = {.name = "single", .task = &SYNTH_TASK2, .kind = SYNTH_CLASS,
                                    .class_words = 4, .noise_words = 100, .len_min = 3, .len_max = 14,
                                    .signal_min = 1, .signal_max = 2};
static const SynthTask TR_PAIR = {.name = "pair", .task = &SYNTH_TASK2, .kind = SYNTH_SAME_TOPIC,
                                  .class_words = 4, .noise_words = 100, .len_min = 3, .len_max = 10,
                                  .signal_min = 1, .signal_max = 1};
static const SynthTask TR_COUNT = {.name = "regression", .task = &SYNTH_TASKR, .kind = SYNTH_COUNT,
                                   .class_words = 4, .noise_words = 100, .len_min = 6, .len_max = 6,
                                   .signal_min = 0, .signal_max = 5};

static void set_num(cJSON *c, const char *key, double v) { cJSON_ReplaceItemInObjectCaseSensitive(c, key, cJSON_CreateNumber(v)); }
static void set_str(cJSON *c, const char *key, const char *v) { cJSON_ReplaceItemInObjectCaseSensitive(c, key, cJSON_CreateString(v)); }

/* A small config of ops with cell and pool ("" keeps the default). */
static cJSON *small_config(const ModelOps *ops, const Task *t, int epochs, const char *cell, const char *pool) {
    cJSON *c = ops->default_config(t);
    if (ops == &RCNN_OPS) set_num(c, "context", 8);
    if (ops == &HAN_OPS) set_num(c, "attention", 16);
    if (ops == &BILSTM_OPS) set_num(c, "mlp", 16);   /* its default, 512, is for GLUE */
    set_num(c, "epochs", epochs);
    set_num(c, "batch", 32);
    set_num(c, "dim", 16);
    set_num(c, "hidden", 16);
    set_num(c, "lr", 0.01);
    set_num(c, "dropout", 0.1);
    set_num(c, "emb_dropout", 0.1);
    if (cell[0]) set_str(c, "cell", cell);
    if (pool[0]) set_str(c, "pool", pool);
    return c;
}

/* ---- gradients: finite differences and PyTorch ---- */

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

/* n (<= 4) short rows of unequal lengths (pairs: b too). */
static Dataset small_dataset(const SynthTask *st, int n) {
    /* Some of two sentences (HAN's sentence level; one for the other models). */
    static const char *const A[4] = {"n1 n2. N3", "n4", "n5 n6! N2 n7", "c1k0"};
    static const char *const B[4] = {"n7", "n9. N1", "c0k1", "n3 n4. N5"};
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

/* The smallest distance of the network to a kink at its current point: |u - v|
 * of every pair feature, and the gap between the two largest steps of every
 * max over time. */
static double net_kink_margin(const TextRnn *m, int n, int T) {
    int R = n * (m->base.pair ? 2 : 1), P = m->P;
    double margin = INFINITY;
    int maxpool = m->enc == TR_ENC_RCNN || (m->enc == TR_ENC_BIRNN && m->cfg.pool == TR_POOL_MAX);
    for (int r = 0; maxpool && r < R; r++)   /* h: the BiRNN's outputs, RCNN's y */
        for (int f = 0; f < P; f++) {
            double top = -INFINITY, second = -INFINITY;
            for (int t = 0; t < m->buf.lengths[r]; t++) {
                double x = m->buf.h[((long)r * T + t) * P + f];
                if (x > top) { second = top; top = x; }
                else if (x > second) second = x;
            }
            if (isfinite(second)) margin = fmin(margin, top - second);
        }
    for (int i = 0; m->base.pair && i < n; i++)
        for (int f = 0; f < P; f++)
            margin = fmin(margin, fabs(m->buf.pooled[(long)i * P + f] - m->buf.pooled[(long)(n + i) * P + f]));
    return margin;
}

/* What one perturbation of the check (eps 1e-2 on one weight) can move a pooled
 * value by, with room to spare: points closer to a kink are skipped. */
#define NET_KINK_MARGIN 0.02

/* A tiny model of ops/cfg on the 4 rows of st, dropout off (the check needs a
 * deterministic function), with weights of O(1), not the small init, so that
 * gradients stand well above the check's noise: the first draw from seed on
 * that keeps every max and |u - v| NET_KINK_MARGIN from its kink, as a
 * difference across a kink measures nothing. NULL when none is found. */
static TextRnn *net_model(const ModelOps *ops, cJSON *cfg, const SynthTask *st, Dataset *d, NetCase *c, uint64_t seed) {
    set_num(cfg, "dim", 5);
    set_num(cfg, "hidden", 4);
    if (ops == &RCNN_OPS) set_num(cfg, "context", 3);
    if (ops == &HAN_OPS) set_num(cfg, "attention", 3);
    set_num(cfg, "dropout", 0);
    set_num(cfg, "emb_dropout", 0);
    *d = small_dataset(st, 4);
    TextRnn *m = (TextRnn *)ops->create(cfg, st->task, d, seed);
    if (!CHECK(m != NULL)) return NULL;
    *c = (NetCase){.m = m, .s = (WordSeqs *)ops->encode((Model *)m, d), .rows = {0, 1, 2, 3}, .n = 4};
    Params *p = m->base.params;
    double margin = 0;
    for (int tries = 0; tries < 5000 && margin < NET_KINK_MARGIN; tries++, seed += 1000) {
        for (int h = 0; h < params_num_tensors(p); h++) {
            float a = h == m->p.emb ? 2.0f : 1.2f;
            gradcheck_fill(params_data(p, h), params_tensor(p, h)->numel, -a, a, seed + (uint64_t)h);
        }
        net_forward(c);
        margin = net_kink_margin(m, c->n, c->T);
    }
    if (!CHECK_MSG(margin >= NET_KINK_MARGIN, "%s: no weights away from kinks (margin %g)", st->name, margin)) {
        ops->encoded_free((Encoded *)c->s);
        ops->free((Model *)m);
        return NULL;
    }
    return m;
}

static void net_gradcheck(const ModelOps *ops, const SynthTask *st, const char *cell, const char *pool, int mlp) {
    cJSON *cfg = small_config(ops, st->task, 1, cell, pool);
    set_num(cfg, "mlp", mlp);
    Dataset d;
    NetCase c;
    char what[128];
    snprintf(what, sizeof what, "%s %s cell=%s pool=%s mlp=%d", ops->name, st->name, cell, pool, mlp);
    TextRnn *m = net_model(ops, cfg, st, &d, &c, 7);
    if (m) {
        GradCheck g;
        gradcheck_init(&g, &c, net_forward, net_backward, m->buf.out, (long)c.n * m->K);
        Params *p = m->base.params;
        for (int h = 0; h < params_num_tensors(p); h++)
            gradcheck_add(&g, params_tensor(p, h)->name, params_data(p, h), params_grad(p, h), params_tensor(p, h)->numel);
        gradcheck_expect(&g, what);
        ops->encoded_free((Encoded *)c.s);
        ops->free((Model *)m);
    }
    cJSON_Delete(cfg);
    synth_free(&d);
}

TEST(textrnn_gradcheck_gru_attention) { net_gradcheck(&TEXTRNN_OPS, &TR_SINGLE, "gru", "attention", 0); }
TEST(textrnn_gradcheck_gru_attention_pair) { net_gradcheck(&TEXTRNN_OPS, &TR_PAIR, "gru", "attention", 6); }
TEST(textrnn_gradcheck_lstm_attention) { net_gradcheck(&TEXTRNN_OPS, &TR_COUNT, "lstm", "attention", 0); }
TEST(textrnn_gradcheck_gru_mean_pair) { net_gradcheck(&TEXTRNN_OPS, &TR_PAIR, "gru", "mean", 0); }
TEST(textrnn_gradcheck_lstm_last) { net_gradcheck(&TEXTRNN_OPS, &TR_SINGLE, "lstm", "last", 6); }
TEST(textrnn_gradcheck_gru_max) { net_gradcheck(&TEXTRNN_OPS, &TR_SINGLE, "gru", "max", 0); }
TEST(bilstm_gradcheck_single) { net_gradcheck(&BILSTM_OPS, &TR_SINGLE, "", "", 6); }
TEST(bilstm_gradcheck_pair) { net_gradcheck(&BILSTM_OPS, &TR_PAIR, "", "", 6); }
TEST(bilstm_gradcheck_regression) { net_gradcheck(&BILSTM_OPS, &TR_COUNT, "", "", 6); }

/* Logits and every parameter gradient of sum(logits * R) against
 * tests/ref/textrnn_ref.py, which rebuilds the network in PyTorch from the
 * model's tensors (by their checkpoint names), word ids and lengths. */
static void net_vs_torch(const ModelOps *ops, const SynthTask *st, const char *cell, const char *pool, int mlp) {
    cJSON *cfg = small_config(ops, st->task, 1, cell, pool);
    set_num(cfg, "mlp", mlp);
    Dataset d;
    NetCase c;
    TextRnn *m = net_model(ops, cfg, st, &d, &c, 17);
    if (!m) {
        cJSON_Delete(cfg);
        synth_free(&d);
        return;
    }
    Params *p = m->base.params;
    int nt = params_num_tensors(p), R = c.n * (m->base.pair ? 2 : 1), T = c.T, K = m->K;
    long nout = (long)c.n * K;
    float *r = malloc(sizeof(float) * (size_t)nout), *ref_out = malloc(sizeof(float) * (size_t)nout);
    float *ids = malloc(sizeof(float) * (size_t)R * T), *lens = malloc(sizeof(float) * (size_t)R);
    gradcheck_fill(r, nout, -1, 1, 5);
    for (long i = 0; i < (long)R * T; i++) ids[i] = (float)m->buf.ids[i];
    for (int i = 0; i < R; i++) lens[i] = (float)m->buf.lengths[i];
    RefTensor in[GRADCHECK_MAX_TENSORS + 5], out[GRADCHECK_MAX_TENSORS + 1];
    float *ref_g[GRADCHECK_MAX_TENSORS];
    char gname[GRADCHECK_MAX_TENSORS][128];
    int n_in = 0, n_out = 0;
    in[n_in++] = (RefTensor){"ids", ids, (long)R * T};
    in[n_in++] = (RefTensor){"lengths", lens, R};
    in[n_in++] = (RefTensor){"r", r, nout};
    /* HAN: the batch's sentences (words of each, and how many per text). */
    int sl[64], sc[8];
    float fsl[64], fsc[8];
    int RS = ops == &HAN_OPS ? han_batch_sentences(m, sl, sc) : 0;
    for (int k = 0; k < RS; k++) fsl[k] = (float)sl[k];
    for (int k = 0; k < R && RS; k++) fsc[k] = (float)sc[k];
    if (RS) {
        in[n_in++] = (RefTensor){"sents", fsl, RS};
        in[n_in++] = (RefTensor){"nsents", fsc, R};
    }
    out[n_out++] = (RefTensor){"logits", ref_out, nout};
    for (int h = 0; h < nt && h < GRADCHECK_MAX_TENSORS; h++) {
        const ParamTensor *pt = params_tensor(p, h);
        ref_g[h] = malloc(sizeof(float) * (size_t)pt->numel);
        snprintf(gname[h], sizeof gname[h], "d.%s", pt->name);
        in[n_in++] = (RefTensor){pt->name, params_data(p, h), pt->numel};
        out[n_out++] = (RefTensor){gname[h], ref_g[h], pt->numel};
    }
    char args[256];
    snprintf(args, sizeof args, "%s %d %d %d %d %d %d %d %s %s %d %d", ops->name, c.n, m->base.pair, T,
             m->cfg.dim, m->cfg.hidden, mlp, K, cell[0] ? cell : "-", pool[0] ? pool : "-",
             word_vocab_size(&m->base.vocab), ops == &HAN_OPS ? m->cfg.attention : m->cfg.context);
    if (RS) snprintf(args + strlen(args), sizeof args - strlen(args), " %d", RS);
    if (torchref_run("textrnn_ref.py", args, in, n_in, out, n_out) == 1) {
        net_forward(&c);
        double dl = torchref_max_diff(m->buf.out, ref_out, nout);
        CHECK_MSG(dl < 1e-4, "%s cell=%s pool=%s logits: max diff %g", ops->name, cell, pool, dl);
        params_zero_grad(p);
        net_backward(&c, r);
        for (int h = 0; h < nt; h++) {
            double dg = torchref_max_diff(params_grad(p, h), ref_g[h], params_tensor(p, h)->numel);
            CHECK_MSG(dg < 1e-4, "%s cell=%s pool=%s d%s: max diff %g", ops->name, cell, pool, params_tensor(p, h)->name, dg);
        }
    }
    for (int h = 0; h < nt && h < GRADCHECK_MAX_TENSORS; h++) free(ref_g[h]);
    free(r); free(ref_out); free(ids); free(lens);
    ops->encoded_free((Encoded *)c.s);
    ops->free((Model *)m);
    cJSON_Delete(cfg);
    synth_free(&d);
}

TEST(textrnn_matches_torch_gru_attention) { net_vs_torch(&TEXTRNN_OPS, &TR_SINGLE, "gru", "attention", 0); }
TEST(textrnn_matches_torch_lstm_attention_pair) { net_vs_torch(&TEXTRNN_OPS, &TR_PAIR, "lstm", "attention", 6); }
TEST(textrnn_matches_torch_gru_last_pair) { net_vs_torch(&TEXTRNN_OPS, &TR_PAIR, "gru", "last", 0); }
TEST(textrnn_matches_torch_lstm_mean) { net_vs_torch(&TEXTRNN_OPS, &TR_COUNT, "lstm", "mean", 0); }
TEST(textrnn_matches_torch_gru_max) { net_vs_torch(&TEXTRNN_OPS, &TR_SINGLE, "gru", "max", 6); }

TEST(rcnn_gradcheck_single) { net_gradcheck(&RCNN_OPS, &TR_SINGLE, "", "", 0); }
TEST(rcnn_gradcheck_pair_mlp) { net_gradcheck(&RCNN_OPS, &TR_PAIR, "", "", 6); }
TEST(rcnn_matches_torch) { net_vs_torch(&RCNN_OPS, &TR_SINGLE, "", "", 0); }
TEST(rcnn_matches_torch_pair) { net_vs_torch(&RCNN_OPS, &TR_PAIR, "", "", 0); }

TEST(han_gradcheck_single) { net_gradcheck(&HAN_OPS, &TR_SINGLE, "", "", 0); }
TEST(han_gradcheck_pair_mlp) { net_gradcheck(&HAN_OPS, &TR_PAIR, "", "", 6); }
TEST(han_matches_torch) { net_vs_torch(&HAN_OPS, &TR_SINGLE, "", "", 0); }
TEST(han_matches_torch_pair) { net_vs_torch(&HAN_OPS, &TR_PAIR, "", "", 0); }

/* HAN splits its texts into sentences when it encodes them. */
TEST(han_sees_sentences) {
    cJSON *cfg = small_config(&HAN_OPS, TR_PAIR.task, 1, "", "");
    Dataset d;
    NetCase c;
    TextRnn *m = net_model(&HAN_OPS, cfg, &TR_PAIR, &d, &c, 3);
    if (m) {
        int lens[16], counts[8];
        int RS = han_batch_sentences(m, lens, counts);
        /* a: "n1 n2. N3" "n4" "n5 n6! N2 n7" "c1k0"; b: "n7" "n9. N1" "c0k1" "n3 n4. N5" */
        static const int want_counts[8] = {2, 1, 2, 1, 1, 2, 1, 2};
        static const int want_lens[12] = {3, 1, 1, 3, 2, 1, 1, 2, 1, 1, 3, 1};
        CHECK_EQ_INT(RS, 12);
        CHECK(memcmp(counts, want_counts, sizeof want_counts) == 0);
        CHECK(RS == 12 && memcmp(lens, want_lens, sizeof want_lens) == 0);
        HAN_OPS.encoded_free((Encoded *)c.s);
        HAN_OPS.free((Model *)m);
    }
    cJSON_Delete(cfg);
    synth_free(&d);
}

/* ---- learning ---- */

/* Trains ops (cfg) on n_train rows of st and wants at least `want` on n_dev
 * more: accuracy in %, or Pearson r for regression. Frees cfg. */
static void expect_learns(const ModelOps *ops, const SynthTask *st, cJSON *cfg, int n_train, int n_dev,
                          uint64_t seed, double want) {
    double got = synth_learn(ops, st, cfg, n_train, n_dev, seed);
    CHECK_MSG(got >= want, "%s %s: dev score %.3f, want %g", ops->name, st->name, got, want);
    cJSON_Delete(cfg);
}

TEST(textrnn_learns_single_sentence) {
    cJSON *cfg = small_config(&TEXTRNN_OPS, TR_SINGLE.task, 3, "gru", "");   /* attention: the default */
    expect_learns(&TEXTRNN_OPS, &TR_SINGLE, cfg, 1500, 400, 11, 95.0);
}

/* Neither text alone says the label (chance is 50%): the |u - v| and u * v
 * features must carry it. */
TEST(textrnn_learns_pairs) {
    expect_learns(&TEXTRNN_OPS, &TR_PAIR, small_config(&TEXTRNN_OPS, TR_PAIR.task, 8, "lstm", "mean"), 2000, 400, 12,
                  90.0);
}

TEST(bilstm_learns_single_sentence) {
    expect_learns(&BILSTM_OPS, &TR_SINGLE, small_config(&BILSTM_OPS, TR_SINGLE.task, 3, "", ""), 1500, 400, 11, 95.0);
}

TEST(bilstm_learns_pairs) {
    expect_learns(&BILSTM_OPS, &TR_PAIR, small_config(&BILSTM_OPS, TR_PAIR.task, 8, "", ""), 2000, 400, 12, 95.0);
}

TEST(bilstm_learns_regression) {
    expect_learns(&BILSTM_OPS, &TR_COUNT, small_config(&BILSTM_OPS, TR_COUNT.task, 4, "", ""), 1200, 300, 21, 0.95);
}

/* The encoders on their defaults, single sentences and pairs. */
static void encoder_learns(const ModelOps *ops) {
    expect_learns(ops, &TR_SINGLE, small_config(ops, TR_SINGLE.task, 3, "", ""), 1500, 400, 11, 95.0);
    expect_learns(ops, &TR_PAIR, small_config(ops, TR_PAIR.task, 8, "", ""), 2000, 400, 12, 90.0);
}

TEST(rcnn_learns) { encoder_learns(&RCNN_OPS); }
TEST(han_learns) { encoder_learns(&HAN_OPS); }

/* ---- defaults ---- */

/* Epochs by the task: 2 on a large single-label task (SST-2), 10 on a small
 * one (CoLA) and on a multi-label one of any size (GoEmotions). */
TEST(textrnn_family_epochs_by_task) {
    const ModelOps *ops[4] = {&TEXTRNN_OPS, &BILSTM_OPS, &RCNN_OPS, &HAN_OPS};
    const char *tasks[3] = {"sst2", "cola", "goemotions"};
    const int want[3] = {2, 10, 10};
    for (int i = 0; i < 4; i++)
        for (int k = 0; k < 3; k++) {
            const Task *t = task_find(tasks[k]);
            if (!CHECK(t != NULL)) return;
            cJSON *c = ops[i]->default_config(t);
            const cJSON *e = cJSON_GetObjectItemCaseSensitive(c, "epochs");
            CHECK_MSG(cJSON_IsNumber(e) && e->valueint == want[k], "%s on %s: epochs %d, want %d", ops[i]->name,
                      tasks[k], cJSON_IsNumber(e) ? e->valueint : -1, want[k]);
            cJSON_Delete(c);
        }
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
    cJSON *cfg = small_config(&BILSTM_OPS, t, 1, "", "");
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
    padding_invariance(&TR_SINGLE);
    padding_invariance(&TR_PAIR);
}

/* Batches of every shape (a batch of more, shorter rows after fewer, longer
 * ones too: the workspace grows by rows and by cells apart), each row as alone. */
TEST(textrnn_rcnn_han_batch_independent) {
    const ModelOps *ops[3] = {&TEXTRNN_OPS, &RCNN_OPS, &HAN_OPS};
    for (int i = 0; i < 3; i++) {
        cJSON *cfg = small_config(ops[i], TR_PAIR.task, 1, "", "");
        zoo_check_batch_independent(ops[i], &TR_PAIR, cfg, 1e-5);   /* the GEMMs span the batch */
        cJSON_Delete(cfg);
    }
}

/* ---- checkpoints ---- */

/* A fresh scratch file (tests/scratch.h) for a checkpoint or state the test writes; name tags it. */
static void temp_path(char *out, size_t cap, const char *name) {
    int fd = scratch_file(name, out, cap);
    CHECK(fd >= 0);
    if (fd >= 0) close(fd);
}

/* Save and load give the same predictions; epochs 0-1 in one go equal epoch
 * 0, save weights + state, free, load both, epoch 1: the same weights to the
 * bit (Adam's moments, step count and the dropout stream all continue). A
 * state file that is not one is refused. */
static void save_load_resume(const ModelOps *ops, const char *cell, const char *pool) {
    const Task *t = TR_SINGLE.task;
    Dataset tr = synth_dataset(&TR_SINGLE, 300, 61), dv = synth_dataset(&TR_SINGLE, 100, 62);
    cJSON *cfg = small_config(ops, t, 2, cell, pool);
    char wpath[512], spath[512];
    temp_path(wpath, sizeof wpath, "resume.ckpt");
    temp_path(spath, sizeof spath, "resume.state");
    Model *whole = synth_train(ops, &tr, cfg, 5);
    Model *half = ops->create(cfg, t, &tr, 5);
    if (CHECK(whole && half)) {
        CHECK_EQ_INT(ops->save(whole, wpath), 0);
        Model *back = ops->load(wpath, t);
        if (CHECK(back != NULL)) {
            float *a = synth_predict(ops, whole, &dv, 64), *b = synth_predict(ops, back, &dv, 64);
            CHECK_MSG(memcmp(a, b, sizeof(float) * (size_t)dv.n * 2) == 0, "%s: identical predictions", ops->name);
            free(a);
            free(b);
            ops->free(back);
        }
        Encoded *e = ops->encode(half, &tr);
        synth_train_epochs(ops, half, &tr, e, cfg, 5, 0, 1);
        CHECK_EQ_INT(ops->save(half, wpath), 0);
        CHECK_EQ_INT(ops->save_state(half, spath), 0);
        ops->encoded_free(e);
        ops->free(half);
        half = ops->load(wpath, t);
        if (CHECK(half != NULL) && CHECK(ops->load_state(half, spath) == 0)) {
            e = ops->encode(half, &tr);
            synth_train_epochs(ops, half, &tr, e, cfg, 5, 1, 2);
            ops->encoded_free(e);
            const Params *a = ((TextRnn *)whole)->base.params, *b = ((TextRnn *)half)->base.params;
            CHECK_MSG(a->total == b->total && memcmp(a->data, b->data, a->total * sizeof(float)) == 0,
                      "%s: resumed weights equal", ops->name);
        }
        StderrCapture cap;
        stderr_capture_begin(&cap);
        if (half) CHECK_MSG(ops->load_state(half, wpath) != 0, "%s: weights as state", ops->name);
        CHECK_MSG(ops->load_state(whole, "/nonexistent/state") != 0, "%s: missing state", ops->name);
        free(stderr_capture_end(&cap));
    }
    if (whole) ops->free(whole);
    if (half) ops->free(half);
    unlink(wpath);
    unlink(spath);
    cJSON_Delete(cfg);
    synth_free(&tr);
    synth_free(&dv);
}

TEST(textrnn_save_load_resume_exact) { save_load_resume(&TEXTRNN_OPS, "gru", "attention"); }
TEST(rcnn_save_load_resume_exact) { save_load_resume(&RCNN_OPS, "", ""); }
TEST(han_save_load_resume_exact) { save_load_resume(&HAN_OPS, "", ""); }
TEST(bilstm_resume_is_exact) { save_load_resume(&BILSTM_OPS, "", ""); }

/* Pairs and regression: the same predictions after a round trip; another
 * task's model, a truncated file, a missing one: clean NULLs. */
TEST(bilstm_save_load_same_predictions) {
    static const SynthTask *const tasks[] = {&TR_PAIR, &TR_COUNT};
    for (int k = 0; k < 2; k++) {
        const Task *t = tasks[k]->task;
        Dataset tr = synth_dataset(tasks[k], 300, 41 + k), dv = synth_dataset(tasks[k], 100, 51 + k);
        cJSON *cfg = small_config(&BILSTM_OPS, t, 1, "", "");
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
        StderrCapture cap;
        stderr_capture_begin(&cap);
        CHECK(BILSTM_OPS.load(path, t == &SYNTH_TASKR ? &SYNTH_TASK2 : &SYNTH_TASKR) == NULL);
        FILE *f = fopen(path, "r+b");
        if (f) { CHECK(ftruncate(fileno(f), 100) == 0); fclose(f); }
        CHECK(BILSTM_OPS.load(path, t) == NULL);
        CHECK(BILSTM_OPS.load("/nonexistent/model.ckpt", t) == NULL);
        free(stderr_capture_end(&cap));
        BILSTM_OPS.free(m);
        unlink(path);
        cJSON_Delete(cfg);
        synth_free(&tr);
        synth_free(&dv);
    }
}

/* ---- user errors ---- */

/* ops' create must fail with one message that names `expect`. */
static void expect_refused(const ModelOps *ops, const cJSON *cfg, const Dataset *tr, const char *expect) {
    StderrCapture cap;
    stderr_capture_begin(&cap);
    Model *m = ops->create(cfg, &SYNTH_TASK2, tr, 1);
    char *msg = stderr_capture_end(&cap);
    CHECK_MSG(m == NULL && msg && strstr(msg, expect), "%s refused naming '%s': %s", ops->name, expect, msg ? msg : "");
    if (m) ops->free(m);
    free(msg);
}

/* A bilstm checkpoint is not a textrnn one (and the other way round): each
 * model's files say which they are. */
TEST(textrnn_refuses_settings_and_other_files) {
    Dataset tr = synth_dataset(&TR_SINGLE, 50, 71);
    StderrCapture cap;
    static const char *const bad[][2] = {{"pool", "sum"}, {"cell", "rnn"}};
    for (int i = 0; i < 2; i++) {
        cJSON *cfg = small_config(&TEXTRNN_OPS, &SYNTH_TASK2, 1, "", "");
        set_str(cfg, bad[i][0], bad[i][1]);
        expect_refused(&TEXTRNN_OPS, cfg, &tr, bad[i][1]);
        cJSON_Delete(cfg);
    }
    cJSON *cfg = small_config(&BILSTM_OPS, &SYNTH_TASK2, 1, "", "");
    Model *m = BILSTM_OPS.create(cfg, &SYNTH_TASK2, &tr, 1);
    char path[512];
    temp_path(path, sizeof path, "bilstm.ckpt");
    if (CHECK(m != NULL) && CHECK(BILSTM_OPS.save(m, path) == 0)) {
        stderr_capture_begin(&cap);
        Model *other = TEXTRNN_OPS.load(path, &SYNTH_TASK2);
        free(stderr_capture_end(&cap));
        CHECK(other == NULL);
        if (other) TEXTRNN_OPS.free(other);
    }
    if (m) BILSTM_OPS.free(m);
    unlink(path);
    cJSON_Delete(cfg);
    synth_free(&tr);
}

TEST(bilstm_bad_config) {
    Dataset tr = synth_dataset(&TR_SINGLE, 50, 71);
    cJSON *cfg = small_config(&BILSTM_OPS, &SYNTH_TASK2, 1, "", "");
    set_str(cfg, "activation", "sigmoid");
    expect_refused(&BILSTM_OPS, cfg, &tr, "activation 'sigmoid'");
    set_str(cfg, "activation", "relu");
    set_num(cfg, "dropout", 1.0);   /* would drop everything */
    expect_refused(&BILSTM_OPS, cfg, &tr, "dropout");
    set_num(cfg, "dropout", 0.5);
    set_num(cfg, "hidden", 2.5);
    expect_refused(&BILSTM_OPS, cfg, &tr, "hidden");
    set_num(cfg, "hidden", 16);
    set_num(cfg, "min_count", 1000000);   /* every word pruned */
    expect_refused(&BILSTM_OPS, cfg, &tr, "min_count");
    set_num(cfg, "min_count", 1);
    set_str(cfg, "vectors", "/nonexistent/vectors.vec");
    expect_refused(&BILSTM_OPS, cfg, &tr, "/nonexistent/vectors.vec");
    cJSON_Delete(cfg);
    synth_free(&tr);
}

/* ---- empty texts ---- */

/* Empty texts (a batch of only empty ones too) give finite outputs and a
 * training step, in every model of this network. */
TEST(recurrent_models_empty_texts) {
    const ModelOps *const models[] = {&TEXTRNN_OPS, &BILSTM_OPS, &RCNN_OPS, &HAN_OPS};
    Dataset tr = synth_dataset(&TR_PAIR, 40, 91);
    Dataset d = small_dataset(&TR_PAIR, 3);
    free(d.ex[0].a);
    free(d.ex[2].b);
    free(d.ex[1].a);
    free(d.ex[1].b);
    d.ex[0].a = xstrdup("");
    d.ex[2].b = xstrdup("  ");
    d.ex[1].a = xstrdup("");
    d.ex[1].b = xstrdup("");
    for (int k = 0; k < 4; k++) {
        const ModelOps *ops = models[k];
        cJSON *cfg = small_config(ops, tr.task, 1, "", "");
        Model *m = ops->create(cfg, tr.task, &tr, 1);
        if (CHECK(m != NULL)) {
            Encoded *e = ops->encode(m, &d);
            float out[6];
            int all[3] = {0, 1, 2}, empty[1] = {1};
            TrainState st = {.lr = 0.01f, .total_steps = 1, .share = 1};
            ops->forward(m, e, empty, 1, NULL, out);
            CHECK_MSG(isfinite(out[0]) && isfinite(out[1]), "%s: empty row", ops->name);
            ops->forward(m, e, all, 3, &st, out);
            float dl[6] = {0.1f, -0.1f, 0.2f, -0.2f, 0.3f, -0.3f};
            ops->backward(m, dl);
            CHECK_EQ_INT(ops->update(m, &st), 0);
            ops->forward(m, e, all, 3, NULL, out);
            for (int i = 0; i < 6; i++) CHECK_MSG(isfinite(out[i]), "%s: output %d", ops->name, i);
            ops->encoded_free(e);
            ops->free(m);
        }
        cJSON_Delete(cfg);
    }
    synth_free(&d);
    synth_free(&tr);
}

/* ---- pretrained vectors ---- */

/* Vectors from a .vec file land in the embedding rows of their words. */
TEST(bilstm_vectors_init) {
    Dataset tr = synth_dataset(&TR_SINGLE, 50, 81);
    cJSON *cfg = small_config(&BILSTM_OPS, &SYNTH_TASK2, 1, "", "");
    set_num(cfg, "dim", 3);
    char path[512];
    temp_path(path, sizeof path, "vectors.vec");
    FILE *f = fopen(path, "w");
    if (!CHECK(f != NULL)) return;
    fprintf(f, "2 3\nc1k0 0.5 -0.25 2\nnotaword 1 1 1\n");
    fclose(f);
    set_str(cfg, "vectors", path);
    StderrCapture cap;
    stderr_capture_begin(&cap);
    TextRnn *m = (TextRnn *)BILSTM_OPS.create(cfg, &SYNTH_TASK2, &tr, 1);
    free(stderr_capture_end(&cap));
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
