/* cmd_finetune_multi.c — `glue finetune multi --tasks A,B,... [options]`:
 * multi-task fine-tuning of one BERT encoder (train/multitask.h) into
 * runs/multi/bert/ (or --out DIR); then `glue finetune TASK --init DIR`
 * fine-tunes each task from its encoder. Settings: BERT's defaults of no
 * task in particular (pair_encoding "task": each task's own head), plus
 * "temperature", then --config, the options and --set. */
#include "cli/cli_run.h"
#include "cli/commands.h"
#include "core/args.h"
#include "core/common.h"
#include "core/files.h"
#include "core/threads.h"
#include "models/run_config.h"
#include "train/multitask.h"
#include "train/run_dir.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MULTI_USAGE                                                                                        \
    "glue finetune multi --tasks TASK1,TASK2[,...] [--epochs N] [--lr X] [--batch N] [--max-len N]\n"  \
    "       [--init CKPT|DIR] [--seed S] [--threads N] [--out DIR] [--config FILE.json]\n"              \
    "       [--set key=value ...] (temperature=T: 1 proportional to size) [--checkpoint-every STEPS]\n" \
    "       [--resume] [--overwrite] [--strict] [--json]"
#define MULTI_DEFAULT_SEED 42

/* The run's settings (multitask_default_config, then --config and the
 * sets), each task's checked against BERT's table. NULL after a message. */
static cJSON *multi_config(const MultiTaskOptions *o, const char *file, const char **sets, const char **origin,
                           int nsets) {
    const ModelOps *bert = model_find("bert");
    cJSON *config = run_config_build(multitask_default_config(o->tasks, o->n), file, sets, origin, nsets);
    for (int i = 0; i < o->n && config; i++) {
        cJSON *c = multitask_task_config(config, o->tasks[i]);
        if (!c || settings_table_check(c, bert->settings, bert->num_settings, bert->name,
                                       "glue finetune --help-settings lists the settings") != 0) {
            cJSON_Delete(config);
            config = NULL;
        }
        cJSON_Delete(c);
    }
    return config;
}

static void multi_print(const cJSON *res, const char *dir, int json) {
    if (json) {
        json_print_line(res);
        return;
    }
    const cJSON *best = cJSON_GetObjectItemCaseSensitive(res, "best");
    printf("multi-task bert: best epoch %d of %d, mean score %.2f\n", (int)run_config_number(best, "epoch", 0),
           cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(res, "epochs")), run_config_number(best, "score", 0));
    for (const cJSON *t = cJSON_GetObjectItemCaseSensitive(best, "tasks")->child; t; t = t->next) {
        printf("  %-10s", t->string);
        cli_print_splits(t, "");
        printf("\n");
    }
    printf("  %.1f s training -> %s (per task: glue finetune TASK --init %s)\n",
           run_config_number(res, "train_seconds", 0), dir, dir);
}

int cmd_finetune_multi(int argc, char **argv) {
    Args a;
    args_init(&a, argc, argv);
    MultiTaskOptions o = {.show_progress = 1};
    const char *list = args_str(&a, "--tasks", NULL), *out = args_str(&a, "--out", NULL);
    const char *file = args_str(&a, "--config", NULL);
    long seed = args_int(&a, "--seed", MULTI_DEFAULT_SEED), threads = args_threads(&a, 0);
    o.checkpoint_every = args_int(&a, "--checkpoint-every", 0);
    o.resume = args_flag(&a, "--resume");
    o.overwrite = args_flag(&a, "--overwrite");
    o.strict = args_flag(&a, "--strict");
    int json = args_flag(&a, "--json");
    CliSets set;
    if (cli_train_sets(&a, &set)) return EXIT_USAGE;
    const char *pos[2];
    int npos = args_positional(&a, pos, 2);
    int rc = args_finish(&a, MULTI_USAGE);
    if (rc) return rc;
    if (npos != 1 || strcmp(pos[0], MULTITASK_NAME) != 0) {
        user_error(NULL, "finetune multi: unexpected argument %s", npos > 1 ? pos[1] : "");
        return args_usage(MULTI_USAGE);
    }
    if (seed < 0 || o.checkpoint_every < 0) {
        user_error(NULL, "--seed and --checkpoint-every must not be negative");
        return EXIT_USAGE;
    }
    if (run_config_conflicts(set.sets, set.origin, set.n) != 0) return EXIT_USAGE;
    if ((o.n = multitask_parse_tasks(list, o.tasks, 0)) < 0) return EXIT_USAGE;
    cJSON *config = multi_config(&o, file, set.sets, set.origin, set.n);
    if (!config) return EXIT_USAGE;
    char dir[4096];
    if (out) snprintf(dir, sizeof dir, "%s", out);
    else run_dir_path(MULTITASK_NAME, "bert", dir, sizeof dir);
    char *command = cli_command_line(argc, argv);
    o.config = config;
    o.seed = (uint64_t)seed;
    o.threads = threads_init((int)threads);
    o.out_dir = dir;
    o.data_root = task_data_root();
    o.command = command;
    cJSON *res = NULL;
    rc = multitask_run(&o, &res);
    if (rc == 0) multi_print(res, dir, json);
    cJSON_Delete(res);
    cJSON_Delete(config);
    free(command);
    return rc;
}
