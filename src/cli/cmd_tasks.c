/* cmd_tasks.c — `glue tasks [TASK...] [--data DIR] [--json]`: one table of the
 * GLUE tasks, then the subset tasks (mnli-9k, ...: tasks/subsets.c), then,
 * under a line of their own, the other benchmarks (goemotions: tasks/extra.c),
 * which the GLUE score never counts — type, metrics, and the rows found per
 * split (or "missing") in data/glue, $GLUE_DATA or --data DIR.
 *
 * TSV rows are counted by streaming newlines (no parsing); a subset's JSON
 * entries by parsing the file once, so the whole table takes about a second. A missing split is normal (MNLI offline); an unreadable one
 * (truncated download) is reported and makes the exit status 1. */
#include "cli/commands.h"
#include "core/args.h"
#include "core/common.h"
#include "core/files.h"
#include "core/lines.h"
#include "tasks/task.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TASKS_USAGE "glue tasks [TASK...] [--data DIR] [--json]"

typedef struct {
    char path[4096];
    int found;
    LinesStatus status;
    long rows;          /* data rows (header excluded) when found and readable */
} SplitCount;

static void split_count(const Task *t, const TaskSplit *s, const char *root, SplitCount *c) {
    memset(c, 0, sizeof *c);
    c->found = task_split_path(t, s, root, c->path, sizeof c->path) == 0;
    if (!c->found) return;
    char err[4600];
    c->status = (LinesStatus)task_count_rows(s, c->path, &c->rows, err, sizeof err);
    if (c->status != LINES_OK) user_error(NULL, "%s", err);
}

static const char *split_status(const SplitCount *c) {
    if (!c->found) return "missing";
    switch (c->status) {
    case LINES_OK: return "ok";
    case LINES_TRUNCATED: return "truncated";
    case LINES_CORRUPT: return "corrupt";
    default: return "unreadable";
    }
}

/* "single, 2 classes" / "pair, regression" / "single, 28 labels, multi-label" */
static void task_type(const Task *t, char *out, size_t cap) {
    const char *shape = t->splits[0].col_b >= 0 ? "pair" : "single";
    if (t->num_labels == 1) snprintf(out, cap, "%s, regression", shape);
    else if (t->multi_label) snprintf(out, cap, "%s, %d labels, multi-label", shape, t->num_labels);
    else snprintf(out, cap, "%s, %d classes", shape, t->num_labels);
}

static void task_metrics(const Task *t, char *out, size_t cap) {
    out[0] = '\0';
    for (int m = 0; m < 2 && t->metrics[m] != METRIC_NONE; m++)
        snprintf(out + strlen(out), cap - strlen(out), "%s%s", m ? "/" : "", metric_name(t->metrics[m]));
}

static cJSON *task_json(const Task *t, const SplitCount *c) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "task", t->name);
    cJSON_AddStringToObject(o, "name", t->display);
    cJSON_AddStringToObject(o, "dir", t->dir);
    cJSON_AddStringToObject(o, "type", t->splits[0].col_b >= 0 ? "pair" : "single");
    cJSON_AddNumberToObject(o, "num_labels", t->num_labels);
    cJSON *labels = cJSON_AddArrayToObject(o, "labels");
    for (int i = 0; t->num_labels > 1 && i < t->num_labels; i++)
        cJSON_AddItemToArray(labels, cJSON_CreateString(t->labels[i]));
    cJSON *names = cJSON_AddArrayToObject(o, "label_names");   /* what each label means */
    for (int i = 0; t->num_labels > 1 && i < t->num_labels; i++)
        cJSON_AddItemToArray(names, cJSON_CreateString(task_label_name(t, i)));
    cJSON_AddBoolToObject(o, "multi_label", t->multi_label);
    cJSON *metrics = cJSON_AddArrayToObject(o, "metrics");
    for (int m = 0; m < 2 && t->metrics[m] != METRIC_NONE; m++)
        cJSON_AddItemToArray(metrics, cJSON_CreateString(metric_name(t->metrics[m])));
    if (t->subset_of) cJSON_AddStringToObject(o, "subset_of", t->subset_of);
    else cJSON_AddNullToObject(o, "subset_of");
    if (t->scored_with) cJSON_AddStringToObject(o, "scored_with", t->scored_with);
    else cJSON_AddNullToObject(o, "scored_with");
    cJSON *splits = cJSON_AddArrayToObject(o, "splits");
    for (int k = 0; k < t->num_splits; k++) {
        const TaskSplit *s = &t->splits[k];
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "split", s->name);
        cJSON_AddStringToObject(j, "path", c[k].path);
        cJSON_AddStringToObject(j, "status", split_status(&c[k]));
        if (c[k].found && c[k].status == LINES_OK) cJSON_AddNumberToObject(j, "rows", (double)c[k].rows);
        else cJSON_AddNullToObject(j, "rows");
        cJSON_AddNumberToObject(j, "official_rows", (double)s->official_rows);
        cJSON_AddBoolToObject(j, "labelled", s->col_label >= 0);
        if (s->submit) cJSON_AddStringToObject(j, "submit", s->submit);
        cJSON_AddItemToArray(splits, j);
    }
    return o;
}

static void task_print_row(const Task *t, const SplitCount *c) {
    char type[64], metrics[64], rows[512] = "";
    task_type(t, type, sizeof type);
    task_metrics(t, metrics, sizeof metrics);
    for (int k = 0; k < t->num_splits; k++) {
        const TaskSplit *s = &t->splits[k];
        char one[128];
        if (c[k].found && c[k].status == LINES_OK && c[k].rows != s->official_rows)
            snprintf(one, sizeof one, "%s %ld (official %ld)", s->name, c[k].rows, s->official_rows);
        else if (c[k].found && c[k].status == LINES_OK)
            snprintf(one, sizeof one, "%s %ld", s->name, c[k].rows);
        else
            snprintf(one, sizeof one, "%s %s", s->name, split_status(&c[k]));
        snprintf(rows + strlen(rows), sizeof rows - strlen(rows), "%s%s", k ? ", " : "", one);
    }
    if (t->scored_with) snprintf(rows + strlen(rows), sizeof rows - strlen(rows), " (scored with %s)", t->scored_with);
    if (t->subset_of)   /* the display name is long ("QNLI, 8,999 of ..."): its own line */
        snprintf(rows + strlen(rows), sizeof rows - strlen(rows), "\n%-7s %s (from the official %s train split)", "",
                 t->display, t->subset_of);
    printf("%-7s %-6s %-18s %-17s %s\n", t->name, t->subset_of ? "subset" : t->display, type, metrics, rows);
}

static int is_extra(const Task *t) { return t >= EXTRA_TASKS && t < EXTRA_TASKS + NUM_EXTRA_TASKS; }

/* The tasks named on the command line (all when none); 0 after an error. */
static int tasks_selected(const char **names, int n, const Task **out) {
    if (n == 0) {
        int k = 0;
        for (int i = 0; i < NUM_TASKS; i++) out[k++] = &TASKS[i];
        for (int i = 0; i < NUM_SUBSET_TASKS; i++) out[k++] = &SUBSET_TASKS[i];
        for (int i = 0; i < NUM_EXTRA_TASKS; i++) out[k++] = &EXTRA_TASKS[i];
        return k;
    }
    for (int i = 0; i < n; i++)
        if (!(out[i] = task_find_or_report(names[i]))) return 0;
    return n;
}

int cmd_tasks(int argc, char **argv) {
    Args a;
    args_init(&a, argc, argv);
    int json = args_flag(&a, "--json");
    const char *root = args_str(&a, "--data", task_data_root());
    const char *names[ARGS_MAX];
    int npos = args_positional(&a, names, ARGS_MAX);
    int rc = args_finish(&a, TASKS_USAGE);
    if (rc) return rc;
    const Task *sel[ARGS_MAX];
    int nsel = tasks_selected(names, npos, sel);
    if (nsel == 0) return EXIT_USAGE;

    cJSON *doc = NULL, *arr = NULL;
    if (json) {
        doc = cJSON_CreateObject();
        cJSON_AddStringToObject(doc, "data_dir", root);
        arr = cJSON_AddArrayToObject(doc, "tasks");
    } else {
        printf("GLUE data in %s\n%-7s %-6s %-18s %-17s %s\n", root, "task", "name", "type", "metrics",
               "rows per split");
    }
    int unreadable = 0, missing = 0;
    for (int i = 0; i < nsel; i++) {
        SplitCount c[TASK_MAX_SPLITS];
        for (int k = 0; k < sel[i]->num_splits; k++) {
            split_count(sel[i], &sel[i]->splits[k], root, &c[k]);
            unreadable += c[k].found && c[k].status != LINES_OK;
            missing += !c[k].found;
        }
        if (json) {
            cJSON_AddItemToArray(arr, task_json(sel[i], c));
            continue;
        }
        if (is_extra(sel[i]) && (i == 0 || !is_extra(sel[i - 1]))) printf("other benchmarks (not in the GLUE score):\n");
        task_print_row(sel[i], c);
    }
    if (json) {
        json_print_line(doc);
        cJSON_Delete(doc);
    } else {
        if (missing)
            printf("%d split file%s missing: 'glue data fetch' downloads GLUE (--mirror DIR copies a local copy)\n",
                   missing, missing == 1 ? " is" : "s are");
        if (unreadable)
            fprintf(stderr, "%d split file%s unreadable: re-fetch with 'glue data fetch'\n", unreadable,
                    unreadable == 1 ? " is" : "s are");
    }
    return unreadable ? 1 : 0;
}
