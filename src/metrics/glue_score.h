/* glue_score.h — the GLUE score: the macro average of the task scores over the
 * tasks that were run, as the GLUE leaderboard defines it.
 *
 * A task's score is the mean of its metrics (MRPC/QQP: F1 and accuracy, STS-B:
 * Pearson and Spearman). MNLI-m and MNLI-mm are one task whose score is their
 * mean. AX (the diagnostic set) and names that are not GLUE tasks are reported
 * as not counted — and so are the subset tasks (mnli-9k, qnli-9k, ...): a model
 * trained on 9k pairs is not a QNLI result. The one exception is asked for by
 * name: with GlueScoreOptions.qnli_9k_as_qnli, a "qnli-9k" record (trained on
 * 8,999 of QNLI's training pairs, scored on the official QNLI dev) fills the
 * QNLI slot, shown as "QNLI-9k" and with a note, for a clearly labelled
 * seven-task score. Works on plain (task name, metric values) records so that
 * `glue eval all` (fresh results) and `glue compare` (results read from JSON)
 * share it. */
#ifndef GLUE_GLUE_SCORE_H
#define GLUE_GLUE_SCORE_H

typedef struct cJSON cJSON;

#define GLUE_SCORE_NUM_TASKS 9      /* CoLA SST-2 MRPC STS-B QQP MNLI QNLI RTE WNLI */
#define GLUE_SCORE_MAX_IGNORED 16

typedef struct GlueRecord {
    const char *task;       /* any spelling: "cola", "SST-2", "mnli-m", "MNLI-mm", "mnli_mismatched" */
    const char *split;      /* may be NULL; for task "mnli", "dev_matched"/"dev_mismatched"
                               (any name containing "mismatched") tell the halves apart */
    int num_metrics;        /* 1 or 2 */
    double values[2];       /* the task's metrics, natural scale (accuracy in [0,1]) */
} GlueRecord;

typedef struct GlueTaskScore {
    const char *task;       /* canonical id, static: "cola", "sst2", ..., "mnli" */
    const char *display;    /* "CoLA", "SST-2", ..., "MNLI" */
    double score;           /* mean of its metrics; MNLI: mean of m and mm */
    int halves;             /* MNLI: bit 0 matched, bit 1 mismatched was run; else 0 */
    int from_subset;        /* QNLI filled by a qnli-9k record (qnli_9k_as_qnli) */
} GlueTaskScore;

typedef struct GlueScoreOptions {
    int qnli_9k_as_qnli;    /* count a "qnli-9k" record as QNLI (labelled so) */
} GlueScoreOptions;

typedef struct GlueScore {
    double score;           /* macro average over tasks[], natural scale; 0 when none */
    int num_tasks;
    GlueTaskScore tasks[GLUE_SCORE_NUM_TASKS];   /* in leaderboard order */
    int num_ignored;        /* records left out of the average (AX, unknown names) */
    const char *ignored[GLUE_SCORE_MAX_IGNORED]; /* their task names (the first ones) */
} GlueScore;

/* Returns 0, or -1 after one clear message when a task (or an MNLI half)
 * appears twice or a record has no metric. */
int glue_score_compute(const GlueRecord *rec, int n, GlueScore *out);
/* The same with options (NULL: the defaults, as glue_score_compute). */
int glue_score_compute_opts(const GlueRecord *rec, int n, const GlueScoreOptions *o, GlueScore *out);

/* {"glue_score": x100, "num_tasks": n, "tasks_used": ["CoLA", ...],
 *  "task_scores": {"CoLA": x100, ...}, "not_counted": [...], "notes": [...]}.
 * Caller frees with cJSON_Delete. */
cJSON *glue_score_json(const GlueScore *s);

/* One line for tables and logs: "GLUE score 78.41 over 8 tasks (CoLA, ...; MNLI matched only)". */
void glue_score_describe(const GlueScore *s, char *out, int cap);

#endif
