/* trainer.h — the one fine-tuning loop every model runs through its ModelOps.
 *
 * Loads a task's train and dev splits, builds the model from its config, trains
 * for the configured epochs on minibatches shuffled each epoch by a seeded RNG
 * (warm-up + decay schedule over the known total of steps), evaluates every dev
 * split after each epoch with the task's official metrics, keeps the best
 * checkpoint by the selection score (the primary metric, or the mean of the two
 * metrics, on the first dev split) and writes the run directory (run_dir.h).
 *
 * Determinism: the shuffle of epoch e is drawn from stream e of the seed, so the
 * same seed and thread count give the same numbers, and a run resumed after an
 * interruption (--resume; the loop and its resume point: loop.h, resume.h)
 * continues exactly when the model saves its optimizer state (save_state).
 *
 * Data parallel: under `mpirun -np N` (dist.h) every rank runs trainer_run
 * with the same arguments and holds the model; rank r trains on rows
 * [b*r/N, b*(r+1)/N) of every global batch of b (the configured batch, so
 * the run equals the one-process run up to the order of sums when dropout
 * is off), the gradients are summed (core/dist_grad.h), and every rank
 * evaluates (identical weights). Rank 0 alone writes files and progress.
 * Models without ModelOps.data_parallel are refused. */
#ifndef GLUE_TRAINER_H
#define GLUE_TRAINER_H

#include <stdint.h>

#include "core/blas.h"
#include "models/model.h"
#include "models/run_config.h"
#include "optim/schedule.h"

/* The settings the trainer reads from every model's config are rows of the
 * models' SettingSpec tables: models/run_config.h (RUN_SETTING_*). */

typedef struct TrainerOptions {
    const Task *task;
    const ModelOps *ops;
    const cJSON *config;      /* the full model config (run_config_build) */
    uint64_t seed;
    int threads;              /* recorded in results.json; set by the caller */
    const char *out_dir;      /* the run directory, created if needed */
    const char *data_root;    /* GLUE data root (task_data_root()) */
    const char *command;      /* the command line, recorded in results.json */
    int resume;               /* continue an interrupted run in out_dir */
    int strict;               /* a malformed row in train or dev is fatal (else skipped with a count) */
    long checkpoint_every;    /* > 0: also save the resume point every this many steps
                               * (0: at the end of each epoch only); SIGINT/SIGTERM save
                               * it at the next step boundary and stop (exit 128 + signal) */
    int show_progress;        /* a start banner, progress and per-epoch lines on stderr */
    int overwrite;            /* replace a finished run in out_dir (else: refused, one message) */
    const struct RunKind *run_kind;  /* what out_dir holds (train/run_txn.h): a caller that writes a file of
                                      * its own there first names it (early); NULL: a fine-tuning run's */
    double holdout;           /* > 0: select (and report) on this fraction of the training
                               * split, held out from training, instead of the dev splits
                               * (hyperparameter search: dev is never looked at) */
    const cJSON *model_config;  /* the config the model is created from when not config: after an
                                 * intermediate stage (experiments/intermediate.h), config with
                                 * "init" that stage's run. NULL: config. What the run records
                                 * and resumes by is config */
    const cJSON *intermediate;  /* that stage's record, written to results.json as
                                 * INTERMEDIATE_KEY (run_config.h); NULL: none */
    const float *example_weights;  /* one loss weight per row of the training split, as loaded (stacked
                                    * boosting, experiments/boost.h; train/head.h), or NULL: all 1.
                                    * Single-label models with logits; not with holdout or pair_swap */
    int num_example_weights;
} TrainerOptions;

/* The held-out split's name in results.json, and the seed that picks it (the
 * same examples for every run of a task). */
#define TRAINER_HELDOUT_SPLIT "heldout"
#define TRAINER_HELDOUT_SEED 0x48454c44ull

/* Train and write the run directory. Returns 0 and *results (results.json's
 * content, caller frees; results may be NULL), or the exit code after one
 * clear message: 1 the work failed (data, divergence, disk), 2 a bad setting. */
int trainer_run(const TrainerOptions *o, cJSON **results);
/* 1 when out_dir holds the resume point of an interrupted run (or the one
 * saved before it) made with this config, seed and holdout (0: none):
 * commands that rerun their own directories (compare, protocol, search)
 * continue it with .resume = 1 instead of starting over; a resume point of
 * other settings is started over. */
int trainer_can_resume(const char *out_dir, const cJSON *config, uint64_t seed, double holdout);
/* results.json of a finished run in dir (its model.ckpt there too) trained
 * with this config (trainer_config_same), seed and holdout (0: none), or
 * NULL: what compare, finetune --seeds --resume, search, protocol and an
 * intermediate stage reuse instead of training again. */
cJSON *trainer_finished_run(const char *dir, const cJSON *config, long seed, double holdout);

/* 0, or EXIT_USAGE after one message (from rank 0) when running under more
 * than one rank and ops is not data-parallel; every rank gets the same. */
int trainer_check_parallel(const ModelOps *ops);
/* Everything about config that can be checked without data: each setting
 * in the range --help-settings prints, the model's rules across keys and
 * against task t (ops->check_config), the head's loss and the prediction
 * rule. What finetune checks before anything is written, and what compare
 * and protocol check for every run before the first one trains. who NULL:
 * the message as it is; else one message "who: MODEL on TASK: ...". 0, or
 * EXIT_USAGE after it. */
int trainer_check_config(const ModelOps *ops, const Task *t, const cJSON *config, const char *who);
/* The same config, but for keys that change no result (bucket_mb), present
 * or not: a run resumes, and a finished run counts as done, whatever they are;
 * and a switch added later (group_by_length) absent from one and false in the
 * other: runs written before it still resume and count as done. */
int trainer_config_same(const cJSON *a, const cJSON *b);

/* The recipe every fine-tuning run reads from its config (multi-task too). */
typedef struct TrainerRecipe {
    int epochs, batch, eval_batch;
    float lr;
    double warmup;            /* the fraction of the steps that warm up */
    const char *schedule;     /* one of RUN_SCHEDULES */
} TrainerRecipe;
/* epochs, batch and lr required (every default config has them); s->failed after a message. */
void trainer_read_recipe(SettingsReader *s, TrainerRecipe *r);
/* Its rates over total_steps (warm-up in float: the rates fine-tuning has always used, schedule.h). */
Schedule trainer_schedule(const TrainerRecipe *r, long total_steps);

/* A task's train split and labelled dev splits (the first selects), and their features. */
typedef struct TrainerSplits {
    Dataset train;
    int num_dev;
    const TaskSplit *dev_split[TASK_MAX_SPLITS];
    Dataset dev[TASK_MAX_SPLITS];
    Encoded *train_e, *dev_e[TASK_MAX_SPLITS];
} TrainerSplits;
/* Each 0, or 1 after a message: the train split (not empty); the dev splits,
 * the first required (purpose: what it is for, said when the task has none),
 * the others (MNLI mismatched) reported when present. */
int trainer_load_train(const Task *t, const char *data_root, int strict, Dataset *train);
int trainer_load_dev(const Task *t, const char *data_root, int strict, TrainerSplits *d, const char *purpose);
void trainer_splits_free(const ModelOps *ops, TrainerSplits *d);
/* " dev accuracy 91.23 f1 88.10" on stderr: an epoch record's dev metrics. */
void trainer_print_dev(const TrainerSplits *d, const cJSON *rec);
/* st (trainer.json, results.json) was written with this config (trainer_config_same), seed and holdout (0: none). */
int trainer_same_run(const cJSON *st, const cJSON *config, uint64_t seed, double holdout);

/* The order of the n training rows in epoch `epoch` (0-based) of a run with
 * this seed, into perm: a shuffle. With lengths (row lengths; NULL: none),
 * grouped by length as Hugging Face's group_by_length: the shuffled rows in
 * groups of TRAINER_LENGTH_GROUP_BATCHES batches, each group sorted by
 * length (longest first, ties in shuffled order) and its full batches then
 * taken in a random order, so that a batch padded to its longest row pads
 * little (SST-2 at batch 32: 3.1x fewer token slots than random batches)
 * while every batch is still drawn from a random tenth of the data or less.
 * The same perm for the same arguments (resume relies on it). */
enum { TRAINER_LENGTH_GROUP_BATCHES = 50 };
void trainer_epoch_order(int *perm, int n, uint64_t seed, int epoch, int batch, const int *lengths);

#endif
