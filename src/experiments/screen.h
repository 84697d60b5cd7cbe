/* screen.h — `glue pretrain screen`: judge pretraining runs by a quick
 * fine-tuning proxy, one table for all of them (issue: choose a recipe by
 * measurement).
 *
 * For each finished pretraining run directory (summary.json present), every
 * proxy task is fine-tuned from its model.ckpt with the default fine-tuning
 * recipe (SST-2 one epoch) for each seed, into RUN/screen/<task>-seed<S>/
 * (a finished fine-tune is reused, an interrupted one resumed). A run's proxy
 * score is the GLUE-style mean over the tasks of each task's score (the mean
 * of its metrics), each averaged over the seeds.
 *
 * The table (JSON, and its Markdown twin beside it) has one row per run,
 * updated in place by name (the run directory's last component), so runs
 * screened at different times share one file: objective and the recipe
 * settings that differ from the defaults, tokens, training time and tokens/s
 * (with the CPU), held-out MLM loss/accuracy (ELECTRA: of its generator),
 * per-task metrics and spread over seeds, the proxy score, the command. */
#ifndef GLUE_PRETRAIN_SCREEN_H
#define GLUE_PRETRAIN_SCREEN_H

enum { SCREEN_MAX_RUNS = 64, SCREEN_MAX_TASKS = 8, SCREEN_MAX_SEEDS = 8, SCREEN_MAX_SETS = 16 };

typedef struct ScreenOptions {
    const char *const *runs;       /* pretraining run directories */
    int n_runs;
    const char *const *tasks;      /* proxy tasks (task names) */
    int n_tasks;
    const long *seeds;
    int n_seeds;
    const char *const *sets;       /* "key=value" fine-tuning settings for every proxy task */
    int n_sets;
    const char *results;           /* the table: FILE.json (FILE.md beside it) */
    const char *command;           /* recorded */
    int threads;
} ScreenOptions;

/* Fine-tunes what is missing and writes the table. 0 ok, 1 failed work, 2 bad input. */
int pretrain_screen(const ScreenOptions *o);

#endif
