/* test_dpcnn.c — DPCNN: forward logits and every parameter's gradient against
 * a PyTorch reference (tests/ref/dpcnn_ref.py: single sentences, pairs, an
 * empty text, truncation), learning synthetic tasks above the majority class
 * (word order; the relation of two texts), save/load, exact resume, batch
 * independence. */
#include "tests/test.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "models/baselines/dpcnn.h"
#include "tests/gradcheck.h"
#include "tests/synth_task.h"
#include "tests/torchref.h"
#include "tests/zoo_checks.h"

static const SynthTask DP_ORDER = {.name = "dpcnn order", .task = &SYNTH_TASK2, .kind = SYNTH_ORDER,
                                   .noise_words = 50, .len_min = 5, .len_max = 12, .phrase = 1};
static const SynthTask DP_SAME = {.name = "dpcnn pair", .task = &SYNTH_TASK2, .kind = SYNTH_SAME_TOPIC,
                                  .class_words = 1, .noise_words = 50, .len_min = 4, .len_max = 11,
                                  .signal_min = 1, .signal_max = 1, .phrase = 1};

static void set_num(cJSON *c, const char *key, double v) { cJSON_ReplaceItemInObjectCaseSensitive(c, key, cJSON_CreateNumber(v)); }

/* The default's architecture, narrower and for short texts (4 levels). */
static cJSON *small_config(int epochs) {
    cJSON *c = DPCNN_OPS.default_config(&SYNTH_TASK2);
    set_num(c, "dim", 16);
    set_num(c, "filters", 12);
    set_num(c, "max_len", 12);
    set_num(c, "epochs", epochs);
    set_num(c, "batch", 20);
    set_num(c, "eval_batch", 20);
    return c;
}

TEST(dpcnn_learns_word_order) {
    cJSON *cfg = small_config(6);
    double acc = synth_learn(&DPCNN_OPS, &DP_ORDER, cfg, 2000, 400, 1);
    CHECK_MSG(acc >= 90.0, "order task (majority and bag of words: 50%%): dev accuracy %.1f", acc);
    cJSON_Delete(cfg);
}

TEST(dpcnn_learns_pairs) {
    cJSON *cfg = small_config(8);
    double acc = synth_learn(&DPCNN_OPS, &DP_SAME, cfg, 2000, 400, 1);
    CHECK_MSG(acc >= 90.0, "same-word pair task (majority 75%%): dev accuracy %.1f", acc);
    cJSON_Delete(cfg);
}

/* ---- PyTorch reference ---- */

enum { REF_N = 4, REF_MAXLEN = 9 };

/* Logits and gradients of sum(logits * r) for rows of a tiny model, in eval
 * mode, against dpcnn_ref.py. Text a of row 1 is emptied (one padding word),
 * and texts longer than max_len 9 are truncated (levels 0..4). */
static void dp_compare_torch(const SynthTask *st) {
    Dataset d = synth_dataset(st, REF_N, 3);
    free(d.ex[1].a);
    d.ex[1].a = xstrdup("");
    cJSON *cfg = DPCNN_OPS.default_config(st->task);
    set_num(cfg, "dim", 4);
    set_num(cfg, "filters", 5);
    set_num(cfg, "max_len", REF_MAXLEN);
    Dpcnn *m = (Dpcnn *)DPCNN_OPS.create(cfg, st->task, &d, 7);
    if (!CHECK(m != NULL)) goto done;
    int K = m->K, n = REF_N, B = m->base.pair ? 2 * n : n, F = m->cfg.filters;
    CHECK_EQ_INT(m->levels, 5);
    Params *p = m->base.params;
    WordSeqs *s = (WordSeqs *)DPCNN_OPS.encode((Model *)m, &d);
    int rows[REF_N] = {2, 1, 3, 0};
    dp_batch_forward(m, s, rows, n, 0);
    float r[REF_N * 3], ids[2 * REF_N * REF_MAXLEN] = {0}, lens[2 * REF_N];
    gradcheck_fill(r, (long)n * K, -1, 1, 5);
    const DpLevel *lv = &m->w.lv[0];
    for (int j = 0; j < B; j++) {
        lens[j] = (float)lv->len[j];
        for (int t = 0; t < lv->len[j]; t++) ids[j * REF_MAXLEN + t] = (float)m->w.ids[lv->start[j] + t];
    }
    memcpy(m->w.dlogits, r, (size_t)n * K * sizeof *r);
    params_zero_grad(p);
    dp_batch_backward(m);
    RefTensor in[] = {{"ids", ids, (long)B * REF_MAXLEN}, {"lengths", lens, B}, {"r", r, (long)n * K}};
    char args[128];
    snprintf(args, sizeof args, "%d %d %d %d %d %d %d %d", word_vocab_size(&m->base.vocab), m->cfg.dim, F, K,
             m->levels, m->base.pair, n, REF_MAXLEN);
    zoo_check_torch_grads("dpcnn_ref.py", args, p, in, (int)(sizeof in / sizeof *in),
                          m->w.logits, (long)n * K, 1e-4, m->cfg.dim, st->name);
    DPCNN_OPS.encoded_free((Encoded *)s);
    DPCNN_OPS.free((Model *)m);
done:
    cJSON_Delete(cfg);
    synth_free(&d);
}

TEST(dpcnn_matches_torch_single) { dp_compare_torch(&DP_ORDER); }
TEST(dpcnn_matches_torch_pair) { dp_compare_torch(&DP_SAME); }

/* ---- checkpoints, resume, batches ---- */

TEST(dpcnn_save_load_resume_batch) {
    cJSON *cfg = small_config(2);
    zoo_check_save_load(&DPCNN_OPS, &DP_SAME, cfg);
    zoo_check_resume_exact(&DPCNN_OPS, &DP_ORDER, cfg);
    zoo_check_batch_independent(&DPCNN_OPS, &DP_SAME, cfg, 1e-6);   /* GEMMs of another height round otherwise */
    zoo_check_divergence_refused(&DPCNN_OPS, &DP_ORDER, cfg);
    cJSON_Delete(cfg);
}
