/* multitask.h — multi-task fine-tuning (MT-DNN, Liu et al. 2019): one BERT
 * encoder trained on several tasks at once, a head per task
 * (models/bert/bert_multi.h), then usable as the start of per-task
 * fine-tuning (`glue finetune TASK --init RUN`: the encoder, heads left
 * behind). A client of the harness: the loop and its resume point (loop.h,
 * resume.h), the step (step.h: each task's head and loss), evaluation
 * (evaluate.h) and the run directory (run_dir.h) are the ones every run uses.
 *
 * An epoch is sum_t ceil(n_t / batch) steps; each step is one task's batch.
 * Task t gets quota_t of them (multitask_quotas): in proportion to
 * n_t^(1/T), T the temperature (setting "temperature", default 1: in
 * proportion to the task's size, every example once per epoch, as MT-DNN
 * samples; larger T flattens toward uniform, a small task's batches then
 * come round more than once). The epoch's steps are the tasks' quotas in an
 * order shuffled from stream `epoch` of the seed; task t's batches follow
 * its own shuffle of its rows, reshuffled each pass over them, so where
 * the run is follows from (epoch, batch) alone and a resumed run continues
 * exactly. Warm-up and decay run over all epochs' steps.
 *
 * After each epoch every task's dev splits are scored with its metrics; the
 * selection score is the mean over tasks of each task's score (its metrics'
 * mean on its first dev split, as a single-task run selects); the best
 * epoch's model is model.ckpt. results.json: the run's keys (run_dir.h) with
 * "task": "multi", "tasks" (names), "temperature", "quotas" (batches per
 * epoch, per task), and per epoch (and "best") a "tasks" block, {task:
 * {"loss", "batches", "score", <dev split>: {metrics}}}, beside the mean
 * "score". One process only (no data parallelism). */
#ifndef GLUE_TRAIN_MULTITASK_H
#define GLUE_TRAIN_MULTITASK_H

#include <stdint.h>

#include "models/model.h"

/* The task name `glue finetune` takes for a multi-task run, and its run
 * directory's task folder. */
#define MULTITASK_NAME "multi"
#define MULTITASK_MAX_TASKS 16
#define MULTITASK_TEMPERATURE_KEY "temperature"
#define MULTITASK_TASKS_KEY "tasks"

/* The tasks of the multi-task stage `--set intermediate=multi` names
 * (experiments/intermediate.h): every GLUE task with training data at the
 * size this repository trains it (the 9k subsets of the four large ones). */
#define MULTITASK_DEFAULT_TASKS "cola,sst2,mrpc,stsb,rte,wnli,mnli-9k,qnli-9k,qqp-9k,snli-9k"

typedef struct MultiTaskOptions {
    const Task *tasks[MULTITASK_MAX_TASKS];
    int n;
    const cJSON *config;      /* the run's settings (BERT's, "tasks", "temperature"): what it records and resumes by */
    uint64_t seed;
    int threads;              /* recorded in results.json */
    const char *out_dir, *data_root, *command;
    int resume, strict, show_progress, overwrite;
    long checkpoint_every;    /* > 0: a resume point every this many steps too */
} MultiTaskOptions;

/* Task t's steps per epoch from its batches per epoch (batches[t] =
 * ceil(n_t / batch)) and training examples n[t]: T = 1, batches[t] itself;
 * else the sum of the batches shared in proportion to n_t^(1/T) (largest
 * remainders; every task at least 1). */
void multitask_quotas(const long *batches, const int *n, int count, double temperature, long *quota);

/* The settings of task t in a run of config: the run's, with the task's own
 * head (its default pair_encoding, unless the run sets one). Caller frees;
 * NULL after a message when the run's config asks for something a
 * multi-task run does not do (an intermediate task, pair_swap,
 * group_by_length, bf16 training). */
cJSON *multitask_task_config(const cJSON *config, const Task *t);

/* "a,b,c" (or "a+b+c", which a --set value can hold) into tasks: known
 * tasks with training data, single-label, each once, two or more. The
 * count, or -1 after one message (quiet: without it). */
int multitask_parse_tasks(const char *list, const Task **tasks, int quiet);
/* A run's settings before --config and --set: BERT's defaults of no task
 * in particular, pair_encoding "task" (each task's own head), temperature
 * 1, and "tasks" the names. Caller frees. */
cJSON *multitask_default_config(const Task *const *tasks, int n);

/* Trains and writes the run directory. 0 and *results (results.json's
 * content, caller frees; may be NULL), or the exit code after one message
 * (1 the work failed, 2 a bad setting). */
int multitask_run(const MultiTaskOptions *o, cJSON **results);

#endif
