/* subsets.c — the GLUE training subsets as tasks of their own: mnli-9k, snli-9k,
 * qqp-9k, qnli-9k (../shared/data/MANIFEST.md section 4).
 *
 * Each is 8,999 labelled pairs plus 1,000 held-out pairs, BOTH drawn from the
 * official *train* split, in the glue-subsets JSON layout (TASK_FORMAT_ENTRIES).
 * They are clearly not the official tasks: their ids and display names say
 * "9k", the held-out split is called "heldout" (never "dev": it is not the
 * official dev set) and model selection uses it. qnli-9k is the exception that
 * gives a real, handicapped QNLI number: it selects on and reports the OFFICIAL
 * QNLI dev (which shares no pair with the subset), so its name says how much of
 * QNLI's training data it saw. `glue data fetch` installs the files under
 * <glue root>/subsets/<TASK>/. */
#include "tasks/task.h"

#include <stddef.h>

#define SUBSET_TRAIN_ROWS 8999
#define SUBSET_HELDOUT_ROWS 1000

/* Train and held-out splits of subset dir D ("subsets/MNLI"): text_a, text_b, label. */
#define SUBSET_TRAIN \
    {.name = "train", .file = "train.json", .format = TASK_FORMAT_ENTRIES, .num_cols = 3, .col_index = -1, \
     .col_a = 0, .col_b = 1, .col_label = 2, .official_rows = SUBSET_TRAIN_ROWS}
#define SUBSET_HELDOUT \
    {.name = "heldout", .file = "dev.json", .format = TASK_FORMAT_ENTRIES, .num_cols = 3, .col_index = -1, \
     .col_a = 0, .col_b = 1, .col_label = 2, .official_rows = SUBSET_HELDOUT_ROWS}

const Task SUBSET_TASKS[] = {
    {.name = "mnli-9k", .display = "MNLI 9k subset", .dir = "subsets/MNLI", .subset_of = "mnli", .num_labels = 3,
     .labels = {"contradiction", "entailment", "neutral"}, .metrics = {METRIC_ACC}, .num_splits = 2,
     .splits = {SUBSET_TRAIN, SUBSET_HELDOUT}},
    {.name = "snli-9k", .display = "SNLI 9k subset", .dir = "subsets/SNLI", .subset_of = "snli", .num_labels = 3,
     .labels = {"contradiction", "entailment", "neutral"}, .metrics = {METRIC_ACC}, .num_splits = 2,
     .splits = {SUBSET_TRAIN, SUBSET_HELDOUT}},
    {.name = "qqp-9k", .display = "QQP 9k subset", .dir = "subsets/QQP", .subset_of = "qqp", .symmetric = 1,
     .num_labels = 2, .labels = {"0", "1"}, .metrics = {METRIC_F1, METRIC_ACC}, .num_splits = 2,
     .splits = {SUBSET_TRAIN, SUBSET_HELDOUT}},
    /* Selects on the official QNLI dev (the first labelled split after train). */
    {.name = "qnli-9k", .display = "QNLI, 8,999 of 104,743 training pairs", .dir = "subsets/QNLI",
     .subset_of = "qnli", .num_labels = 2, .labels = {"entailment", "not_entailment"}, .metrics = {METRIC_ACC},
     .num_splits = 3, .splits = {
        SUBSET_TRAIN,
        {.name = "dev", .file = "dev.tsv", .dir = "QNLI", .has_header = 1, .num_cols = 4, .col_index = 0,
         .col_a = 1, .col_b = 2, .col_label = 3, .official_rows = 5463, .header = "index\tquestion\tsentence\tlabel"},
        SUBSET_HELDOUT}},
};
const int NUM_SUBSET_TASKS = (int)(sizeof SUBSET_TASKS / sizeof SUBSET_TASKS[0]);
