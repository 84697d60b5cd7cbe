/* report.h — result tables for the terminal and for Markdown files, and the
 * one-row-per-model GLUE table `glue eval all` and `glue compare` print.
 *
 * A ReportTable is a grid of strings: the first column and any column with words
 * in it are left-aligned, columns of numbers right-aligned; the same table prints
 * as aligned text or as a Markdown pipe table, so what the terminal shows and
 * what compare.md holds never disagree. */
#ifndef GLUE_REPORT_H
#define GLUE_REPORT_H

#include <stdio.h>

#include "tasks/task.h"

typedef struct cJSON cJSON;
typedef struct ReportTable ReportTable;

ReportTable *report_table_create(int num_cols);
/* Append a cell to the current row (the header is row 0); a row is complete
 * after num_cols cells, and the next cell starts a new one. */
void report_table_add(ReportTable *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A metric value (×100) with two decimals, or "-" when v is NULL / not a number. */
void report_table_add_metric(ReportTable *t, const cJSON *v);
void report_table_print(const ReportTable *t, FILE *f);           /* aligned text */
void report_table_print_markdown(const ReportTable *t, FILE *f);  /* pipe table */
void report_table_free(ReportTable *t);

/* "CoLA (mcc)", "MRPC (f1/acc)", "MNLI (m/mm)": a task's column header. */
void report_task_header(const Task *t, char *out, int cap);
/* A task's cell from its per-split metrics object {"dev": {"f1": .., "accuracy": ..}}
 * (or {"dev_matched": .., "dev_mismatched": ..}): "88.90/84.80"; "-" if absent. */
void report_task_cell(ReportTable *tab, const Task *t, const cJSON *splits);
/* Shorthand of a metric for headers: "acc", "f1", "mcc", "pearson", "spearman". */
const char *report_metric_short(MetricId m);

/* The GLUE score (glue_score_json) over {"<task>": {"<dev split>": {metrics ×100}}}
 * records; NULL after a message when the records are inconsistent. */
cJSON *report_glue_score(const cJSON *tasks);
/* The same, counting a qnli-9k entry as QNLI (labelled QNLI-9k): the
 * seven-task score next to the six-task one. */
cJSON *report_glue_score_with_subsets(const cJSON *tasks);

/* `glue compare` output, from its summary (schema in cmd_compare.c): one row per
 * model with each task's metrics, the GLUE score, training seconds (sum over
 * tasks), evaluation examples/s (mean over tasks) and parameters (largest);
 * a task with public test labels also gets a test column ("test", ± "test_std"). */
ReportTable *report_compare_table(const cJSON *compare);
/* One row per (model, task): seconds, examples/s, parameters, best epoch, reused. */
ReportTable *report_compare_costs(const cJSON *compare);
/* results/compare.md: both tables and the notes. */
void report_compare_markdown(const cJSON *compare, FILE *f);
/* One line per model whose settings --init/--set changed (its row is marked
 * "name *"): which settings; `before` is printed ahead of the first line. */
void report_compare_settings(const cJSON *compare, FILE *f, const char *before);

#endif
