/* test_intermediate.c — intermediate-task transfer (experiments/intermediate.h)
 * through `glue finetune`, on a micro BERT (dropout 0) and synthetic CoLA
 * (the intermediate task) and SST-2 (the target), one thread:
 *   - `--set intermediate=cola` trains CoLA first into <out>/intermediate/
 *     (CoLA's default recipe, the target's encoder settings and seed) and
 *     records it in the target's results.json;
 *   - the target run is the same, loss for loss and score for score, as
 *     `glue finetune cola` followed by `glue finetune sst2 --set init=<it>`;
 *   - run again (--overwrite), the finished intermediate run is reused, not
 *     trained again, and the target's numbers repeat; without --overwrite a
 *     finished target is refused before the stage;
 *   - naming the task itself or an unknown task is a usage error (exit 2)
 *     with one message, and nothing is trained;
 *   - `--search` trains the stage once for all its trials and final run, and
 *     `glue protocol` once per seed for rows that change only the target;
 *   - a target stopped after its stage and continued with --resume does not
 *     go through the stage again, records it, and ends with the
 *     uninterrupted run's numbers;
 *   - a config without the setting (runs made before it) is the same config
 *     as one with "none" (the other way round too). */
#include "tests/scratch.h"
#include "tests/test.h"

#include "core/files.h"
#include "core/rng.h"
#include "models/run_config.h"
#include "tests/kill_loop.h"
#include "train/run_dir.h"
#include "train/trainer.h"

#include <cjson/cJSON.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const POS[] = {"good", "great", "fine", "excellent"};
static const char *const NEG[] = {"bad", "awful", "poor", "terrible"};
static const char *const FILL[] = {"the", "movie", "was", "a", "film", "plot", "and", "it", "is", "very", "really", "cast"};
#define NFILL 12

typedef struct {
    char root[SCRATCH_PATH_MAX];
    char env[512];
    char micro[512];   /* the encoder settings of the micro BERT */
} Fx;

/* One synthetic sentence: filler around one word of the label's polarity. */
static void sentence(Rng *r, int y, FILE *f) {
    int at = (int)rng_below(r, 5);
    for (int w = 0; w < 6; w++)
        fprintf(f, "%s%s", w ? " " : "", w == at ? (y ? POS : NEG)[rng_below(r, 4)] : FILL[rng_below(r, NFILL)]);
}

static int fx_make(Fx *fx) {
    if (!scratch_dir("interm", fx->root, sizeof fx->root)) return 0;
    char path[512];
    snprintf(path, sizeof path, "mkdir -p %s/glue/SST-2 %s/glue/CoLA", fx->root, fx->root);
    if (system(path) != 0) return 0;
    static const struct { const char *file; int n, cola; } S[] = {
        {"glue/SST-2/train.tsv", 64, 0}, {"glue/SST-2/dev.tsv", 32, 0},
        {"glue/CoLA/train.tsv", 48, 1},  {"glue/CoLA/dev.tsv", 24, 1}};
    Rng r;
    rng_seed(&r, 11);
    for (size_t k = 0; k < sizeof S / sizeof S[0]; k++) {
        snprintf(path, sizeof path, "%s/%s", fx->root, S[k].file);
        FILE *f = fopen(path, "w");
        if (!f) return 0;
        if (!S[k].cola) fprintf(f, "sentence\tlabel\n");
        for (int i = 0; i < S[k].n; i++) {
            int y = (int)rng_below(&r, 2);
            if (S[k].cola) fprintf(f, "src\t%d\t%s\t", y, y ? "" : "*");
            sentence(&r, y, f);
            if (S[k].cola) fprintf(f, "\n");
            else fprintf(f, "\t%d\n", y);
        }
        fclose(f);
    }
    snprintf(path, sizeof path, "%s/vocab.txt", fx->root);
    FILE *f = fopen(path, "w");
    if (!f) return 0;
    fprintf(f, "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nsame\nother\n");
    for (int i = 0; i < 4; i++) fprintf(f, "%s\n%s\n", POS[i], NEG[i]);
    for (int i = 0; i < NFILL; i++) fprintf(f, "%s\n", FILL[i]);
    fclose(f);
    snprintf(path, sizeof path, "%s/micro.json", fx->root);
    if (!(f = fopen(path, "w"))) return 0;
    fprintf(f, "{\"vocab_size\": 27, \"hidden_size\": 16, \"num_hidden_layers\": 1, \"num_attention_heads\": 2,"
               " \"intermediate_size\": 32, \"max_position_embeddings\": 128, \"hidden_dropout_prob\": 0,"
               " \"attention_probs_dropout_prob\": 0}\n");
    fclose(f);
    snprintf(fx->env, sizeof fx->env, "GLUE_DATA=%s/glue GLUE_RUNS=%s/runs GLUE_RESULTS=%s/results", fx->root,
             fx->root, fx->root);
    snprintf(fx->micro, sizeof fx->micro, "--set bert=%s/micro.json --set vocab=%s/vocab.txt --set init=none",
             fx->root, fx->root);
    return 1;
}

static void fx_remove(const Fx *fx) {
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", fx->root);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", fx->root);
}

/* `glue finetune ARGS --threads 1 --seed 3`; the exit status, stderr in *err. */
static int fx_finetune(const Fx *fx, const char *args, char **err) {
    char cmd[4096], errpath[256];
    snprintf(errpath, sizeof errpath, "%s/last.err", fx->root);
    snprintf(cmd, sizeof cmd, "%s %s finetune %s --threads 1 --seed 3 >/dev/null 2>%s", fx->env, test_glue_bin(),
             args, errpath);
    int st;
    free(test_run(cmd, &st));
    snprintf(cmd, sizeof cmd, "cat %s", errpath);
    int cat;
    *err = test_run(cmd, &cat);
    return st;
}

static cJSON *fx_json(const Fx *fx, const char *rel) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", fx->root, rel);
    return json_file_read(path, 0);
}

/* The per-epoch losses and scores of two runs, equal to the last bit. */
static int same_epochs(const cJSON *a, const cJSON *b) {
    const cJSON *ea = cJSON_GetObjectItemCaseSensitive(a, "epochs"), *eb = cJSON_GetObjectItemCaseSensitive(b, "epochs");
    if (!cJSON_IsArray(ea) || cJSON_GetArraySize(ea) != cJSON_GetArraySize(eb) || cJSON_GetArraySize(ea) == 0) return 0;
    for (int i = 0; i < cJSON_GetArraySize(ea); i++) {
        const cJSON *x = cJSON_GetArrayItem(ea, i), *y = cJSON_GetArrayItem(eb, i);
        static const char *const KEYS[] = {"loss", "score"};
        for (int k = 0; k < 2; k++) {
            const cJSON *u = cJSON_GetObjectItemCaseSensitive(x, KEYS[k]), *v = cJSON_GetObjectItemCaseSensitive(y, KEYS[k]);
            if (!cJSON_IsNumber(u) || !cJSON_IsNumber(v) || u->valuedouble != v->valuedouble) return 0;
        }
    }
    return 1;
}

static const char *str_at(const cJSON *j, const char *a, const char *b) {
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(j, a);
    if (b) o = cJSON_GetObjectItemCaseSensitive(o, b);
    return cJSON_IsString(o) ? o->valuestring : "";
}

TEST(intermediate_task_transfer) {
    Fx fx;
    if (!fx_make(&fx)) { CHECK_MSG(0, "fixture"); return; }
    const char *target = "--max-len 16 --batch 8 --epochs 2 --lr 1e-2";
    char args[2048], *err;
    /* Through the setting. */
    snprintf(args, sizeof args, "sst2 %s %s --set intermediate=cola --out %s/t", fx.micro, target, fx.root);
    int st = fx_finetune(&fx, args, &err);
    CHECK_MSG(st == 0 && strstr(err, "intermediate task cola first"), "exit %d: %s", st, err);
    free(err);
    cJSON *t = fx_json(&fx, "t/results.json"), *ti = fx_json(&fx, "t/intermediate/results.json");
    CHECK(t && ti);
    CHECK(!strcmp(str_at(ti, "task", NULL), "cola") && cJSON_GetObjectItemCaseSensitive(ti, "seed")->valueint == 3);
    CHECK(!strcmp(str_at(ti, "config", "init"), "none") && strstr(str_at(ti, "config", "bert"), "micro.json"));
    CHECK(!strcmp(str_at(ti, "config", "intermediate"), "none"));
    /* CoLA's own recipe (20 epochs, batch 32), not the target's overrides. */
    CHECK(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(ti, "epochs")) == 20);
    CHECK(!strcmp(str_at(t, "config", "intermediate"), "cola") && !strcmp(str_at(t, "intermediate", "task"), "cola"));
    CHECK(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(t, "intermediate"), "best") != NULL);
    /* By hand: the intermediate run, then the target from it. */
    snprintf(args, sizeof args, "cola %s --out %s/c", fx.micro, fx.root);
    st = fx_finetune(&fx, args, &err);
    CHECK_MSG(st == 0, "exit %d: %s", st, err);
    free(err);
    snprintf(args, sizeof args, "sst2 %s --set init=%s/c --out %s/s", target, fx.root, fx.root);
    st = fx_finetune(&fx, args, &err);
    CHECK_MSG(st == 0, "exit %d: %s", st, err);
    free(err);
    cJSON *c = fx_json(&fx, "c/results.json"), *s = fx_json(&fx, "s/results.json");
    CHECK_MSG(same_epochs(ti, c), "the intermediate stage differs from glue finetune cola");
    CHECK_MSG(same_epochs(t, s), "the target differs from glue finetune sst2 --init <the cola run>");
    /* Again: the finished intermediate run is reused. */
    struct stat before, after;
    char path[256];
    snprintf(path, sizeof path, "%s/t/intermediate/model.ckpt", fx.root);
    CHECK(stat(path, &before) == 0);
    snprintf(args, sizeof args, "sst2 %s %s --set intermediate=cola --overwrite --out %s/t", fx.micro, target, fx.root);
    st = fx_finetune(&fx, args, &err);
    CHECK_MSG(st == 0 && strstr(err, "intermediate task cola: the finished run") && !strstr(err, "cola first"),
              "exit %d: %s", st, err);
    free(err);
    CHECK(stat(path, &after) == 0 && after.st_mtime == before.st_mtime && after.st_ino == before.st_ino);
    cJSON *t2 = fx_json(&fx, "t/results.json");
    CHECK(same_epochs(t, t2));
    /* A finished target is refused before its stage runs, unless --overwrite. */
    snprintf(args, sizeof args, "sst2 %s %s --set intermediate=cola --out %s/t", fx.micro, target, fx.root);
    st = fx_finetune(&fx, args, &err);
    CHECK_MSG(st == 2 && strstr(err, "already holds a finished run") && !strstr(err, "intermediate task"),
              "exit %d: %s", st, err);
    free(err);
    /* Bad names: one message, exit 2, nothing trained. */
    snprintf(args, sizeof args, "sst2 %s %s --set intermediate=sst2 --out %s/bad1", fx.micro, target, fx.root);
    st = fx_finetune(&fx, args, &err);
    CHECK_MSG(st == 2 && strstr(err, "is the task itself"), "exit %d: %s", st, err);
    free(err);
    snprintf(args, sizeof args, "sst2 %s %s --set intermediate=nosuch --out %s/bad2", fx.micro, target, fx.root);
    st = fx_finetune(&fx, args, &err);
    CHECK_MSG(st == 2 && strstr(err, "unknown task"), "exit %d: %s", st, err);
    free(err);
    snprintf(path, sizeof path, "%s/bad2/intermediate", fx.root);
    CHECK(access(path, F_OK) != 0);
    cJSON_Delete(t), cJSON_Delete(ti), cJSON_Delete(c), cJSON_Delete(s), cJSON_Delete(t2);
    fx_remove(&fx);
}

/* A search's trials and its final run go through one intermediate stage, in
 * <search dir>/intermediate: trained once, then reused (lr and batch are the
 * target's settings, not the stage's). */
TEST(intermediate_shared_by_search_trials) {
    Fx fx;
    if (!fx_make(&fx)) { CHECK_MSG(0, "fixture"); return; }
    char args[2048], *err, path[192];
    snprintf(args, sizeof args, "sst2 %s --max-len 16 --epochs 2 --set intermediate=cola --search --lrs 1e-2,3e-3 "
             "--batches 8 --holdout 0.25 --out %s/search", fx.micro, fx.root);
    int st = fx_finetune(&fx, args, &err);
    const char *first = strstr(err, "intermediate task cola first");
    int reused = 0;
    for (const char *at = err; (at = strstr(at, "intermediate task cola: the finished run")) != NULL; at++) reused++;
    CHECK_MSG(st == 0 && first && !strstr(first + 1, "intermediate task cola first") && reused == 2,
              "exit %d, want the stage trained once and reused twice: %s", st, err);
    free(err);
    static const char *const RUNS[] = {"trial-lr0.01-b8", "trial-lr0.003-b8", "final"};
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "search/%s/results.json", RUNS[i]);
        cJSON *r = fx_json(&fx, path);
        snprintf(path, sizeof path, "%s/search/intermediate", fx.root);
        CHECK_MSG(r && !strcmp(str_at(r, "intermediate", "run"), path), "%s: the stage's record: %s", RUNS[i],
                  r ? str_at(r, "intermediate", "run") : "no results.json");
        cJSON_Delete(r);
        snprintf(path, sizeof path, "%s/search/%s/intermediate", fx.root, RUNS[i]);
        CHECK_MSG(access(path, F_OK) != 0, "%s has a stage of its own", path);
    }
    fx_remove(&fx);
}

/* A protocol's rows that change only the target's recipe share one stage per
 * seed (<protocol root>/intermediate/cola-seed<S>-<hash>): trained once for the
 * baseline, reused by the other row; both record that run. */
TEST(intermediate_shared_by_protocol_rows) {
    Fx fx;
    if (!fx_make(&fx)) { CHECK_MSG(0, "fixture"); return; }
    char cmd[4096], errpath[256];
    snprintf(errpath, sizeof errpath, "%s/protocol.err", fx.root);
    snprintf(cmd, sizeof cmd, "%s %s protocol --model bert --tasks sst2 --seeds 3 %s --set max_len=16 --set epochs=2 "
             "--set intermediate=cola --change ep1:epochs=1 --threads 1 >/dev/null 2>%s", fx.env, test_glue_bin(),
             fx.micro, errpath);
    int st;
    free(test_run(cmd, &st));
    char *err = file_read(errpath, NULL);
    const char *first = err ? strstr(err, "intermediate task cola first") : NULL;
    int reused = 0;
    for (const char *at = err; at && (at = strstr(at, "intermediate task cola: the finished run")) != NULL; at++) reused++;
    CHECK_MSG(st == 0 && first && !strstr(first + 1, "intermediate task cola first") && reused == 1,
              "exit %d, want the stage trained once and reused once: %s", st, err ? err : "");
    free(err);
    static const char *const ROWS[] = {"runs/protocol/baseline/sst2-seed3/results.json",
                                       "runs/protocol/ep1/sst2-seed3/results.json"};
    cJSON *a = fx_json(&fx, ROWS[0]), *b = fx_json(&fx, ROWS[1]);
    const char *run = str_at(a, "intermediate", "run");
    char want[192];
    snprintf(want, sizeof want, "%s/runs/protocol/intermediate/cola-seed3-", fx.root);
    CHECK_MSG(!strncmp(run, want, strlen(want)) && !strcmp(run, str_at(b, "intermediate", "run")),
              "the rows' stages: %s and %s", run, str_at(b, "intermediate", "run"));
    cJSON_Delete(a), cJSON_Delete(b);
    fx_remove(&fx);
}

/* A target stopped (SIGTERM) after its stage finished and continued with
 * --resume: the stage is neither trained nor looked up again (the resumed
 * run says nothing of it), results.json still records it, and the numbers
 * are the uninterrupted run's. */
TEST(intermediate_resume_skips_the_stage) {
    Fx fx;
    if (!fx_make(&fx)) { CHECK_MSG(0, "fixture"); return; }
    char base[2048], args[2400], watch[256], *err;
    snprintf(base, sizeof base, "sst2 %s --max-len 16 --batch 8 --epochs 10 --lr 1e-2 --set intermediate=cola",
             fx.micro);
    snprintf(args, sizeof args, "%s --out %s/ref", base, fx.root);
    int st = fx_finetune(&fx, args, &err);
    CHECK_MSG(st == 0, "the uninterrupted run: exit %d: %s", st, err);
    free(err);
    char cmd[4096];
    snprintf(watch, sizeof watch, "%s/cut/%s/%s", fx.root, RUN_RESUME_DIR, RUN_TRAINER_STATE);
    snprintf(cmd, sizeof cmd, "env %s %s finetune %s --threads 1 --seed 3 --checkpoint-every 1 --out %s/cut "
             ">/dev/null 2>/dev/null", fx.env, test_glue_bin(), base, fx.root);
    CHECK_EQ_INT(kill_loop_signal(cmd, watch, SIGTERM), 143);
    snprintf(args, sizeof args, "%s --checkpoint-every 1 --out %s/cut --resume", base, fx.root);
    st = fx_finetune(&fx, args, &err);
    CHECK_MSG(st == 0 && strstr(err, "resuming ") && !strstr(err, "intermediate task"), "exit %d: %s", st, err);
    free(err);
    char ref[256], cut[256];
    snprintf(ref, sizeof ref, "%s/ref", fx.root);
    snprintf(cut, sizeof cut, "%s/cut", fx.root);
    CHECK_MSG(kill_loop_same_results(ref, cut), "the resumed target differs from the uninterrupted one");
    cJSON *a = fx_json(&fx, "ref/results.json"), *b = fx_json(&fx, "cut/results.json");
    const cJSON *ia = cJSON_GetObjectItemCaseSensitive(a, "intermediate");
    const cJSON *ib = cJSON_GetObjectItemCaseSensitive(b, "intermediate");
    char want[192];
    snprintf(want, sizeof want, "%s/cut/intermediate", fx.root);
    CHECK_MSG(ib && !strcmp(str_at(b, "intermediate", "task"), "cola") && !strcmp(str_at(b, "intermediate", "run"), want),
              "the resumed run's record of its stage: %s", ib ? str_at(b, "intermediate", "run") : "none");
    const cJSON *ba = cJSON_GetObjectItemCaseSensitive(ia, "best"), *bb = cJSON_GetObjectItemCaseSensitive(ib, "best");
    CHECK(ba && bb && run_config_number(ba, "epoch", -1) == run_config_number(bb, "epoch", -2) &&
          run_config_number(ba, "score", -1) == run_config_number(bb, "score", -2));
    cJSON_Delete(a), cJSON_Delete(b);
    fx_remove(&fx);
}

/* Runs written before the setting existed are the same config as "none". */
TEST(intermediate_absent_is_none) {
    cJSON *a = cJSON_Parse("{\"lr\": 0.001}"), *b = cJSON_Parse("{\"lr\": 0.001, \"intermediate\": \"none\"}");
    cJSON *c = cJSON_Parse("{\"lr\": 0.001, \"intermediate\": \"mnli-9k\"}");
    CHECK(trainer_config_same(a, b) && trainer_config_same(b, a));
    CHECK(!trainer_config_same(a, c) && !trainer_config_same(c, a) && !trainer_config_same(b, c));
    cJSON_Delete(a), cJSON_Delete(b), cJSON_Delete(c);
}
