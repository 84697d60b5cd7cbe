/* user_data.h — a user's own dataset as a Task, without recompiling:
 * `glue finetune --train FILE --dev FILE [--test FILE]` (see README).
 *
 * Formats: TSV (tab-separated, no quoting, like the GLUE files), CSV (RFC 4180:
 * "quoted, fields" with "" for a quote and line breaks inside quotes), JSONL (one
 * JSON object per line) and fastText's "__label__X text". The format comes from
 * the file name (.tsv, .csv, .jsonl; .gz allowed) or --format.
 *
 * Columns: --columns TEXT,LABEL or TEXT_A,TEXT_B,LABEL — header names (TSV/CSV
 * with a header, the default), 1-based numbers (TSV/CSV, also --no-header), or
 * keys (JSONL). Without --columns: the label is "label" (or "labels") and the
 * text "text", "sentence", "text_a" or "sentence1" (a pair when "text_b" or
 * "sentence2" is there too). fastText files hold one text and its label(s) per
 * line.
 *
 * Labels: classification collects the label strings of the TRAIN file and
 * numbers them in sorted (byte) order — the same classes whatever the row order;
 * a dev or test row with a label train never had is a malformed row. With
 * --regression the label is a number (any finite value). The metric is
 * accuracy, or Pearson/Spearman for regression.
 *
 * Multi-label (each row a set of labels; metrics macro-F1, then micro-F1):
 * fastText lines with several __label__ tags, JSONL rows whose label is a list
 * (["a", "b"]), TSV/CSV label cells joining labels with --label-sep (default
 * ","). --multi-label says so; without it a fastText/JSONL train file with a row
 * of several labels is read as multi-label and that is said in one line, while
 * a TSV/CSV cell is always one label (a label may contain a comma), with a hint
 * when one does. A file whose rows all have one label is never multi-label
 * unless --multi-label says so. A row with no label, an empty element ("a,,b"),
 * a label twice, or a dev/test label train never had is a malformed row.
 *
 * The run records all of this (resolved columns, labels, absolute file paths) in
 * its directory as dataset.json, so eval and predict rebuild the same Task
 * (user_data_load). Rows are loaded through task_load like any task: a malformed
 * row is "file:line: what", skipped with a count, or fatal with strict. */
#ifndef GLUE_USER_DATA_H
#define GLUE_USER_DATA_H

#include "tasks/task.h"

#define USER_DATA_FILE "dataset.json"   /* in the run directory */

typedef struct UserDataOptions {
    const char *train, *dev, *test;   /* files; test may be NULL */
    const char *format;               /* "tsv", "csv", "jsonl", "fasttext"; NULL: from the train file's name */
    const char *columns;              /* "text,label", "a,b,label", "2,1"; NULL: the defaults above */
    const char *name;                 /* the task id; NULL: the train file's name up to its first '.' */
    int no_header;                    /* TSV/CSV: the first row is data */
    int regression;
    int multi_label;                  /* --multi-label: rows hold label lists */
    const char *label_sep;            /* --label-sep (TSV/CSV, with multi_label); NULL: "," */
} UserDataOptions;

/* The Task of a user's dataset: options checked, columns resolved, labels read
 * from the train file. NULL after one clear message. Free with user_data_free.
 * The Task (here and from user_data_load) is registered with task_find, so
 * name lookups in results (eval, compare tables) find it. */
const Task *user_data_create(const UserDataOptions *o);
/* Writes the Task's description (dataset.json) to path. 0, or -1 after a message. */
int user_data_save(const Task *t, const char *path);
/* The Task described by a dataset.json. NULL after a message. */
const Task *user_data_load(const char *path);
void user_data_free(const Task *t);

#endif
