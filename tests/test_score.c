/* test_score.c — the GLUE score on hand-computed examples, and `glue score` end
 * to end on the real dev sets (../shared/data/glue): predictions equal to the
 * gold labels score 100, flipped ones 0 (accuracy), a fixed pattern scores what
 * scikit-learn / scipy give (SST-2 accuracy, MRPC F1 + accuracy, CoLA MCC, STS-B
 * Pearson + Spearman); every malformed prediction file gets its file:line error;
 * the leaderboard writer's output reads back. */
#include "core/common.h"
#include "metrics/glue_score.h"
#include "eval/predictions.h"
#include "tasks/task.h"
#include "tests/capture.h"
#include "tests/scratch.h"
#include "tests/test.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define REF_TOL 1e-6

TEST(glue_score_hand_computed) {
    /* CoLA .5, SST-2 .9, MRPC mean(.8,.7)=.75, STS-B mean(.8,.9)=.85,
     * MNLI mean(m .8, mm .7)=.75; AX not counted: (.5+.9+.75+.85+.75)/5 = .75 */
    GlueRecord rec[] = {
        {"SST-2", NULL, 1, {0.9, 0}},     {"cola", NULL, 1, {0.5, 0}},
        {"mrpc", NULL, 2, {0.8, 0.7}},    {"STS-B", NULL, 2, {0.8, 0.9}},
        {"mnli-mm", NULL, 1, {0.7, 0}},   {"MNLI-m", NULL, 1, {0.8, 0}},
        {"ax", NULL, 1, {0.3, 0}},
    };
    GlueScore s;
    CHECK(glue_score_compute(rec, 7, &s) == 0);
    CHECK_NEAR(s.score, 0.75, 1e-12);
    CHECK_EQ_INT(s.num_tasks, 5);
    CHECK_EQ_INT(s.num_ignored, 1);
    const char *order[] = {"CoLA", "SST-2", "MRPC", "STS-B", "MNLI"};   /* leaderboard order */
    double each[] = {0.5, 0.9, 0.75, 0.85, 0.75};
    for (int k = 0; k < 5 && k < s.num_tasks; k++) {
        CHECK_MSG(strcmp(s.tasks[k].display, order[k]) == 0, "task %d is %s", k, s.tasks[k].display);
        CHECK_NEAR(s.tasks[k].score, each[k], 1e-12);
    }
    CHECK_EQ_INT(s.tasks[4].halves, 3);

    /* JSON: x100, tasks used, what was left out. */
    cJSON *j = glue_score_json(&s);
    CHECK_NEAR(cJSON_GetObjectItem(j, "glue_score")->valuedouble, 75.0, 1e-9);
    CHECK_NEAR(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "task_scores"), "MRPC")->valuedouble, 75.0, 1e-9);
    CHECK_EQ_INT(cJSON_GetArraySize(cJSON_GetObjectItem(j, "tasks_used")), 5);
    CHECK(strcmp(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "not_counted"), 0)->valuestring, "ax") == 0);
    cJSON_Delete(j);
    char line[256];
    glue_score_describe(&s, line, sizeof line);
    CHECK_MSG(strstr(line, "GLUE score 75.00 over 5 tasks (CoLA, SST-2, MRPC, STS-B, MNLI") == line, "'%s'", line);

    /* MNLI halves from the split name; one half alone is MNLI's score, with a note. */
    GlueRecord m[] = {{"mnli", "dev_mismatched", 1, {0.6, 0}}, {"rte", NULL, 1, {0.7, 0}}};
    CHECK(glue_score_compute(m, 2, &s) == 0);
    CHECK_NEAR(s.score, 0.65, 1e-12);
    CHECK_EQ_INT(s.tasks[0].halves, 2);
    glue_score_describe(&s, line, sizeof line);
    CHECK_MSG(strstr(line, "MNLI mismatched only") != NULL, "'%s'", line);

    /* Nothing run: score 0 over 0 tasks. A task twice is an error. */
    CHECK(glue_score_compute(NULL, 0, &s) == 0);
    CHECK_EQ_INT(s.num_tasks, 0);
    CHECK_NEAR(s.score, 0, 0);
    GlueRecord dup[] = {{"sst2", NULL, 1, {0.9, 0}}, {"SST-2", NULL, 1, {0.8, 0}}};
    CHECK(glue_score_compute(dup, 2, &s) != 0);
    GlueRecord dup_m[] = {{"mnli", "dev_matched", 1, {0.9, 0}}, {"mnli-m", NULL, 1, {0.8, 0}}};
    CHECK(glue_score_compute(dup_m, 2, &s) != 0);
}

/* ---- `glue score` end to end -------------------------------------------------- */

static int load_dev(const char *task, const char *split, Dataset *d) {
    char root[512];
    snprintf(root, sizeof root, "%s/data/glue", test_shared_dir());
    const Task *t = task_find(task);
    if (!CHECK_MSG(t != NULL, "no task %s", task)) return -1;
    return CHECK_MSG(task_load(t, split, root, 1, d) == 0, "cannot load %s %s from %s", task, split, root) ? 0 : -1;
}

/* Run `glue score TASK FILE --json` on the shared data; parsed output or NULL. */
static cJSON *run_score(const char *task, const char *file, const char *extra, int *status, char **text) {
    char cmd[1600];
    snprintf(cmd, sizeof cmd, "GLUE_DATA=%s/data/glue %s score %s %s %s 2>&1", test_shared_dir(), test_glue_bin(),
             task, file, extra);
    *text = test_run(cmd, status);
    return cJSON_Parse(*text);
}

/* Prediction file with one row per example: class pred[i] or score[i]. */
static void write_preds(const char *path, const Dataset *d, const int *pred, const double *score) {
    FILE *f = fopen(path, "w");
    fprintf(f, "index\tprediction\n");
    for (int i = 0; i < d->n; i++) {
        if (score) fprintf(f, "%ld\t%.17g\n", d->ex[i].index, score[i]);
        else fprintf(f, "%ld\t%s\n", d->ex[i].index, d->task->labels[pred[i]]);
    }
    fclose(f);
}

/* sklearn/scipy on one case (tests/ref/metrics_ref.py); fills up to 3 values. */
static int reference_values(const int *pred, const int *gold, const double *x, const double *y, int n, int K,
                            double *v) {
    char path[SCRATCH_PATH_MAX];
    int fd = scratch_file("score_ref", path, sizeof path);
    if (fd < 0) return -1;
    FILE *f = fdopen(fd, "w");
    fprintf(f, x ? "reg %d\n" : "cls %d %d\n", x ? n : K, n);
    for (int i = 0; i < n; i++) x ? fprintf(f, "%.17g ", x[i]) : fprintf(f, "%d ", pred[i]);
    fprintf(f, "\n");
    for (int i = 0; i < n; i++) y ? fprintf(f, "%.17g ", y[i]) : fprintf(f, "%d ", gold[i]);
    fprintf(f, "\n");
    fclose(f);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 tests/ref/metrics_ref.py %s 2>&1", path);
    int status;
    char *out = test_run(cmd, &status);
    unlink(path);
    int got = status == 0 ? sscanf(out, "%lf %lf %lf", &v[0], &v[1], &v[2]) : 0;
    CHECK_MSG(status == 0, "reference run failed (install python3-sklearn python3-scipy): %s", out);
    free(out);
    return got >= 2 ? 0 : -1;
}

static double json_num(const cJSON *o, const char *key) {
    const cJSON *v = cJSON_GetObjectItem(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

TEST(score_cli_sst2_gold_flipped_pattern) {
    Dataset d;
    if (load_dev("sst2", "dev", &d) != 0) return;
    CHECK_EQ_INT(d.n, 872);
    int *pred = xmalloc(sizeof *pred * (size_t)d.n), *gold = xmalloc(sizeof *gold * (size_t)d.n);
    for (int i = 0; i < d.n; i++) gold[i] = d.ex[i].label;
    char path[SCRATCH_PATH_MAX];
    close(scratch_file("score", path, sizeof path));
    for (int variant = 0; variant < 3; variant++) {
        /* gold; flipped; right on 2 rows of 3 and "1" on the rest */
        for (int i = 0; i < d.n; i++) pred[i] = variant == 0 ? gold[i] : variant == 1 ? 1 - gold[i] : i % 3 ? gold[i] : 1;
        write_preds(path, &d, pred, NULL);
        int status;
        char *text;
        cJSON *o = run_score("SST-2", path, "--json", &status, &text);
        if (CHECK_MSG(status == 0 && o, "variant %d: status %d, '%s'", variant, status, text)) {
            double want = variant == 0 ? 100 : 0, v[3];
            if (variant == 2 && reference_values(pred, gold, NULL, NULL, d.n, 2, v) == 0) want = 100 * v[0];
            CHECK_MSG(fabs(json_num(o, "accuracy") - want) < 100 * REF_TOL, "variant %d: accuracy %.6f, want %.6f",
                      variant, json_num(o, "accuracy"), want);
            CHECK_EQ_INT((int)json_num(o, "examples"), 872);
            CHECK(strcmp(cJSON_GetObjectItem(o, "split")->valuestring, "dev") == 0);
        }
        cJSON_Delete(o);
        free(text);
    }
    /* Human-readable form. */
    char cmd[1600];
    snprintf(cmd, sizeof cmd, "GLUE_DATA=%s/data/glue %s score sst2 %s", test_shared_dir(), test_glue_bin(), path);
    int status;
    char *out = test_run(cmd, &status);
    CHECK_MSG(status == 0 && strstr(out, "SST-2 dev (872 examples):  accuracy "), "'%s'", out);
    free(out);
    unlink(path);
    free(pred);
    free(gold);
    dataset_free(&d);
}

/* A pattern on a task's dev set, scored by the CLI and by sklearn/scipy. */
static void check_task_pattern(const char *task, const char *keys[3]) {
    Dataset d;
    if (load_dev(task, "dev", &d) != 0) return;
    int n = d.n, reg = d.task->num_labels == 1;
    int *pred = xmalloc(sizeof *pred * (size_t)n), *gold = xmalloc(sizeof *gold * (size_t)n);
    double *x = xmalloc(sizeof *x * (size_t)n), *y = xmalloc(sizeof *y * (size_t)n);
    for (int i = 0; i < n; i++) {
        gold[i] = d.ex[i].label;
        pred[i] = i % 4 == 0 ? 1 : i % 7 == 0 ? 1 - gold[i] : gold[i];
        y[i] = d.ex[i].score;
        x[i] = i % 5 == 0 ? 2.5 : y[i] + 0.1 * (i % 11);   /* ties at 2.5 */
    }
    char path[SCRATCH_PATH_MAX];
    close(scratch_file("score", path, sizeof path));
    write_preds(path, &d, pred, reg ? x : NULL);
    double v[3] = {NAN, NAN, NAN};
    int ok = reference_values(pred, gold, reg ? x : NULL, reg ? y : NULL, n, 2, v) == 0;
    int status;
    char *text;
    cJSON *o = run_score(task, path, "--json", &status, &text);
    if (ok && CHECK_MSG(status == 0 && o, "%s: status %d, '%s'", task, status, text))
        for (int k = 0; k < 3; k++)
            if (keys[k]) CHECK_MSG(fabs(json_num(o, keys[k]) - 100 * v[k]) < 100 * REF_TOL, "%s %s: %.6f vs reference %.6f",
                      task, keys[k], json_num(o, keys[k]), 100 * v[k]);
    cJSON_Delete(o);
    free(text);
    unlink(path);
    free(pred); free(gold); free(x); free(y);
    dataset_free(&d);
}

TEST(score_cli_metrics_per_task) {
    /* Reference columns: accuracy f1 mcc (classes) or pearson spearman (STS-B);
     * NULL keys are the ones a task does not report. */
    check_task_pattern("mrpc", (const char *[3]){"accuracy", "f1", NULL});
    check_task_pattern("cola", (const char *[3]){NULL, NULL, "mcc"});
    check_task_pattern("stsb", (const char *[3]){"pearson", "spearman", NULL});
}

TEST(score_cli_errors) {
    Dataset d;
    if (load_dev("rte", "dev", &d) != 0) return;
    char path[SCRATCH_PATH_MAX];
    close(scratch_file("score", path, sizeof path));
    /* Each case: a header line and the rows after it. */
    static const struct { const char *header, *rows, *msg; int status; } cases[] = {
        {"index\tprediction", "0\tentailment\n\tentailment\n", ":3: missing index", 65},
        {"index\tprediction", "0\tpositive\n", ":2: unknown label 'positive' (RTE wants 'entailment' or 'not_entailment')", 65},
        {"index\tprediction", "0\tentailment\n1\n", ":3: expected 2 tab-separated columns", 65},
        {"index\tprediction", "0\tentailment\n0\tentailment\n", ":3: index 0 appears twice (first on line 2)", 65},
        {"index\tprediction", "5000\tentailment\n", ":2: index 5000 is not in RTE dev (277 rows)", 65},
        {"index\tprediction", "x\tentailment\n", ":2: index 'x' is not a non-negative integer", 65},
        {"id\tlabel", "0\tentailment\n", ":1: expected the header", 65},
        {"index\tprediction", "0\tentailment\n", "1 predictions for the 277 rows of RTE dev; none for index 1", 65},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        FILE *f = fopen(path, "w");
        fprintf(f, "%s\n%s", cases[k].header, cases[k].rows);
        fclose(f);
        int status;
        char *text;
        cJSON *o = run_score("rte", path, "", &status, &text);
        CHECK_MSG(status == cases[k].status && strstr(text, cases[k].msg) && strstr(text, path),
                  "case %zu: status %d, output '%s', want '%s'", k, status, text, cases[k].msg);
        cJSON_Delete(o);
        free(text);
    }
    static const struct { const char *task, *extra, *msg; int status; } usage[] = {
        {"rtee", "", "unknown task 'rtee'", 2},
        {"rte", "--split test", "RTE test has no labels", 2},
        {"rte", "--split dev_matched", "RTE has no dev_matched split", 2},
        {"ax", "", "AX has no labelled dev split", 2},
        {"rte", "--bogus", "unknown option '--bogus'", 2},
    };
    for (size_t k = 0; k < sizeof usage / sizeof usage[0]; k++) {
        int status;
        char *text;
        cJSON *o = run_score(usage[k].task, path, usage[k].extra, &status, &text);
        CHECK_MSG(status == usage[k].status && strstr(text, usage[k].msg), "usage case %zu: status %d, '%s'", k,
                  status, text);
        cJSON_Delete(o);
        free(text);
    }
    int status;
    char *text;
    cJSON *o = run_score("rte", "/nonexistent/pred.tsv", "", &status, &text);
    CHECK_MSG(status == 74 && strstr(text, "/nonexistent/pred.tsv: no such file"), "'%s'", text);
    cJSON_Delete(o);
    free(text);
    unlink(path);
    dataset_free(&d);
}

/* Writes len bytes (NULs included) to path. */
static void write_bytes(const char *path, const char *head, const char *row, size_t row_len) {
    FILE *f = fopen(path, "wb");
    fputs(head, f);
    fwrite(row, 1, row_len, f);
    fputc('\n', f);
    fclose(f);
}

/* One reading of numbers and rows: the prediction reader refuses exactly what
 * the task loader refuses (issue 22: '1\0junk' was read as 1 and ' 1' as index
 * 1 by the former only); both trim a score's cell, not an index (issue 42).
 * Each case goes through both, as the index and score of an STS-B dev row and
 * as a prediction row. */
TEST(predictions_reader_rules_match_task_loader) {
    static const struct { const char *index, *score; size_t index_len, score_len; int ok; } cases[] = {
        {"1", "2.5", 1, 3, 1},       {"12", "2.5e0", 2, 5, 1},   {" 1", "2.5", 2, 3, 0},
        {"1 ", "2.5", 2, 3, 0},      {"+1", "2.5", 2, 3, 0},     {"-1", "2.5", 2, 3, 0},
        {"1", " 2.5", 1, 4, 1},      {"1", "0x2", 1, 3, 0},      {"1", "inf", 1, 3, 0},
        {"1", "2.5 ", 1, 4, 1},      {"1", "2 .5", 1, 4, 0},     /* a score cell is trimmed, not its inside */
        {"1", "nan", 1, 3, 0},       {"1", "2.5\0junk", 1, 8, 0}, {"1\0junk", "2.5", 6, 3, 0},
        {"99999999999999999999", "2", 20, 1, 0},                 {"1", "", 1, 0, 0},
    };
    const Task *stsb = task_find("stsb");
    char dir[SCRATCH_PATH_MAX], tsv[700], pred[700];
    if (!CHECK(stsb && scratch_dir("rules", dir, sizeof dir))) return;
    snprintf(tsv, sizeof tsv, "%s/STS-B", dir);
    mkdir(tsv, 0700);
    snprintf(tsv, sizeof tsv, "%s/STS-B/dev.tsv", dir);
    snprintf(pred, sizeof pred, "%s/pred.tsv", dir);
    char head[512];
    snprintf(head, sizeof head, "%s\n", task_split(stsb, "dev")->header);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char row[256];
        size_t n = 0;
        memcpy(row, cases[k].index, cases[k].index_len);
        n += cases[k].index_len;
        n += (size_t)snprintf(row + n, sizeof row - n, "\tg\tf\t2012\t0\ts1\ts2\tA man.\tA dog.\t");
        memcpy(row + n, cases[k].score, cases[k].score_len);
        write_bytes(tsv, head, row, n + cases[k].score_len);
        n = 0;
        memcpy(row, cases[k].index, cases[k].index_len);
        n += cases[k].index_len;
        row[n++] = '\t';
        memcpy(row + n, cases[k].score, cases[k].score_len);
        write_bytes(pred, "index\tprediction\n", row, n + cases[k].score_len);

        StderrCapture cap;
        stderr_capture_begin(&cap);
        Dataset d;
        int loaded = task_load(stsb, "dev", dir, 1, &d) == 0;
        if (loaded) dataset_free(&d);
        Predictions p;
        int read = predictions_read(pred, stsb, &p) == 0;
        if (read) predictions_free(&p);
        char *err = stderr_capture_end(&cap);
        CHECK_MSG(loaded == cases[k].ok && read == cases[k].ok, "case %zu: loader %d, reader %d, want %d: %s", k,
                  loaded, read, cases[k].ok, err);
        free(err);
    }
    unlink(tsv);
    unlink(pred);
    snprintf(tsv, sizeof tsv, "%s/STS-B", dir);
    rmdir(tsv);
    rmdir(dir);
}

/* A finite but huge STS-B prediction (1e308) used to overflow Pearson's sums
 * and print 'pearson -nan' with exit 0. */
TEST(score_cli_stsb_huge_prediction_is_finite) {
    Dataset d;
    if (load_dev("stsb", "dev", &d) != 0) return;
    double *x = xmalloc(sizeof *x * (size_t)d.n);
    for (int i = 0; i < d.n; i++) x[i] = i == 0 ? 1e308 : d.ex[i].score;
    char path[SCRATCH_PATH_MAX];
    close(scratch_file("score", path, sizeof path));
    write_preds(path, &d, NULL, x);
    for (int json = 0; json < 2; json++) {
        int status;
        char *text;
        cJSON *o = run_score("stsb", path, json ? "--json" : "", &status, &text);
        CHECK_MSG(status == 0 && !strstr(text, "nan") && !strstr(text, "null") && !strstr(text, "inf"),
                  "status %d: %s", status, text);
        if (json) CHECK_MSG(o && isfinite(json_num(o, "pearson")) && json_num(o, "spearman") > 80, "%s", text);
        cJSON_Delete(o);
        free(text);
    }
    unlink(path);
    free(x);
    dataset_free(&d);
}

TEST(predictions_write_read_round_trip) {
    char dir[SCRATCH_PATH_MAX], path[600];
    if (!CHECK(scratch_dir("pred", dir, sizeof dir))) return;
    snprintf(path, sizeof path, "%s/MNLI-m.tsv", dir);
    const Task *mnli = task_find("mnli"), *stsb = task_find("stsb");
    if (!CHECK(mnli && stsb)) return;
    long index[] = {0, 1, 2, 7};
    int label[] = {2, 0, 1, 0};
    CHECK(predictions_write(path, mnli, index, label, NULL, 4) == 0);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "cat %s", path);
    char *text = test_run(cmd, NULL);
    char want[256];
    snprintf(want, sizeof want, "index\tprediction\n0\t%s\n1\t%s\n2\t%s\n7\t%s\n", mnli->labels[2],
             mnli->labels[0], mnli->labels[1], mnli->labels[0]);
    CHECK_MSG(strcmp(text, want) == 0, "wrote '%s'", text);
    free(text);
    Predictions p;
    if (CHECK(predictions_read(path, mnli, &p) == 0)) {
        CHECK_EQ_INT(p.n, 4);
        for (int i = 0; i < 4 && i < p.n; i++) {
            CHECK_EQ_INT(p.index[i], index[i]);
            CHECK_EQ_INT(p.label[i], label[i]);
            CHECK_EQ_INT(p.line[i], i + 2);
        }
        predictions_free(&p);
    }
    double score[] = {4.25, 0.0, 3.1415, 5.0};
    CHECK(predictions_write(path, stsb, index, NULL, score, 4) == 0);
    if (CHECK(predictions_read(path, stsb, &p) == 0)) {
        for (int i = 0; i < 4 && i < p.n; i++) CHECK_NEAR(p.score[i], score[i], 5e-4);
        predictions_free(&p);
    }
    unlink(path);
    rmdir(dir);
}
