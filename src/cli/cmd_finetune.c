/* cmd_finetune.c — `glue finetune TASK [--model M] [options]`: build the run's
 * config (model defaults < --config FILE < options and --set), then hand it to
 * the trainer, which writes runs/<task>/<model>/ (or --out DIR). */
#include "cli/cli_run.h"
#include "cli/commands.h"
#include "core/args.h"
#include "core/common.h"
#include "core/threads.h"
#include "models/run_config.h"
#include "models/run_dir.h"
#include "models/trainer.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>

#define FINETUNE_USAGE                                                                                \
    "glue finetune TASK [--model bert|fasttext|textcnn|bilstm] [--epochs N] [--lr X] [--batch N]\n" \
    "       [--max-len N] [--init CKPT] [--seed S] [--threads N] [--out DIR] [--config FILE.json]\n" \
    "       [--set key=value ...] [--resume] [--json]"
#define FINETUNE_MAX_SETS 64
#define FINETUNE_DEFAULT_SEED 42

typedef struct FinetuneArgs {
    const char *task, *model, *out, *config_file;
    long seed, threads;
    int json, resume;
    int nsets;
    const char *sets[FINETUNE_MAX_SETS + 5];     /* "key=value" */
    const char *origin[FINETUNE_MAX_SETS + 5];   /* where each came from */
    char shortcut[5][4096];                      /* storage for --epochs etc. (--init: a path) */
} FinetuneArgs;

static int finetune_parse(int argc, char **argv, FinetuneArgs *f) {
    Args a;
    args_init(&a, argc, argv);
    f->model = args_str(&a, "--model", "bert");
    f->out = args_str(&a, "--out", NULL);
    f->config_file = args_str(&a, "--config", NULL);
    f->seed = args_int(&a, "--seed", FINETUNE_DEFAULT_SEED);
    f->threads = args_int(&a, "--threads", 0);
    f->json = args_flag(&a, "--json");
    f->resume = args_flag(&a, "--resume");
    int n = args_strs(&a, "--set", f->sets, FINETUNE_MAX_SETS);
    if (n > FINETUNE_MAX_SETS) {
        user_error(NULL, "at most %d --set options", FINETUNE_MAX_SETS);
        return EXIT_USAGE;
    }
    for (int i = 0; i < n; i++) f->origin[i] = "--set";
    f->nsets = n;
    /* --epochs/--lr/--batch/--max-len/--init are shorthands for --set, applied
     * after the --set options so the named option wins when both are given.
     * --init CKPT (BERT): start from a pretrained encoder checkpoint. */
    static const char *const OPT[5] = {"--epochs", "--lr", "--batch", "--max-len", "--init"};
    static const char *const KEY[5] = {"epochs", "lr", "batch", "max_len", "init"};
    for (int k = 0; k < 5; k++) {
        const char *v = args_str(&a, OPT[k], NULL);
        if (!v) continue;
        snprintf(f->shortcut[k], sizeof f->shortcut[k], "%s=%s", KEY[k], v);
        f->origin[f->nsets] = OPT[k];
        f->sets[f->nsets++] = f->shortcut[k];
    }
    const char *pos[2];
    int npos = args_positional(&a, pos, 2);
    int rc = args_finish(&a, FINETUNE_USAGE);
    if (rc) return rc;
    if (npos != 1) {
        user_error(NULL, "finetune: expected one TASK, got %d arguments", npos);
        fprintf(stderr, "usage: %s\n", FINETUNE_USAGE);
        return EXIT_USAGE;
    }
    f->task = pos[0];
    if (f->seed < 0 || f->threads < 0) {
        user_error(NULL, "--seed and --threads must not be negative");
        return EXIT_USAGE;
    }
    return 0;
}

static void finetune_print(const cJSON *res, const char *dir, int json) {
    if (json) {
        char *s = cJSON_PrintUnformatted(res);
        printf("%s\n", s);
        free(s);
        return;
    }
    const cJSON *best = cJSON_GetObjectItemCaseSensitive(res, "best");
    printf("%s %s: best epoch %d of %d", cJSON_GetObjectItemCaseSensitive(res, "task")->valuestring,
           cJSON_GetObjectItemCaseSensitive(res, "model")->valuestring,
           cJSON_GetObjectItemCaseSensitive(best, "epoch")->valueint,
           cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(res, "epochs")));
    for (const cJSON *s = best->child; s; s = s->next) {
        if (!cJSON_IsObject(s)) continue;
        printf("  %s", s->string);
        for (const cJSON *m = s->child; m; m = m->next) printf(" %s %.2f", m->string, m->valuedouble);
    }
    printf("\n  %.1f s training, %.0f examples/s at evaluation, %.0f parameters -> %s\n",
           cJSON_GetObjectItemCaseSensitive(res, "train_seconds")->valuedouble,
           cJSON_GetObjectItemCaseSensitive(res, "eval_examples_per_sec")->valuedouble,
           cJSON_GetObjectItemCaseSensitive(res, "num_params")->valuedouble, dir);
}

int cmd_finetune(int argc, char **argv) {
    FinetuneArgs f = {0};
    int rc = finetune_parse(argc, argv, &f);
    if (rc) return rc;
    const Task *t = cli_find_task(f.task);
    if (!t) return EXIT_USAGE;
    if (t->scored_with) {
        user_error(NULL, "%s has no training data: it is scored with the %s model (glue eval %s --split test)",
                   t->display, t->scored_with, t->name);
        return EXIT_USAGE;
    }
    const ModelOps *ops = cli_find_model(f.model);
    if (!ops) return EXIT_USAGE;
    cJSON *config = run_config_build(ops, t, f.config_file, f.sets, f.origin, f.nsets);
    if (!config) return EXIT_USAGE;
    /* The process's thread count (0: the cores available); models size their workers from it. */
    int threads = threads_init((int)f.threads);
    char dir[4096];
    if (f.out) snprintf(dir, sizeof dir, "%s", f.out);
    else run_dir_path(t->name, ops->name, dir, sizeof dir);
    char *command = cli_command_line(argc, argv);
    TrainerOptions o = {
        .task = t, .ops = ops, .config = config, .seed = (uint64_t)f.seed, .threads = threads,
        .out_dir = dir, .data_root = task_data_root(), .command = command, .resume = f.resume,
        .show_progress = 1,
    };
    cJSON *res = NULL;
    rc = trainer_run(&o, &res);
    if (rc == 0) finetune_print(res, dir, f.json);
    cJSON_Delete(res);
    cJSON_Delete(config);
    free(command);
    return rc;
}
