/* test_report.c — `glue report` end to end through the binary: the page shows
 * exactly the numbers of the JSON files and runs it read (every metric of
 * compare.json, the runs' dev metrics and losses, seeds, translation,
 * benchmarks with their CPU, the pretraining log), makes dev predictions that
 * agree with the runs, and lists what is missing or corrupt; with nothing to
 * read it still writes a page that says so, with no blank chart; an
 * unwritable output is the only failure. The browser test is
 * test_report_browser.c. */
#include "tests/test.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "tests/report_fixture.h"
#include "tests/report_page_check.h"

#define FX_ARGS "--runs runs --results results --pretrain pt --pretrain pt-electra"

static cJSON *fx_json(const ReportFixture *fx, const char *rel) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", fx->root, rel);
    char *text = report_fixture_read(path);
    cJSON *j = text ? cJSON_Parse(text) : NULL;
    free(text);
    CHECK_MSG(j != NULL, "%s unreadable", path);
    return j;
}

/* Every metric and GLUE score of compare.json is on the page, exactly. */
static void check_compare_numbers(const ReportFixture *fx, const char *html) {
    cJSON *c = fx_json(fx, "results/compare.json");
    int n = 0;
    const cJSON *m;
    cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(c, "models")) {
        const cJSON *task, *metric;
        cJSON_ArrayForEach(task, cJSON_GetObjectItemCaseSensitive(m, "tasks")) {
            cJSON_ArrayForEach(metric, cJSON_GetObjectItemCaseSensitive(task, "dev")) {
                CHECK_MSG(page_shows(html, metric->valuedouble, 2, 0), "%s %s %s = %.17g not on the page",
                          cJSON_GetObjectItemCaseSensitive(m, "model")->valuestring, task->string, metric->string,
                          metric->valuedouble);
                n++;
            }
        }
        const cJSON *g = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(m, "glue"), "glue_score");
        CHECK_MSG(page_shows(html, g->valuedouble, 2, 0), "GLUE %.17g not on the page", g->valuedouble);
    }
    CHECK_EQ_INT(n, 6);
    cJSON_Delete(c);
}

/* A run's best dev metrics (table and dev predictions) and per-epoch losses (curve hovers). */
static void check_run(const ReportFixture *fx, const char *html, const char *task) {
    char rel[128], title[128];
    snprintf(rel, sizeof rel, "runs/%s/fasttext/results.json", task);
    cJSON *r = fx_json(fx, rel);
    const cJSON *metric, *e;
    cJSON_ArrayForEach(metric, cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(r, "best"), "dev")) {
        CHECK_MSG(page_shows(html, metric->valuedouble, 2, 0), "%s best %s %.17g not on the page", task,
                  metric->string, metric->valuedouble);
    }
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(r, "epochs")) {
        snprintf(title, sizeof title, "training loss: epoch %d, %.4f",
                 cJSON_GetObjectItemCaseSensitive(e, "epoch")->valueint,
                 cJSON_GetObjectItemCaseSensitive(e, "loss")->valuedouble);
        CHECK_MSG(strstr(html, title) != NULL, "no curve point '%s'", title);
    }
    cJSON_Delete(r);
}

TEST(report_numbers_equal_the_json) {
    ReportFixture fx;
    if (report_fixture_make(&fx) != 0) return;
    int st;
    char *html = report_fixture_page(&fx, FX_ARGS, &st);
    CHECK_EQ_INT(st, 0);
    CHECK(html != NULL);
    if (!html) { report_fixture_remove(&fx); return; }
    check_compare_numbers(&fx, html);
    check_run(&fx, html, "sst2");
    check_run(&fx, html, "stsb");
    /* Every chart and table is there, and none is blank. */
    static const char *const IDS[] = {"glue-table", "bars-sst2", "bars-stsb", "curve-loss-runs-sst2-fasttext",
                                      "curve-dev-runs-sst2-fasttext", "curve-loss-runs-stsb-fasttext",
                                      "pretrain-loss-pt", "pretrain-acc-pt", "confusion-runs-sst2-fasttext",
                                      "scatter-runs-stsb-fasttext", "translation-table", "bench-table",
                                      "bench-fasttext-table", "bars-bench-bert"};
    for (size_t i = 0; i < sizeof IDS / sizeof IDS[0]; i++) {
        char key[128];
        snprintf(key, sizeof key, "id=\"%s\"", IDS[i]);
        CHECK_MSG(strstr(html, key) != NULL, "no element %s", IDS[i]);
    }
    CHECK_EQ_INT(page_blank_charts(html), 0);
    /* Dev predictions: every dev row in the confusion matrix, every pair in the
     * scatter, and the same metrics as the runs recorded. */
    char *conf = page_element(html, "confusion-runs-sst2-fasttext", "</table>");
    CHECK_NEAR(page_data_sum(conf), REPORT_FX_DEV_ROWS, 0);
    free(conf);
    char *scatter = page_element(html, "scatter-runs-stsb-fasttext", "</svg>");
    const char *points = scatter ? strstr(scatter, "points\"") : NULL;   /* the legend has a circle too */
    char *cloud = points ? xstrndup(points, (size_t)(strstr(points, "</g>") - points)) : NULL;
    CHECK_EQ_INT(page_count(cloud, "<circle"), REPORT_FX_DEV_ROWS);
    free(cloud);
    free(scatter);
    CHECK_MSG(strstr(html, "These differ") == NULL, "dev predictions disagree with results.json");
    /* Seeds: mean ± std of the task, and the GLUE score over the seeds. */
    CHECK(page_shows(html, 91, 2, 0) && page_shows(html, 1.4142135623730951, 2, 0));
    CHECK(page_shows(html, REPORT_FX_SEEDS_GLUE, 2, 1e-12));
    CHECK(page_shows(html, REPORT_FX_SEEDS_GLUE_SD, 2, 1e-12));
    /* Translation, benchmarks with their CPU (or the lack of one), pretraining. */
    CHECK(page_shows(html, 37.777, 2, 0) && page_shows(html, 38.111, 2, 0) && page_shows(html, 33.3333, 2, 0));
    CHECK(page_shows(html, 2.0001, 2, 0) && page_shows(html, 1234.5, 0, 0) && page_shows(html, 0.75, 2, 0));
    CHECK(page_shows(html, 478343.75, 0, 0) && strstr(html, ">478,344</data>"));   /* thousands separated */
    CHECK(strstr(html, REPORT_FX_CPU) != NULL);
    CHECK(strstr(html, "CPU not recorded") != NULL);
    CHECK(page_shows(html, 8.125, 3, 0) && page_shows(html, 6.25, 2, 0));
    /* The ELECTRA log's loss axis spans its generator's 6.625-6.875, not the total's 23.5-24.5. */
    CHECK_MSG(strstr(html, "the ELECTRA generator (per logged step)") && strstr(html, "class=\"tick\">6.90<") &&
              !strstr(html, "class=\"tick\">24.0<"), "an ELECTRA log's curve is not its generator's masked-LM loss");
    /* Provenance, and what is missing. */
    CHECK(strstr(html, "commit: " REPORT_FX_COMMIT) != NULL);
    CHECK(strstr(html, "results/broken.json is not valid JSON (line 2)") != NULL);
    CHECK(strstr(html, "runs/rte/fasttext: a run without results.json") != NULL);
    CHECK(strstr(html, "pt/log.jsonl.gz: 1 of 5 lines unreadable") != NULL);
    CHECK(strstr(html, "GLUE tasks without any result: CoLA, MRPC") != NULL);
    /* Self-contained: no script, nothing fetched. */
    CHECK(strstr(html, "<script") == NULL && strstr(html, "src=") == NULL && strstr(html, "href=\"http") == NULL &&
          strstr(html, "url(") == NULL);
    free(html);
    report_fixture_remove(&fx);
}

TEST(report_missing_inputs_say_so) {
    ReportFixture fx;
    snprintf(fx.root, sizeof fx.root, "/tmp/glue_report_XXXXXX");
    if (!mkdtemp(fx.root)) DIE("mkdtemp failed");
    char cmd[512];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/empty'", fx.root);
    CHECK(system(cmd) == 0);
    int st;
    /* Nothing at all: a page that says so, no chart drawn empty. */
    char *html = report_fixture_page(&fx, "--runs nowhere --results empty --pretrain nothing", &st);
    CHECK_EQ_INT(st, 0);
    CHECK(html && strstr(html, "What is missing"));
    CHECK(html && strstr(html, "No GLUE results"));
    CHECK(html && strstr(html, "runs directory nowhere: No such file or directory"));
    CHECK(html && strstr(html, "nothing: no log.jsonl or log.jsonl.gz"));
    CHECK(html && strstr(html, "No translation.json") && strstr(html, "No bench_*.json"));
    CHECK(html && !strstr(html, "<svg"));
    free(html);
    /* A run that recorded no epoch, a JSON array, a file of no known kind. */
    static const ReportFile ODD[] = {
        {"empty-run.json", "{\"task\": \"sst2\", \"model\": \"m\", \"epochs\": [], \"best\": null}\n"},
        {"array.json", "[1, 2]\n"},
        {"other.json", "{\"hello\": 1}\n"},
    };
    CHECK(report_fixture_write(&fx, "odd", ODD, (int)(sizeof ODD / sizeof ODD[0])) == 0);
    html = report_fixture_page(&fx, "--runs nowhere --results odd --pretrain nothing", &st);
    CHECK_EQ_INT(st, 0);
    CHECK(html && strstr(html, "no values recorded"));
    CHECK(html && strstr(html, "odd/array.json is JSON but not an object"));
    CHECK(html && strstr(html, "odd/other.json: not a file glue writes"));
    CHECK_EQ_INT(page_blank_charts(html), 0);
    free(html);
    /* Best per column: ties as shown (80.001 and 80.004 are both 80.00), else the larger. */
    static const ReportFile TIES[] = {
        {"glue-a.json", "{\"model\": \"a\", \"tasks\": {\"sst2\": {\"dev\": {\"accuracy\": 80.001}}, "
                        "\"cola\": {\"dev\": {\"mcc\": 10}}}}\n"},
        {"glue-b.json", "{\"model\": \"b\", \"tasks\": {\"sst2\": {\"dev\": {\"accuracy\": 80.004}}, "
                        "\"cola\": {\"dev\": {\"mcc\": 20}}}}\n"},
    };
    CHECK(report_fixture_write(&fx, "ties", TIES, (int)(sizeof TIES / sizeof TIES[0])) == 0);
    html = report_fixture_page(&fx, "--runs nowhere --results ties --pretrain nothing", &st);
    CHECK_EQ_INT(page_count(html, "<strong class=\"best\">"), 4);   /* SST-2 twice, CoLA and GLUE of b */
    CHECK(html && strstr(html, "<strong class=\"best\"><data value=\"20\">"));
    CHECK_EQ_INT(page_count(html, "<strong class=\"best\"><data value=\"80.00"), 2);
    CHECK(html && strstr(html, "<strong class=\"best\"><data value=\"50.00"));
    free(html);
    /* The one failure: the page cannot be written (I/O, 74). */
    html = report_fixture_page(&fx, "--runs nowhere --results odd --out no-such-dir/r.html", &st);
    CHECK_EQ_INT(st, 74);
    free(html);
    char errpath[256];
    snprintf(errpath, sizeof errpath, "%s/report.err", fx.root);
    char *err = report_fixture_read(errpath);
    CHECK_MSG(err && strstr(err, "cannot write no-such-dir/r.html"), "stderr: %s", err ? err : "");
    free(err);
    report_fixture_remove(&fx);
}
