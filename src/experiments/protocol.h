/* protocol.h — `glue protocol`: what each change of the fine-tuning recipe
 * does, measured over seeds, one table (issue: keep what helps, by measurement).
 *
 * Rows: the baseline (the model's default recipe, from --init's encoder) and
 * one row per change, NAME:key=value[,key=value...]. A key may be qualified
 * by a task, "mrpc.pair_encoding=features", to apply to that task only (a
 * change for the pair tasks leaves the others at the baseline). Every row
 * fine-tunes each task for each seed into <root>/<row>/<task>-seed<S>/ (a
 * finished fine-tune is reused, an interrupted one resumed), so a table can
 * be grown over several sessions; a task a change leaves alone shares the
 * baseline's fine-tunes.
 *
 * A task's score is the mean of its metrics on its dev split at the best
 * epoch — the epoch is SELECTED ON DEV, as `glue finetune` does, so the
 * numbers are optimistic (the table says so). A row's score is the mean over
 * its tasks of the seed-mean task scores, with the spread over seeds of the
 * per-seed means, and its difference from the baseline row.
 *
 * The table (FILE.json and FILE.md beside it) has one row per name, updated
 * in place, with the command, the provenance and the encoder. */
#ifndef GLUE_PROTOCOL_H
#define GLUE_PROTOCOL_H

enum { PROTOCOL_MAX_ROWS = 16, PROTOCOL_MAX_TASKS = 10, PROTOCOL_MAX_SEEDS = 10, PROTOCOL_MAX_SETS = 16 };

typedef struct ProtocolRow {
    const char *name;
    const char *sets[PROTOCOL_MAX_SETS];   /* "key=value" or "task.key=value" */
    int n_sets;
} ProtocolRow;

typedef struct ProtocolOptions {
    const char *model;             /* "bert" by default */
    const char *init;              /* the encoder (NULL: the model's default) */
    const char *const *sets;       /* "[task.]key=value" for every row (before the row's own) */
    int n_sets;
    const ProtocolRow *rows;       /* rows[0] is the baseline (no sets) */
    int n_rows;
    const char *const *tasks;
    int n_tasks;
    const long *seeds;
    int n_seeds;
    const char *root;              /* where the fine-tunes go */
    const char *results;           /* FILE.json (FILE.md beside it) */
    const char *command;
    int threads;
} ProtocolOptions;

/* Parses "NAME:key=value,key=value" into row (text is modified and must
 * outlive row). 0 ok, -1 after a message. */
int protocol_parse_change(char *text, ProtocolRow *row);
/* Fine-tunes what is missing, writes the table. 0 ok, 1 failed work, 2 bad input. */
int protocol_run(const ProtocolOptions *o);

/* The parts of a table of fine-tunes over seeds (`glue pretrain screen`'s too). */
typedef struct cJSON cJSON;
/* dev's metrics added into sums, key by key; their mean (NAN: none). */
double protocol_add_metrics(cJSON *sums, const cJSON *dev);
/* tasks[task]: {"metrics": sums / n, "seed_scores": scores, "score": the
 * mean of s[0..n), "std"} (sums and scores taken); the cell, its mean in *mean. */
cJSON *protocol_task_cell(cJSON *tasks, const char *task, cJSON *sums, cJSON *scores, const double *s, int n,
                          double *mean);

#endif
