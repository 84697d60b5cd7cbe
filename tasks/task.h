/* task.h — what a task is: files, columns, labels, metrics, submission name.
 * Pure data description (no model code); one table row per task in
 * tasks/registry.c (GLUE), tasks/subsets.c (subsets of GLUE's training splits)
 * and tasks/extra.c (other benchmarks: GoEmotions).
 *
 * A multi-label task (Task.multi_label) gives each row a SET of labels
 * (Example.labels, ascending ids) instead of one class (Example.label, then -1);
 * single-label tasks and their code never see the set.
 *
 * Loading turns a split file (.tsv or .tsv.gz, official layout) into a Dataset of
 * Examples; a malformed row is reported with file:line and skipped (or is fatal
 * with strict), never a crash. */
#ifndef GLUE_TASK_H
#define GLUE_TASK_H

#include <stddef.h>

#include "metrics/metrics.h"

#define TASK_MAX_SPLITS 5   /* MNLI: train, dev_matched, dev_mismatched, test_matched, test_mismatched */
#define TASK_MAX_LABELS 100 /* GLUE: 3, GoEmotions 28; a user's dataset (tasks/user_data.c) may have more */

/* How a split file is laid out. */
typedef enum {
    TASK_FORMAT_TSV = 0,   /* official GLUE TSV: fixed columns, no quoting */
    TASK_FORMAT_ENTRIES,   /* glue-subsets JSON: {"0": {"text_a", "text_b", "label"}, ...} */
} TaskFormat;

typedef struct UserData UserData;   /* a user's own dataset (tasks/user_data.h) */

typedef struct TaskSplit {
    const char *name;      /* "train", "dev", "dev_matched", "test_mismatched", ... */
    const char *file;      /* path under the task dir, e.g. "dev_matched.tsv" */
    int is_test;           /* unlabelled leaderboard split */
    int has_header;
    int num_cols;          /* exact column count of a well-formed row */
    int col_index;         /* -1: use the row number */
    int col_a, col_b;      /* col_b < 0: single sentence */
    int col_label;         /* -1: no label (test) */
    long official_rows;    /* rows (without header) in the official file */
    const char *submit;    /* leaderboard file for a test split ("MNLI-m.tsv"), else NULL */
    const char *header;    /* the official header line (tab-separated), NULL when none */
    TaskFormat format;
    const char *dir;       /* directory under the data root when not the task's (qnli-9k's
                            * official dev lives in QNLI/), else NULL */
} TaskSplit;

typedef struct Task {
    const char *name;      /* lowercase id used on the command line: "sst2" */
    const char *display;   /* "SST-2" */
    const char *dir;       /* directory under data/glue: "SST-2", "diagnostic" */
    int num_labels;        /* 1 = regression (STS-B) */
    const char *labels[TASK_MAX_LABELS]; /* label strings of the files and submissions */
    const char *label_names[TASK_MAX_LABELS]; /* what the labels mean, for people ("positive"
                                               * for SST-2's "1"); NULL: the label strings say it */
    MetricId metrics[2];   /* primary first; METRIC_NONE when unused */
    int multi_label;       /* each row has a set of labels (0, 1 or more of num_labels) */
    const char *label_sep; /* multi-label TSV: what joins the labels in the label column
                            * (GoEmotions: ","); NULL for the other tasks */
    const char *scored_with; /* AX: "mnli" (no training data of its own), else NULL */
    int symmetric;         /* a pair task whose label does not depend on the order of
                            * the texts (MRPC, STS-B, QQP): both orders may be trained on */
    const char *subset_of; /* a subset task (mnli-9k): the official task whose training
                            * split it samples; never scored as that task (metrics/glue_score.h) */
    const UserData *user;  /* a user's own dataset (glue finetune --train FILE): its files,
                            * format and columns; NULL for the registry's tasks */
    int num_splits;
    TaskSplit splits[TASK_MAX_SPLITS];
} Task;

typedef struct Example {
    char *a, *b;           /* UTF-8 text; b NULL for single-sentence tasks */
    int label;             /* class index, -1 when unlabelled (0 for a scored STS-B row);
                            * -1 in a multi-label task */
    int *labels;           /* multi-label task: the row's label ids, ascending, no repeats
                            * (owned; NULL with nlabels 0 when unlabelled) */
    int nlabels;
    float score;           /* regression target (STS-B), else 0 */
    long index;            /* the row's index column (or row number) */
    long line;             /* 1-based line in the source file */
} Example;

typedef struct Dataset {
    const Task *task;
    const TaskSplit *split;
    Example *ex;
    int n;
    int num_skipped;       /* malformed rows reported and skipped */
} Dataset;

extern const Task TASKS[];       /* the ten official GLUE tasks (and only those) */
extern const int NUM_TASKS;
/* Benchmarks beyond GLUE (tasks/extra.c): goemotions. Found by task_find,
 * fetched by `glue data fetch` and listed by `glue tasks` apart from GLUE;
 * never among TASKS, so never in the GLUE score or `eval all`. */
extern const Task EXTRA_TASKS[];
extern const int NUM_EXTRA_TASKS;
/* Subsets of official training splits (tasks/subsets.c): mnli-9k, ... Found by
 * task_find and listed by `glue tasks`, but never among TASKS, so `eval all`,
 * `compare` and the GLUE score never take them for the official tasks. */
extern const Task SUBSET_TASKS[];
extern const int NUM_SUBSET_TASKS;

/* The labelled dev splits of a task, the selection split first (MNLI:
 * dev_matched, dev_mismatched). Returns how many (at most max). */
int task_dev_splits(const Task *t, const TaskSplit **out, int max);

/* The readable name of label k (task_label_name(sst2, 1) = "positive"). */
const char *task_label_name(const Task *t, int k);

/* Appends to d a copy of each pair example with its texts swapped (training
 * on both orders of a symmetric task). 0 ok; -1 after a message when the task
 * is not a symmetric pair task. */
int dataset_add_swapped_pairs(Dataset *d);

/* How many rows of d have the texts (a, and b of a pair) of some row of
 * other, whatever their labels (tasks/overlap.c). */
int dataset_shared_rows(const Dataset *d, const Dataset *other);

/* Lookup by id, case-insensitive, accepting "SST-2", "sst-2", "sst2", "STS-B". NULL if unknown.
 * Also finds, by its exact name, the user's own dataset this process works on
 * (registered by tasks/user_data.c when it builds one), so code that looks tasks
 * up by the name in a results file treats it like any task. */
const Task *task_find(const char *name);
/* Registers t as the user's dataset task_find knows (NULL: none). */
void task_register_user(const Task *t);
/* Forgets t if it is the one registered (it is being freed). */
void task_unregister_user(const Task *t);
/* The closest task id to a misspelt name (for "did you mean"), NULL when none is near. */
const char *task_suggest(const char *name);
/* task_find, or NULL after printing "unknown task 'x' (did you mean 'y'?)". */
const Task *task_find_or_report(const char *name);
const TaskSplit *task_split(const Task *t, const char *split_name);
/* The split model selection uses: the first labelled split that is neither
 * train nor test (dev, dev_matched; "heldout" for a subset task). */
const TaskSplit *task_dev_split(const Task *t);
/* Root of the GLUE data: $GLUE_DATA or "data/glue". */
const char *task_data_root(void);
/* Path of a split's file, preferring "<file>" then "<file>.gz". Returns 0 and fills
 * out when one exists, else -1 (out gets the plain path, for messages). */
int task_split_path(const Task *t, const TaskSplit *s, const char *root, char *out, size_t cap);
/* Rows (entries) of a split file as loading would see them, header excluded,
 * without checking the texts. Returns 0 (LINES_OK), or a LinesStatus (core/lines.h:
 * truncated, corrupt — a subset file that is not one JSON object —, ...) with
 * the reason in err. */
int task_count_rows(const TaskSplit *s, const char *path, long *rows, char *err, size_t cap);

/* Load a split. Returns 0 on success; on a missing/truncated file, (strict) a
 * malformed row, or no usable row at all prints one clear error and returns
 * non-zero. */
int task_load(const Task *t, const char *split_name, const char *root, int strict, Dataset *out);
void dataset_free(Dataset *d);
/* The one line a model's encoding says when it cut texts to its max_len:
 * "12 of 500 rows of SST-2 dev truncated to max_len 128 tokens (the longest
 * had 301)" on stderr; nothing when rows is 0. unit: "tokens", "words". */
void dataset_report_truncated(const Dataset *d, long rows, int max_len, const char *unit, long longest);
/* The mean regression target of d's examples (0 for none): where regression
 * models start their output bias and the majority baseline's prediction. */
double dataset_mean_score(const Dataset *d);
/* Label index of a label string (for predictions in leaderboard format), -1 if
 * none. A cell's surrounding whitespace is not part of its label (" pos " is
 * "pos"): task_label_trim gives the label's span of s. */
int task_label_index(const Task *t, const char *s);
size_t task_label_trim(const char *s, const char **start);
/* 1 when s is not a label of labels[0..k) but a comma-separated list of two
 * or more of them without commas of their own ("pos,neg"): a row of
 * multi-label data, which a single-label task must refuse, not take for a
 * class of its own. */
int task_label_list_of(const char *s, const char *const *labels, int k);

#endif
