/* cmd_finetune.c — `glue finetune TASK [--model M] [options]`: build the run's
 * config (model defaults < --config FILE < options and --set), then hand it to
 * the trainer, which writes runs/<task>/<model>/ (or --out DIR).
 * --seeds 1,2,3 trains once per seed into DIR/seed-<s>/ and writes
 * DIR/seeds.json: each seed's best metrics and their mean, sample standard
 * deviation, min and max (how robust fine-tuning is on a small task).
 * Instead of TASK, --train FILE --dev FILE [--test FILE] fine-tunes on a user's
 * own dataset (tasks/user_data.h); its description goes into the run
 * directory as dataset.json, which eval and predict read back.
 * Under `mpirun -np N` (BERT, trainer.h) every rank runs the command; rank 0
 * alone writes and prints. --search is refused there (its trials and files
 * are not made rank-aware). */
#include "cli/cli_run.h"
#include "cli/commands.h"
#include "core/args.h"
#include "core/common.h"
#include "core/dist.h"
#include "core/files.h"
#include "core/stats.h"
#include "core/threads.h"
#include "models/run_config.h"
#include "train/decision.h"
#include "train/head.h"
#include "train/run_dir.h"
#include "experiments/intermediate.h"
#include "experiments/search.h"
#include "train/multitask.h"
#include "train/trainer.h"
#include "tasks/user_data.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FINETUNE_USAGE                                                                                \
    "glue finetune TASK [--model NAME] [--epochs N] [--lr X] [--batch N]\n" \
    "       [--max-len N] [--init CKPT] [--seed S] [--threads N] [--out DIR] [--config FILE.json]\n" \
    "       [--set key=value ...] [--seeds S1,S2,...] [--checkpoint-every STEPS] [--resume] [--overwrite]\n" \
    "       [--strict] [--json] [--search [--lrs 3e-4,1e-4,5e-5,3e-5] [--batches 8,16,32,64,128] [--holdout 0.1]]\n" \
    "   or: glue finetune --train FILE --dev FILE [--test FILE] [--format tsv|csv|jsonl|fasttext]\n" \
    "       [--columns TEXT[,TEXT_B],LABEL] [--no-header] [--regression | --multi-label [--label-sep S]]\n" \
    "       [--name NAME] [options above]"
#define FINETUNE_DEFAULT_SEED 42
#define FINETUNE_MAX_SEEDS 32

typedef struct FinetuneArgs {
    const char *task, *model, *out, *config_file;
    long seed, threads;
    long seeds[FINETUNE_MAX_SEEDS];   /* --seeds */
    int nseeds;
    int json, resume, overwrite, strict;
    int search;                                  /* --search: SearchOptions below */
    SearchOptions so;
    long checkpoint_every;   /* steps between resume points (0: epoch ends only) */
    CliSets set;                                 /* --set and --epochs etc. */
    UserDataOptions own;                         /* --train FILE ...: a user's own dataset */
} FinetuneArgs;

/* "a,b,c" of positive numbers (whole when `whole`) into v (at most
 * SEARCH_MAX_VALUES); -1 after a message. */
static int finetune_parse_numbers(const char *list, const char *opt, double *v, int *n, int whole) {
    *n = 0;
    for (const char *p = list; *p;) {
        char *end;
        double x = strtod(p, &end);
        if (end == p || !(x > 0) || (whole && x != floor(x)) || (*end && *end != ',') || *n == SEARCH_MAX_VALUES) {
            user_error("e.g. --lrs 3e-4,1e-4 --batches 16,32", "%s %s: expected up to %d comma-separated positive %s",
                       opt, list, SEARCH_MAX_VALUES, whole ? "whole numbers" : "numbers");
            return -1;
        }
        v[(*n)++] = x;
        p = *end ? end + 1 : end;
    }
    return 0;
}

/* --search sets lr and batch from its grid: an lr or batch of the command
 * line (--lr, --batch, --set) would be silently overridden. 0, or EXIT_USAGE
 * after a message. (A TASK.key setting is another stage's.) */
static int finetune_search_conflict(const CliSets *s) {
    for (int i = 0; i < s->n; i++) {
        RunSetting rs;
        if (run_setting_split(s->sets[i], &rs) != 0 || rs.task[0] || (strcmp(rs.key, "lr") && strcmp(rs.key, "batch")))
            continue;
        const char *grid = strcmp(rs.key, "lr") == 0 ? "--lrs" : "--batches";
        user_error_usage("give the values to try to --lrs and --batches",
                         "%s %s and --search both set %s: the search trains each value of %s", s->origin[i],
                         strcmp(s->origin[i], "--set") == 0 ? s->sets[i] : rs.value, rs.key, grid);
        return EXIT_USAGE;
    }
    return 0;
}

static int finetune_parse(int argc, char **argv, FinetuneArgs *f) {
    Args a;
    args_init(&a, argc, argv);
    f->model = args_str(&a, "--model", "bert");
    f->out = args_str(&a, "--out", NULL);
    f->config_file = args_str(&a, "--config", NULL);
    const char *seed = args_str(&a, "--seed", NULL);
    const char *seeds = args_str(&a, "--seeds", NULL);
    if (seed && seeds) {
        user_error("give one of them", "--seed %s and --seeds %s: --seeds names every seed to run", seed, seeds);
        return EXIT_USAGE;
    }
    f->seed = args_int(&a, "--seed", FINETUNE_DEFAULT_SEED);
    if (seeds && (f->nseeds = cli_parse_seeds(seeds, f->seeds, FINETUNE_MAX_SEEDS)) < 0) return EXIT_USAGE;
    f->threads = args_threads(&a, 0);
    f->json = args_flag(&a, "--json");
    f->resume = args_flag(&a, "--resume");
    f->overwrite = args_flag(&a, "--overwrite");
    f->checkpoint_every = args_int(&a, "--checkpoint-every", 0);
    f->search = args_flag(&a, "--search");
    search_default_grid(&f->so);
    const char *lrs = args_str(&a, "--lrs", NULL), *batches = args_str(&a, "--batches", NULL);
    const char *holdout = args_str(&a, "--holdout", NULL);
    if ((lrs || batches || holdout) && !f->search) {
        user_error("add --search", "--lrs, --batches and --holdout set the grid of --search");
        return EXIT_USAGE;
    }
    /* --resume is what a search always does (finished trials reused, a stopped
     * one continued), so the trainer's "continue with --resume" holds for it. */
    if (f->search && seeds) {
        user_error("search with one --seed; then run --seeds with the winner's settings",
                   "--search does not combine with --seeds");
        return EXIT_USAGE;
    }
    if (lrs && finetune_parse_numbers(lrs, "--lrs", f->so.lrs, &f->so.n_lrs, 0)) return EXIT_USAGE;
    if (batches) {
        double b[SEARCH_MAX_VALUES];
        if (finetune_parse_numbers(batches, "--batches", b, &f->so.n_batches, 1)) return EXIT_USAGE;
        for (int i = 0; i < f->so.n_batches; i++) f->so.batches[i] = (int)b[i];
    }
    if (holdout) {
        char *end;
        f->so.holdout = strtod(holdout, &end);
        if (*end || !(f->so.holdout > 0 && f->so.holdout < 0.5)) {
            user_error("e.g. --holdout 0.1", "--holdout %s: a fraction of the training split in (0, 0.5)", holdout);
            return EXIT_USAGE;
        }
    }
    f->strict = args_flag(&a, "--strict");
    /* A shorthand given with a --set of its key is refused (a key --set twice: the later wins). */
    if (cli_train_sets(&a, &f->set) || run_config_conflicts(f->set.sets, f->set.origin, f->set.n) != 0 ||
        (f->search && finetune_search_conflict(&f->set)))
        return EXIT_USAGE;
    UserDataOptions *own = &f->own;
    own->train = args_str(&a, "--train", NULL);
    own->dev = args_str(&a, "--dev", NULL);
    own->test = args_str(&a, "--test", NULL);
    own->format = args_str(&a, "--format", NULL);
    own->columns = args_str(&a, "--columns", NULL);
    own->name = args_str(&a, "--name", NULL);
    own->no_header = args_flag(&a, "--no-header");
    own->regression = args_flag(&a, "--regression");
    own->multi_label = args_flag(&a, "--multi-label");
    own->label_sep = args_str(&a, "--label-sep", NULL);
    int is_own = own->train || own->dev || own->test || own->format || own->columns || own->name ||
                 own->no_header || own->regression || own->multi_label || own->label_sep;
    const char *pos[2];
    int npos = args_positional(&a, pos, 2);
    int rc = args_finish(&a, FINETUNE_USAGE);
    if (rc) return rc;
    if (npos != !is_own) {
        if (is_own) user_error("drop TASK: --train FILE names the data", "finetune: a TASK and --train/--dev both given");
        else user_error(NULL, "finetune: expected one TASK, got %d arguments", npos);
        return args_usage(FINETUNE_USAGE);
    }
    f->task = is_own ? NULL : pos[0];
    if (f->seed < 0 || f->checkpoint_every < 0) {
        user_error(NULL, "--seed and --checkpoint-every must not be negative");
        return EXIT_USAGE;
    }
    return 0;
}

static void finetune_print(const cJSON *res, const char *dir, int json) {
    if (json) {
        json_print_line(res);
        return;
    }
    const cJSON *best = cJSON_GetObjectItemCaseSensitive(res, "best");
    printf("%s %s: best epoch %d of %d", cJSON_GetObjectItemCaseSensitive(res, "task")->valuestring,
           cJSON_GetObjectItemCaseSensitive(res, "model")->valuestring,
           cJSON_GetObjectItemCaseSensitive(best, "epoch")->valueint,
           cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(res, "epochs")));
    cli_print_splits(best, "");
    printf("\n  %.1f s training, %.0f examples/s at evaluation, %.0f parameters -> %s\n",
           cJSON_GetObjectItemCaseSensitive(res, "train_seconds")->valuedouble,
           cJSON_GetObjectItemCaseSensitive(res, "eval_examples_per_sec")->valuedouble,
           cJSON_GetObjectItemCaseSensitive(res, "num_params")->valuedouble, dir);
}

/* DIR/seed-<s>: where the run of one seed of --seeds goes. */
static void finetune_seed_dir(const char *dir, long seed, char *out, size_t cap) {
    snprintf(out, cap, "%s/" CLI_SEED_RUN_PREFIX "%ld", dir, seed);
}

/* mean, sample std, min, max of v[0..n) as a JSON object. */
static cJSON *finetune_spread(const double *v, int n) {
    Summary s = summarize(v, n);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "mean", s.mean);
    cJSON_AddNumberToObject(o, "std", s.std);
    cJSON_AddNumberToObject(o, "min", s.min);
    cJSON_AddNumberToObject(o, "max", s.max);
    return o;
}

/* seeds.json from the runs' results: {"task", "model", "command", "runs":
 * [{"seed", "dir", "best": {split: {metric: v}}}], "summary": {split:
 * {metric: {mean, std, min, max}}}}; prints it (--json) or a summary. */
static int finetune_seeds_report(cJSON *const *res, const FinetuneArgs *f, const Task *t, const char *dir,
                                 const char *command) {
    cJSON *out = cJSON_CreateObject(), *runs = cJSON_AddArrayToObject(out, "runs");
    cJSON_AddStringToObject(out, "task", t->name);
    cJSON_AddStringToObject(out, "model", f->model);
    cJSON_AddStringToObject(out, "command", command);
    for (int i = 0; i < f->nseeds; i++) {
        cJSON *r = cJSON_CreateObject();
        char seed_dir[4200];
        finetune_seed_dir(dir, f->seeds[i], seed_dir, sizeof seed_dir);
        char where[4200];
        file_portable_path(seed_dir, where, sizeof where);   /* no home directory in results */
        cJSON_AddNumberToObject(r, "seed", (double)f->seeds[i]);
        cJSON_AddStringToObject(r, "dir", where);
        cJSON_AddItemToObject(r, "best", cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(res[i], "best"), 1));
        cJSON_AddItemToArray(runs, r);
    }
    cJSON *summary = cJSON_AddObjectToObject(out, "summary");
    if (!f->json) printf("%s %s over %d seeds (mean, sample std, min-max):\n", t->name, f->model, f->nseeds);
    const cJSON *best0 = cJSON_GetObjectItemCaseSensitive(res[0], "best");
    for (const cJSON *split = best0->child; split; split = split->next) {
        if (!cJSON_IsObject(split)) continue;
        cJSON *s = cJSON_AddObjectToObject(summary, split->string);
        for (const cJSON *m = split->child; m; m = m->next) {
            double v[FINETUNE_MAX_SEEDS] = {0};
            for (int i = 0; i < f->nseeds; i++) {   /* null (a NaN written as JSON) stays NaN */
                const cJSON *b = cJSON_GetObjectItemCaseSensitive(res[i], "best");
                const cJSON *x =
                    cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(b, split->string), m->string);
                v[i] = cJSON_IsNumber(x) ? x->valuedouble : NAN;
            }
            cJSON *spread = finetune_spread(v, f->nseeds);
            cJSON_AddItemToObject(s, m->string, spread);
            char text[4][32];
            static const char *const PART[4] = {"mean", "std", "min", "max"};
            for (int k = 0; k < 4; k++) cli_metric_text(cJSON_GetObjectItem(spread, PART[k]), text[k], sizeof text[k]);
            if (!f->json)
                printf("  %s %s %s +- %s (%s-%s)\n", split->string, m->string, text[0], text[1], text[2], text[3]);
        }
    }
    char path[4200];
    file_join(dir, CLI_SEEDS_FILE, path, sizeof path);
    int rc = json_file_write(path, out);
    if (rc == 0 && f->json) {
        json_print_line(out);
    } else if (rc == 0) {
        printf("  -> %s\n", path);
    }
    cJSON_Delete(out);
    return rc;
}

/* The kept epoch's metrics: one that is not a number means every epoch's was
 * not (the selection takes a number over NaN), so the run learnt nothing
 * that can be measured. 0, or EXIT_FAILED after a message (rank 0). */
static int finetune_check_numbers(const cJSON *res, int rank) {
    char what[256];
    if (!cli_nan_metric(cJSON_GetObjectItemCaseSensitive(res, "best"), what, sizeof what)) return 0;
    if (rank == 0)
        user_error("constant or non-finite outputs (a diverged model), or gold scores beyond a float's range, "
                   "leave the metric undefined", "%s %s: %s is not a number in any epoch",
                   run_config_string(res, "task", "?"), run_config_string(res, "model", "?"), what);
    return EXIT_FAILED;
}

static int finetune_run(const FinetuneArgs *fa, const Task *t, int argc, char **argv);

/* Every rank of a data-parallel run comes here (dist.h). */
static int finetune_ranked(int argc, char **argv) {
    for (int i = 1; i < argc; i++)   /* `glue finetune multi --tasks ...`: multi-task (cmd_finetune_multi.c) */
        if (strcmp(argv[i], MULTITASK_NAME) == 0 && (i == 1 || argv[i - 1][0] != '-'))
            return cmd_finetune_multi(argc, argv);
    FinetuneArgs f = {0};
    int rc = finetune_parse(argc, argv, &f);
    if (rc) return rc;
    const Task *t = f.task ? cli_find_task(f.task) : user_data_create(&f.own);
    if (!t) return EXIT_USAGE;
    rc = finetune_run(&f, t, argc, argv);
    user_data_free(t);
    return rc;
}

int cmd_finetune(int argc, char **argv) {
    int rc = dist_init(&argc, &argv);   /* MPI only when launched by mpirun */
    if (rc) return rc;
    return dist_finalize(finetune_ranked(argc, argv));
}

static int finetune_run(const FinetuneArgs *fa, const Task *t, int argc, char **argv) {
    FinetuneArgs f = *fa;
    int rc = 0;
    if (t->scored_with) {
        user_error(NULL, "%s has no training data: it is scored with the %s model (glue eval %s --split test)",
                   t->display, t->scored_with, t->name);
        return EXIT_USAGE;
    }
    const ModelOps *ops = cli_find_model(f.model);
    if (!ops) return EXIT_USAGE;
    if (trainer_check_parallel(ops)) return EXIT_USAGE;   /* before any file is written */
    int rank = dist_rank();
    if (f.search && dist_size() > 1) {
        if (rank == 0)
            user_error("run the search without mpirun, then the winner's settings with it",
                       "--search does not run data-parallel");
        return EXIT_USAGE;
    }
    cJSON *config = run_config_build(ops->default_config(t), f.config_file, f.set.sets, f.set.origin, f.set.n);
    if (!config) return EXIT_USAGE;
    /* Every setting within the range --help-settings prints, and the model's
     * rules, before anything is written (dataset.json, the run directory):
     * the model reads them again when it is made, after the data are loaded. */
    if (trainer_check_config(ops, t, config, NULL) != 0) {
        cJSON_Delete(config);
        return EXIT_USAGE;
    }
    /* The process's thread count (0: the cores available); models size their workers from it. */
    int threads = threads_init((int)f.threads);
    char dir[4096];
    if (f.out) snprintf(dir, sizeof dir, "%s", f.out);
    else run_dir_path(t->name, ops->name, dir, sizeof dir);
    char *command = cli_command_line(argc, argv);
    if (f.search) {
        if (!f.out) snprintf(dir + strlen(dir), sizeof dir - strlen(dir), "-search");
        f.so.base = (TrainerOptions){.task = t, .ops = ops, .config = config, .seed = (uint64_t)f.seed,
                                     .threads = threads, .out_dir = dir, .data_root = task_data_root(),
                                     .command = command, .show_progress = 1};
        cJSON *res = NULL;
        rc = search_run(&f.so, &res);
        if (rc == 0 && f.json) {
            json_print_line(res);
        } else if (rc == 0) {
            const cJSON *w = cJSON_GetObjectItemCaseSensitive(res, "winner");
            printf("%s %s search: winner lr %g batch %d (held-out %.2f of %d trials); on dev:\n", t->name, ops->name,
                   run_config_number(w, "lr", 0), (int)run_config_number(w, "batch", 0),
                   run_config_number(w, "heldout_score", 0), cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(res, "trials")));
            cli_print_splits(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(res, "final"), "best"),
                             "\n");
            printf("  -> %s/%s (evaluate: glue eval %s --run %s/final)\n", dir, SEARCH_FILE, t->name, dir);
        }
        cJSON_Delete(res);
        cJSON_Delete(config);
        free(command);
        return rc;
    }
    int nruns = f.nseeds ? f.nseeds : 1;
    cJSON *res[FINETUNE_MAX_SEEDS] = {0};
    for (int i = 0; i < nruns && rc == 0; i++) {
        char seed_dir[4200];
        if (f.nseeds) finetune_seed_dir(dir, f.seeds[i], seed_dir, sizeof seed_dir);
        TrainerOptions o = {
            .task = t, .ops = ops, .config = config, .seed = (uint64_t)(f.nseeds ? f.seeds[i] : f.seed),
            .threads = threads, .out_dir = f.nseeds ? seed_dir : dir, .data_root = task_data_root(),
            .command = command, .resume = f.resume, .strict = f.strict, .show_progress = 1,
            .checkpoint_every = f.checkpoint_every, .overwrite = f.overwrite,
        };
        /* --seeds --resume: a seed that finished with these settings is kept
         * (an interrupted one resumes), so a long seed sweep continues. */
        if (f.nseeds && f.resume && (res[i] = trainer_finished_run(seed_dir, config, f.seeds[i], 0)) != NULL) {
            if (rank == 0) fprintf(stderr, "seed %ld: finished in %s, kept\n", f.seeds[i], seed_dir);
            continue;
        }
        rc = intermediate_run(&o, NULL, &res[i]);   /* dataset.json: the trainer's, once nothing is refused */
        if (rc == 0 && rank == 0 && (!f.nseeds || !f.json)) finetune_print(res[i], o.out_dir, f.json);
    }
    for (int i = 0; i < nruns && rc == 0; i++) rc = finetune_check_numbers(res[i], rank);
    if (rc == 0 && f.nseeds && rank == 0) rc = cli_record_dataset(t, dir) ? 1 : 0;
    if (rc == 0 && f.nseeds && rank == 0) rc = finetune_seeds_report(res, &f, t, dir, command);
    for (int i = 0; i < nruns; i++) cJSON_Delete(res[i]);
    cJSON_Delete(config);
    free(command);
    return rc;
}
