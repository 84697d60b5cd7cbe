/* registry.c — the ten GLUE tasks as data: files, exact column layouts (those
 * download_glue_data.py produces), labels, metrics, official row counts and
 * leaderboard file names; plus lookup by name.
 *
 * Column indices are 0-based. Row counts exclude the header line. */
#include "tasks/task.h"

#include "core/common.h"
#include "core/editdist.h"
#include "core/lines.h"

#include <ctype.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Official header lines, shared by the splits that use them. */
#define H_INDEX_SENTENCE "index\tsentence"
#define H_PAIR "index\tsentence1\tsentence2"
#define H_MRPC "Quality\t#1 ID\t#2 ID\t#1 String\t#2 String" /* train/dev: after a UTF-8 BOM */
#define H_STSB "index\tgenre\tfilename\tyear\told_index\tsource1\tsource2\tsentence1\tsentence2"
#define H_MNLI                                                                                \
    "index\tpromptID\tpairID\tgenre\tsentence1_binary_parse\tsentence2_binary_parse\t"         \
    "sentence1_parse\tsentence2_parse\tsentence1\tsentence2"

/* MNLI-style labels (AX is scored by an MNLI model). */
#define NLI3_LABELS {"contradiction", "entailment", "neutral"}
#define BINARY_LABELS {"0", "1"}
#define ENTAIL_LABELS {"entailment", "not_entailment"}

const Task TASKS[] = {
    {.name = "cola", .display = "CoLA", .dir = "CoLA", .num_labels = 2, .labels = BINARY_LABELS,
     .label_names = {"unacceptable", "acceptable"},
     .metrics = {METRIC_MCC}, .num_splits = 3, .splits = {
        /* source, label, original label ("*" or empty), sentence; no header */
        {.name = "train", .file = "train.tsv", .num_cols = 4, .col_index = -1, .col_a = 3, .col_b = -1,
         .col_label = 1, .official_rows = 8551},
        {.name = "dev", .file = "dev.tsv", .num_cols = 4, .col_index = -1, .col_a = 3, .col_b = -1,
         .col_label = 1, .official_rows = 1043},
        {.name = "test", .file = "test.tsv", .is_test = 1, .has_header = 1, .num_cols = 2, .col_index = 0,
         .col_a = 1, .col_b = -1, .col_label = -1, .official_rows = 1063, .submit = "CoLA.tsv",
         .header = H_INDEX_SENTENCE}}},
    {.name = "sst2", .display = "SST-2", .dir = "SST-2", .num_labels = 2, .labels = BINARY_LABELS,
     .label_names = {"negative", "positive"},
     .metrics = {METRIC_ACC}, .num_splits = 3, .splits = {
        {.name = "train", .file = "train.tsv", .has_header = 1, .num_cols = 2, .col_index = -1, .col_a = 0,
         .col_b = -1, .col_label = 1, .official_rows = 67349, .header = "sentence\tlabel"},
        {.name = "dev", .file = "dev.tsv", .has_header = 1, .num_cols = 2, .col_index = -1, .col_a = 0,
         .col_b = -1, .col_label = 1, .official_rows = 872, .header = "sentence\tlabel"},
        {.name = "test", .file = "test.tsv", .is_test = 1, .has_header = 1, .num_cols = 2, .col_index = 0,
         .col_a = 1, .col_b = -1, .col_label = -1, .official_rows = 1821, .submit = "SST-2.tsv",
         .header = H_INDEX_SENTENCE}}},
    {.name = "mrpc", .display = "MRPC", .dir = "MRPC", .symmetric = 1, .num_labels = 2, .labels = BINARY_LABELS,
     .label_names = {"not_paraphrase", "paraphrase"},
     .metrics = {METRIC_F1, METRIC_ACC}, .num_splits = 3, .splits = {
        {.name = "train", .file = "train.tsv", .has_header = 1, .num_cols = 5, .col_index = -1, .col_a = 3,
         .col_b = 4, .col_label = 0, .official_rows = 3668, .header = H_MRPC},
        {.name = "dev", .file = "dev.tsv", .has_header = 1, .num_cols = 5, .col_index = -1, .col_a = 3,
         .col_b = 4, .col_label = 0, .official_rows = 408, .header = H_MRPC},
        {.name = "test", .file = "test.tsv", .is_test = 1, .has_header = 1, .num_cols = 5, .col_index = 0,
         .col_a = 3, .col_b = 4, .col_label = -1, .official_rows = 1725, .submit = "MRPC.tsv",
         .header = "index\t#1 ID\t#2 ID\t#1 String\t#2 String"}}},
    {.name = "stsb", .display = "STS-B", .dir = "STS-B", .symmetric = 1, .num_labels = 1,
     .metrics = {METRIC_PEARSON, METRIC_SPEARMAN}, .num_splits = 3, .splits = {
        {.name = "train", .file = "train.tsv", .has_header = 1, .num_cols = 10, .col_index = 0, .col_a = 7,
         .col_b = 8, .col_label = 9, .official_rows = 5749, .header = H_STSB "\tscore"},
        {.name = "dev", .file = "dev.tsv", .has_header = 1, .num_cols = 10, .col_index = 0, .col_a = 7,
         .col_b = 8, .col_label = 9, .official_rows = 1500, .header = H_STSB "\tscore"},
        {.name = "test", .file = "test.tsv", .is_test = 1, .has_header = 1, .num_cols = 9, .col_index = 0,
         .col_a = 7, .col_b = 8, .col_label = -1, .official_rows = 1379, .submit = "STS-B.tsv",
         .header = H_STSB}}},
    {.name = "qqp", .display = "QQP", .dir = "QQP", .symmetric = 1, .num_labels = 2, .labels = BINARY_LABELS,
     .label_names = {"not_duplicate", "duplicate"},
     .metrics = {METRIC_F1, METRIC_ACC}, .num_splits = 3, .splits = {
        {.name = "train", .file = "train.tsv", .has_header = 1, .num_cols = 6, .col_index = 0, .col_a = 3,
         .col_b = 4, .col_label = 5, .official_rows = 363846,
         .header = "id\tqid1\tqid2\tquestion1\tquestion2\tis_duplicate"},
        {.name = "dev", .file = "dev.tsv", .has_header = 1, .num_cols = 6, .col_index = 0, .col_a = 3,
         .col_b = 4, .col_label = 5, .official_rows = 40430,
         .header = "id\tqid1\tqid2\tquestion1\tquestion2\tis_duplicate"},
        {.name = "test", .file = "test.tsv", .is_test = 1, .has_header = 1, .num_cols = 3, .col_index = 0,
         .col_a = 1, .col_b = 2, .col_label = -1, .official_rows = 390965, .submit = "QQP.tsv",
         .header = "id\tquestion1\tquestion2"}}},
    {.name = "mnli", .display = "MNLI", .dir = "MNLI", .num_labels = 3, .labels = NLI3_LABELS,
     .metrics = {METRIC_ACC}, .num_splits = 5, .splits = {
        /* train: ... sentence1 sentence2 label1 gold_label; dev: five annotator labels */
        {.name = "train", .file = "train.tsv", .has_header = 1, .num_cols = 12, .col_index = 0, .col_a = 8,
         .col_b = 9, .col_label = 11, .official_rows = 392702, .header = H_MNLI "\tlabel1\tgold_label"},
        {.name = "dev_matched", .file = "dev_matched.tsv", .has_header = 1, .num_cols = 16, .col_index = 0,
         .col_a = 8, .col_b = 9, .col_label = 15, .official_rows = 9815,
         .header = H_MNLI "\tlabel1\tlabel2\tlabel3\tlabel4\tlabel5\tgold_label"},
        {.name = "dev_mismatched", .file = "dev_mismatched.tsv", .has_header = 1, .num_cols = 16,
         .col_index = 0, .col_a = 8, .col_b = 9, .col_label = 15, .official_rows = 9832,
         .header = H_MNLI "\tlabel1\tlabel2\tlabel3\tlabel4\tlabel5\tgold_label"},
        {.name = "test_matched", .file = "test_matched.tsv", .is_test = 1, .has_header = 1, .num_cols = 10,
         .col_index = 0, .col_a = 8, .col_b = 9, .col_label = -1, .official_rows = 9796,
         .submit = "MNLI-m.tsv", .header = H_MNLI},
        {.name = "test_mismatched", .file = "test_mismatched.tsv", .is_test = 1, .has_header = 1,
         .num_cols = 10, .col_index = 0, .col_a = 8, .col_b = 9, .col_label = -1, .official_rows = 9847,
         .submit = "MNLI-mm.tsv", .header = H_MNLI}}},
    {.name = "qnli", .display = "QNLI", .dir = "QNLI", .num_labels = 2, .labels = ENTAIL_LABELS,
     .metrics = {METRIC_ACC}, .num_splits = 3, .splits = {
        {.name = "train", .file = "train.tsv", .has_header = 1, .num_cols = 4, .col_index = 0, .col_a = 1,
         .col_b = 2, .col_label = 3, .official_rows = 104743, .header = "index\tquestion\tsentence\tlabel"},
        {.name = "dev", .file = "dev.tsv", .has_header = 1, .num_cols = 4, .col_index = 0, .col_a = 1,
         .col_b = 2, .col_label = 3, .official_rows = 5463, .header = "index\tquestion\tsentence\tlabel"},
        {.name = "test", .file = "test.tsv", .is_test = 1, .has_header = 1, .num_cols = 3, .col_index = 0,
         .col_a = 1, .col_b = 2, .col_label = -1, .official_rows = 5463, .submit = "QNLI.tsv",
         .header = "index\tquestion\tsentence"}}},
    {.name = "rte", .display = "RTE", .dir = "RTE", .num_labels = 2, .labels = ENTAIL_LABELS,
     .metrics = {METRIC_ACC}, .num_splits = 3, .splits = {
        {.name = "train", .file = "train.tsv", .has_header = 1, .num_cols = 4, .col_index = 0, .col_a = 1,
         .col_b = 2, .col_label = 3, .official_rows = 2490, .header = H_PAIR "\tlabel"},
        {.name = "dev", .file = "dev.tsv", .has_header = 1, .num_cols = 4, .col_index = 0, .col_a = 1,
         .col_b = 2, .col_label = 3, .official_rows = 277, .header = H_PAIR "\tlabel"},
        {.name = "test", .file = "test.tsv", .is_test = 1, .has_header = 1, .num_cols = 3, .col_index = 0,
         .col_a = 1, .col_b = 2, .col_label = -1, .official_rows = 3000, .submit = "RTE.tsv",
         .header = H_PAIR}}},
    {.name = "wnli", .display = "WNLI", .dir = "WNLI", .num_labels = 2, .labels = BINARY_LABELS,
     .label_names = {"not_entailment", "entailment"},
     .metrics = {METRIC_ACC}, .num_splits = 3, .splits = {
        {.name = "train", .file = "train.tsv", .has_header = 1, .num_cols = 4, .col_index = 0, .col_a = 1,
         .col_b = 2, .col_label = 3, .official_rows = 635, .header = H_PAIR "\tlabel"},
        {.name = "dev", .file = "dev.tsv", .has_header = 1, .num_cols = 4, .col_index = 0, .col_a = 1,
         .col_b = 2, .col_label = 3, .official_rows = 71, .header = H_PAIR "\tlabel"},
        {.name = "test", .file = "test.tsv", .is_test = 1, .has_header = 1, .num_cols = 3, .col_index = 0,
         .col_a = 1, .col_b = 2, .col_label = -1, .official_rows = 146, .submit = "WNLI.tsv",
         .header = H_PAIR}}},
    /* The diagnostic set: test only, predicted by the MNLI model. */
    {.name = "ax", .display = "AX", .dir = "diagnostic", .num_labels = 3, .labels = NLI3_LABELS,
     .metrics = {METRIC_MCC}, .scored_with = "mnli", .num_splits = 1, .splits = {
        {.name = "test", .file = "diagnostic.tsv", .is_test = 1, .has_header = 1, .num_cols = 3,
         .col_index = 0, .col_a = 1, .col_b = 2, .col_label = -1, .official_rows = 1104, .submit = "AX.tsv",
         .header = H_PAIR}}},
};
const int NUM_TASKS = (int)(sizeof TASKS / sizeof TASKS[0]);

/* Other spellings people use (download_glue_data.py's names, leaderboard files). */
static const struct { const char *alias, *name; } TASK_ALIASES[] = {
    {"sst", "sst2"}, {"sts", "stsb"}, {"mnlim", "mnli"}, {"mnlimm", "mnli"},
    {"mnlimatched", "mnli"}, {"mnlimismatched", "mnli"}, {"diagnostic", "ax"},
};

/* Lowercase, without '-', '_' and spaces: "SST-2" -> "sst2". */
static void task_normalize(const char *s, char *out, size_t cap) {
    size_t n = 0;
    for (; *s && n + 1 < cap; s++)
        if (*s != '-' && *s != '_' && *s != ' ') out[n++] = (char)tolower((unsigned char)*s);
    out[n] = '\0';
}

/* Every task lookup sees: the official tasks, the subset tasks, then the others. */
static const Task *task_at(int i) {
    if (i < NUM_TASKS) return &TASKS[i];
    i -= NUM_TASKS;
    return i < NUM_SUBSET_TASKS ? &SUBSET_TASKS[i] : &EXTRA_TASKS[i - NUM_SUBSET_TASKS];
}
static int task_count(void) { return NUM_TASKS + NUM_SUBSET_TASKS + NUM_EXTRA_TASKS; }

/* The user's own dataset of this process (glue finetune --train, or read back
 * from a run's dataset.json), NULL when none. Atomic: the library
 * (include/glue.h) may open runs of users' datasets from several threads at
 * once; it never looks tasks up by name, so which one is registered does not
 * matter to it. */
static const Task *_Atomic USER_TASK;

void task_register_user(const Task *t) { atomic_store(&USER_TASK, t); }

void task_unregister_user(const Task *t) { atomic_compare_exchange_strong(&USER_TASK, &t, NULL); }

const Task *task_find(const char *name) {
    char want[64], have[64];
    if (!name) return NULL;
    const Task *user = atomic_load(&USER_TASK);
    if (user && strcmp(name, user->name) == 0) return user;
    task_normalize(name, want, sizeof want);
    for (size_t i = 0; i < sizeof TASK_ALIASES / sizeof TASK_ALIASES[0]; i++)
        if (strcmp(want, TASK_ALIASES[i].alias) == 0) task_normalize(TASK_ALIASES[i].name, want, sizeof want);
    for (int i = 0; i < task_count(); i++) {
        const Task *t = task_at(i);
        /* a subset task answers to its id only: its dir ("subsets/QNLI") or a
         * display name must never resolve to it by accident */
        const char *names[3] = {t->name, t->subset_of ? t->name : t->display, t->subset_of ? t->name : t->dir};
        for (int k = 0; k < 3; k++) {
            task_normalize(names[k], have, sizeof have);
            if (strcmp(want, have) == 0) return t;
        }
    }
    return NULL;
}

const char *task_suggest(const char *name) {
    char want[64], have[64];
    task_normalize(name ? name : "", want, sizeof want);
    int best = 0, best_d = 1 << 30;
    for (int i = 0; i < task_count(); i++) {
        const char *names[2] = {task_at(i)->name, task_at(i)->display};
        for (int k = 0; k < 2; k++) {
            task_normalize(names[k], have, sizeof have);
            int d = str_edit_distance(want, have);
            if (d < best_d) { best_d = d; best = i; }
        }
    }
    return str_is_near(want, best_d) ? task_at(best)->name : NULL;
}

const Task *task_find_or_report(const char *name) {
    const Task *t = task_find(name);
    char tail[96];
    if (!t) user_error("'glue tasks' lists the tasks", "unknown task '%s'%s", name, str_did_you_mean(task_suggest(name), tail, sizeof tail));
    return t;
}

/* By exact name (case-insensitive); "dev" and "test" also mean the first dev/test
 * split, so `--split dev` works for MNLI (dev_matched). */
const TaskSplit *task_split(const Task *t, const char *split_name) {
    if (!t || !split_name) return NULL;
    for (int i = 0; i < t->num_splits; i++)
        if (strcasecmp(t->splits[i].name, split_name) == 0) return &t->splits[i];
    if (strcasecmp(split_name, "dev") == 0) return task_dev_split(t);
    if (strcasecmp(split_name, "test") == 0)
        for (int i = 0; i < t->num_splits; i++)
            if (t->splits[i].is_test) return &t->splits[i];
    return NULL;
}

const TaskSplit *task_dev_split(const Task *t) {
    for (int i = 0; i < t->num_splits; i++) {
        const TaskSplit *s = &t->splits[i];
        if (!s->is_test && s->col_label >= 0 && strcmp(s->name, "train") != 0) return s;
    }
    return NULL;
}

const char *task_data_root(void) {
    const char *env = getenv("GLUE_DATA");
    return env && *env ? env : "data/glue";
}

int task_split_path(const Task *t, const TaskSplit *s, const char *root, char *out, size_t cap) {
    char plain[4096];
    if (t->user) return lines_find(s->file, out, cap);   /* the user's own file, as named */
    snprintf(plain, sizeof plain, "%s/%s/%s", root ? root : task_data_root(), s->dir ? s->dir : t->dir, s->file);
    return lines_find(plain, out, cap);
}

const char *task_label_name(const Task *t, int k) {
    return t->label_names[k] ? t->label_names[k] : t->labels[k];
}

size_t task_label_trim(const char *s, const char **start) {
    size_t n = strlen(s);
    while (n && isspace((unsigned char)*s)) s++, n--;
    while (n && isspace((unsigned char)s[n - 1])) n--;
    *start = s;
    return n;
}

/* Index of the label spelled s[0..n) among labels[0..k), or -1. */
static int label_find(const char *const *labels, int k, const char *s, size_t n) {
    for (int i = 0; i < k && i < TASK_MAX_LABELS; i++)
        if (labels[i] && strlen(labels[i]) == n && memcmp(labels[i], s, n) == 0) return i;
    return -1;
}

int task_label_index(const Task *t, const char *s) {
    if (!s) return -1;
    const char *b;
    size_t n = task_label_trim(s, &b);
    return label_find(t->labels, t->num_labels, b, n);
}

int task_label_list_of(const char *s, const char *const *labels, int k) {
    const char *b;
    size_t n = task_label_trim(s, &b);
    if (!memchr(b, ',', n) || label_find(labels, k, b, n) >= 0) return 0;   /* a label may hold a comma */
    for (const char *end = b + n; b <= end;) {
        const char *comma = memchr(b, ',', (size_t)(end - b));
        const char *stop = comma ? comma : end, *p = b;
        while (p < stop && isspace((unsigned char)*p)) p++;
        const char *q = stop;
        while (q > p && isspace((unsigned char)q[-1])) q--;
        int known = label_find(labels, k, p, (size_t)(q - p));
        if (known < 0 || memchr(labels[known], ',', strlen(labels[known]))) return 0;
        b = stop + 1;
    }
    return 1;
}

int task_dev_splits(const Task *t, const TaskSplit **out, int max) {
    int n = 0;
    const TaskSplit *first = task_dev_split(t);
    if (first && n < max) out[n++] = first;
    for (int i = 0; i < t->num_splits && n < max; i++) {
        const TaskSplit *s = &t->splits[i];
        if (s != first && !s->is_test && s->col_label >= 0 && strcmp(s->name, "train") != 0) out[n++] = s;
    }
    return n;
}
