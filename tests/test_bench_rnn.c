/* test_bench_rnn.c — `glue bench rnn` end to end at tiny sizes (the numbers
 * are not checked, only that every cell, length and measurement is timed on
 * both sides and reported in the results JSON and its Markdown twin), and its
 * user errors exit 2 with a message. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/files.h"
#include "eval/bench/bench.h"
#include "tests/scratch.h"
#include "tests/test.h"

TEST(bench_rnn_runs_and_reports_every_measurement) {
    char dir[SCRATCH_PATH_MAX];
    if (!CHECK(scratch_dir("bench_rnn", dir, sizeof dir))) return;
    char cmd[1024], path[700], md[720], cpu_dir[256];
    snprintf(cmd, sizeof cmd, "GLUE_RESULTS=%s %s bench rnn --batch 3 --dim 5 --hidden 4 --lengths 2,6 --reps 2 --threads 1 2>&1",
             dir, test_glue_bin());
    int st = -1;
    char *out = test_run(cmd, &st);
    int torch = !(out && strstr(out, "python3-torch"));
    if (!torch) {   /* no PyTorch here: ours alone */
        free(out);
        strcat(cmd, " --no-torch");
        out = test_run(cmd, &st);
    }
    CHECK_MSG(st == 0, "bench rnn failed (%d):\n%s", st, out ? out : "");
    free(out);
    bench_cpu_dir(cpu_dir, sizeof cpu_dir);
    snprintf(path, sizeof path, "%s/%s/bench_rnn.json", dir, cpu_dir);
    char *text = file_read(path, NULL);
    cJSON *j = text ? cJSON_Parse(text) : NULL;
    if (CHECK_MSG(j, "no results in %s", path)) {
        const cJSON *rows = cJSON_GetObjectItem(j, "results"), *r;
        CHECK_EQ_INT(cJSON_GetArraySize(rows), 8);   /* lstm, gru x 2 lengths x train, infer */
        cJSON_ArrayForEach(r, rows) {
            const cJSON *ours = cJSON_GetObjectItem(cJSON_GetObjectItem(r, "ours_seconds"), "median");
            CHECK(cJSON_IsNumber(ours) && ours->valuedouble > 0);
            if (torch) CHECK(cJSON_IsNumber(cJSON_GetObjectItem(r, "torch_over_ours")));
        }
        CHECK(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "machine"), "load_start") != NULL);
    }
    cJSON_Delete(j);
    free(text);
    file_md_twin(path, md, sizeof md);
    text = file_read(md, NULL);
    CHECK_MSG(text && strstr(text, "| gru | 6 | infer |"), "markdown table:\n%s", text ? text : "(none)");
    free(text);
    unlink(md);
    unlink(path);
    snprintf(path, sizeof path, "%s/%s", dir, cpu_dir);
    rmdir(path);
    snprintf(path, sizeof path, "%s/bench", dir);
    rmdir(path);
    rmdir(dir);
}

TEST(bench_rnn_refuses_bad_options) {
    static const char *const bad[] = {"--reps 0", "--lengths 20,x", "--hidden -1", "--script /nonexistent.py"};
    for (int i = 0; i < 4; i++) {
        char cmd[512];
        snprintf(cmd, sizeof cmd, "GLUE_RESULTS=/nonexistent %s bench rnn --batch 2 --dim 2 --hidden 2 --lengths 2 %s 2>&1",
                 test_glue_bin(), bad[i]);
        int st = -1;
        char *out = test_run(cmd, &st);
        CHECK_MSG(st != 0 && out && strstr(out, "error"), "%s: status %d\n%s", bad[i], st, out ? out : "");
        free(out);
    }
}
