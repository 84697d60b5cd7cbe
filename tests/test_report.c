/* test_report.c — `glue report` end to end through the binary: the page shows
 * exactly the numbers of the JSON files and runs it read (every metric of
 * compare.json, the runs' dev metrics and losses, seeds, protocol, pretraining
 * screen, translation, benchmarks with their CPU, fuzzing, the pretraining
 * log), labels each row with what it is (one run, or a mean over how many
 * seeds), keeps percentage axes at 100, makes dev predictions that agree with
 * the runs, and lists what is missing or corrupt; with nothing to read it
 * still writes a page that says, section by section, which command would fill
 * it, with no blank chart; an unwritable output is the only failure. The
 * repository's own results/ are read whole, and `make run`'s report (those
 * results and a finished run) lists nothing as missing. The browser test is
 * test_report_browser.c. */
#include "tests/scratch.h"
#include "tests/test.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "eval/report.h"
#include "eval/svg_plot.h"
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
    CHECK_EQ_INT(n, 9);
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

/* The "What is missing" list of a page (malloc'd), or NULL. */
static char *missing_list(const char *html) { return page_element(html, "missing", "</section>"); }

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
                                      "scatter-runs-stsb-fasttext", "translation-table",
                                      "bench-bert-" REPORT_FX_CPU_DIR, "bench-fasttext-table",
                                      "bars-bench-bert-" REPORT_FX_CPU_DIR, "protocol-finetune-protocol",
                                      "screen-pretrain-screen", "screen-runs-pretrain-screen",
                                      "bench-scaling-bench-scaling", "fuzz-fuzz", "fuzz-fuzz-campaign"};
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
    /* Seeds: mean ± std of each task, and the GLUE score over the seeds files' own tasks. */
    CHECK(page_shows(html, 91, 2, 0) && page_shows(html, 1.4142135623730951, 2, 0));
    CHECK(page_shows(html, 52, 2, 0) && page_shows(html, 2.8284271247461903, 2, 0));
    CHECK(page_shows(html, REPORT_FX_SEEDS_GLUE, 2, 1e-12));
    CHECK(page_shows(html, REPORT_FX_SEEDS_GLUE_SD, 2, 1e-12));
    /* Protocol: each task's mean ± std, the row's score, Δ against the baseline. */
    CHECK(page_shows(html, 85.5, 2, 0) && page_shows(html, 0.7071067811865476, 2, 0));
    CHECK(page_shows(html, 56.125, 2, 0) && page_shows(html, 0.17677669529663689, 2, 0));
    CHECK(page_shows(html, 70.125, 2, 0) && page_shows(html, 71.3125, 2, 0) && page_shows(html, 0.4375, 2, 0));
    char delta[128];
    snprintf(delta, sizeof delta, "+<data value=\"%.17g\">%.2f</data>", 71.3125 - 70.125, 71.3125 - 70.125);
    CHECK_MSG(strstr(html, delta) != NULL, "no Δ %s of the protocol's row", delta);
    /* Pretraining screen, scaling, fuzzing. */
    CHECK(page_shows(html, REPORT_FX_PROXY, 2, 0) && page_shows(html, 0.53033008588991, 2, 0));
    CHECK(page_shows(html, 5.8125, 3, 0) && page_shows(html, 416.625, 0, 0));
    CHECK(page_shows(html, REPORT_FX_SCALING, 2, 0) && page_shows(html, 5231.25, 0, 0));
    CHECK(page_shows(html, REPORT_FX_FUZZ_EXECS, 0, 0) && strstr(html, ">1,540,238</data>"));
    CHECK(strstr(html, ">1</data> crash found") != NULL && strstr(html, "campaign complete") != NULL);
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
    /* Percentages end at 100: rte_perfect's dev accuracy is a flat 100, once drawn on an axis to 110. */
    char *flat = page_element(html, "curve-dev-rte-perfect", "</svg>");
    CHECK_MSG(flat && strstr(flat, "class=\"tick\">100<") && !strstr(flat, "class=\"tick\">110<"),
              "a flat 100%% is not drawn on an axis that ends at 100");
    free(flat);
    CHECK_MSG(!strstr(html, "class=\"tick\">110<") && !strstr(html, "class=\"tick\">120<"),
              "a percentage axis runs past 100");
    /* Provenance, and what is missing: inputs that could not be read, not what nobody ran. */
    CHECK(strstr(html, "commit: " REPORT_FX_COMMIT) != NULL);
    char *missing = missing_list(html);
    CHECK(missing && strstr(missing, "results/broken.json is not valid JSON (line 2)") != NULL);
    CHECK(missing && strstr(missing, "runs/rte/fasttext: a run without results.json") != NULL);
    CHECK(missing && strstr(missing, "pt/log.jsonl.gz: 1 of 5 lines unreadable") != NULL);
    CHECK(missing && !strstr(missing, "not a file glue writes") && !strstr(missing, "CoLA"));
    free(missing);
    CHECK(strstr(html, "No result for CoLA, MRPC") != NULL && strstr(html, "<code>glue compare all</code>"));
    /* Self-contained: no script, nothing fetched. */
    CHECK(strstr(html, "<script") == NULL && strstr(html, "src=") == NULL && strstr(html, "href=\"http") == NULL &&
          strstr(html, "url(") == NULL);
    free(html);
    report_fixture_remove(&fx);
}

/* The text of the GLUE table's row header that starts with model name + footnote. */
static int row_label_is(const char *html, const char *model, const char *source) {
    char want[256];
    snprintf(want, sizeof want, "<th scope=\"row\">%s<sup", model);
    for (const char *s = html ? strstr(html, want) : NULL; s; s = strstr(s + 1, want)) {
        const char *end = strstr(s, "</th>"), *src = strstr(s, source);
        if (src && end && src < end) return 1;
    }
    return 0;
}

TEST(report_rows_say_what_they_are) {
    ReportFixture fx;
    if (report_fixture_make(&fx) != 0) return;
    int st;
    char *html = report_fixture_page(&fx, FX_ARGS, &st);
    CHECK_EQ_INT(st, 0);
    /* compare.json over seeds 7, 8, 9: means, never "seed 7"; the majority class is not trained. */
    CHECK_MSG(row_label_is(html, "alpha", "(compare, mean of 3 seeds)"), "alpha's compare row is not a mean");
    CHECK_MSG(row_label_is(html, "beta", "(compare, mean of 3 seeds)"), "beta's compare row is not a mean");
    CHECK_MSG(row_label_is(html, "majority", "(compare, not trained)"), "the majority row");
    CHECK_MSG(html && !strstr(html, "compare, seed"), "a mean over seeds is labelled with one seed");
    CHECK_MSG(row_label_is(html, "alpha", "(seeds files, mean of 2 seeds)"), "the seeds row");
    CHECK_MSG(row_label_is(html, "alpha", "(glue_alpha)"), "the single run of alpha");
    /* The spreads the file records: the task score's std and the GLUE score's. */
    CHECK(page_shows(html, REPORT_FX_COMPARE_SD, 2, 0) && page_shows(html, REPORT_FX_COMPARE_GLUE_SD, 2, 0));
    CHECK(html && strstr(html, "mean of 3 seeds; ± the sample std of the task score"));
    /* The seeds row's GLUE score is its own, never made with glue_alpha.json's runs. */
    CHECK(html && strstr(html, "over the seeds files&#39; 2 tasks"));
    free(html);
    /* One seed: "compare, seed 7". A row of other settings (compare --set,
     * "alpha *" in compare's table) says them: it read as the defaults' row. */
    static const ReportFile ONE[] = {
        {"compare.json", "{\"seed\": 7, \"models\": [{\"model\": \"alpha\", \"tasks\": {\"sst2\": {\"dev\": "
                         "{\"accuracy\": 91.5}}, \"cola\": {\"dev\": {\"mcc\": 20}}}}, {\"model\": \"alpha\", "
                         "\"settings\": [\"sst2.epochs=2\"], \"tasks\": {\"sst2\": {\"dev\": {\"accuracy\": 90.5}}}}]}\n"},
    };
    CHECK(report_fixture_write(&fx, "one-seed", ONE, 1) == 0);
    html = report_fixture_page(&fx, "--runs nowhere --results one-seed --pretrain nothing", &st);
    CHECK_MSG(row_label_is(html, "alpha", "(compare, seed 7)"), "a one-seed compare row");
    CHECK_MSG(row_label_is(html, "alpha", "(compare, seed 7, with sst2.epochs=2)"), "a compare row of other settings");
    CHECK(!row_label_is(html, "alpha", "mean of"));
    free(html);
    report_fixture_remove(&fx);
}

/* A script's analysis file ({"analysis", "tables"}: eval/sst2_polarity.py)
 * is drawn as its tables, counts without decimals, fractions with two, text
 * as text; an empty analyses section names the script that writes one. */
TEST(report_draws_analyses) {
    ReportFixture fx;
    if (report_fixture_make(&fx) != 0) return;
    static const ReportFile ANALYSIS[] = {
        {"why.json", "{\"analysis\": \"Why <it> loses\", \"command\": \"python3 eval/x.py\", \"tables\": [{\"title\": "
                     "\"dev: accuracy\", \"columns\": [\"bucket\", \"examples\", \"bert\"], \"rows\": [[\"all\", 67349, "
                     "94.12], [\"rare\", 615, 80], [\"gap\", 3, \"[-7.71, +1.93]\"]]}]}\n"},
    };
    CHECK(report_fixture_write(&fx, "analysis-only", ANALYSIS, 1) == 0);
    int st;
    char *html = report_fixture_page(&fx, "--runs nowhere --results analysis-only --pretrain nothing", &st);
    CHECK_EQ_INT(st, 0);
    CHECK_MSG(html && strstr(html, "<h3>Why &lt;it&gt; loses<sup"), "the analysis's title");
    CHECK(html && strstr(html, "<caption>dev: accuracy</caption>") && strstr(html, "<th scope=\"col\">examples</th>"));
    CHECK(html && strstr(html, "<data value=\"67349\">67,349</data>") && strstr(html, ">94.12</data>"));
    CHECK_MSG(html && strstr(html, ">80.00</data>"), "a whole number in a column of fractions keeps two decimals");
    CHECK(html && strstr(html, "<td>[-7.71, +1.93]</td>"));
    CHECK_MSG(html && !strstr(html, "why.json: not a file glue writes"), "the analysis is listed as not ours");
    free(html);
    html = report_fixture_page(&fx, FX_ARGS, &st);
    CHECK(html && strstr(html, "No analyses in the results directory: <code>python3 eval/sst2_polarity.py</code>"));
    free(html);
    report_fixture_remove(&fx);
}

TEST(report_missing_inputs_say_so) {
    ReportFixture fx;
    if (!scratch_dir("report", fx.root, sizeof fx.root)) DIE("no scratch folder");
    char cmd[512];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/empty'", fx.root);
    CHECK(system(cmd) == 0);
    int st;
    /* Nothing at all: a page that says so, each section with the command that fills it, no chart drawn empty. */
    char *html = report_fixture_page(&fx, "--runs nowhere --results empty --pretrain nothing", &st);
    CHECK_EQ_INT(st, 0);
    CHECK(html && strstr(html, "What is missing"));
    CHECK(html && strstr(html, "No GLUE results"));
    CHECK(html && strstr(html, "runs directory nowhere: No such file or directory"));
    CHECK(html && strstr(html, "nothing: no log.jsonl or log.jsonl.gz"));
    static const char *const WHY[] = {
        "<code>glue compare all</code>",       /* GLUE table and bars */
        "<code>glue protocol --tasks",         /* protocols */
        "<code>glue finetune TASK</code> makes one",   /* learning curves, dev predictions */
        "<code>glue pretrain</code>",          /* pretraining curves */
        "<code>glue pretrain screen",          /* screens */
        "<code>glue translate eval --results", /* translation */
        "<code>make bench</code>",             /* benchmarks */
        "<code>glue bench scaling</code>",
        "<code>make fuzz</code>",              /* fuzzing */
    };
    for (size_t i = 0; i < sizeof WHY / sizeof WHY[0]; i++)
        CHECK_MSG(html && strstr(html, WHY[i]), "an empty section does not say '%s'", WHY[i]);
    char *missing = missing_list(html);
    CHECK(missing && strstr(missing, "glue protocol makes them") && strstr(missing, "make fuzz or make fuzz-campaign"));
    free(missing);
    CHECK(html && !strstr(html, "<svg"));
    free(html);
    /* A run that recorded no epoch, a JSON array, a file of no known kind. */
    static const ReportFile ODD[] = {
        {"empty-run.json", "{\"task\": \"sst2\", \"model\": \"m\", \"epochs\": [], \"best\": null}\n"},
        {"array.json", "[1, 2]\n"},
        {"other.json", "{\"hello\": 1}\n"},
    };
    CHECK(report_fixture_write(&fx, "odd", ODD, (int)(sizeof ODD / sizeof ODD[0])) == 0);
    snprintf(cmd, sizeof cmd, "mkdir '%s/odd/bench_dir.json'", fx.root);   /* a folder named like a result */
    CHECK(system(cmd) == 0);
    html = report_fixture_page(&fx, "--runs nowhere --results odd --pretrain nothing", &st);
    CHECK_EQ_INT(st, 0);
    CHECK(html && strstr(html, "no values recorded"));
    CHECK(html && strstr(html, "odd/array.json is JSON but not an object"));
    /* what reading it said, not "Input/output error" */
    CHECK_MSG(html && strstr(html, "odd/bench_dir.json Is a directory"), "the folder bench_dir.json is not said to be one");
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

/* Each *.json under dir (and one level of subdirectories) is a source of the page. */
static int check_every_file_read(const char *html, const char *dir, int depth) {
    DIR *d = opendir(dir);
    CHECK_MSG(d != NULL, "cannot list %s", dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        char path[PATH_MAX + 300], key[PATH_MAX + 320];
        size_t len = strlen(e->d_name);
        if (e->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (len > 5 && strcmp(e->d_name + len - 5, ".json") == 0) {
            snprintf(key, sizeof key, "<code>%s</code>", path);   /* its entry in the sources */
            CHECK_MSG(html && strstr(html, key), "%s is not read by glue report", path);
            n++;
        } else if (depth < 2) {
            DIR *sub = opendir(path);
            if (sub) closedir(sub), n += check_every_file_read(html, path, depth + 1);
        }
    }
    if (d) closedir(d);
    return n;
}

/* The numbers of the repository's results that the report made sections for. */
static void check_repository_numbers(const char *html, const char *results) {
    static const char *const FILES[] = {"finetune_protocol.json", "pretrain_screen.json", "bench_scaling.json",
                                        "fuzz_campaign.json", "compare.json"};
    for (size_t i = 0; i < sizeof FILES / sizeof FILES[0]; i++) {
        char path[PATH_MAX + 64];
        snprintf(path, sizeof path, "%s/%s", results, FILES[i]);
        char *text = report_fixture_read(path);
        cJSON *j = text ? cJSON_Parse(text) : NULL;
        free(text);
        if (!j) continue;   /* the repository may drop a file; every file it has is checked above */
        const cJSON *it;
        cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(j, "rows"))
            CHECK_MSG(page_shows(html, cJSON_GetObjectItemCaseSensitive(it, "score")->valuedouble, 2, 0),
                      "%s: a protocol row's score is not on the page", FILES[i]);
        cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(j, "runs"))
            CHECK_MSG(page_shows(html, cJSON_GetObjectItemCaseSensitive(it, "proxy_score")->valuedouble, 2, 0),
                      "%s: a screen's proxy score is not on the page", FILES[i]);
        cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(j, "configs"))
            CHECK_MSG(page_shows(html, cJSON_GetObjectItemCaseSensitive(
                                           cJSON_GetObjectItemCaseSensitive(it, "ranks_over_threads"), "median")
                                           ->valuedouble, 2, 0),
                      "%s: a scaling ratio is not on the page", FILES[i]);
        cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(j, "models")) {
            const cJSON *sd = cJSON_GetObjectItemCaseSensitive(it, "glue_std");
            CHECK_MSG(!sd || page_shows(html, sd->valuedouble, 2, 0), "%s: a GLUE score's std is not on the page",
                      FILES[i]);
        }
        const cJSON *total = cJSON_GetObjectItemCaseSensitive(j, "total_executions");
        CHECK_MSG(!total || page_shows(html, total->valuedouble, 0, 0), "%s: the executions are not on the page",
                  FILES[i]);
        cJSON_Delete(j);
    }
}

/* `make run` reports the committed results/ with the runs it made: every
 * results file is read and shown, and the page lists nothing as missing
 * (a finished fine-tuning run, the shipped encoder's pretraining log). */
TEST(report_of_make_run_misses_nothing) {
    char results[PATH_MAX], shipped[PATH_MAX];
    if (!realpath("results", results) || !realpath("models/electra-mini-wiki", shipped)) {
        CHECK_MSG(0, "the repository's results/ and models/electra-mini-wiki (run the tests from its root)");
        return;
    }
    ReportFixture fx;
    if (report_fixture_make(&fx) != 0) return;
    char cmd[PATH_MAX * 2 + 256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s/runs/rte'", fx.root);   /* make run leaves no unfinished run */
    CHECK(system(cmd) == 0);
    snprintf(cmd, sizeof cmd, "--runs runs --results %s --pretrain %s", results, shipped);
    int st;
    char *html = report_fixture_page(&fx, cmd, &st);
    CHECK_EQ_INT(st, 0);
    char *missing = missing_list(html);
    CHECK_MSG(missing && strstr(missing, "Nothing: every input was found and read"), "make run's report lists: %s",
              missing ? missing : "(no page)");
    free(missing);
    CHECK_MSG(check_every_file_read(html, results, 0) >= 10, "fewer results files than expected in %s", results);
    check_repository_numbers(html, results);
    CHECK(html && strstr(html, "id=\"confusion-runs-sst2-fasttext\""));
    free(html);
    report_fixture_remove(&fx);
}

/* Percentage axes end at 100 however the ticks round; other axes at a rounded maximum of the data. */
TEST(report_axes_stay_in_range) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    SvgChart c;
    svg_chart_begin(&c, f, "flat", "curve", "flat 100", 400, 300, 1, 3, 100, 100, "epoch", "accuracy", SVG_X_INTEGER |
                    SVG_VALUE_PERCENT);
    CHECK_NEAR(c.y1, 100, 0);   /* a flat 100 was widened to 90-110 */
    CHECK(c.y0 < 100);
    svg_chart_end(&c);
    CHECK_NEAR(fmod(c.y1 - c.y0, c.ystep), 0, 1e-9);   /* the last tick is on 100 */
    svg_chart_begin(&c, f, "loss", "curve", "loss", 400, 300, 1, 3, 0.5, 2.3, "epoch", "loss", 0);
    CHECK_NEAR(c.y1, 2.5, 1e-12);   /* a rounded maximum, not a percentage */
    svg_chart_end(&c);
    svg_chart_begin(&c, f, "zero", "curve", "zero", 400, 300, 1, 3, 0, 0, "epoch", "loss", 0);
    CHECK(c.y0 >= 0);   /* a flat 0 does not read as negative */
    svg_chart_end(&c);
    fclose(f);
    free(buf);
    /* Bars of 99 ± 3 (%): the axis ends at 100, the whisker at the axis' end. */
    buf = NULL;
    f = open_memstream(&buf, &len);
    const char *rows[1] = {"m"}, *series[1] = {"accuracy"};
    double v[1] = {99}, e[1] = {3};
    svg_hbars(f, "b", "bars", rows, 1, series, 1, v, e, "accuracy (%)", NULL, SVG_VALUE_PERCENT);
    fclose(f);
    CHECK_MSG(buf && strstr(buf, "class=\"tick\">100<") && !strstr(buf, "class=\"tick\">120<") &&
              !strstr(buf, "class=\"tick\">102<"), "the bars' axis does not end at 100:\n%s", buf ? buf : "");
    free(buf);
    /* A speed ratio of 5.02 is no percentage: its axis ends at 6. */
    buf = NULL;
    f = open_memstream(&buf, &len);
    double r[1] = {5.02};
    svg_hbars(f, "r", "ratio", rows, 1, series, 1, r, NULL, "ratio", NULL, 0);
    fclose(f);
    CHECK(buf && strstr(buf, "class=\"tick\">6<") && !strstr(buf, "class=\"tick\">7<"));
    free(buf);
}

/* compare.md of a compare.json given as text (caller frees). */
static char *compare_md_of(const char *json) {
    cJSON *c = cJSON_Parse(json);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    report_compare_markdown(c, f);
    fclose(f);
    cJSON_Delete(c);
    return buf;
}

/* compare.md: a row kept from an earlier table of other seeds (compare keeps
 * the rows it did not compute) says how many seeds it is the mean of, and the
 * text says why; rows of the table's own seeds and the majority row are not
 * marked. It was shown under the table's "Seeds 1, 2, 3" as if of those. */
TEST(compare_markdown_marks_rows_of_other_seeds) {
    char *buf = compare_md_of(
        "{\"seed\": 1, \"seeds\": [1, 2, 3], \"tasks\": [\"wnli\"], \"models\": ["
        "{\"model\": \"majority\", \"tasks\": {\"wnli\": {\"dev\": {\"accuracy\": 56.34}}}},"
        "{\"model\": \"textcnn\", \"glue_seeds\": [50, 51, 52], \"glue_std\": 1,"
        " \"tasks\": {\"wnli\": {\"dev\": {\"accuracy\": 51}, \"seed_scores\": [50, 51, 52]}}},"
        "{\"model\": \"bert\", \"glue_seeds\": [56, 56, 56, 56, 56], \"glue_std\": 0,"
        " \"tasks\": {\"wnli\": {\"dev\": {\"accuracy\": 56}, \"seed_scores\": [56, 56, 56, 56, 56]}}}]}");
    CHECK_MSG(buf && strstr(buf, "| bert (5 seeds) ") && strstr(buf, "| textcnn ") && !strstr(buf, "textcnn (") &&
                  !strstr(buf, "majority (") && strstr(buf, "A row marked \"(N seeds)\""),
              "%s", buf ? buf : "");
    free(buf);
}

/* compare.md names the rows its own command did not make (compare keeps the
 * rows it does not compute), with the command, build, date and CPU that made
 * each, or that a row is older than that record. The header named only the
 * last command, over rows made days before on another CPU. */
TEST(compare_markdown_names_kept_rows) {
    char *buf = compare_md_of(
        "{\"seed\": 1, \"seeds\": [1], \"tasks\": [\"wnli\"], \"command\": \"glue compare all --models bert\","
        " \"provenance\": {\"date\": \"2026-11-28T10:00:00Z\"}, \"models\": ["
        "{\"model\": \"majority\", \"tasks\": {\"wnli\": {\"dev\": {\"accuracy\": 56.34}}}},"
        "{\"model\": \"bert\", \"tasks\": {\"wnli\": {\"dev\": {\"accuracy\": 56}}}, \"made_by\": {\"command\":"
        " \"glue compare all --models bert\", \"commit\": \"c1\", \"date\": \"2026-11-28T10:00:00Z\", \"cpu\": \"X\"}},"
        "{\"model\": \"textcnn\", \"tasks\": {\"wnli\": {\"dev\": {\"accuracy\": 51}}}, \"made_by\": {\"command\":"
        " \"glue compare all --models textcnn\", \"commit\": \"c0\", \"date\": \"2026-11-26T09:00:00Z\", \"cpu\": \"Y\"}},"
        "{\"model\": \"bilstm\", \"tasks\": {\"wnli\": {\"dev\": {\"accuracy\": 50}}}},"
        "{\"model\": \"fasttext\", \"tasks\": {\"wnli\": {\"dev\": {\"accuracy\": 44}}}, \"made_by\": {\"command\":"
        " \"glue compare all --models bert\", \"commit\": \"c0\", \"date\": \"2026-11-27T09:00:00Z\", \"cpu\": \"Y\"}}]}");
    const char *kept = buf ? strstr(buf, "Rows kept from earlier tables") : NULL;
    CHECK_MSG(kept && strstr(kept, "textcnn by `glue compare all --models textcnn` (glue c0, 2026-11-26T09:00:00Z, Y)") &&
                  strstr(kept, "bilstm (made before rows recorded their command)") &&
                  strstr(kept, "fasttext by `glue compare all --models bert` (glue c0, 2026-11-27") &&
                  !strstr(kept, "bert by") && !strstr(kept, "majority by") && !strstr(kept, "majority ("),
              "%s", buf ? buf : "");
    free(buf);
    /* A recomputed row's cells kept from earlier tables, named with what made
     * each (or that nothing says). */
    buf = compare_md_of(
        "{\"seed\": 1, \"seeds\": [1], \"tasks\": [\"wnli\", \"rte\"], \"command\": \"glue compare wnli\","
        " \"provenance\": {\"date\": \"D1\"}, \"models\": [{\"model\": \"bert\", \"tasks\": {\"wnli\": {\"dev\":"
        " {\"accuracy\": 56}}, \"rte\": {\"dev\": {\"accuracy\": 60}}, \"cola\": {\"dev\": {\"mcc\": 20}}},"
        " \"made_by\": {\"command\": \"glue compare wnli\", \"date\": \"D1\"},"
        " \"cells_kept\": {\"rte\": {\"command\": \"glue compare rte\", \"commit\": \"c0\", \"date\": \"D0\","
        " \"cpu\": \"Y\"}, \"cola\": {}}}]}");
    kept = buf ? strstr(buf, "Cells kept inside rows") : NULL;
    CHECK_MSG(kept && strstr(kept, "bert on RTE by `glue compare rte` (glue c0, D0, Y)") &&
                  strstr(kept, "bert on CoLA (made before rows recorded their command)") && !strstr(buf, "Rows kept"),
              "%s", buf ? buf : "");
    free(buf);
    /* A table from before tables recorded their command marks nothing. */
    buf = compare_md_of("{\"seed\": 1, \"tasks\": [\"wnli\"], \"models\": [{\"model\": \"bilstm\", "
                        "\"tasks\": {\"wnli\": {\"dev\": {\"accuracy\": 50}}}}]}");
    CHECK_MSG(buf && !strstr(buf, "Rows kept"), "%s", buf ? buf : "");
    free(buf);
}

/* compare.md: a row whose GLUE score averages fewer tasks than the others'
 * (a model that cannot learn one, e.g. seq2seq_attn without STS-B) says how
 * many: "54.96 ± 1.56 (5 tasks)"; it read as comparable. */
TEST(compare_markdown_marks_rows_of_fewer_tasks) {
    char *buf = compare_md_of(
        "{\"seed\": 1, \"seeds\": [1, 2], \"tasks\": [\"wnli\", \"stsb\"], \"models\": ["
        "{\"model\": \"textcnn\", \"glue\": {\"glue_score\": 60, \"num_tasks\": 2}, \"glue_std\": 1, \"glue_seeds\": [59, 61],"
        " \"tasks\": {\"wnli\": {\"dev\": {\"accuracy\": 56}}, \"stsb\": {\"dev\": {\"pearson\": 64, \"spearman\": 64}}}},"
        "{\"model\": \"seq2seq_attn\", \"glue\": {\"glue_score\": 55, \"num_tasks\": 1}, \"glue_std\": 1, \"glue_seeds\": [54, 56],"
        " \"tasks\": {\"wnli\": {\"dev\": {\"accuracy\": 55}}}}]}");
    CHECK_MSG(buf && strstr(buf, "55.00 ± 1.00 (1 task)") && strstr(buf, "60.00 ± 1.00 |"), "%s", buf ? buf : "");
    free(buf);
}
