/* test_train_step.c — the harness's training step (src/train/step.h: forward
 * to logits, the head's loss from the Dataset's labels, backward, the
 * gradient sum, update) against the step each model used to take inside its
 * own train_step before the harness owned the loss, written out here from
 * its ops and the nn loss it called on its logits (softmax cross-entropy
 * with -1 ignored, or MSE against the score; the change that moved the loss
 * compared the two, bit for bit but for BERT's siamese head, within 1e-7).
 * Two models made alike take the same batches, one each way: every step's
 * loss, and after it every gradient and weight, must be bit for bit the
 * same, and so the predictions afterwards (evaluation's logits through the
 * head against the softmax of the logits, or the score). For every head of
 * BERT, TextCNN and BiLSTM (single text, pair, regression) and the test
 * model. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/common.h"
#include "core/params.h"
#include "models/baselines/textrnn.h"
#include "models/baselines/textcnn.h"
#include "models/bert/bert_task.h"
#include "models/run_config.h"
#include "nn/mse.h"
#include "nn/softmax_xent.h"
#include "tests/scratch.h"
#include "tests/synth_task.h"
#include "tests/test.h"
#include "train/evaluate.h"
#include "train/step.h"

enum { STEP_ROWS = 64, STEP_BATCH = 8, STEP_STEPS = 5 };

/* The parameter arena of the models that have one (NULL: the test model). */
static Params *step_params(const ModelOps *ops, Model *m) {
    if (ops == &BERT_OPS) return ((BertTaskModel *)m)->bert->params;
    if (ops == &TEXTCNN_OPS) return ((TextCnn *)m)->base.params;
    if (ops == &BILSTM_OPS) return ((TextRnn *)m)->base.params;
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

/* The scale of a model's regression output (1 but for BERT's siamese head). */
static float step_scale(const ModelOps *ops, Model *m) { return ops->score_scale ? ops->score_scale(m) : 1.0f; }

/* The step as the models took it themselves: zero the gradients and
 * forward, the loss of the logits against rows' labels or scores, its
 * gradient back, the update. */
static float step_reference(const ModelOps *ops, Model *m, const Encoded *e, const Dataset *d, const int *rows, int n,
                            const TrainState *st) {
    int K = d->task->num_labels, labels[STEP_ROWS];
    float logits[STEP_ROWS * 3], dlogits[STEP_ROWS * 3] = {0}, targets[STEP_ROWS], scale = step_scale(ops, m);
    for (int i = 0; i < n; i++) {
        labels[i] = d->ex[rows[i]].label;
        targets[i] = d->ex[rows[i]].score / scale;
    }
    ops->forward(m, e, rows, n, st, logits);
    float loss = K == 1 ? mse_forward_backward(dlogits, logits, targets, n)
                        : softmax_xent_forward_backward(dlogits, logits, labels, NULL, n, K, -1);
    ops->backward(m, dlogits);
    return ops->update(m, st) == 0 ? loss : NAN;
}

/* Evaluation as the models did it: the softmax of the logits, or the score. */
static void step_reference_outputs(const ModelOps *ops, Model *m, const Encoded *e, const int *rows, int n, int K,
                                   float *out) {
    ops->forward(m, e, rows, n, NULL, out);
    if (K > 1) softmax_forward(out, out, n, K);
    else
        for (int i = 0; i < n; i++) out[i] *= step_scale(ops, m);
}

/* STEP_STEPS steps of train, model a by the reference step, model b by
 * train_step_run; the last step a larger batch than configured, which the
 * models but BERT (at most its configured batch) grow their buffers for. */
static void step_compare(const char *what, const ModelOps *ops, const cJSON *cfg, const Dataset *train) {
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
        int rows[STEP_ROWS], n = k + 1 == STEP_STEPS && ops != &BERT_OPS ? STEP_BATCH + 3 : STEP_BATCH;
        for (int i = 0; i < n; i++) rows[i] = (k * 29 + i * 7) % train->n;
        TrainState st = {.step = k, .total_steps = STEP_STEPS, .progress = (double)k / STEP_STEPS,
                         .lr = 1e-3f, .share = 1};
        float la = step_reference(ops, a, ea, train, rows, n, &st), lb = train_step_run(s, rows, n, &st);
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
    step_reference_outputs(ops, a, ea, rows, STEP_ROWS, K, oa);
    evaluate_rows(ops, b, eb, rows, STEP_ROWS, K, ob);
    double worst_out = step_diff(ob, oa, (long)STEP_ROWS * K);
    if (pa) {   /* the steps did train: the weights moved from a fresh model's */
        Model *fresh = ops->create(cfg, train->task, train, 5);
        Params *pf = step_params(ops, fresh);
        CHECK_MSG(step_diff(pb->data, pf->data, (long)pb->total) > 1e-6, "%s: the weights did not move", what);
        ops->free(fresh);
    }
    CHECK_MSG(worst_loss == 0 && worst_grad == 0 && worst_weight == 0 && worst_out == 0,
              "%s: harness step vs the reference: loss %.3g, gradients %.3g, weights %.3g, outputs %.3g", what,
              worst_loss, worst_grad, worst_weight, worst_out);
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

TEST(train_step_textcnn_and_bilstm_equal_the_reference) {
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
        step_compare(what, &TEXTCNN_OPS, tc, &d);
        cJSON *bl = BILSTM_OPS.default_config(d.task);
        step_set(bl, "dim", "12");
        step_set(bl, "hidden", "10");
        step_set(bl, "mlp", "14");
        step_set(bl, "batch", "8");
        snprintf(what, sizeof what, "bilstm %s", tasks[k]->name);
        step_compare(what, &BILSTM_OPS, bl, &d);
        cJSON_Delete(tc);
        cJSON_Delete(bl);
        synth_free(&d);
    }
}

TEST(train_step_test_model_equals_the_reference) {
    const ModelOps *bow = model_find("testbow");
    if (!bow) { test_skip("test model not linked"); return; }
    Dataset d = synth_dataset(&STEP_SINGLE, STEP_ROWS, 9);
    cJSON *c = bow->default_config(d.task);
    step_compare("testbow", bow, c, &d);
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

TEST(train_step_bert_heads_equal_the_reference) {
    char dir[SCRATCH_PATH_MAX], vocab[256], config[256];
    if (!CHECK(scratch_dir("step", dir, sizeof dir))) return;
    step_bert_files(dir, vocab, config, sizeof vocab);
    static const struct {
        const char *what, *pair_encoding;
        const SynthTask *data;
        int pair;
    } CASES[] = {
        {"bert classifier", "cross", &STEP_SINGLE, 0},
        {"bert regressor", "cross", &STEP_SCORE, 0},
        {"bert pair features", "features", &STEP_PAIR, 0},
        {"bert cross+features", "cross+features", &STEP_PAIR, 0},
        {"bert siamese", "siamese", &STEP_SCORE_PAIR, 1},
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
        step_compare(CASES[k].what, &BERT_OPS, c, &d);
        cJSON_Delete(c);
        synth_free(&d);
    }
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
}
