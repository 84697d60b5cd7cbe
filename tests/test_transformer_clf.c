/* test_transformer_clf.c — the Transformer trained from scratch: forward logits
 * and every parameter's gradient against a PyTorch reference
 * (tests/ref/transformer_ref.py: mean and [CLS] pooling, single sentences and
 * pairs, an empty text), learning synthetic tasks above the majority class
 * (word order: positions matter; the relation of two texts), save/load, exact
 * resume, batch independence, a bad setting. */
#include "tests/test.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "models/baselines/transformer_clf.h"
#include "tests/capture.h"
#include "tests/gradcheck.h"
#include "tests/synth_task.h"
#include "tests/torchref.h"
#include "tests/zoo_checks.h"

static const SynthTask TF_ORDER = {.name = "transformer order", .task = &SYNTH_TASK2, .kind = SYNTH_ORDER,
                                   .noise_words = 50, .len_min = 5, .len_max = 12, .phrase = 1};
static const SynthTask TF_SAME = {.name = "transformer pair", .task = &SYNTH_TASK2, .kind = SYNTH_SAME_TOPIC,
                                  .class_words = 1, .noise_words = 50, .len_min = 4, .len_max = 11,
                                  .signal_min = 1, .signal_max = 1, .phrase = 1};

static void set_num(cJSON *c, const char *key, double v) { cJSON_ReplaceItemInObjectCaseSensitive(c, key, cJSON_CreateNumber(v)); }
static void set_str(cJSON *c, const char *key, const char *v) { cJSON_ReplaceItemInObjectCaseSensitive(c, key, cJSON_CreateString(v)); }

/* The default's architecture, narrower. */
static cJSON *small_config(int epochs, const char *pool) {
    cJSON *c = TRANSFORMER_OPS.default_config(&SYNTH_TASK2);
    set_num(c, "dim", 32);
    set_num(c, "heads", 2);
    set_num(c, "ff", 64);
    set_num(c, "max_len", 12);
    set_num(c, "epochs", epochs);
    set_num(c, "batch", 20);
    set_num(c, "eval_batch", 20);
    set_num(c, "lr", 1e-3);
    set_str(c, "pool", pool);
    return c;
}

TEST(transformer_learns_word_order) {
    cJSON *cfg = small_config(8, "cls");
    double acc = synth_learn(&TRANSFORMER_OPS, &TF_ORDER, cfg, 2000, 400, 1);
    CHECK_MSG(acc >= 90.0, "order task (majority and bag of words: 50%%): dev accuracy %.1f", acc);
    cJSON_Delete(cfg);
}

TEST(transformer_learns_pairs) {
    cJSON *cfg = small_config(8, "mean");
    double acc = synth_learn(&TRANSFORMER_OPS, &TF_SAME, cfg, 2000, 400, 1);
    CHECK_MSG(acc >= 90.0, "same-word pair task (majority 50%%): dev accuracy %.1f", acc);
    cJSON_Delete(cfg);
}

/* ---- PyTorch reference ---- */

enum { REF_N = 4 };

/* Logits and gradients of sum(logits * r) for rows of a tiny model (2 layers,
 * 2 heads), in eval mode, against transformer_ref.py; text a of row 1 is
 * emptied (one padding word). */
static void tf_compare_torch(const SynthTask *st, const char *pool) {
    Dataset d = synth_dataset(st, REF_N, 3);
    free(d.ex[1].a);
    d.ex[1].a = xstrdup("");
    cJSON *cfg = TRANSFORMER_OPS.default_config(st->task);
    set_num(cfg, "dim", 8);
    set_num(cfg, "heads", 2);
    set_num(cfg, "ff", 12);
    set_num(cfg, "max_len", 16);
    set_str(cfg, "pool", pool);
    TransformerClf *m = (TransformerClf *)TRANSFORMER_OPS.create(cfg, st->task, &d, 7);
    if (!CHECK(m != NULL)) goto done;
    int K = m->K, n = REF_N, C = m->cfg.dim;
    Params *p = m->base.params;
    gradcheck_fill(m->out_b, K, -0.5f, 0.5f, 9);   /* zero at init: give it a value */
    WordSeqs *s = (WordSeqs *)TRANSFORMER_OPS.encode((Model *)m, &d);
    int rows[REF_N] = {2, 1, 3, 0};
    tf_batch_forward(m, s, rows, n, 0);
    int B = m->w.B, T = m->w.T;
    float r[REF_N * 3], *ids = xmalloc((size_t)B * T * sizeof *ids), lens[2 * REF_N];
    gradcheck_fill(r, (long)n * K, -1, 1, 5);
    for (long i = 0; i < (long)B * T; i++) ids[i] = (float)m->w.ids[i];
    for (int j = 0; j < B; j++) lens[j] = (float)m->w.lengths[j];
    memcpy(m->w.dlogits, r, (size_t)n * K * sizeof *r);
    params_zero_grad(p);
    tf_batch_backward(m);
    RefTensor in[] = {{"ids", ids, (long)B * T}, {"lengths", lens, B}, {"r", r, (long)n * K}};
    char args[160];
    snprintf(args, sizeof args, "%d %d %d %d %d %d %d %d %d %d %g", word_vocab_size(&m->base.vocab), C, m->cfg.heads,
             m->cfg.ff, m->cfg.layers, K, m->cfg.pool == TF_POOL_CLS, m->base.pair, n, T, (double)m->cfg.eps);
    char label[96];
    snprintf(label, sizeof label, "%s %s", st->name, pool);
    zoo_check_torch_grads("transformer_ref.py", args, p, in, (int)(sizeof in / sizeof *in),
                          m->w.logits, (long)n * K, 1e-4, C, label);
    free(ids);
    TRANSFORMER_OPS.encoded_free((Encoded *)s);
    TRANSFORMER_OPS.free((Model *)m);
done:
    cJSON_Delete(cfg);
    synth_free(&d);
}

TEST(transformer_matches_torch_single_mean) { tf_compare_torch(&TF_ORDER, "mean"); }
TEST(transformer_matches_torch_single_cls) { tf_compare_torch(&TF_ORDER, "cls"); }
TEST(transformer_matches_torch_pair_mean) { tf_compare_torch(&TF_SAME, "mean"); }
TEST(transformer_matches_torch_pair_cls) { tf_compare_torch(&TF_SAME, "cls"); }

/* ---- checkpoints, resume, batches, settings ---- */

TEST(transformer_save_load_resume_batch) {
    cJSON *cfg = small_config(2, "cls");
    zoo_check_save_load(&TRANSFORMER_OPS, &TF_SAME, cfg);
    zoo_check_resume_exact(&TRANSFORMER_OPS, &TF_ORDER, cfg);
    /* padded to another length and computed in GEMMs of another height: the
     * last bits may differ, never more */
    zoo_check_batch_independent(&TRANSFORMER_OPS, &TF_SAME, cfg, 1e-5);
    zoo_check_divergence_refused(&TRANSFORMER_OPS, &TF_ORDER, cfg);
    cJSON_Delete(cfg);
}

TEST(transformer_refuses_heads_not_dividing_dim) {
    Dataset tr = synth_dataset(&TF_ORDER, 20, 61);
    cJSON *cfg = small_config(1, "mean");
    set_num(cfg, "heads", 3);
    StderrCapture cap;
    stderr_capture_begin(&cap);
    Model *m = TRANSFORMER_OPS.create(cfg, &SYNTH_TASK2, &tr, 1);
    char *err = stderr_capture_end(&cap);
    CHECK(m == NULL);
    CHECK_MSG(strstr(err, "dim 32 is not a multiple of heads 3") != NULL, "message: %s", err);
    free(err);
    if (m) TRANSFORMER_OPS.free(m);
    cJSON_Delete(cfg);
    synth_free(&tr);
}
