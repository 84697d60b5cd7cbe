/* cmd_score.c — `glue score TASK PRED.tsv [--split dev] [--json]`: score a
 * leaderboard-format prediction file against the labels of a task's split
 * (MNLI: dev_matched unless --split says otherwise) and print the task's
 * metrics ×100, or one JSON object. A metric without a value shows as nan
 * (null) and the command fails. */
#include "cli/commands.h"
#include "core/args.h"
#include "core/common.h"
#include "core/files.h"
#include "metrics/metrics.h"
#include "eval/predictions.h"
#include "cli/cli_run.h"
#include "tasks/task.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define SCORE_USAGE "glue score TASK PRED.tsv [--split dev] [--json]"

/* The split to score against: --split, else the task's first dev split. NULL
 * after a message when it does not exist or has no labels. */
static const TaskSplit *score_split(const Task *t, const char *name) {
    const TaskSplit *s = name ? task_split(t, name) : task_dev_split(t);
    if (!s) {
        char names[256];
        int n = 0;
        for (int k = 0; k < t->num_splits; k++)
            n += snprintf(names + n, sizeof names - (size_t)n, "%s%s", k ? ", " : "", t->splits[k].name);
        user_error(NULL, "%s has no %s split (splits: %s)", t->display, name ? name : "labelled dev", names);
        return NULL;
    }
    if (s->col_label < 0) {   /* GLUE's test splits; a test split with labels (GoEmotions, a user's) is scored */
        user_error(t->user ? "give a test file with a label column" : "test labels are private: score test predictions on the GLUE leaderboard",
                   "%s %s has no labels to score against", t->display, s->name);
        return NULL;
    }
    return s;
}

/* The task's metrics on matched predictions; returns how many (1 or 2). */
static int score_metrics(const Task *t, const Dataset *d, const int *pred, const double *pred_score,
                         double values[2]) {
    int n = d->n, K = t->num_labels;
    int *gold = xmalloc(sizeof *gold * (size_t)(n ? n : 1));
    double *gold_score = xmalloc(sizeof *gold_score * (size_t)(n ? n : 1));
    for (int i = 0; i < n; i++) {
        gold[i] = d->ex[i].label;
        gold_score[i] = d->ex[i].score;
    }
    int m = 0;
    for (; m < 2 && t->metrics[m] != METRIC_NONE; m++)
        values[m] = metric_compute(t->metrics[m], n, K, K > 1 ? pred : NULL, K > 1 ? gold : NULL,
                                   K == 1 ? pred_score : NULL, K == 1 ? gold_score : NULL);
    free(gold);
    free(gold_score);
    return m;
}

static void score_print(const Task *t, const char *split, int n, const double *values, int m, int json) {
    if (json) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "task", t->name);
        cJSON_AddStringToObject(o, "split", split);
        cJSON_AddNumberToObject(o, "examples", n);
        for (int k = 0; k < m; k++) cJSON_AddNumberToObject(o, metric_name(t->metrics[k]), 100.0 * values[k]);
        json_print_line(o);
        cJSON_Delete(o);
        return;
    }
    printf("%s %s (%d examples):", t->display, split, n);
    for (int k = 0; k < m; k++) {
        char v[32];
        metric_text(100.0 * values[k], v, sizeof v);
        printf("  %s %s", metric_name(t->metrics[k]), v);
    }
    printf("\n");
}

/* A metric without a value fails the command (after it is shown): 0 or EXIT_FAILED. */
static int score_check_numbers(const Task *t, const double *values, int m) {
    for (int k = 0; k < m; k++)
        if (isnan(values[k])) {
            user_error("a constant or non-finite score (prediction or gold) leaves a correlation undefined",
                       "%s: %s is not a number", t->display, metric_name(t->metrics[k]));
            return EXIT_FAILED;
        }
    return 0;
}

int cmd_score(int argc, char **argv) {
    Args a;
    args_init(&a, argc, argv);
    int json = args_flag(&a, "--json");
    const char *split_name = args_str(&a, "--split", NULL);
    const char *pos[2];
    int npos = args_positional(&a, pos, 2);
    int rc = args_finish(&a, SCORE_USAGE);
    if (rc) return rc;
    if (npos != 2) {
        user_error(NULL, "score: expected TASK and PRED.tsv, got %d argument%s", npos, npos == 1 ? "" : "s");
        return args_usage(SCORE_USAGE);
    }
    const Task *t = task_find_or_report(pos[0]);
    if (!t) return EXIT_USAGE;
    if (t->multi_label) {   /* a prediction file holds one label per row */
        user_error("glue eval TASK --split test scores a multi-label run",
                   "score: %s is multi-label; prediction files of label sets are not read", t->display);
        return EXIT_USAGE;
    }
    const TaskSplit *s = score_split(t, split_name);
    if (!s) return EXIT_USAGE;

    Predictions p;
    if (predictions_read(pos[1], t, &p) != 0) return 1;
    Dataset d;
    if (task_load(t, s->name, task_data_root(), 1, &d) != 0) {
        predictions_free(&p);
        return 1;
    }
    int *pred = xmalloc(sizeof *pred * (size_t)(d.n ? d.n : 1));
    double *pred_score = xmalloc(sizeof *pred_score * (size_t)(d.n ? d.n : 1));
    rc = predictions_match(&p, &d, pred, pred_score) == 0 ? 0 : 1;
    if (rc == 0) {
        double values[2];
        int m = score_metrics(t, &d, pred, pred_score, values);
        score_print(t, s->name, d.n, values, m, json);   /* JSON: null for NaN */
        rc = score_check_numbers(t, values, m);
    }
    free(pred);
    free(pred_score);
    predictions_free(&p);
    dataset_free(&d);
    return rc;
}
