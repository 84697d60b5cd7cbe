/* test_run_inputs.c — a finished run is reused only while the files its
 * settings name are what they were (train/run_inputs.h):
 *   - run_inputs_json fingerprints a setting naming a file, and one naming a
 *     directory through its model.ckpt (what --init DIR loads), nothing else;
 *   - run_inputs_same: unchanged 1; a byte changed at the same size, or the
 *     file gone, 0 with the file named; a run that recorded none 1;
 *   - end to end, `glue compare` on a micro BERT (synthetic SST-2, one
 *     thread): the run records its vocabulary's fingerprint, is reused while
 *     the file stands, and is trained again (saying why) once the vocabulary
 *     changes under the same path, where it was reused before. */
#include "tests/scratch.h"
#include "tests/test.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/files.h"
#include "train/run_inputs.h"

static int write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    if (!f) return 0;
    int ok = fputs(text, f) >= 0;
    return fclose(f) == 0 && ok;
}

static const char *crc_of(const cJSON *inputs, const char *key) {
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(inputs, key), "crc32");
    return cJSON_IsString(c) ? c->valuestring : "";
}

TEST(run_inputs_fingerprint_files_settings_name) {
    char dir[SCRATCH_PATH_MAX], file[256], enc[256], ckpt[300], cmd[512];
    if (!scratch_dir("inputs", dir, sizeof dir)) { CHECK_MSG(0, "mkdtemp"); return; }
    snprintf(file, sizeof file, "%s/vocab.txt", dir);
    snprintf(enc, sizeof enc, "%s/encoder", dir);
    snprintf(ckpt, sizeof ckpt, "%s/model.ckpt", enc);
    snprintf(cmd, sizeof cmd, "mkdir -p %s", enc);
    CHECK(system(cmd) == 0 && write_text(file, "alpha\nbeta\n") && write_text(ckpt, "weights-1"));
    cJSON *config = cJSON_CreateObject();
    cJSON_AddStringToObject(config, "vocab", file);
    cJSON_AddStringToObject(config, "init", enc);
    cJSON_AddStringToObject(config, "bert", "tiny");   /* not a file: not recorded */
    cJSON_AddStringToObject(config, "threshold", "");
    cJSON_AddNumberToObject(config, "epochs", 3);
    cJSON *rec = run_inputs_json(config);
    CHECK_EQ_INT(cJSON_GetArraySize(rec), 2);
    const cJSON *init = cJSON_GetObjectItemCaseSensitive(rec, "init");
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(init, "file");
    CHECK_MSG(cJSON_IsString(f) && strcmp(f->valuestring, ckpt) == 0, "init recorded as %s",
              cJSON_IsString(f) ? f->valuestring : "?");
    CHECK_EQ_INT((long)cJSON_GetObjectItemCaseSensitive(init, "bytes")->valuedouble, 9);
    CHECK(strlen(crc_of(rec, "vocab")) == 8);

    char why[512] = "";
    CHECK(run_inputs_same(rec, config, why, sizeof why) == 1);
    CHECK(run_inputs_same(NULL, config, why, sizeof why) == 1);   /* a run from before the record */
    CHECK(write_text(ckpt, "weights-2"));   /* same size, other bytes: the snapshot replaced */
    CHECK(run_inputs_same(rec, config, why, sizeof why) == 0);
    CHECK_MSG(strstr(why, "model.ckpt") && strstr(why, "changed"), "why: %s", why);
    CHECK(write_text(ckpt, "weights-1") && run_inputs_same(rec, config, why, sizeof why) == 1);
    CHECK(unlink(file) == 0);
    CHECK(run_inputs_same(rec, config, why, sizeof why) == 0);
    CHECK_MSG(strstr(why, "vocab.txt") && strstr(why, "gone"), "why: %s", why);
    cJSON_Delete(rec);
    cJSON_Delete(config);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
}

/* `glue compare sst2 --models bert` on the micro BERT; its stderr. */
static char *compare_once(const char *root, int *st) {
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "GLUE_DATA=%s/glue GLUE_RUNS=%s/runs GLUE_RESULTS=%s/results %s compare sst2 --models bert "
             "--set bert=%s/micro.json --set vocab=%s/vocab.txt --set init=none --set max_len=16 --set epochs=1 "
             "--threads 1 2>&1 >/dev/null",
             root, root, root, test_glue_bin(), root, root);
    return test_run(cmd, st);
}

/* The one run compare made (runs/compare/sst2/bert-<crc>-seed42): its results. */
static cJSON *compare_results(const char *root) {
    char cmd[512];
    snprintf(cmd, sizeof cmd, "ls -d %s/runs/compare/sst2/bert-*-seed42", root);
    int st;
    char *out = test_run(cmd, &st);
    char path[600] = "";
    if (st == 0 && out && strchr(out, '\n')) {
        *strchr(out, '\n') = 0;
        snprintf(path, sizeof path, "%s/results.json", out);
    }
    free(out);
    return *path ? json_file_read(path, 0) : NULL;
}

TEST(run_inputs_changed_file_is_not_reused) {
    char root[SCRATCH_PATH_MAX], path[512];
    if (!scratch_dir("inputs_e2e", root, sizeof root)) { CHECK_MSG(0, "mkdtemp"); return; }
    snprintf(path, sizeof path, "mkdir -p %s/glue/SST-2", root);
    CHECK(system(path) == 0);
    static const char *const WORDS[2][2] = {{"bad", "poor"}, {"good", "fine"}};
    for (int split = 0; split < 2; split++) {
        snprintf(path, sizeof path, "%s/glue/SST-2/%s.tsv", root, split ? "dev" : "train");
        FILE *f = fopen(path, "w");
        if (!f) { CHECK_MSG(0, "%s", path); return; }
        fprintf(f, "sentence\tlabel\n");
        for (int i = 0; i < (split ? 8 : 24); i++)
            fprintf(f, "the movie was %s\t%d\n", WORDS[i % 2][(i / 2) % 2], i % 2);
        fclose(f);
    }
    snprintf(path, sizeof path, "%s/vocab.txt", root);
    CHECK(write_text(path, "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nthe\nmovie\nwas\nbad\npoor\ngood\nfine\n"));
    snprintf(path, sizeof path, "%s/micro.json", root);
    CHECK(write_text(path, "{\"vocab_size\": 12, \"hidden_size\": 16, \"num_hidden_layers\": 1, \"num_attention_heads\": 2,"
                           " \"intermediate_size\": 32, \"max_position_embeddings\": 32, \"hidden_dropout_prob\": 0,"
                           " \"attention_probs_dropout_prob\": 0}\n"));
    int st;
    char *err = compare_once(root, &st);
    cJSON *first = compare_results(root);
    const cJSON *in = cJSON_GetObjectItemCaseSensitive(first, "inputs");
    char crc1[16];
    snprintf(crc1, sizeof crc1, "%s", crc_of(in, "vocab"));
    CHECK_MSG(st == 0 && first && strlen(crc1) == 8 && *crc_of(in, "bert"),
              "exit %d, inputs recorded: %s / %s", st, crc1, err ? err : "");
    free(err);
    err = compare_once(root, &st);
    CHECK_MSG(st == 0 && err && strstr(err, "reusing") && !strstr(err, "not reused"), "exit %d: %s", st,
              err ? err : "");
    free(err);
    /* The vocabulary replaced under the same path, the same size: "poor" -> "dull". */
    snprintf(path, sizeof path, "%s/vocab.txt", root);
    CHECK(write_text(path, "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nthe\nmovie\nwas\nbad\ndull\ngood\nfine\n"));
    err = compare_once(root, &st);
    CHECK_MSG(st == 0 && err && strstr(err, "not reused") && strstr(err, "vocab.txt (setting vocab) changed") &&
                  !strstr(err, "reusing"),
              "exit %d: %s", st, err ? err : "");
    free(err);
    cJSON *second = compare_results(root);
    const char *crc2 = crc_of(cJSON_GetObjectItemCaseSensitive(second, "inputs"), "vocab");
    CHECK_MSG(strlen(crc2) == 8 && strcmp(crc1, crc2) != 0, "the run again: vocab crc %s, first %s", crc2, crc1);
    cJSON_Delete(first);
    cJSON_Delete(second);
    snprintf(path, sizeof path, "rm -rf '%s'", root);
    CHECK(system(path) == 0);
}
