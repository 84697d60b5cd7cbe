/* test_compare_test_split.c — `glue compare` on a dataset whose test labels
 * are public (a user's multi-label dataset with a labelled --test file, as
 * GoEmotions): each run's test macro-/micro-F1 is the number `glue eval
 * --split test --run DIR` gives (the run's tuned thresholds, chosen on dev),
 * the entry holds their mean over the seeds and its spread, compare.md shows
 * a test column, and a second compare reads the run's cached test metrics
 * instead of scoring again (a stale cache is scored anew). fastText on a few
 * hundred noisy rows: seconds. */
#include "tests/scratch.h"
#include "tests/test.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A fastText-format multi-label file: each row one or two of four topics,
 * each shown by one of its words; one row in four shows a wrong topic's word,
 * so no model scores 100 and seeds differ. */
static void ct_write_topics(const char *dir, const char *name, int n, unsigned seed, char *path) {
    static const char *const TOPIC[4] = {"sport", "music", "food", "news"};
    static const char *const WORD[4][3] = {{"goal", "match", "team"}, {"song", "guitar", "band"},
                                           {"pizza", "bread", "soup"}, {"election", "vote", "minister"}};
    static const char *const FILL[6] = {"the", "a", "today", "we", "saw", "really"};
    snprintf(path, 256, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!CHECK(f != NULL)) return;
    unsigned r = seed;
    for (int i = 0; i < n; i++) {
        r = r * 1103515245u + 12345u;
        int a = (int)(r >> 16) % 4, two = (r >> 8) % 3 == 0, b = (a + 1 + (int)(r >> 20) % 3) % 4;
        int shown = (r >> 24) % 4 == 0 ? (a + 2) % 4 : a;   /* the noise */
        fprintf(f, "__label__%s%s%s", TOPIC[a], two ? " __label__" : "", two ? TOPIC[b] : "");
        fprintf(f, " %s %s %s", FILL[(r >> 3) % 6], WORD[shown][(r >> 5) % 3], FILL[(r >> 7) % 6]);
        if (two) fprintf(f, " %s", WORD[b][(r >> 9) % 3]);
        fprintf(f, "\n");
    }
    fclose(f);
}

#define CT_SETS "--set dim=8 --set bucket=10000 --set epochs=3 --set lr=0.3 --set threshold=tuned"

/* Runs `glue compare topics` and returns its --json summary's fastText entry
 * of the dataset (*summary: the whole, caller deletes), or NULL. */
static const cJSON *ct_compare(const char *dir, cJSON **summary) {
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "GLUE_RUNS=%s/runs GLUE_RESULTS=%s/results %s compare topics --models fasttext "
             "--seeds 1,2 --threads 1 " CT_SETS " --json 2>%s/err.txt", dir, dir, test_glue_bin(), dir);
    int st = -1;
    char *out = test_run(cmd, &st);
    *summary = cJSON_Parse(out ? out : "");
    CHECK_MSG(st == 0 && *summary, "compare exit %d: %s", st, out ? out : "");
    free(out);
    const cJSON *models = cJSON_GetObjectItem(*summary, "models");
    for (const cJSON *m = models ? models->child : NULL; m; m = m->next)
        if (strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(m, "model")), "fasttext") == 0)
            return cJSON_GetObjectItem(cJSON_GetObjectItem(m, "tasks"), "topics");
    return NULL;
}

/* `glue eval --split test --run run`: its test metric key into *v. 0 ok. */
static int ct_eval_test(const char *run, const char *key, double *v) {
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s eval --model fasttext --run %s --split test --json 2>&1", test_glue_bin(), run);
    int st = -1;
    char *out = test_run(cmd, &st);
    cJSON *j = cJSON_Parse(out ? out : "");
    const cJSON *test = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "tasks"), "topics"), "test");
    const cJSON *x = cJSON_GetObjectItem(test, key);
    int ok = CHECK_MSG(st == 0 && cJSON_IsNumber(x), "eval exit %d: %s", st, out ? out : "");
    if (ok) *v = x->valuedouble;
    cJSON_Delete(j);
    free(out);
    return ok ? 0 : -1;
}

/* Sets key of run/test_metrics.json's object obj ("test", or NULL: the top) to the string or number given. */
static void ct_edit_cache(const char *run, const char *obj, const char *key, const char *str, double num) {
    char path[512];
    snprintf(path, sizeof path, "%s/test_metrics.json", run);
    FILE *f = fopen(path, "rb");
    if (!CHECK_MSG(f != NULL, "no %s", path)) return;
    char buf[65536];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    cJSON *j = cJSON_Parse(buf), *o = obj ? cJSON_GetObjectItem(j, obj) : j;
    if (!CHECK(o != NULL)) { cJSON_Delete(j); return; }
    cJSON_ReplaceItemInObject(o, key, str ? cJSON_CreateString(str) : cJSON_CreateNumber(num));
    char *text = cJSON_Print(j);
    f = fopen(path, "wb");
    if (CHECK(f != NULL)) { fputs(text, f); fclose(f); }
    free(text);
    cJSON_Delete(j);
}

/* The compare entry's test metric key against the mean (and sample std) of
 * `glue eval --split test` on its two runs. */
static void ct_check_against_eval(const cJSON *e, const char *key) {
    const cJSON *runs = cJSON_GetObjectItem(e, "runs");
    if (!CHECK_MSG(cJSON_GetArraySize(runs) == 2, "%d runs, want 2", cJSON_GetArraySize(runs))) return;
    double v[2];
    for (int k = 0; k < 2; k++)
        if (ct_eval_test(cJSON_GetStringValue(cJSON_GetArrayItem(runs, k)), key, &v[k]) != 0) return;
    double mean = cJSON_GetNumberValue(cJSON_GetObjectItem(cJSON_GetObjectItem(e, "test"), key));
    double sd = cJSON_GetNumberValue(cJSON_GetObjectItem(cJSON_GetObjectItem(e, "test_std"), key));
    CHECK_MSG(fabs(mean - (v[0] + v[1]) / 2) < 1e-9, "%s: compare %.6f, eval %.6f and %.6f", key, mean, v[0], v[1]);
    CHECK_MSG(fabs(sd - fabs(v[0] - v[1]) / sqrt(2.0)) < 1e-9, "%s std: compare %.6f, eval %.6f and %.6f", key, sd,
              v[0], v[1]);
    CHECK_MSG(mean > 20 && mean < 100, "%s %.2f: noise should keep it below 100", key, mean);
}

TEST(compare_scores_public_test_split_like_eval) {
    char dir[SCRATCH_PATH_MAX];
    if (!CHECK(scratch_dir("cmptest", dir, sizeof dir))) return;
    char tr[256], dv[256], te[256], cmd[4096];
    ct_write_topics(dir, "train.txt", 400, 7, tr);
    ct_write_topics(dir, "dev.txt", 120, 8, dv);
    ct_write_topics(dir, "test.txt", 150, 9, te);
    /* the dataset recorded under runs/topics/ (compare finds it by name) */
    snprintf(cmd, sizeof cmd, "GLUE_RUNS=%s/runs %s finetune --train %s --dev %s --test %s --format fasttext --name topics "
             "--model fasttext --threads 1 " CT_SETS " 2>&1", dir, test_glue_bin(), tr, dv, te);
    int st = -1;
    char *out = test_run(cmd, &st);
    CHECK_MSG(st == 0, "finetune exit %d: %s", st, out ? out : "");
    free(out);
    cJSON *s = NULL;
    const cJSON *e = ct_compare(dir, &s);
    if (!CHECK_MSG(e && cJSON_GetObjectItem(e, "test"), "no test metrics in the compare entry")) {
        cJSON_Delete(s);
        return;
    }
    ct_check_against_eval(e, "macro_f1");
    ct_check_against_eval(e, "micro_f1");
    char runs[2][512];
    for (int k = 0; k < 2; k++)
        snprintf(runs[k], sizeof runs[k], "%s", cJSON_GetStringValue(cJSON_GetArrayItem(cJSON_GetObjectItem(e, "runs"), k)));
    double first = cJSON_GetNumberValue(cJSON_GetObjectItem(cJSON_GetObjectItem(e, "test"), "macro_f1"));
    cJSON_Delete(s);
    snprintf(cmd, sizeof cmd, "grep -q 'test |' %s/results/compare.md && grep -q 'thresholds chosen on dev' "
             "%s/results/compare.md", dir, dir);
    free(test_run(cmd, &st));
    CHECK_MSG(st == 0, "no test column in %s/results/compare.md", dir);
    snprintf(cmd, sizeof cmd, "grep -q 'Made by .glue compare topics --models fasttext --seeds 1,2' %s/results/compare.md "
             "&& grep -q '\"command\":.*glue compare topics' %s/results/compare.json", dir, dir);
    free(test_run(cmd, &st));
    CHECK_MSG(st == 0, "%s/results/compare.{md,json} do not name the command that made them", dir);

    /* A rerun reads the cache: a value planted there comes back. */
    for (int k = 0; k < 2; k++) ct_edit_cache(runs[k], "test", "macro_f1", NULL, 12.5);
    e = ct_compare(dir, &s);
    double cached = cJSON_GetNumberValue(cJSON_GetObjectItem(cJSON_GetObjectItem(e, "test"), "macro_f1"));
    CHECK_MSG(fabs(cached - 12.5) < 1e-9, "rerun gave %.4f, not the cached 12.5", cached);
    cJSON_Delete(s);
    /* A cache of another training of the directory is scored again. */
    for (int k = 0; k < 2; k++) ct_edit_cache(runs[k], NULL, "run_fingerprint", "00000000-00000000", 0);
    e = ct_compare(dir, &s);
    double again = cJSON_GetNumberValue(cJSON_GetObjectItem(cJSON_GetObjectItem(e, "test"), "macro_f1"));
    CHECK_MSG(fabs(again - first) < 1e-9, "stale cache: %.4f, first compare %.4f", again, first);
    cJSON_Delete(s);
    /* Runs under another tag (an earlier build's CRC of the same settings) are
     * found and reused, not trained again beside them. */
    snprintf(cmd, sizeof cmd, "cd %s/runs/compare/topics && for s in 1 2; do mv fasttext-*-seed$s fasttext-0badc0de-seed$s; "
             "done", dir);
    free(test_run(cmd, &st));
    e = ct_compare(dir, &s);
    const char *run0 = e ? cJSON_GetStringValue(cJSON_GetArrayItem(cJSON_GetObjectItem(e, "runs"), 0)) : NULL;
    CHECK_MSG(run0 && strstr(run0, "fasttext-0badc0de-seed1") && cJSON_IsTrue(cJSON_GetObjectItem(e, "reused")),
              "renamed runs not reused: %s", run0 ? run0 : "(none)");
    snprintf(cmd, sizeof cmd, "ls %s/runs/compare/topics | grep -c seed", dir);
    char *n = test_run(cmd, &st);
    CHECK_MSG(n && atoi(n) == 2, "%s run directories after the rerun, want the 2 renamed ones", n ? n : "?");
    free(n);
    cJSON_Delete(s);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    free(test_run(cmd, NULL));
}
