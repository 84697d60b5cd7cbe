/* pretrain_fixture.c — the micro pretraining setup the `glue pretrain` tests
 * share (see pretrain_fixture.h). */
#include "tests/pretrain_fixture.h"

#include "core/common.h"
#include "core/rng.h"
#include "tests/test.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const VOCAB[] = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "sat", "on",
                                    "mat", "dog", "ran", "a", "big", "red", "house", "run", "##s", "##ning",
                                    "un", "##believ", "##able", "tree", "and", ".", ",", "zebra", "##zz"};
#define NUM_VOCAB ((int)(sizeof VOCAB / sizeof VOCAB[0]))

static void put_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    if (!f || fputs(text, f) < 0 || fclose(f)) DIE("cannot write %s", path);
}

/* A corpus where each word follows from its neighbours: runs of a fixed cycle
 * of 18 words from random offsets. The words are equally frequent, so a model
 * that ignores the context cannot beat ln 18 = 2.89; below it, the model uses
 * the context. Blank lines separate documents. */
static void write_corpus(const char *path, int docs, uint64_t seed) {
    static const char *const CYCLE[] = {"the", "cat", "sat", "on", "mat", "dog", "ran", "a", "big", "red",
                                        "house", "tree", "and", ".", ",", "zebra", "un", "run"};
    enum { NC = (int)(sizeof CYCLE / sizeof CYCLE[0]) };
    Rng r;
    rng_seed(&r, seed);
    FILE *f = fopen(path, "w");
    if (!f) DIE("cannot write %s", path);
    for (int d = 0; d < docs; d++) {
        for (int s = 0; s < 6; s++) {
            int o = (int)rng_below(&r, NC), n = 5 + (int)rng_below(&r, 15);
            for (int i = 0; i < n; i++) fprintf(f, "%s%s", i ? " " : "", CYCLE[(o + i) % NC]);
            fprintf(f, "\n");
        }
        fprintf(f, "\n");
    }
    fclose(f);
}

int fixture_init(Fixture *fx) {
    if (!scratch_dir("pretrain_drv", fx->dir, sizeof fx->dir)) return 0;
    char path[256], text[1024] = "";
    for (int i = 0; i < NUM_VOCAB; i++) strcat(strcat(text, VOCAB[i]), "\n");
    snprintf(path, sizeof path, "%s/vocab.txt", fx->dir);
    put_file(path, text);
    snprintf(path, sizeof path, "%s/micro.json", fx->dir);
    snprintf(text, sizeof text,
             "{\"vocab_size\": %d, \"hidden_size\": 32, \"num_hidden_layers\": 1, \"num_attention_heads\": 2,"
             " \"intermediate_size\": 64, \"max_position_embeddings\": 64}", NUM_VOCAB);
    put_file(path, text);
    snprintf(path, sizeof path, "%s/train.txt", fx->dir);
    write_corpus(path, 40, 1);
    snprintf(path, sizeof path, "%s/heldout.txt", fx->dir);
    write_corpus(path, 8, 2);
    snprintf(fx->common, sizeof fx->common,
             "--set model=%s/micro.json --set vocab=%s/vocab.txt --corpus %s/train.txt "
             "--set eval_corpus=text:%s/heldout.txt --cache %s/cache --set seq_len=24 --set batch=32 "
             "--set max_predictions=4 --set lr=5e-3 --set warmup=20 --set log_every=1 --threads 1",
             fx->dir, fx->dir, fx->dir, fx->dir, fx->dir);
    return 1;
}

void fixture_free(Fixture *fx) {
    char cmd[SCRATCH_PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", fx->dir);
    CHECK(system(cmd) == 0);
}

int pretrain_launched(const Fixture *fx, const char *launcher, const char *args, char **out) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s%s%s pretrain %s %s 2>&1", launcher ? launcher : "", launcher ? " " : "",
             test_glue_bin(), fx->common, args);
    int status;
    char *o = test_run(cmd, &status);
    if (out) *out = o;
    else free(o);
    return status;
}

int pretrain(const Fixture *fx, const char *args, char **out) { return pretrain_launched(fx, NULL, args, out); }

int read_log(const char *dir, Log *lg) { return read_log_from(dir, 1, lg); }

int read_log_from(const char *dir, int first, Log *lg) {
    char path[256];
    snprintf(path, sizeof path, "%s/log.jsonl", dir);
    FILE *f = fopen(path, "r");
    memset(lg, 0, sizeof *lg);
    lg->eval_loss = -1;
    if (!f) return 0;
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        cJSON *j = cJSON_Parse(line);
        const cJSON *loss = cJSON_GetObjectItemCaseSensitive(j, "loss");
        const cJSON *ev = cJSON_GetObjectItemCaseSensitive(j, "eval_loss");
        if (cJSON_IsNumber(ev)) lg->eval_loss = ev->valuedouble;
        if (cJSON_IsNumber(loss) && lg->n < 512) {
            int step = cJSON_GetObjectItemCaseSensitive(j, "step")->valueint;
            CHECK_EQ_INT(step, first + lg->n);
            lg->loss[lg->n] = loss->valuedouble;
            lg->acc[lg->n] = cJSON_GetObjectItemCaseSensitive(j, "mlm_acc")->valuedouble;
            lg->norm[lg->n] = cJSON_GetObjectItemCaseSensitive(j, "grad_norm")->valuedouble;
            lg->lr[lg->n++] = cJSON_GetObjectItemCaseSensitive(j, "lr")->valuedouble;
        }
        cJSON_Delete(j);
    }
    fclose(f);
    return lg->n;
}

