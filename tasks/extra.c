/* extra.c — benchmarks beyond GLUE that glue knows by name, as task table rows
 * (see task.h): GoEmotions.
 *
 * GoEmotions (Demszky et al. 2020): 58k Reddit comments, each with one or more
 * of 27 emotions or "neutral", in the official split of google-research's
 * goemotions/data (../shared/data/MANIFEST.md). Each row is
 * text<TAB>comma-separated label ids<TAB>comment id, no header; the ids index
 * emotions.txt (labels.txt in the mirror), whose names are embedded here. The
 * test labels are public: its test split is scored locally (is_test without a
 * leaderboard file), and, as for every task, never used to choose anything.
 * Macro-F1 over the 28 labels is the paper's metric; micro-F1 the second.
 * `glue data fetch goemotions` installs the files under <glue root>/goemotions/. */
#include "tasks/task.h"

#define GOEMOTIONS_SPLIT(NAME, ROWS, TEST)                                                                   \
    {.name = NAME, .file = NAME ".tsv", .is_test = TEST, .num_cols = 3, .col_index = -1, .col_a = 0,      \
     .col_b = -1, .col_label = 1, .official_rows = ROWS}

const Task EXTRA_TASKS[] = {
    {.name = "goemotions", .display = "GoEmotions", .dir = "goemotions", .num_labels = 28, .multi_label = 1,
     .label_sep = ",",
     .labels = {"0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13",
                "14", "15", "16", "17", "18", "19", "20", "21", "22", "23", "24", "25", "26", "27"},
     .label_names = {"admiration", "amusement", "anger", "annoyance", "approval", "caring", "confusion",
                     "curiosity", "desire", "disappointment", "disapproval", "disgust", "embarrassment",
                     "excitement", "fear", "gratitude", "grief", "joy", "love", "nervousness", "optimism",
                     "pride", "realization", "relief", "remorse", "sadness", "surprise", "neutral"},
     .metrics = {METRIC_MACRO_F1, METRIC_MICRO_F1}, .num_splits = 3, .splits = {
        GOEMOTIONS_SPLIT("train", 43410, 0),
        GOEMOTIONS_SPLIT("dev", 5426, 0),
        GOEMOTIONS_SPLIT("test", 5427, 1)}},
};
const int NUM_EXTRA_TASKS = (int)(sizeof EXTRA_TASKS / sizeof EXTRA_TASKS[0]);
