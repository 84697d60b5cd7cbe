/* test_entnet.c — the Recurrent Entity Network: forward logits and every
 * parameter's gradient against a PyTorch reference (tests/ref/entnet_ref.py:
 * single texts and pairs, a text of three sentences, an empty text a and an
 * empty text b), learning synthetic tasks above the majority class (word
 * order, through the position mask; the relation of two texts), save/load, exact resume, batch
 * independence. */
#include "tests/test.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "models/baselines/entnet.h"
#include "tests/gradcheck.h"
#include "tests/synth_task.h"
#include "tests/torchref.h"
#include "tests/zoo_checks.h"

static const SynthTask ENT_ORDER = {.name = "entnet order", .task = &SYNTH_TASK2, .kind = SYNTH_ORDER,
                                    .noise_words = 50, .len_min = 5, .len_max = 12, .phrase = 1};
static const SynthTask ENT_SAME = {.name = "entnet pair", .task = &SYNTH_TASK2, .kind = SYNTH_SAME_TOPIC,
                                   .class_words = 1, .noise_words = 50, .len_min = 4, .len_max = 11,
                                   .signal_min = 1, .signal_max = 1, .phrase = 1};

static void set_num(cJSON *c, const char *key, double v) { cJSON_ReplaceItemInObjectCaseSensitive(c, key, cJSON_CreateNumber(v)); }

static cJSON *small_config(int epochs) {
    cJSON *c = ENTNET_OPS.default_config(&SYNTH_TASK2);
    set_num(c, "dim", 16);
    set_num(c, "blocks", 5);
    set_num(c, "max_len", 12);
    set_num(c, "epochs", epochs);
    set_num(c, "batch", 20);
    set_num(c, "lr", 3e-3);
    return c;
}

TEST(entnet_learns_word_order) {   /* order shows only through the position mask: more epochs */
    cJSON *cfg = small_config(12);
    double acc = synth_learn(&ENTNET_OPS, &ENT_ORDER, cfg, 2000, 400, 1);
    CHECK_MSG(acc >= 90.0, "order task (majority and bag of words: 50%%): dev accuracy %.1f", acc);
    cJSON_Delete(cfg);
}

TEST(entnet_learns_pairs) {
    cJSON *cfg = small_config(8);
    double acc = synth_learn(&ENTNET_OPS, &ENT_SAME, cfg, 2000, 400, 1);
    CHECK_MSG(acc >= 90.0, "same-word pair task (majority 75%%): dev accuracy %.1f", acc);
    cJSON_Delete(cfg);
}

/* ---- PyTorch reference ---- */

enum { REF_N = 4, REF_MAXLEN = 9, REF_T = 2 * REF_MAXLEN };

static void ent_compare_torch(const SynthTask *st) {
    Dataset d = synth_dataset(st, REF_N, 3);
    free(d.ex[1].a);
    d.ex[1].a = xstrdup("");
    free(d.ex[2].a);
    d.ex[2].a = xstrdup("n1 n2 n3. N4 n5! N6 n7 n8");   /* three sentences: three updates */
    if (d.ex[3].b) {
        free(d.ex[3].b);
        d.ex[3].b = xstrdup("");
    }
    cJSON *cfg = ENTNET_OPS.default_config(st->task);
    set_num(cfg, "dim", 5);
    set_num(cfg, "blocks", 3);
    set_num(cfg, "max_len", REF_MAXLEN);
    Entnet *m = (Entnet *)ENTNET_OPS.create(cfg, st->task, &d, 7);
    if (!CHECK(m != NULL)) goto done;
    int K = m->K, n = REF_N;
    Params *p = m->base.params;
    /* slopes away from the PyTorch default, so that a swapped slope shows */
    gradcheck_fill(params_data(p, m->h_slope), m->cfg.dim, 0.1f, 0.4f, 8);
    gradcheck_fill(params_data(p, m->h_oslope), m->cfg.dim, 0.1f, 0.4f, 9);
    gradcheck_fill(params_data(p, m->h_mask), (long)REF_MAXLEN * m->cfg.dim, 0.5f, 1.5f, 10);
    HanSeqs *s = (HanSeqs *)ENTNET_OPS.encode((Model *)m, &d);
    int rows[REF_N] = {2, 1, 3, 0};
    ent_batch_forward(m, s, rows, n);
    const EntWork *w = &m->w;
    CHECK_EQ_INT(w->soff[1] - w->soff[0], 3);   /* row 2: its sentences */
    CHECK_EQ_INT(w->soff[2] - w->soff[1], 0);   /* row 1: no update */
    float r[REF_N * 3], ids[REF_N * REF_T] = {0}, la[REF_N], lb[REF_N], sents[REF_N * REF_T] = {0};
    gradcheck_fill(r, (long)n * K, -1, 1, 5);
    for (int j = 0; j < n; j++) {
        int row = rows[j];
        la[j] = (float)s->w.len_a[row];
        lb[j] = (float)(m->base.pair ? s->w.len_b[row] : 0);
        for (int i = w->woff[j]; i < w->woff[j + 1]; i++) ids[j * REF_T + i - w->woff[j]] = (float)w->ids[i];
        for (int t = w->soff[j]; t < w->soff[j + 1]; t++) sents[j * REF_T + t - w->soff[j]] = (float)w->slen[t];
    }
    memcpy(m->w.dlogits, r, sizeof(float) * (size_t)n * K);
    params_zero_grad(p);
    ent_batch_backward(m);
    RefTensor in[] = {{"ids", ids, (long)n * REF_T}, {"la", la, n}, {"lb", lb, n},
                      {"sents", sents, (long)n * REF_T}, {"r", r, (long)n * K}};
    char args[128];
    snprintf(args, sizeof args, "%d %d %d %d %d %d %d %d", word_vocab_size(&m->base.vocab), m->cfg.dim,
             m->cfg.blocks, m->cfg.max_len, K, m->base.pair, n, REF_T);
    zoo_check_torch_grads("entnet_ref.py", args, p, in, (int)(sizeof in / sizeof *in),
                          m->w.logits, (long)n * K, 1e-5, m->cfg.dim, st->name);
    ENTNET_OPS.encoded_free((Encoded *)s);
    ENTNET_OPS.free((Model *)m);
done:
    cJSON_Delete(cfg);
    synth_free(&d);
}

TEST(entnet_matches_torch_single) { ent_compare_torch(&ENT_ORDER); }
TEST(entnet_matches_torch_pair) { ent_compare_torch(&ENT_SAME); }

/* ---- checkpoints, resume, batches ---- */

TEST(entnet_save_load_resume_batch) {
    cJSON *cfg = small_config(2);
    zoo_check_save_load(&ENTNET_OPS, &ENT_SAME, cfg);
    zoo_check_resume_exact(&ENTNET_OPS, &ENT_ORDER, cfg);
    zoo_check_batch_independent(&ENTNET_OPS, &ENT_SAME, cfg, 1e-6);   /* the output layer's GEMM spans the batch */
    zoo_check_divergence_refused(&ENTNET_OPS, &ENT_ORDER, cfg);
    cJSON_Delete(cfg);
}
