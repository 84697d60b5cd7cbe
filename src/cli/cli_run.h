/* cli_run.h — what the model commands (finetune, eval, predict, compare) share:
 * resolving task and model names with "did you mean", loading a trained run,
 * and recording the command line. */
#ifndef GLUE_CLI_RUN_H
#define GLUE_CLI_RUN_H

#include "core/args.h"
#include "models/model.h"

/* glue finetune --seeds S1,S2,... --out DIR: a run per seed in DIR/seed-<s>/,
 * their mean and spread in DIR/seeds.json. */
#define CLI_SEED_RUN_PREFIX "seed-"
#define CLI_SEEDS_FILE "seeds.json"

/* The task named, or NULL after "unknown task 'x' (did you mean 'y'?)" — the
 * caller exits with EXIT_USAGE. */
const Task *cli_find_task(const char *name);
/* The task a model command works on, with a user's own dataset recorded by
 * `glue finetune --train FILE ...` (tasks/user_data.h): the task of --run DIR
 * when it records one (cli_run_dataset; name, if given, must be it), else the
 * task named — a GLUE task, or else the dataset recorded in
 * runs/<name>/<model>/ (model NULL, or no such run: any model's run of name).
 * NULL after a message. Release with cli_task_free. */
const Task *cli_resolve_task(const char *name, const char *model, const char *run);
void cli_task_free(const Task *t);
/* Records a user's dataset in run directory dir (dataset.json; nothing for a
 * registry task), so eval and predict find it. 0, or -1 after a message. */
int cli_record_dataset(const Task *t, const char *dir);
/* The task run directory run was trained on into *out: the user's dataset
 * it recorded (dataset.json), else the registry task its results.json (or
 * checkpoint) names; NULL when it says none. 0, or -1 after a message
 * (an unreadable dataset.json). */
int cli_run_dataset(const char *run, const Task **out);
/* "run was trained on the task t, not 'name'" (a usage error): a task named
 * beside --run that is not the run's. */
void cli_run_not_task(const char *run, const Task *t, const char *name);
/* The model kind named, or NULL after a message with a suggestion. */
const ModelOps *cli_find_model(const char *name);
/* The model kind of the trained model a command scores: the one the
 * checkpoint of --run DIR or --init DIR|CKPT says wrote it, so a run predicts
 * by itself; where there is none (no run given, or --init names a model
 * trained elsewhere), --model (NULL: not given), else def (NULL: none, and
 * NULL is returned without a message for the caller to choose). A --model
 * contradicting the run is refused. NULL after a message. */
const ModelOps *cli_choose_model(const char *model, const char *run, const char *init, const char *def);
/* The command that trains ops on t into dir (for hints): `glue finetune TASK
 * --model M`, or for a user's dataset its --train/--dev form. */
void cli_finetune_hint(const Task *t, const ModelOps *ops, const char *dir, char *out, size_t cap);
/* The task whose run scores t: MNLI for AX (it has no training data), else t. */
const Task *cli_run_task(const Task *t);
/* compare's own run directory of model on task for a seed (tag: "" for the
 * default settings, else "-<crc of the config>"): <runs>/compare/<task>/<model><tag>-seed<S>. */
void cli_compare_dir(const char *task, const char *model, const char *tag, long seed, char *out, size_t cap);
/* A finished run of model and seed in <runs>/compare/<task>/ under any tag
 * whose settings are config's (trainer_finished_run): a tag is the CRC of the
 * config as a build writes it, so a later build that adds a setting at its
 * default names the same run another way. Its results (dir set), or NULL. */
cJSON *cli_compare_find(const char *task, const char *model, long seed, const cJSON *config, char *dir, size_t cap);
/* The finished run of ops on t with its default settings and this seed that
 * `glue compare` trains or reuses: runs/<task>/<model> when it is one, else
 * compare's own (cli_compare_dir), into dir. 0, or -1 after a message saying
 * how to train it. */
int cli_compare_finished(const Task *t, const ModelOps *ops, long seed, char *dir, size_t cap);
/* Inference weights a command asks for (prec, a bit set; 0: as stored). */
enum { CLI_BF16 = 1, CLI_INT8 = 2 };
/* The trained model in dir (dir/model.ckpt), switched to bf16 or int8 inference
 * weights as prec asks. NULL after a message that says how to train it when the run
 * is missing, or what is wrong with the checkpoint, or that the model has no such path. */
Model *cli_load_run(const ModelOps *ops, const Task *t, const char *dir, int prec);
/* Which trained model a command scores: the run directory --run DIR, or
 * --init X (a run directory, a model checkpoint file, or a model trained
 * elsewhere that the model kind can read: ModelOps.load_external), or by
 * default runs/<task>/<model>. dir (cap bytes) gets the run directory, or ""
 * when the model is not a glue run (nothing can be written beside it).
 * NULL after a message. */
Model *cli_load_model(const ModelOps *ops, const Task *t, const char *run, const char *init, int prec, char *dir,
                      size_t cap);
/* "glue finetune sst2 --model fasttext" from argv (argv[0] = command), with
 * arguments quoted when the shell would need it. Caller frees. */
char *cli_command_line(int argc, char **argv);
/* An input text given to a model (an argument, a line of stdin): it must be
 * UTF-8 without NUL bytes, as the task files must, never silently cleaned.
 * origin names it in the message ("argument 2", "stdin:7"). 0, or -1 after a
 * data error that names the first bad byte. */
int cli_check_text(const char *s, size_t len, const char *origin);
/* A metric of a results object as a table shows it: "%.2f", or "nan" when it
 * is not a number (NaN in memory, null once written as JSON). */
void cli_metric_text(const cJSON *v, char *out, size_t cap);
/* "  dev accuracy 91.20 f1 88.00" for each split object of splits
 * ({"dev": {...}, "epoch": 3, ...}) on stdout, each followed by after. */
void cli_print_splits(const cJSON *splits, const char *after);
/* The first metric of splits ({"dev": {"accuracy": 91.2, ...}, ...}) that is
 * not a number, as "dev pearson" into what: 1, or 0 when every one is. */
int cli_nan_metric(const cJSON *splits, char *what, size_t cap);
/* The settings of a training command line: every --set key=value (at most
 * CLI_MAX_SETS), then the shorthands given, --epochs N as "epochs=N" and so
 * --lr, --batch, --max-len and --init (BERT: a pretrained encoder to start
 * from), each with the option it came from (run_config_conflicts names it). */
enum { CLI_MAX_SETS = 64, CLI_SHORTHANDS = 5 };
typedef struct CliSets {
    const char *sets[CLI_MAX_SETS + CLI_SHORTHANDS], *origin[CLI_MAX_SETS + CLI_SHORTHANDS];
    int n;
    char shorthand[CLI_SHORTHANDS][4096];   /* their "key=value" (--init: a path) */
} CliSets;
/* 0, or EXIT_USAGE after a message (too many --set). */
int cli_train_sets(Args *a, CliSets *s);
/* "a,b,c" into at most max pieces of buf (modified): the count, or -1 when too many. */
int cli_split_list(char *buf, const char **out, int max);
/* 0 when the n names differ, else EXIT_USAGE after a message naming the first
 * repeated one and the option (a task or model twice would be trained or
 * counted twice in a table's mean). */
int cli_names_unique(const char *const *names, int n, const char *option);
/* --seeds "1,2,3" into out (at most max): the count, or -1 after a message. */
int cli_parse_seeds(const char *list, long *out, int max);

#endif
