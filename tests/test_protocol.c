/* test_protocol.c — `glue protocol` (experiments/protocol.c): the table's numbers
 * are the seed means of the fine-tunes' best dev scores (and of their
 * macro-F1, a column beside each classification task's metric), a change that leaves
 * a task alone reuses the baseline's fine-tunes, a second run reuses every
 * fine-tune and replaces rows by name, bad changes are usage errors. fastText
 * on RTE and MRPC (real GLUE files: a second of training). */
#include "tests/scratch.h"
#include "tests/test.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/files.h"
#include "train/run_dir.h"
#include "tests/kill_loop.h"

/* The mean of a fine-tune's best dev metrics. */
static double best_dev_score(const char *dir) {
    char path[512];
    snprintf(path, sizeof path, "%s/results.json", dir);
    cJSON *r = json_file_read(path, 1);
    const cJSON *dev = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(r, "best"), "dev");
    double sum = 0;
    int n = 0;
    for (const cJSON *m = dev ? dev->child : NULL; m; m = m->next) sum += m->valuedouble, n++;
    cJSON_Delete(r);
    return n ? sum / n : NAN;
}

/* A fine-tune's macro-F1 at its best epoch (results.json "details"). */
static double best_dev_macro_f1(const char *dir) {
    char path[512];
    snprintf(path, sizeof path, "%s/results.json", dir);
    cJSON *r = json_file_read(path, 1);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(r, "details"), "macro_f1");
    double f1 = cJSON_IsNumber(v) ? v->valuedouble : NAN;
    cJSON_Delete(r);
    return f1;
}

TEST(protocol_table_means_reuse_and_errors) {
    char glue_dir[1024];
    snprintf(glue_dir, sizeof glue_dir, "%s/data/glue", test_shared_dir());
    if (access(glue_dir, F_OK) != 0) { test_skip("no ../shared/data/glue"); return; }
    char dir[SCRATCH_PATH_MAX];
    if (!scratch_dir("protocol", dir, sizeof dir)) { CHECK_MSG(0, "mkdtemp"); return; }
    char cmd[8192], path[512];
    const char *base = "GLUE_DATA=%s GLUE_RUNS=%s/runs %s protocol --model fasttext --tasks rte,mrpc --seeds 1,2 "
                       "--set epochs=3 --set bucket=50000 --results %s/t/p.json --threads 1 %s 2>&1";
    snprintf(cmd, sizeof cmd, base, glue_dir, dir, test_glue_bin(), dir,
             "--change ep2:epochs=2 --change mr:mrpc.wordNgrams=1");
    int st;
    char *out = test_run(cmd, &st);
    CHECK_MSG(st == 0, "exit %d: %s", st, out);
    free(out);
    /* mr leaves RTE alone: only its MRPC fine-tunes exist */
    snprintf(path, sizeof path, "%s/runs/protocol/mr/rte-seed1", dir);
    CHECK(access(path, F_OK) != 0);
    snprintf(path, sizeof path, "%s/runs/protocol/mr/mrpc-seed2/results.json", dir);
    CHECK(access(path, F_OK) == 0);

    snprintf(path, sizeof path, "%s/t/p.json", dir);
    cJSON *j = json_file_read(path, 1);
    const cJSON *rows = cJSON_GetObjectItemCaseSensitive(j, "rows");
    CHECK_EQ_INT(cJSON_GetArraySize(rows), 3);
    static const char *const NAMES[] = {"baseline", "ep2", "mr"};
    double base_score = NAN;
    for (int r = 0; r < 3 && cJSON_GetArraySize(rows) == 3; r++) {
        const cJSON *row = cJSON_GetArrayItem(rows, r);
        CHECK(strcmp(cJSON_GetObjectItemCaseSensitive(row, "name")->valuestring, NAMES[r]) == 0);
        double row_score = 0;
        static const char *const TASKS[] = {"rte", "mrpc"};
        for (int t = 0; t < 2; t++) {
            const char *owner = r == 2 && t == 0 ? "baseline" : NAMES[r];
            char d1[512], d2[512];
            snprintf(d1, sizeof d1, "%s/runs/protocol/%s/%s-seed1", dir, owner, TASKS[t]);
            snprintf(d2, sizeof d2, "%s/runs/protocol/%s/%s-seed2", dir, owner, TASKS[t]);
            double s1 = best_dev_score(d1), s2 = best_dev_score(d2);
            const cJSON *tj = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(row, "tasks"), TASKS[t]);
            CHECK_NEAR(cJSON_GetObjectItemCaseSensitive(tj, "score")->valuedouble, (s1 + s2) / 2, 1e-9);
            CHECK_NEAR(cJSON_GetObjectItemCaseSensitive(tj, "std")->valuedouble, fabs(s1 - s2) / sqrt(2.0), 1e-9);
            row_score += (s1 + s2) / 4;
            /* a classification task's macro-F1 beside its metric: the seeds' mean and spread */
            double f1 = best_dev_macro_f1(d1), f2 = best_dev_macro_f1(d2);
            const cJSON *mf = cJSON_GetObjectItemCaseSensitive(tj, "macro_f1");
            CHECK_MSG(isfinite(f1) && isfinite(f2) && cJSON_IsNumber(mf), "%s %s: no macro-F1", NAMES[r], TASKS[t]);
            if (cJSON_IsNumber(mf)) {
                CHECK_NEAR(mf->valuedouble, (f1 + f2) / 2, 1e-9);
                CHECK_NEAR(cJSON_GetObjectItemCaseSensitive(tj, "macro_f1_std")->valuedouble, fabs(f1 - f2) / sqrt(2.0),
                           1e-9);
            }
        }
        CHECK_NEAR(cJSON_GetObjectItemCaseSensitive(row, "score")->valuedouble, row_score, 1e-9);
        if (r == 0) base_score = row_score;
    }
    cJSON_Delete(j);
    snprintf(path, sizeof path, "%s/t/p.md", dir);
    char *md = file_read(path, NULL);
    char want[128];
    snprintf(want, sizeof want, "| baseline | the settings for every row |");   /* --set epochs=3 ... */
    CHECK_MSG(md && strstr(md, want) && strstr(md, "| mr | `mrpc.wordNgrams=1` |") && strstr(md, "selected on dev") &&
                  strstr(md, "| change | settings | RTE | RTE macro-F1 | MRPC | MRPC macro-F1 | score |"),
              "markdown:\n%s", md ? md : "(none)");
    free(md);
    (void)base_score;

    /* Again with one row: every fine-tune reused, the row replaced in place. */
    snprintf(cmd, sizeof cmd, base, glue_dir, dir, test_glue_bin(), dir, "--change mr:mrpc.wordNgrams=1");
    out = test_run(cmd, &st);
    CHECK_MSG(st == 0 && !strstr(out, "protocol: "), "exit %d, trained again: %s", st, out);
    free(out);
    snprintf(path, sizeof path, "%s/t/p.json", dir);
    j = json_file_read(path, 1);
    CHECK_EQ_INT(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "rows")), 3);
    cJSON_Delete(j);

    /* Settings that differ from the finished runs' (here epochs; between
     * builds, the defaults): not reused as if they were this row's. */
    snprintf(cmd, sizeof cmd, base, glue_dir, dir, test_glue_bin(), dir, "--set epochs=4");
    out = test_run(cmd, &st);
    CHECK_MSG(st != 0 && strstr(out, "trained with other settings") && !strstr(out, " seed1\n"), "exit %d: %s", st,
              out);
    free(out);

    /* A --set for one task reaches that task only: RTE's runs still match,
     * MRPC's were made with other settings. */
    snprintf(cmd, sizeof cmd, base, glue_dir, dir, test_glue_bin(), dir, "--set mrpc.epochs=4");
    out = test_run(cmd, &st);
    CHECK_MSG(st != 0 && strstr(out, "baseline/mrpc-seed1 was trained with other settings") && !strstr(out, "rte-seed"),
              "exit %d: %s", st, out);
    free(out);

    /* Bad changes: usage errors naming what is wrong. */
    static const struct { const char *change, *says; } BAD[] = {
        {"--change nocolon", "expected NAME:key=value"},
        {"--change x:cola.epochs=2", "'cola' is not a task of this protocol"},
        {"--set cola.epochs=2", "--set cola.epochs=2: 'cola' is not a task of this protocol"},
        {"--change x:epochs", "bad setting"},
        {"--change x:epochs=2 --change x:epochs=3", "two rows are called 'x'"},
        {"--change a/b:epochs=2", "bad name"},
        {"--change x:dropout_typo=1", "unknown setting"},
    };
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        snprintf(cmd, sizeof cmd, base, glue_dir, dir, test_glue_bin(), dir, BAD[i].change);
        out = test_run(cmd, &st);
        CHECK_MSG(st != 0 && strstr(out, BAD[i].says), "%s: exit %d: %s", BAD[i].change, st, out);
        free(out);
    }
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) CHECK_MSG(0, "cleanup");
}

/* A fine-tune of the protocol stopped midway (here SIGTERM once its first
 * resume point is written) continues from there when the protocol runs again,
 * and ends exactly as the uninterrupted one; it used to start over. */
TEST(protocol_resumes_interrupted_finetune) {
    char glue_dir[1024];
    snprintf(glue_dir, sizeof glue_dir, "%s/data/glue", test_shared_dir());
    if (access(glue_dir, F_OK) != 0) { test_skip("no ../shared/data/glue"); return; }
    char dir[SCRATCH_PATH_MAX];
    if (!scratch_dir("protocol_resume", dir, sizeof dir)) { CHECK_MSG(0, "mkdtemp"); return; }
    const char *base = "env GLUE_DATA=%s %s protocol --model fasttext --tasks rte --seeds 1 --set epochs=12 --set bucket=50000 "
                       "--out %s/%s --results %s/%s.json --threads 1";
    char cmd[8192], watch[4300], ref[4200], cut[4200], done[4300];
    snprintf(cmd, sizeof cmd, base, glue_dir, test_glue_bin(), dir, "ref", dir, "ref");
    strcat(cmd, " >/dev/null 2>&1");
    int st;
    free(test_run(cmd, &st));
    CHECK_MSG(st == 0, "the uninterrupted protocol failed (exit %d)", st);
    snprintf(cmd, sizeof cmd, base, glue_dir, test_glue_bin(), dir, "cut", dir, "cut");
    snprintf(cmd + strlen(cmd), sizeof cmd - strlen(cmd), " >/dev/null 2>%s/cut.log", dir);
    snprintf(cut, sizeof cut, "%s/cut/baseline/rte-seed1", dir);
    snprintf(watch, sizeof watch, "%s/%s/%s", cut, RUN_RESUME_DIR, RUN_TRAINER_STATE);
    CHECK_MSG(kill_loop_signal(cmd, watch, SIGTERM) != 0, "the protocol was not stopped");
    file_join(cut, RUN_RESULTS, done, sizeof done);
    CHECK_MSG(!file_exists(done), "the run finished before SIGTERM reached it");
    snprintf(cmd, sizeof cmd, base, glue_dir, test_glue_bin(), dir, "cut", dir, "cut");
    strcat(cmd, " 2>&1");
    char *out = test_run(cmd, &st);
    snprintf(done, sizeof done, "%s/cut.log", dir);
    char *said = file_read(done, NULL);
    CHECK_MSG(st == 0 && out && strstr(out, "resuming "), "exit %d: %s\n(the interrupted start said: %s)", st,
              out ? out : "", said ? said : "");
    free(said);
    free(out);
    snprintf(ref, sizeof ref, "%s/ref/baseline/rte-seed1", dir);
    CHECK_MSG(kill_loop_same_results(ref, cut), "the resumed run's losses or dev metrics differ");
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) CHECK_MSG(0, "cleanup");
}

/* The table names its rows' settings without the machine's home directory:
 * "task.init=$HOME/x" is written "task.init=~/x" (core/files.h). */
TEST(protocol_settings_portable) {
    const char *home = getenv("HOME");
    if (!home || home[0] != '/' || !home[1]) { test_skip("no HOME"); return; }
    char in[1024], out[1024];
    snprintf(in, sizeof in, "rte.init=%s/glue-runs/mnli", home);
    file_portable_setting(in, out, sizeof out);
    CHECK_MSG(strcmp(out, "rte.init=~/glue-runs/mnli") == 0, "%s -> %s", in, out);
    file_portable_setting("epochs=10", out, sizeof out);
    CHECK(strcmp(out, "epochs=10") == 0);
    file_portable_setting("init=/elsewhere/run", out, sizeof out);
    CHECK(strcmp(out, "init=/elsewhere/run") == 0);
    snprintf(in, sizeof in, "%s/plain", home);
    file_portable_setting(in, out, sizeof out);
    CHECK(strcmp(out, "~/plain") == 0);
}
