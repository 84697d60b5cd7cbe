/* test_nan_metrics.c — a metric that is not a number is said so: "nan" in
 * text, null in JSON, and the command exits 1; it used to print 0.00 with
 * exit 0. Two ways in: constant STS-B predictions scored with `glue score`
 * (scipy's Pearson has no value there), and a user's regression dev set with
 * a gold score of 1e308 (beyond a float) through finetune and eval. */
#include "tests/cli_fixture.h"
#include "tests/test.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The first "{...}" object of out, parsed (NULL when there is none). */
static cJSON *nan_json(const char *out) {
    const char *j = strchr(out, '{');
    return j ? cJSON_Parse(j) : NULL;
}

TEST(nan_metric_score_constant_predictions) {
    CliFixture f;
    if (cli_fixture_open(&f) != 0) return;
    char pred[600], cmd[2048];
    cli_fixture_path(&f, "const.tsv", pred, sizeof pred);
    /* every STS-B dev index, one constant score */
    snprintf(cmd, sizeof cmd, "(printf 'index\\tprediction\\n'; zcat -f %s/data/glue/STS-B/dev.tsv* | tail -n +2 | "
             "cut -f1 | sed 's/$/\\t2.5/') > %s", test_shared_dir(), pred);
    free(test_run(cmd, NULL));
    int st = -1;
    snprintf(cmd, sizeof cmd, "GLUE_DATA=%s/data/glue %s score stsb %s 2>&1", test_shared_dir(), test_glue_bin(), pred);
    char *out = test_run(cmd, &st);
    CHECK_MSG(st == 1 && strstr(out, "pearson nan  spearman nan") && strstr(out, "pearson is not a number") &&
                  !strstr(out, "0.00"),
              "exit %d: %s", st, out);
    free(out);
    snprintf(cmd, sizeof cmd, "GLUE_DATA=%s/data/glue %s score stsb %s --json 2>/dev/null", test_shared_dir(),
             test_glue_bin(), pred);
    out = test_run(cmd, &st);
    cJSON *j = nan_json(out);
    CHECK_MSG(st == 1 && j && cJSON_IsNull(cJSON_GetObjectItem(j, "pearson")) &&
                  cJSON_IsNull(cJSON_GetObjectItem(j, "spearman")),
              "exit %d: %s", st, out);
    cJSON_Delete(j);
    free(out);
    cli_fixture_close(&f);
}

TEST(nan_metric_gold_beyond_float) {
    CliFixture f;
    if (cli_fixture_open(&f) != 0) return;
    char train[2048] = "text\tlabel\n", dev[512] = "text\tlabel\n";
    for (int i = 0; i < 20; i++)
        snprintf(train + strlen(train), sizeof train - strlen(train), "w%d x%d y\t%d\n", i, i % 3, i % 5);
    for (int i = 0; i < 5; i++)
        snprintf(dev + strlen(dev), sizeof dev - strlen(dev), "w%d x%d y\t%s\n", i, i % 3, i == 2 ? "1e308" : "2");
    if (cli_fixture_write(&f, "tr.tsv", train, -1) || cli_fixture_write(&f, "dev.tsv", dev, -1)) {
        cli_fixture_close(&f);
        return;
    }
    int st = -1;
    char *out = cli_fixture_glue(&f, "finetune --train tr.tsv --dev dev.tsv --regression --model fasttext --epochs 2 "
                                     "--set bucket=1000 --out r", &st);
    CHECK_MSG(st == 1 && strstr(out, "dev pearson nan spearman nan") && strstr(out, "is not a number in any epoch"),
              "finetune: exit %d: %s", st, out);
    free(out);
    out = cli_fixture_glue(&f, "eval --run r --model fasttext", &st);
    CHECK_MSG(st == 1 && strstr(out, "nan/nan") && strstr(out, "dev pearson is not a number"), "eval: exit %d: %s",
              st, out);
    free(out);
    out = cli_fixture_glue(&f, "eval --run r --model fasttext --json 2>/dev/null", &st);
    cJSON *j = nan_json(out);
    const cJSON *d = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "tasks"), "tr"), "dev");
    CHECK_MSG(st == 1 && cJSON_IsNull(cJSON_GetObjectItem(d, "pearson")), "eval --json: exit %d: %s", st, out);
    cJSON_Delete(j);
    free(out);
    cli_fixture_close(&f);
}
