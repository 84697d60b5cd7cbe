/* test_dmn.c — the Dynamic Memory Network: forward logits and every
 * parameter's gradient against a PyTorch reference (tests/ref/dmn_ref.py:
 * single texts and pairs, a text of three sentences, an empty text a and an
 * empty question), learning synthetic tasks above the majority class (word
 * order; the relation of two texts), save/load, exact resume, batch
 * independence; and both memory models (dmn, entnet) through `glue finetune`
 * and `glue compare`. */
#include "tests/test.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "models/baselines/dmn.h"
#include "tests/cli_fixture.h"
#include "tests/gradcheck.h"
#include "tests/synth_task.h"
#include "tests/torchref.h"
#include "tests/zoo_checks.h"

static const SynthTask DMN_ORDER = {.name = "dmn order", .task = &SYNTH_TASK2, .kind = SYNTH_ORDER,
                                    .noise_words = 50, .len_min = 5, .len_max = 12, .phrase = 1};
static const SynthTask DMN_SAME = {.name = "dmn pair", .task = &SYNTH_TASK2, .kind = SYNTH_SAME_TOPIC,
                                   .class_words = 1, .noise_words = 50, .len_min = 4, .len_max = 11,
                                   .signal_min = 1, .signal_max = 1, .phrase = 1};

static void set_num(cJSON *c, const char *key, double v) { cJSON_ReplaceItemInObjectCaseSensitive(c, key, cJSON_CreateNumber(v)); }

static cJSON *small_config(int epochs) {
    cJSON *c = DMN_OPS.default_config(&SYNTH_TASK2);
    set_num(c, "dim", 16);
    set_num(c, "hidden", 16);
    set_num(c, "attention", 16);
    set_num(c, "max_len", 12);
    set_num(c, "epochs", epochs);
    set_num(c, "batch", 20);
    set_num(c, "dropout", 0.1);
    set_num(c, "lr", 3e-3);
    return c;
}

TEST(dmn_learns_word_order) {
    cJSON *cfg = small_config(6);
    double acc = synth_learn(&DMN_OPS, &DMN_ORDER, cfg, 2000, 400, 1);
    CHECK_MSG(acc >= 90.0, "order task (majority and bag of words: 50%%): dev accuracy %.1f", acc);
    cJSON_Delete(cfg);
}

TEST(dmn_learns_pairs) {
    cJSON *cfg = small_config(8);
    double acc = synth_learn(&DMN_OPS, &DMN_SAME, cfg, 2000, 400, 1);
    CHECK_MSG(acc >= 90.0, "same-word pair task (majority 75%%): dev accuracy %.1f", acc);
    cJSON_Delete(cfg);
}

/* ---- PyTorch reference ---- */

enum { REF_N = 4, REF_MAXLEN = 9, REF_CAP = 2 * REF_N * REF_MAXLEN };

static void dmn_compare_torch(const SynthTask *st) {
    Dataset d = synth_dataset(st, REF_N, 3);
    free(d.ex[1].a);
    d.ex[1].a = xstrdup("");
    free(d.ex[2].a);
    d.ex[2].a = xstrdup("n1 n2 n3. N4 n5! N6 n7 n8");   /* three sentences: three facts */
    if (d.ex[3].b) {
        free(d.ex[3].b);
        d.ex[3].b = xstrdup("");
    }
    cJSON *cfg = DMN_OPS.default_config(st->task);
    set_num(cfg, "dim", 4);
    set_num(cfg, "hidden", 5);
    set_num(cfg, "attention", 3);
    set_num(cfg, "passes", 2);
    set_num(cfg, "max_len", REF_MAXLEN);
    Dmn *m = (Dmn *)DMN_OPS.create(cfg, st->task, &d, 7);
    if (!CHECK(m != NULL)) goto done;
    int K = m->K, n = REF_N;
    Params *p = m->base.params;
    HanSeqs *s = (HanSeqs *)DMN_OPS.encode((Model *)m, &d);
    int rows[REF_N] = {2, 1, 3, 0};
    dmn_batch_forward(m, s, rows, n, 0);
    const DmnWork *w = &m->w;
    int R = w->R, T = w->T;
    CHECK_EQ_INT(w->foff[1] - w->foff[0], 3);   /* row 2: its sentences */
    CHECK_EQ_INT(w->foff[2] - w->foff[1], 1);   /* row 1: the empty text's padding word */
    float r[REF_N * 3], ids[REF_CAP], lens[2 * REF_N], fpos[REF_N * REF_MAXLEN];
    gradcheck_fill(r, (long)n * K, -1, 1, 5);
    for (long i = 0; i < (long)R * T; i++) ids[i] = (float)w->ids[i];
    for (int j = 0; j < R; j++) lens[j] = (float)w->lens[j];
    for (int j = 0; j < n; j++)
        for (int t = 0; t < T; t++) {
            int f = w->foff[j] + t;
            fpos[j * T + t] = f < w->foff[j + 1] ? (float)(w->fpos[f] - j * T) : -1.0f;
        }
    memcpy(m->w.dlogits, r, sizeof(float) * (size_t)n * K);
    params_zero_grad(p);
    dmn_batch_backward(m);
    RefTensor in[] = {{"ids", ids, (long)R * T}, {"lens", lens, R}, {"fpos", fpos, (long)n * T}, {"r", r, (long)n * K}};
    char args[128];
    snprintf(args, sizeof args, "%d %d %d %d %d %d %d %d %d", word_vocab_size(&m->base.vocab), m->cfg.dim,
             m->cfg.hidden, m->cfg.attention, m->cfg.passes, K, m->base.pair, n, T);
    zoo_check_torch_grads("dmn_ref.py", args, p, in, (int)(sizeof in / sizeof *in),
                          m->w.logits, (long)n * K, 1e-5, m->cfg.dim, st->name);
    DMN_OPS.encoded_free((Encoded *)s);
    DMN_OPS.free((Model *)m);
done:
    cJSON_Delete(cfg);
    synth_free(&d);
}

TEST(dmn_matches_torch_single) { dmn_compare_torch(&DMN_ORDER); }
TEST(dmn_matches_torch_pair) { dmn_compare_torch(&DMN_SAME); }

/* ---- checkpoints, resume, batches ---- */

TEST(dmn_save_load_resume_batch) {
    cJSON *cfg = small_config(2);
    zoo_check_save_load(&DMN_OPS, &DMN_SAME, cfg);
    zoo_check_resume_exact(&DMN_OPS, &DMN_ORDER, cfg);
    zoo_check_batch_independent(&DMN_OPS, &DMN_SAME, cfg, 1e-6);   /* the input GRU's GEMMs span the batch */
    zoo_check_divergence_refused(&DMN_OPS, &DMN_ORDER, cfg);
    cJSON_Delete(cfg);
}

/* ---- through the commands ---- */

/* `glue finetune --model dmn|entnet` on a user's dataset, then `glue compare`
 * of the two on it: each trains, and compare's table has a row for each. */
TEST(dmn_entnet_finetune_and_compare) {
    CliFixture f;
    if (cli_fixture_open(&f) != 0) return;
    if (!CHECK(cli_fixture_two_class(&f, "tr.tsv", 60) == 0)) goto done;
    int st = -1;
    char *out = cli_fixture_glue(&f, "finetune --train tr.tsv --dev tr.tsv --name zoo2 --model dmn --threads 1 "
                                     "--set epochs=1 --set hidden=8 --set dim=8 --set attention=8", &st);
    CHECK_MSG(st == 0, "finetune dmn exit %d: %s", st, out);
    free(out);
    out = cli_fixture_glue(&f, "compare zoo2 --models dmn,entnet --threads 1 --set epochs=1 --set dim=8 --json", &st);
    const char *json = out && out[0] == '{' ? out : out ? strstr(out, "\n{") : NULL;   /* after stderr's notes */
    cJSON *j = cJSON_Parse(json ? json : "");
    CHECK_MSG(st == 0 && j, "compare exit %d: %s", st, out);
    int rows = 0;
    const cJSON *models = cJSON_GetObjectItem(j, "models");
    for (const cJSON *m = models ? models->child : NULL; m; m = m->next) {
        const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(m, "model"));
        if (name && (strcmp(name, "dmn") == 0 || strcmp(name, "entnet") == 0))
            rows += CHECK_MSG(cJSON_GetObjectItem(cJSON_GetObjectItem(m, "tasks"), "zoo2") != NULL, "%s: no zoo2 entry", name);
    }
    CHECK_MSG(rows == 2, "compare has %d of the 2 rows: %s", rows, out);
    cJSON_Delete(j);
    free(out);
done:
    cli_fixture_close(&f);
}
