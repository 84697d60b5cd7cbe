/* test_train_step.c — the harness's training step (src/train/step.h: forward
 * to logits, the head's loss, backward, update) against each model's own
 * step from before the harness owned the loss (ModelOps.train_step): two
 * models made alike take the same batches, one each way; every step's loss,
 * and after it every gradient and weight, must be the same — bit for bit
 * where the two compute the same sums (BERT's classifier, regressor and
 * pair-features heads, TextCNN, BiLSTM), within rounding where the loss's
 * new home sums in another order (BERT's siamese head; the test model's
 * float softmax). Predictions afterwards agree too. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/common.h"
#include "core/params.h"
#include "models/baselines/bilstm.h"
#include "models/baselines/textcnn.h"
#include "models/bert/bert_task.h"
#include "models/run_config.h"
#include "tests/synth_task.h"
#include "tests/test.h"
#include "train/evaluate.h"
#include "train/step.h"

enum { STEP_ROWS = 64, STEP_BATCH = 8, STEP_STEPS = 5 };

/* The parameter arena of the models that have one (NULL: the test model). */
static Params *step_params(const ModelOps *ops, Model *m) {
    if (ops == &BERT_OPS) return ((BertTaskModel *)m)->bert->params;
    if (ops == &TEXTCNN_OPS) return ((TextCnn *)m)->base.params;
    if (ops == &BILSTM_OPS) return ((BiLstm *)m)->base.params;
    return NULL;
}

/* Largest |a - b| / (1 + |b|) over n floats. */
static double step_diff(const float *a, const float *b, long n) {
    double worst = 0;
    for (long i = 0; i < n; i++) {
        double d = fabs((double)a[i] - b[i]) / (1 + fabs((double)b[i]));
        worst = d > worst ? d : worst;
    }
    return worst;
}

/* STEP_STEPS steps of STEP_BATCH rows of train, model a by its own
 * train_step, model b by train_step_run; tol 0: bit for bit. */
static void step_compare(const char *what, const ModelOps *ops, const cJSON *cfg, const Dataset *train, double tol) {
    Model *a = ops->create(cfg, train->task, train, 5), *b = ops->create(cfg, train->task, train, 5);
    if (!CHECK_MSG(a && b, "%s: create", what)) {
        if (a) ops->free(a);
        if (b) ops->free(b);
        return;
    }
    Encoded *ea = ops->encode(a, train), *eb = ops->encode(b, train);
    TrainStep *s = train_step_create(ops, b, train, eb);
    Params *pa = step_params(ops, a), *pb = step_params(ops, b);
    double worst_loss = 0, worst_grad = 0, worst_weight = 0;
    for (int k = 0; k < STEP_STEPS; k++) {
        int rows[STEP_BATCH];
        for (int i = 0; i < STEP_BATCH; i++) rows[i] = (k * 29 + i * 7) % train->n;
        TrainState st = {.step = k, .total_steps = STEP_STEPS, .progress = (double)k / STEP_STEPS,
                         .lr = 1e-3f, .share = 1};
        float la = ops->train_step(a, ea, rows, STEP_BATCH, &st), lb = train_step_run(s, rows, STEP_BATCH, &st);
        double dl = fabs((double)la - lb) / (1 + fabs((double)la));
        worst_loss = dl > worst_loss ? dl : worst_loss;
        if (pa) {
            double g = step_diff(pb->grad, pa->grad, (long)pa->total), w = step_diff(pb->data, pa->data, (long)pa->total);
            worst_grad = g > worst_grad ? g : worst_grad;
            worst_weight = w > worst_weight ? w : worst_weight;
        }
    }
    int K = train->task->num_labels, rows[STEP_ROWS];
    for (int i = 0; i < STEP_ROWS; i++) rows[i] = i;
    float oa[STEP_ROWS * 3], ob[STEP_ROWS * 3];
    ops->predict(a, ea, rows, STEP_ROWS, oa);
    evaluate_rows(ops, b, eb, rows, STEP_ROWS, K, ob);
    double worst_out = step_diff(ob, oa, (long)STEP_ROWS * K);
    if (pa) {   /* the steps did train: the weights moved from a fresh model's */
        Model *fresh = ops->create(cfg, train->task, train, 5);
        Params *pf = step_params(ops, fresh);
        CHECK_MSG(step_diff(pb->data, pf->data, (long)pb->total) > 1e-6, "%s: the weights did not move", what);
        ops->free(fresh);
    }
    CHECK_MSG(worst_loss <= tol && worst_grad <= tol && worst_weight <= tol && worst_out <= tol,
              "%s: harness step vs the model's own: loss %.3g, gradients %.3g, weights %.3g, outputs %.3g (tol %g)",
              what, worst_loss, worst_grad, worst_weight, worst_out, tol);
    train_step_free(s);
    ops->encoded_free(ea);
    ops->encoded_free(eb);
    ops->free(a);
    ops->free(b);
}

static const SynthTask STEP_SINGLE = {.name = "single", .task = &SYNTH_TASK3, .kind = SYNTH_CLASS,
                                      .class_words = 4, .noise_words = 20, .len_min = 3, .len_max = 12,
                                      .signal_min = 1, .signal_max = 2};
static const SynthTask STEP_PAIR = {.name = "pair", .task = &SYNTH_TASK2, .kind = SYNTH_SAME_TOPIC,
                                    .class_words = 4, .noise_words = 20, .len_min = 3, .len_max = 9,
                                    .signal_min = 1, .signal_max = 1};
static const SynthTask STEP_SCORE = {.name = "score", .task = &SYNTH_TASKR, .kind = SYNTH_COUNT,
                                     .class_words = 4, .noise_words = 20, .len_min = 6, .len_max = 6,
                                     .signal_min = 0, .signal_max = 5};
static const SynthTask STEP_SCORE_PAIR = {.name = "score pair", .task = &SYNTH_TASKR, .kind = SYNTH_COUNT,
                                          .class_words = 4, .noise_words = 20, .len_min = 6, .len_max = 6,
                                          .signal_min = 0, .signal_max = 5};

static void step_set(cJSON *c, const char *key, const char *value) { CHECK(run_config_set(c, key, value, NULL) == 0); }

/* A second text for each row of d: the first one's words in reverse order of rows. */
static void step_add_b(Dataset *d) {
    for (int i = 0; i < d->n; i++) d->ex[i].b = xstrdup(d->ex[(i + 1) % d->n].a);
}

TEST(train_step_textcnn_and_bilstm_equal_their_own) {
    static const SynthTask *const tasks[] = {&STEP_SINGLE, &STEP_PAIR, &STEP_SCORE};
    for (int k = 0; k < 3; k++) {
        Dataset d = synth_dataset(tasks[k], STEP_ROWS, 3 + k);
        cJSON *tc = TEXTCNN_OPS.default_config(d.task);
        step_set(tc, "dim", "16");
        step_set(tc, "filters", "6");
        step_set(tc, "batch", "8");
        step_set(tc, "eval_batch", "8");
        char what[64];
        snprintf(what, sizeof what, "textcnn %s", tasks[k]->name);
        step_compare(what, &TEXTCNN_OPS, tc, &d, 0);
        cJSON *bl = BILSTM_OPS.default_config(d.task);
        step_set(bl, "dim", "12");
        step_set(bl, "hidden", "10");
        step_set(bl, "mlp", "14");
        step_set(bl, "batch", "8");
        snprintf(what, sizeof what, "bilstm %s", tasks[k]->name);
        step_compare(what, &BILSTM_OPS, bl, &d, 0);
        cJSON_Delete(tc);
        cJSON_Delete(bl);
        synth_free(&d);
    }
}

TEST(train_step_test_model_equals_its_own) {
    const ModelOps *bow = model_find("testbow");
    if (!bow) { test_skip("test model not linked"); return; }
    Dataset d = synth_dataset(&STEP_SINGLE, STEP_ROWS, 9);
    cJSON *c = bow->default_config(d.task);
    step_compare("testbow", bow, c, &d, 1e-5);
    cJSON_Delete(c);
    synth_free(&d);
}

/* A vocabulary of the synthetic words and a small BERT config (C 32, L 1). */
static void step_bert_files(const char *dir, char *vocab, char *config, size_t cap) {
    snprintf(vocab, cap, "%s/vocab.txt", dir);
    snprintf(config, cap, "%s/small.json", dir);
    FILE *f = fopen(vocab, "w");
    int words = 5;
    fprintf(f, "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n");
    for (int c = 0; c < 4; c++)
        for (int k = 0; k < 4; k++, words++) fprintf(f, "c%dk%d\n", c, k);
    for (int k = 0; k < 20; k++, words++) fprintf(f, "n%d\n", k);
    fclose(f);
    f = fopen(config, "w");
    fprintf(f, "{\"vocab_size\": %d, \"hidden_size\": 32, \"num_hidden_layers\": 1, \"num_attention_heads\": 2,"
               " \"intermediate_size\": 64, \"max_position_embeddings\": 32, \"hidden_dropout_prob\": 0.1,"
               " \"attention_probs_dropout_prob\": 0.1}\n", words);
    fclose(f);
}

TEST(train_step_bert_heads_equal_their_own) {
    char dir[] = "/tmp/glue_step_XXXXXX", vocab[256], config[256];
    if (!CHECK(mkdtemp(dir) != NULL)) return;
    step_bert_files(dir, vocab, config, sizeof vocab);
    static const struct {
        const char *what, *pair_encoding;
        const SynthTask *data;
        int pair;
        double tol;
    } CASES[] = {
        {"bert classifier", "cross", &STEP_SINGLE, 0, 0},
        {"bert regressor", "cross", &STEP_SCORE, 0, 0},
        {"bert pair features", "features", &STEP_PAIR, 0, 0},
        {"bert cross+features", "cross+features", &STEP_PAIR, 0, 0},
        /* The cosine's error: before in double from the cosine, now the
         * head's float MSE gradient times the cosine's derivative. */
        {"bert siamese", "siamese", &STEP_SCORE_PAIR, 1, 1e-5},
    };
    for (size_t k = 0; k < sizeof CASES / sizeof CASES[0]; k++) {
        Dataset d = synth_dataset(CASES[k].data, STEP_ROWS, 21 + (int)k);
        if (CASES[k].pair) step_add_b(&d);
        cJSON *c = BERT_OPS.default_config(d.task);
        step_set(c, "init", "none");
        step_set(c, "bert", config);
        step_set(c, "vocab", vocab);
        step_set(c, "max_len", "16");
        step_set(c, "batch", "8");
        step_set(c, "eval_batch", "8");
        step_set(c, "pair_encoding", CASES[k].pair_encoding);
        step_compare(CASES[k].what, &BERT_OPS, c, &d, CASES[k].tol);
        cJSON_Delete(c);
        synth_free(&d);
    }
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
}
