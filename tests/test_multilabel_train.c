/* test_multilabel_train.c — training multi-label and skewed tasks through the
 * harness's one head (src/train/head.h) and prediction rule (decision.h):
 * fastText (one-vs-all), TextCNN and BiLSTM learn a label-set fixture far
 * above the trivial predictors; the head's sigmoid loss is the op's on each
 * row's label set; class_weights / pos_weight "balanced" are scikit-learn's
 * and neg/pos; the settings are refused where they do not apply; threshold,
 * top_k and dev-tuned thresholds decide as they say. (BERT learns label sets
 * in test_bert_model.c, through the binary; the users' own-data round trip
 * is in test_user_data_multilabel.c.) */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "metrics/multilabel.h"
#include "models/baselines/textrnn.h"
#include "models/baselines/fasttext.h"
#include "models/baselines/textcnn.h"
#include "nn/sigmoid_bce.h"
#include "nn/softmax_xent.h"
#include "tests/capture.h"
#include "tests/gradcheck.h"
#include "tests/synth_task.h"
#include "tests/test.h"
#include "train/decision.h"
#include "train/head.h"

static const SynthTask ML_SYNTH = {.name = "multi-label", .task = &SYNTH_TASKML, .kind = SYNTH_MULTI,
                                   .class_words = 6, .noise_words = 40, .len_min = 4, .len_max = 7,
                                   .signal_min = 1, .signal_max = 2};

static void set_num(cJSON *c, const char *key, double v) {
    cJSON_ReplaceItemInObjectCaseSensitive(c, key, cJSON_CreateNumber(v));
}

/* The better of the trivial predictors on the fixture's dev rows: every label
 * (the frequency-threshold one predicts none, macro-F1 0). */
static double ml_trivial_macro_f1(void) {
    Dataset dv = synth_dataset(&ML_SYNTH, 400, 8);
    int K = SYNTH_TASKML.num_labels;
    uint8_t *gold = decision_gold(&dv, K), *all = xmalloc((size_t)dv.n * (size_t)K);
    memset(all, 1, (size_t)dv.n * (size_t)K);
    double f1 = 100.0 * multilabel_metric(METRIC_MACRO_F1, all, gold, dv.n, K);
    free(gold);
    free(all);
    synth_free(&dv);
    return f1;
}

static void ml_expect_learns(const ModelOps *ops, cJSON *cfg) {
    double trivial = ml_trivial_macro_f1();
    double f1 = synth_learn(ops, &ML_SYNTH, cfg, 1200, 400, 7);
    CHECK_MSG(f1 >= 90.0 && f1 > trivial + 20, "%s: dev macro-F1 %.1f (predicting every label: %.1f)", ops->name,
              f1, trivial);
    cJSON_Delete(cfg);
}

TEST(multilabel_fasttext_ova_learns) {
    cJSON *cfg = FASTTEXT_OPS.default_config(&SYNTH_TASKML);   /* loss ova: the multi-label default */
    CHECK(strcmp(cJSON_GetObjectItem(cfg, "loss")->valuestring, "ova") == 0);
    set_num(cfg, "dim", 16);
    set_num(cfg, "bucket", 10000);
    set_num(cfg, "epochs", 10);
    set_num(cfg, "lr", 0.5);
    set_num(cfg, "threads", 1);
    ml_expect_learns(&FASTTEXT_OPS, cfg);
    /* softmax or hs give one label per row: refused with the reason */
    Dataset tr = synth_dataset(&ML_SYNTH, 20, 1);
    cfg = FASTTEXT_OPS.default_config(&SYNTH_TASKML);
    cJSON_ReplaceItemInObjectCaseSensitive(cfg, "loss", cJSON_CreateString("hs"));
    StderrCapture cap;
    stderr_capture_begin(&cap);
    Model *m = FASTTEXT_OPS.create(cfg, &SYNTH_TASKML, &tr, 1);
    char *err = stderr_capture_end(&cap);
    CHECK_MSG(!m && strstr(err, "loss=hs gives one label per row") && strstr(err, "loss=ova"), "%s", err);
    free(err);
    cJSON_Delete(cfg);
    synth_free(&tr);
}

TEST(multilabel_textcnn_learns) {
    cJSON *cfg = TEXTCNN_OPS.default_config(&SYNTH_TASKML);
    set_num(cfg, "dim", 16);
    set_num(cfg, "filters", 12);
    set_num(cfg, "epochs", 10);
    set_num(cfg, "batch", 25);
    ml_expect_learns(&TEXTCNN_OPS, cfg);
}

TEST(multilabel_bilstm_learns) {
    cJSON *cfg = BILSTM_OPS.default_config(&SYNTH_TASKML);
    set_num(cfg, "epochs", 4);
    set_num(cfg, "batch", 32);
    set_num(cfg, "dim", 16);
    set_num(cfg, "hidden", 16);
    set_num(cfg, "mlp", 16);
    set_num(cfg, "lr", 0.01);
    ml_expect_learns(&BILSTM_OPS, cfg);
}

/* ---- the head ---- */

static cJSON *head_config(const char *loss, const char *cw, const char *pw) {
    cJSON *c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "loss", loss);
    cJSON_AddNumberToObject(c, "focal_gamma", 2);
    cJSON_AddStringToObject(c, "class_weights", cw);
    cJSON_AddStringToObject(c, "pos_weight", pw);
    return c;
}

TEST(multilabel_head_sigmoid_is_bce_on_label_sets) {
    Dataset d = synth_dataset(&ML_SYNTH, 12, 3);
    enum { N = 12, K = 4 };
    int rows[N];
    float logits[N * K], targets[N * K] = {0}, dl[N * K], ref_dl[N * K] = {0};
    for (int i = 0; i < N; i++) rows[i] = (i * 5) % N;
    gradcheck_fill(logits, N * K, -3, 3, 4);
    for (int i = 0; i < N; i++)
        for (int j = 0; j < d.ex[rows[i]].nlabels; j++) targets[i * K + d.ex[rows[i]].labels[j]] = 1;
    Head h;
    head_init(&h, K, 1, 1.0f);
    CHECK(h.kind == HEAD_SIGMOID);
    cJSON *c = head_config("ce", "none", "balanced");
    head_configure(&h, c, &d);
    /* pos_weight balanced: negatives / positives of each label over the 12 rows */
    float pw[K];
    for (int k = 0; k < K; k++) {
        int pos = 0;
        for (int i = 0; i < N; i++)
            for (int j = 0; j < d.ex[i].nlabels; j++) pos += d.ex[i].labels[j] == k;
        pw[k] = pos && pos < N ? (float)(N - pos) / (float)pos : 1.0f;
        CHECK_NEAR(h.pos_weight[k], pw[k], 1e-6);
    }
    float loss = head_loss(&h, &d, rows, N, logits, dl);
    float ref = sigmoid_bce_forward_backward(ref_dl, logits, targets, pw, NULL, N, K, 0);
    CHECK_NEAR(loss, ref, 1e-6);
    for (int i = 0; i < N * K; i++) CHECK_NEAR(dl[i], ref_dl[i], 1e-7);
    float p[N * K];
    head_outputs(&h, logits, N, p);
    for (int i = 0; i < N * K; i++) CHECK_NEAR(p[i], 1 / (1 + exp(-logits[i])), 1e-6);
    cJSON *desc = head_describe(&h);
    CHECK(strcmp(cJSON_GetObjectItem(desc, "kind")->valuestring, "sigmoid") == 0 &&
          cJSON_GetArraySize(cJSON_GetObjectItem(desc, "pos_weight")) == K);
    cJSON_Delete(desc);
    cJSON_Delete(c);
    head_free(&h);
    synth_free(&d);
}

/* class_weights=balanced is n_samples / (K count), and the loss is the
 * weighted cross-entropy (the op's, which tests/ref checks against PyTorch);
 * explicit weights by label name; the weights change the loss. */
TEST(multilabel_head_class_weights) {
    static const Task T3 = {.name = "t3", .display = "T3", .num_labels = 3, .labels = {"0", "1", "2"},
                            .label_names = {"neg", "neu", "pos"}, .metrics = {METRIC_ACC, METRIC_NONE}};
    enum { N = 10, K = 3 };
    Example ex[N];
    int labels[N] = {0, 0, 0, 0, 0, 0, 1, 1, 2, -1}, rows[N];
    for (int i = 0; i < N; i++) ex[i] = (Example){.label = labels[i]}, rows[i] = i;
    Dataset d = {.task = &T3, .ex = ex, .n = N};
    float logits[N * K], dl[N * K], ref_dl[N * K] = {0}, rw[N];
    gradcheck_fill(logits, N * K, -2, 2, 5);
    Head h;
    head_init(&h, K, 0, 1.0f);
    cJSON *c = head_config("ce", "balanced", "none");
    head_configure(&h, c, &d);
    const float want[K] = {9.0f / (3 * 6), 9.0f / (3 * 2), 9.0f / (3 * 1)};   /* 9 labelled rows */
    for (int k = 0; k < K; k++) CHECK_NEAR(h.class_weight[k], want[k], 1e-6);
    for (int i = 0; i < N; i++) rw[i] = labels[i] >= 0 ? want[labels[i]] : 0;
    float loss = head_loss(&h, &d, rows, N, logits, dl);
    CHECK_NEAR(loss, softmax_xent_forward_backward(ref_dl, logits, labels, rw, N, K, -1), 1e-6);
    for (int i = 0; i < N * K; i++) CHECK_NEAR(dl[i], ref_dl[i], 1e-7);
    float plain = softmax_xent_forward_backward(NULL, logits, labels, NULL, N, K, -1);
    CHECK_MSG(fabsf(loss - plain) > 1e-3f, "balanced weights left the loss at %g", (double)plain);
    head_free(&h);
    cJSON_Delete(c);
    head_init(&h, K, 0, 1.0f);
    c = head_config("focal", "pos:4,neg:0.5", "none");
    head_configure(&h, c, &d);
    CHECK(h.focal && h.gamma == 2 && h.class_weight[0] == 0.5f && h.class_weight[1] == 1 && h.class_weight[2] == 4);
    head_free(&h);
    cJSON_Delete(c);
}

/* Settings refused where they do not apply, or out of range: one message each. */
TEST(multilabel_head_and_rule_settings_refused) {
    static const Task T2 = {.name = "t2", .display = "T2", .num_labels = 2, .labels = {"0", "1"},
                            .metrics = {METRIC_ACC, METRIC_NONE}};
    static const Task TR = {.name = "tr", .display = "TR", .num_labels = 1, .metrics = {METRIC_PEARSON, METRIC_NONE}};
    static const struct { const Task *t; const char *key, *value, *want; } cases[] = {
        {&SYNTH_TASKML, "class_weights", "balanced", "class_weights applies to single-label"},
        {&T2, "pos_weight", "balanced", "pos_weight applies to multi-label"},
        {&TR, "class_weights", "balanced", "SYNTH"},   /* placeholder, replaced below */
        {&TR, "loss", "focal", "loss=focal applies to classification"},
        {&T2, "class_weights", "1:2,7:1", "'7' is not a label of T2"},
        {&T2, "class_weights", "1:-2", "must be a number in (0"},
        {&SYNTH_TASKML, "pos_weight", "lots", "pos_weight must be none, balanced or a number"},
        {&SYNTH_TASKML, "focal_gamma", "11", "focal_gamma"},
        {&SYNTH_TASKML, "threshold", "1.5", "threshold must be a probability in (0, 1) or 'tuned'"},
        {&SYNTH_TASKML, "threshold", "0", "threshold must be a probability"},
        {&SYNTH_TASKML, "top_k", "9", "top_k must be a whole number in [1, 4]"},
        {&T2, "threshold", "0.3", "threshold applies to multi-label tasks"},
        {&T2, "top_k", "1", "top_k applies to multi-label tasks"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cJSON *c = head_config("ce", "none", "none");
        cJSON_AddStringToObject(c, "threshold", "0.5");
        cJSON_AddNumberToObject(c, "top_k", 0);
        const char *want = i == 2 ? "class_weights applies to single-label classification; TR is regression" : cases[i].want;
        cJSON *old = cJSON_GetObjectItem(c, cases[i].key);
        cJSON_ReplaceItemInObjectCaseSensitive(c, cases[i].key, cJSON_IsNumber(old)
                                                   ? cJSON_CreateNumber(atof(cases[i].value))
                                                   : cJSON_CreateString(cases[i].value));
        StderrCapture cap;
        stderr_capture_begin(&cap);
        Decision rule;
        int rc = head_settings_check(c, cases[i].t);
        if (rc == 0) rc = decision_read(&rule, c, cases[i].t);
        char *err = stderr_capture_end(&cap);
        CHECK_MSG(rc != 0 && strstr(err, want) && strchr(err, '\n'), "%s=%s: %d '%s'", cases[i].key, cases[i].value,
                  rc, err);
        free(err);
        cJSON_Delete(c);
    }
    cJSON *c = head_config("ce", "none", "none");
    cJSON_AddStringToObject(c, "threshold", "0.3");
    cJSON_AddNumberToObject(c, "top_k", 2);
    StderrCapture cap;
    stderr_capture_begin(&cap);
    Decision rule;
    int rc = decision_read(&rule, c, &SYNTH_TASKML);
    char *err = stderr_capture_end(&cap);
    CHECK_MSG(rc != 0 && strstr(err, "two prediction rules"), "%s", err);
    free(err);
    cJSON_Delete(c);
}

/* threshold, top_k, and thresholds tuned on dev then applied unchanged. */
TEST(multilabel_rules_decide) {
    enum { N = 4, K = 3 };
    const float prob[N * K] = {0.9f, 0.35f, 0.1f,  0.2f, 0.25f, 0.3f,  0.6f, 0.4f, 0.05f,  0.1f, 0.32f, 0.8f};
    uint8_t pred[N * K];
    cJSON *c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "threshold", "0.3");
    cJSON_AddNumberToObject(c, "top_k", 0);
    Decision d;
    CHECK(decision_read(&d, c, &(Task){.num_labels = K, .multi_label = 1, .display = "x"}) == 0);
    decision_apply(&d, prob, N, pred);
    const uint8_t want03[N * K] = {1, 1, 0, 0, 0, 1, 1, 1, 0, 0, 1, 1};
    CHECK(memcmp(pred, want03, sizeof pred) == 0);
    decision_default(&d, K);   /* 0.5: row 1 predicts nothing (allowed) */
    decision_apply(&d, prob, N, pred);
    CHECK(pred[3] + pred[4] + pred[5] == 0 && pred[0] && pred[6] && pred[11]);
    d.rule = DECISION_TOP_K, d.top_k = 1;
    decision_apply(&d, prob, N, pred);
    for (int i = 0; i < N; i++) CHECK_EQ_INT(pred[i * K] + pred[i * K + 1] + pred[i * K + 2], 1);
    /* tuned: label 1's positives are the rows at 0.35, 0.4 and 0.32 (not 0.25) -> threshold 0.32 */
    const uint8_t gold[N * K] = {1, 1, 0, 0, 0, 1, 1, 1, 0, 0, 1, 1};
    d = (Decision){.rule = DECISION_TUNED, .K = K};
    decision_tune(&d, prob, gold, N);
    CHECK(d.have_tuned && fabsf(d.tuned[1] - 0.32f) < 1e-6f);
    decision_apply(&d, prob, N, pred);
    CHECK(memcmp(pred, gold, sizeof pred) == 0);
    cJSON_Delete(c);
}
