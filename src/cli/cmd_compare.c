/* cmd_compare.c — `glue compare TASK|all [--models a,b,c] [--retrain] [--json]`:
 * every model on every task whose train and dev data are present, one table.
 * TASK may be a user's own dataset that some run recorded (runs/NAME/<model>/
 * dataset.json, from `glue finetune --train FILE ...`).
 *
 * A finished run in runs/<task>/<model>/ is reused when it was made with the
 * model's current default settings and the same seed (otherwise, or with
 * --retrain, the model is trained again through the trainer). --init and
 * --set [TASK.]key=value change a model's settings where it has the key (BERT's
 * init: another encoder); such runs live in runs/compare/<task>/<model>-<crc>-
 * seed<S>, <crc> naming the resulting config, and the row is marked with them. A "majority" row
 * is computed directly: the most frequent training class (STS-B: the mean
 * training score), which is what the GLUE baselines report for WNLI.
 *
 * A task whose test labels are public (GoEmotions, a user's dataset with a
 * labelled --test file) also gets each run scored on test under the run's own
 * rule (its thresholds chosen on dev), as `glue eval --split test --run DIR`
 * scores it, kept in the run directory (cli/run_score.h): the entry's "test"
 * (the seed mean) and "test_std".
 *
 * Summary (results/compare.json, and --json):
 *   {"seed": 42, "tasks": ["cola", ...], "tasks_missing": ["mnli", ...],
 *    "models": [{"model": "fasttext", "glue": {glue_score_json},
 *                "train_seconds": sum, "eval_examples_per_sec": mean, "num_params": max,
 *                "tasks": {"cola": {"dev": {"mcc": 21.3}, "train_seconds": 3.1,
 *                                   "eval_examples_per_sec": 9e4, "num_params": 1e6,
 *                                   "best_epoch": 4, "reused": true, "run": "runs/cola/fasttext"}},
 *                "made_by": {"command", "commit", "date", "cpu"}}],
 *    "wnli_majority": {"accuracy": 56.34}} */
#include "cli/cli_run.h"
#include "cli/commands.h"
#include "cli/run_score.h"
#include "core/args.h"
#include "core/common.h"
#include "core/crc32.h"
#include "core/files.h"
#include "core/provenance.h"
#include "core/stats.h"
#include "core/threads.h"
#include "eval/report.h"
#include "train/evaluate.h"
#include "models/ensemble/ensemble.h"
#include "models/run_config.h"
#include "train/run_dir.h"
#include "experiments/intermediate.h"
#include "train/trainer.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COMPARE_USAGE                                                                                        \
    "glue compare TASK|all [--with qnli-9k] [--models fasttext,textcnn,bilstm] [--retrain] [--seed S | --seeds S1,S2,..]\n" \
    "       [--init CKPT|DIR] [--set [TASK.]key=value]... [--threads N] [--json]"
#define COMPARE_DEFAULT_MODELS "fasttext,textcnn,bilstm"
#define COMPARE_DEFAULT_SEED 42
#define COMPARE_MAX_MODELS 16   /* every built-in model in one table */
#define COMPARE_MAX_SEEDS 10
#define COMPARE_MAX_SETS 16

typedef struct CompareArgs {
    const char *target, *models;
    const char *with;                 /* extra tasks after the target's (e.g. qnli-9k), or NULL */
    long seed, threads;               /* seed: the current one of seeds[] */
    long seeds[COMPARE_MAX_SEEDS];
    int num_seeds;
    int retrain, json;
    /* --init (as "init=X") and --set: applied to each model that has the key */
    const char *sets[COMPARE_MAX_SETS + 1], *origin[COMPARE_MAX_SETS + 1];
    int num_sets;
    char init_set[4200];
    const ModelOps *ops[COMPARE_MAX_MODELS];
    int num_models;
    char *command;
} CompareArgs;

/* 1 when a task's train and selection dev files are present. */
static int compare_has_data(const Task *t) {
    char path[4096];
    const TaskSplit *train = task_split(t, "train"), *dev = task_dev_split(t);
    return !t->scored_with && train && dev && task_split_path(t, train, task_data_root(), path, sizeof path) == 0 &&
           task_split_path(t, dev, task_data_root(), path, sizeof path) == 0;
}

/* A run through an intermediate task (experiments/intermediate.h) cost that
 * stage's training too: its own results.json, in the run's directory. */
static double compare_intermediate_seconds(const cJSON *results, const char *dir) {
    if (!cJSON_GetObjectItemCaseSensitive(results, INTERMEDIATE_KEY)) return 0;
    char stage[4200], path[4300];
    file_join(dir, INTERMEDIATE_DIR, stage, sizeof stage);
    file_join(stage, RUN_RESULTS, path, sizeof path);
    cJSON *r = json_file_read(path, 0);
    double s = run_config_number(r, "train_seconds", 0);
    cJSON_Delete(r);
    return s;
}

/* The per-task entry from a finished run's results.json. */
static cJSON *compare_entry(const cJSON *results, const char *dir, int reused) {
    cJSON *e = cJSON_CreateObject();
    const cJSON *best = cJSON_GetObjectItemCaseSensitive(results, "best");
    for (const cJSON *it = best ? best->child : NULL; it; it = it->next)
        if (cJSON_IsObject(it)) cJSON_AddItemToObject(e, it->string, cJSON_Duplicate(it, 1));
    cJSON_AddNumberToObject(e, "train_seconds", run_config_number(results, "train_seconds", 0) +
                                                    compare_intermediate_seconds(results, dir));
    cJSON_AddNumberToObject(e, "eval_examples_per_sec", run_config_number(results, "eval_examples_per_sec", 0));
    cJSON_AddNumberToObject(e, "num_params", run_config_number(results, "num_params", 0));
    cJSON_AddNumberToObject(e, "best_epoch", run_config_number(best, "epoch", 0));
    cJSON_AddBoolToObject(e, "reused", reused);
    char where[4200];
    file_portable_path(dir, where, sizeof where);
    cJSON_AddStringToObject(e, "run", where);
    return e;
}


/* 1 when model ops has the key of c->sets[i] ("[TASK.]key=value"); a
 * model's keys are the same on every task. */
static int compare_set_applies(const CompareArgs *c, int i, const ModelOps *ops) {
    RunSetting rs;
    if (run_setting_split(c->sets[i], &rs) != 0) return 0;
    cJSON *d = ops->default_config(&TASKS[0]);
    int has = cJSON_GetObjectItemCaseSensitive(d, rs.key) != NULL;
    cJSON_Delete(d);
    return has;
}

/* The settings model ops takes on task t ("key=value"), into out and their
 * origins; how many. */
static int compare_model_sets(const CompareArgs *c, const ModelOps *ops, const Task *t, const char **out,
                              const char **origin) {
    int k = 0;
    for (int i = 0; i < c->num_sets; i++)
        if (compare_set_applies(c, i, ops) && run_config_sets_for_task(&c->sets[i], 1, t->name, &out[k]) == 1)
            origin[k++] = c->origin[i];
    return k;
}

/* e with the run's test metrics when t's test labels are public, scored
 * under the run's rule once per run (cli/run_score.h). NULL (e freed) after a message. */
static cJSON *compare_test(const ModelOps *ops, const Task *t, const char *dir, cJSON *e) {
    if (!run_score_test_public(t)) return e;
    cJSON *test = run_score_test(ops, t, dir);
    if (test) cJSON_AddItemToObject(e, "test", cJSON_DetachItemFromObjectCaseSensitive(test, "test"));
    else cJSON_Delete(e), e = NULL;
    cJSON_Delete(test);
    return e;
}

/* An ensemble or boosting run (models/ensemble/ensemble.h) is built from
 * runs, never trained here: for seed S the one built into compare's
 * runs/compare/<task>/<ensemble|boost>-seed<S> (--out), else, when one seed
 * is compared, runs/<task>/<ensemble|boost>; over several seeds each needs
 * its own (one run read for every seed would be a spread of zero). NULL
 * after a message saying how to build it. */
static cJSON *compare_combined(const CompareArgs *c, const ModelOps *ops, const Task *t, char *dir, size_t cap) {
    char path[4400];
    cli_compare_dir(t->name, ops->name, "", c->seed, dir, cap);
    file_join(dir, RUN_RESULTS, path, sizeof path);
    if (!file_exists(path) && c->num_seeds == 1) {
        run_dir_path(t->name, ops->name, dir, cap);
        file_join(dir, RUN_RESULTS, path, sizeof path);
    }
    cJSON *res = file_exists(path) ? json_file_read(path, 0) : NULL;
    if (!res) {
        char how[4600];
        if (strcmp(ops->name, ENSEMBLE_MODEL) == 0)
            snprintf(how, sizeof how, "build it first: glue ensemble %s --models M1,M2 --seeds %ld --out %s", t->name,
                     c->seed, dir);
        else
            snprintf(how, sizeof how, "build it first: glue boost %s --model M --rounds R --seed %ld --out %s", t->name,
                     c->seed, dir);
        user_error_usage(how, "no %s run of %s for seed %ld in %s", ops->name, t->display, c->seed, dir);
    } else {
        fprintf(stderr, "== %s on %s: reusing %s\n", ops->name, t->display, dir);
    }
    return res;
}

/* The config of model ops on task t: its defaults and the --init/--set it
 * takes (*nsets: how many). NULL after a message. */
static cJSON *compare_config(const CompareArgs *c, const ModelOps *ops, const Task *t, int *nsets) {
    const char *sets[COMPARE_MAX_SETS + 1], *origin[COMPARE_MAX_SETS + 1];
    *nsets = compare_model_sets(c, ops, t, sets, origin);
    return run_config_build(ops->default_config(t), NULL, sets, origin, *nsets);
}

/* Every run's settings, before the first one trains: a bad value for the
 * last model fails now, not hours in. One message naming the model, the task
 * and the setting. 0, or EXIT_USAGE. */
static int compare_check_configs(const CompareArgs *c, const cJSON *summary) {
    const cJSON *tasks = cJSON_GetObjectItemCaseSensitive(summary, "tasks");
    /* A TASK.key=value names a task (a typo would change nothing). Checked
     * here, not with the command line: the user's dataset compared by name is
     * known only once the target is resolved ("no task 'NAME'" before). */
    for (int i = 0; i < c->num_sets; i++) {
        RunSetting rs;
        if (run_setting_split(c->sets[i], &rs) != 0 || !rs.task[0] || task_find(rs.task)) continue;
        user_error_usage("qualify a setting with a task's name, e.g. stsb.pair_encoding=cross",
                         "compare: %s %s: no task '%s'", c->origin[i], c->sets[i], rs.task);
        return EXIT_USAGE;
    }
    for (int mi = 0; mi < c->num_models; mi++)
        for (const cJSON *it = tasks->child; it; it = it->next) {
            const Task *t = task_find(it->valuestring);
            const ModelOps *ops = c->ops[mi];
            if (ensemble_is(ops) || (ops->cannot && ops->cannot(t))) continue;   /* nothing to train (compare_fill) */
            ErrorCapture e;
            int nsets;
            error_capture_begin(&e);
            cJSON *config = compare_config(c, ops, t, &nsets);
            error_capture_end();
            int rc = config ? trainer_check_config(ops, t, config, "compare") : EXIT_USAGE;
            if (!config) user_error_usage(NULL, "compare: %s on %s: %s", ops->name, t->display, e.message);
            cJSON_Delete(config);
            if (rc) return rc;
        }
    return 0;
}

/* One model on one task: reuse or train. NULL after a message on failure. */
static cJSON *compare_run(const CompareArgs *c, const ModelOps *ops, const Task *t) {
    if (ensemble_is(ops)) {
        char dir[4200];
        cJSON *res = compare_combined(c, ops, t, dir, sizeof dir);
        cJSON *e = res ? compare_entry(res, dir, 1) : NULL;
        cJSON_Delete(res);
        return e ? compare_test(ops, t, dir, e) : NULL;
    }
    int nsets;
    cJSON *config = compare_config(c, ops, t, &nsets);
    if (!config) return NULL;
    /* runs/<task>/<model> when it was trained with these settings and this
     * seed; otherwise compare's own run, runs/compare/<task>/<model>-seed<S>
     * (<model>-<crc of the config>-seed<S> with --init/--set): a user's run
     * with other settings is never trained over. */
    char tag[32] = "";
    if (nsets) {   /* the CRC of the whole config: the same settings in any order, one directory */
        char *text = cJSON_PrintUnformatted(config);
        snprintf(tag, sizeof tag, "-%08x", (unsigned)crc32_update(0, text, strlen(text)));
        free(text);
    }
    char dir[4200], own[4200];
    run_dir_path(t->name, ops->name, dir, sizeof dir);
    cli_compare_dir(t->name, ops->name, tag, c->seed, own, sizeof own);
    cJSON *res = c->retrain ? NULL : trainer_finished_run(dir, config, c->seed, 0);
    if (!res) {
        char prev[4200];
        file_join(dir, RUN_RESULTS, prev, sizeof prev);
        if (!c->retrain && file_exists(prev))
            fprintf(stderr, "%s was trained with other settings, seed or files: kept; compare uses %s\n", dir, own);
        snprintf(dir, sizeof dir, "%s", own);
        res = c->retrain ? NULL : trainer_finished_run(dir, config, c->seed, 0);
        if (!res && !c->retrain) {   /* the same settings under an earlier build's tag */
            char other[4200];
            res = cli_compare_find(t->name, ops->name, c->seed, config, other, sizeof other);
            if (res) snprintf(dir, sizeof dir, "%s", other);
        }
    }
    int reused = res != NULL;
    if (!res) {
        fprintf(stderr, "== %s on %s\n", ops->name, t->display);
        TrainerOptions o = {
            .task = t, .ops = ops, .config = config, .seed = (uint64_t)c->seed, .threads = threads_count(),
            .out_dir = dir, .data_root = task_data_root(), .command = c->command, .show_progress = 1,
            .overwrite = 1,   /* compare's own directory */
            .resume = !c->retrain && trainer_can_resume(dir, config, (uint64_t)c->seed, 0),   /* an interrupted compare continues */
        };
        if (intermediate_run(&o, NULL, &res) != 0) res = NULL;
    } else {
        fprintf(stderr, "== %s on %s: reusing %s\n", ops->name, t->display, dir);
    }
    cJSON *e = res ? compare_entry(res, dir, reused) : NULL;
    cJSON_Delete(res);
    cJSON_Delete(config);
    return e ? compare_test(ops, t, dir, e) : NULL;
}

/* The entry of a task over several seeds: each dev split's metrics averaged,
 * the task score of each seed (seed_scores) and their spread (score_std),
 * mean costs, every run. Takes the entries. */
static cJSON *compare_mean_entry(const Task *t, cJSON **e, int n) {
    if (n == 1) return e[0];
    cJSON *m = cJSON_CreateObject();
    for (const cJSON *split = e[0]->child; split; split = split->next) {
        if (!cJSON_IsObject(split)) continue;
        cJSON *avg = cJSON_AddObjectToObject(m, split->string);
        for (const cJSON *v = split->child; v; v = v->next) {
            double sum = 0;
            for (int k = 0; k < n; k++)
                sum += run_config_number(cJSON_GetObjectItemCaseSensitive(e[k], split->string), v->string, NAN);
            cJSON_AddNumberToObject(avg, v->string, sum / n);
        }
    }
    /* The spread over seeds of each test metric (the test columns show mean ± std). */
    const cJSON *test = cJSON_GetObjectItemCaseSensitive(e[0], "test");
    cJSON *test_std = test ? cJSON_AddObjectToObject(m, "test_std") : NULL;
    for (const cJSON *v = test ? test->child : NULL; v; v = v->next) {
        double x[COMPARE_MAX_SEEDS];
        for (int k = 0; k < n; k++)
            x[k] = run_config_number(cJSON_GetObjectItemCaseSensitive(e[k], "test"), v->string, NAN);
        cJSON_AddNumberToObject(test_std, v->string, summarize(x, n).std);
    }
    const TaskSplit *dev[TASK_MAX_SPLITS];
    task_dev_splits(t, dev, TASK_MAX_SPLITS);
    double scores[COMPARE_MAX_SEEDS];
    cJSON *ss = cJSON_AddArrayToObject(m, "seed_scores"), *runs = cJSON_AddArrayToObject(m, "runs");
    int reused = 1;
    static const char *const COSTS[] = {"train_seconds", "eval_examples_per_sec", "num_params", "best_epoch"};
    double cost[4] = {0};
    for (int k = 0; k < n; k++) {
        scores[k] = evaluate_score(t, cJSON_GetObjectItemCaseSensitive(e[k], dev[0]->name));
        cJSON_AddItemToArray(ss, cJSON_CreateNumber(scores[k]));
        cJSON_AddItemToArray(runs, cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(e[k], "run"), 1));
        reused &= cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e[k], "reused"));
        for (int c = 0; c < 4; c++) cost[c] += run_config_number(e[k], COSTS[c], 0) / n;
    }
    Summary sm = summarize(scores, n);
    cJSON_AddNumberToObject(m, "score_std", sm.std);
    for (int c = 0; c < 4; c++) cJSON_AddNumberToObject(m, COSTS[c], cost[c]);
    cJSON_AddBoolToObject(m, "reused", reused);
    cJSON_AddItemToObject(m, "run", cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(e[0], "run"), 1));
    for (int k = 0; k < n; k++) cJSON_Delete(e[k]);
    return m;
}

/* The majority-class entry of a task, straight from its train and dev splits. */
static cJSON *compare_majority(const Task *t) {
    Dataset train;
    if (task_load(t, "train", task_data_root(), 0, &train) != 0) return NULL;
    cJSON *e = cJSON_CreateObject();
    const TaskSplit *dev[TASK_MAX_SPLITS];
    int nd = task_dev_splits(t, dev, TASK_MAX_SPLITS), k = evaluate_num_outputs(t);
    for (int s = 0; s < nd; s++) {
        Dataset d;
        if (task_load(t, dev[s]->name, task_data_root(), 0, &d) != 0) {
            if (s > 0) continue;   /* MNLI mismatched: reported, the row keeps matched */
            cJSON_Delete(e);
            dataset_free(&train);
            return NULL;
        }
        float *out = xmalloc(sizeof(float) * (size_t)(d.n ? d.n : 1) * (size_t)k);  /* (n, K) */
        evaluate_majority_predict(t, &train, d.n, out);
        cJSON_AddItemToObject(e, dev[s]->name, evaluate_metrics(t, &d, out));
        free(out);
        dataset_free(&d);
    }
    dataset_free(&train);
    return e;   /* no costs: nothing is trained or run */
}

/* Model-level totals over its tasks (when they have costs), and its GLUE score. */
static void compare_totals(cJSON *model) {
    const cJSON *tasks = cJSON_GetObjectItemCaseSensitive(model, "tasks");
    double secs = 0, rate = 0, params = 0;
    int n = 0;
    for (const cJSON *t = tasks->child; t; t = t->next) {
        if (!cJSON_GetObjectItemCaseSensitive(t, "train_seconds")) continue;
        secs += run_config_number(t, "train_seconds", 0);
        rate += run_config_number(t, "eval_examples_per_sec", 0);
        double p = run_config_number(t, "num_params", 0);
        if (p > params) params = p;
        n++;
    }
    if (n) {
        cJSON_AddNumberToObject(model, "train_seconds", secs);
        cJSON_AddNumberToObject(model, "eval_examples_per_sec", rate / n);
        cJSON_AddNumberToObject(model, "num_params", params);
    }
    cJSON *glue = report_glue_score(tasks);
    double counted = run_config_number(glue, "num_tasks", 0);
    if (glue && counted > 0) cJSON_AddItemToObject(model, "glue", glue);
    else cJSON_Delete(glue);   /* a user's dataset: no GLUE score, "-" in the table */
    /* With a subset standing in for its task (qnli-9k for QNLI): that score too. */
    cJSON *more = cJSON_GetObjectItemCaseSensitive(tasks, "qnli-9k") ? report_glue_score_with_subsets(tasks) : NULL;
    if (more && run_config_number(more, "num_tasks", 0) > counted)
        cJSON_AddItemToObject(model, "glue_with_subsets", more);
    else cJSON_Delete(more);
}

static int compare_parse(int argc, char **argv, CompareArgs *c) {
    Args a;
    args_init(&a, argc, argv);
    c->models = args_str(&a, "--models", NULL);
    int defaults = c->models == NULL;
    if (defaults) c->models = COMPARE_DEFAULT_MODELS;
    int seed_given = args_flag(&a, "--seed");   /* a presence check: reading the value twice said a missing one twice */
    c->seed = args_int(&a, "--seed", COMPARE_DEFAULT_SEED);
    const char *seeds = args_str(&a, "--seeds", NULL);
    if (seed_given && seeds) {   /* --seed was dropped without a word */
        user_error_usage("give one of them", "--seed %ld and --seeds %s: --seeds names every seed to run", c->seed, seeds);
        return EXIT_USAGE;
    }
    c->with = args_str(&a, "--with", NULL);
    c->threads = args_threads(&a, 0);
    c->retrain = args_flag(&a, "--retrain");
    c->json = args_flag(&a, "--json");
    const char *init = args_str(&a, "--init", NULL);
    c->num_sets = args_strs(&a, "--set", c->sets, COMPARE_MAX_SETS);
    for (int i = 0; i < c->num_sets; i++) c->origin[i] = "--set";
    if (init) {
        snprintf(c->init_set, sizeof c->init_set, "init=%s", init);
        c->origin[c->num_sets] = "--init";
        c->sets[c->num_sets++] = c->init_set;
    }
    const char *pos[2];
    int npos = args_positional(&a, pos, 2);
    int rc = args_finish(&a, COMPARE_USAGE);
    if (rc) return rc;
    if (run_config_conflicts(c->sets, c->origin, c->num_sets) != 0) return EXIT_USAGE;
    if (npos != 1) {
        user_error(NULL, "compare: expected TASK or all, got %d arguments", npos);
        return args_usage(COMPARE_USAGE);
    }
    c->target = pos[0];
    if (c->seed < 0) {   /* it trained into <model>-seed-1 as seed 2^64-1 */
        user_error_usage("e.g. --seed 1", "--seed %ld: a seed is a whole number >= 0", c->seed);
        return EXIT_USAGE;
    }
    c->seeds[0] = c->seed;
    c->num_seeds = 1;
    if (seeds && (c->num_seeds = cli_parse_seeds(seeds, c->seeds, COMPARE_MAX_SEEDS)) < 1) return EXIT_USAGE;
    c->seed = c->seeds[0];
    char *list = xstrdup(c->models), *save = NULL;
    for (char *name = strtok_r(list, ",", &save); name && rc == 0; name = strtok_r(NULL, ",", &save)) {
        /* The default list skips a model this binary lacks; a named one must exist. */
        if (defaults && !model_find(name)) { user_warning("model %s is not built in; skipped", name); continue; }
        const ModelOps *ops = cli_find_model(name);
        if (!ops) rc = EXIT_USAGE;
        else if (c->num_models == COMPARE_MAX_MODELS) { user_error(NULL, "too many models"); rc = EXIT_USAGE; }
        else c->ops[c->num_models++] = ops;
    }
    const char *names[COMPARE_MAX_MODELS];
    for (int m = 0; m < c->num_models; m++) names[m] = c->ops[m]->name;
    if (rc == 0) rc = cli_names_unique(names, c->num_models, "--models");
    free(list);
    if (rc == 0 && c->num_models == 0) { user_error(NULL, "--models names no model"); rc = EXIT_USAGE; }
    /* Every --init/--set must reach some model and name a task that exists
     * (a typo would change nothing). */
    for (int i = 0; i < c->num_sets && rc == 0; i++) {
        const char *set = c->sets[i];
        RunSetting rs;
        int bad = run_setting_split(set, &rs) != 0, used = 0;
        for (int m = 0; m < c->num_models; m++) used |= !bad && compare_set_applies(c, i, c->ops[m]);
        if (bad) {
            user_error("write key=value, or TASK.key=value for one task", "compare: %s '%s'", c->origin[i], set);
            rc = EXIT_USAGE;
        } else if (!used) {
            user_error("see a model's settings in runs/<task>/<model>/config.json", "compare: %s %s: no model of "
                       "--models has that setting", c->origin[i], set);
            rc = EXIT_USAGE;
        }
    }
    return rc;
}

static int compare_pick_target(const CompareArgs *c, cJSON *summary);

/* Which tasks to run into summary["tasks"] / ["tasks_missing"]: the target's,
 * then --with's (each must have its data). 0 or exit code. */
static int compare_pick_tasks(const CompareArgs *c, cJSON *summary) {
    int rc = compare_pick_target(c, summary);
    if (rc || !c->with) return rc;
    cJSON *run = cJSON_GetObjectItemCaseSensitive(summary, "tasks");
    char *list = xstrdup(c->with), *save = NULL;
    for (char *name = strtok_r(list, ",", &save); name && rc == 0; name = strtok_r(NULL, ",", &save)) {
        const Task *t = task_find_or_report(name);
        if (!t) {
            rc = EXIT_USAGE;
        } else if (!compare_has_data(t)) {
            user_error_io("fetch it: glue data fetch subsets (or all)", "%s: train or dev data not found under %s",
                       t->display, task_data_root());
            rc = 1;
        } else {
            int dup = 0;
            for (const cJSON *it = run->child; it; it = it->next) dup |= strcmp(it->valuestring, t->name) == 0;
            if (!dup) cJSON_AddItemToArray(run, cJSON_CreateString(t->name));
        }
    }
    free(list);
    return rc;
}

/* The target's tasks (one, or every official task with data). */
static int compare_pick_target(const CompareArgs *c, cJSON *summary) {
    cJSON *run = cJSON_AddArrayToObject(summary, "tasks");
    cJSON *missing = cJSON_AddArrayToObject(summary, "tasks_missing");
    if (strcmp(c->target, "all") != 0) {
        const Task *t = cli_resolve_task(c->target, NULL, NULL);   /* registered: found by name below */
        if (!t) return EXIT_USAGE;
        if (!compare_has_data(t)) {
            user_error_io("fetch it: glue data fetch", "%s: train or dev data not found under %s", t->display,
                       task_data_root());
            return 1;
        }
        cJSON_AddItemToArray(run, cJSON_CreateString(t->name));
        return 0;
    }
    for (int i = 0; i < NUM_TASKS; i++) {
        if (TASKS[i].scored_with) continue;
        cJSON_AddItemToArray(compare_has_data(&TASKS[i]) ? run : missing, cJSON_CreateString(TASKS[i].name));
    }
    if (!cJSON_GetArraySize(run)) {
        user_error_io("fetch the data: glue data fetch all", "no task has train and dev data under %s",
                   task_data_root());
        return 1;
    }
    return 0;
}

/* The GLUE score of each seed (per_seed[k]: that seed's task entries) into
 * the model's "glue_seeds", with their spread "glue_std". */
static void compare_seed_glue(cJSON *model, cJSON **per_seed, int n) {
    double g[COMPARE_MAX_SEEDS];
    cJSON *arr = cJSON_AddArrayToObject(model, "glue_seeds");
    for (int k = 0; k < n; k++) {
        cJSON *gs = report_glue_score(per_seed[k]);
        g[k] = run_config_number(gs, "glue_score", NAN);
        cJSON_AddItemToArray(arr, cJSON_CreateNumber(g[k]));
        cJSON_Delete(gs);
    }
    cJSON_AddNumberToObject(model, "glue_std", summarize(g, n).std);
}

/* A computed row says what made it, as the table does ("command" and its
 * provenance): a later compare that keeps the row (compare_merge_previous)
 * writes a table whose own command did not make it, and compare.md names it. */
static void compare_made_by(cJSON *m, const CompareArgs *c, const cJSON *summary) {
    const cJSON *prov = cJSON_GetObjectItemCaseSensitive(summary, "provenance");
    cJSON *by = cJSON_AddObjectToObject(m, "made_by");
    cJSON_AddStringToObject(by, "command", c->command);
    static const char *const KEYS[] = {"commit", "date", "cpu"};
    for (size_t k = 0; k < sizeof KEYS / sizeof KEYS[0]; k++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(prov, KEYS[k]);
        if (cJSON_IsString(v)) cJSON_AddStringToObject(by, KEYS[k], v->valuestring);
    }
}

/* Fills summary["models"]: majority first, then each model on each task
 * (over every seed: the entries are means, see compare_mean_entry). */
static int compare_fill(CompareArgs *c, cJSON *summary) {
    const cJSON *tasks = cJSON_GetObjectItemCaseSensitive(summary, "tasks");
    cJSON *models = cJSON_AddArrayToObject(summary, "models");
    int rc = 0;
    for (int mi = -1; mi < c->num_models; mi++) {
        cJSON *m = cJSON_CreateObject();
        cJSON_AddStringToObject(m, "model", mi < 0 ? "majority" : c->ops[mi]->name);
        cJSON *mine = cJSON_CreateArray();   /* the --init/--set this model takes, as given */
        for (int i = 0; mi >= 0 && i < c->num_sets; i++)
            if (compare_set_applies(c, i, c->ops[mi]))
                cJSON_AddItemToArray(mine, cJSON_CreateString(c->sets[i]));
        if (cJSON_GetArraySize(mine)) cJSON_AddItemToObject(m, "settings", mine);
        else cJSON_Delete(mine);
        cJSON *per = cJSON_AddObjectToObject(m, "tasks");
        cJSON *per_seed[COMPARE_MAX_SEEDS];
        for (int k = 0; k < c->num_seeds; k++) per_seed[k] = cJSON_CreateObject();
        for (const cJSON *it = tasks->child; it; it = it->next) {
            const Task *t = task_find(it->valuestring);
            cJSON *e;
            if (mi < 0 && t->num_labels < 2) {   /* a score has no majority class: its constant has no correlation */
                continue;
            } else if (mi < 0) {
                e = compare_majority(t);
            } else if (c->ops[mi]->cannot && c->ops[mi]->cannot(t)) {   /* an empty cell, not a failure */
                fprintf(stderr, "== %s on %s: not run (%s)\n", c->ops[mi]->name, t->display, c->ops[mi]->cannot(t));
                continue;
            } else {
                cJSON *each[COMPARE_MAX_SEEDS] = {0};
                int got = 0;
                for (int k = 0; k < c->num_seeds; k++) {
                    c->seed = c->seeds[k];
                    each[got] = compare_run(c, c->ops[mi], t);
                    if (!each[got]) break;
                    cJSON_AddItemToObject(per_seed[k], t->name, cJSON_Duplicate(each[got], 1));
                    got++;
                }
                c->seed = c->seeds[0];
                if (got < c->num_seeds) {
                    for (int k = 0; k < got; k++) cJSON_Delete(each[k]);
                    e = NULL;
                } else {
                    e = compare_mean_entry(t, each, got);
                }
            }
            if (!e) { rc = 1; continue; }
            if (mi < 0 && strcmp(t->name, "wnli") == 0)
                cJSON_AddItemToObject(summary, "wnli_majority",
                                      cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(e, "dev"), 1));
            cJSON_AddItemToObject(per, t->name, e);
        }
        compare_totals(m);
        if (mi >= 0 && c->num_seeds > 1) compare_seed_glue(m, per_seed, c->num_seeds);
        if (mi >= 0) compare_made_by(m, c, summary);
        for (int k = 0; k < c->num_seeds; k++) cJSON_Delete(per_seed[k]);
        cJSON_AddItemToArray(models, m);
    }
    return rc;
}

/* The row of models (a model with its settings) named like m, or NULL. */
static cJSON *compare_find_row(cJSON *models, const cJSON *m) {
    const cJSON *set = cJSON_GetObjectItemCaseSensitive(m, "settings");
    for (cJSON *it = models->child; it; it = it->next) {
        const cJSON *its = cJSON_GetObjectItemCaseSensitive(it, "settings");
        if (strcmp(run_config_string(it, "model", ""), run_config_string(m, "model", "?")) == 0 &&
            (set && its ? cJSON_Compare(set, its, 1) : !set && !its))
            return it;
    }
    return NULL;
}

/* A cell kept inside a recomputed row was not made by this compare: the row's
 * "cells_kept" records, per task, what made it (the old row's "made_by", or
 * what the old row's own "cells_kept" said of it; {} when neither knows), so
 * that compare.md can name it as it names kept rows. */
static void compare_keep_cell_maker(cJSON *row, const cJSON *old_row, const char *task) {
    const cJSON *earlier = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(old_row, "cells_kept"), task);
    const cJSON *by = cJSON_IsObject(earlier) ? earlier : cJSON_GetObjectItemCaseSensitive(old_row, "made_by");
    cJSON *kept = cJSON_GetObjectItemCaseSensitive(row, "cells_kept");
    if (!kept) kept = cJSON_AddObjectToObject(row, "cells_kept");
    cJSON_AddItemToObject(kept, task, cJSON_IsObject(by) ? cJSON_Duplicate(by, 1) : cJSON_CreateObject());
}

/* Whether this compare ran `task` (one of its own columns, before the merge
 * adds the previous table's). */
static int compare_ran(const cJSON *ran, const char *task) {
    for (const cJSON *t = ran ? ran->child : NULL; t; t = t->next)
        if (cJSON_IsString(t) && strcmp(t->valuestring, task) == 0) return 1;
    return 0;
}

/* A table of several runs adds to the one before it: the rows (a model with
 * its settings) and cells (a task of a row) of results/compare.json this
 * compare did not compute are kept, a recomputed cell replaces its old one,
 * and a row that gained cells has its totals counted again. A recomputed
 * row's old cell of a task this compare ran but the row has no cell for
 * (the majority class of a score, a model that cannot learn the task) is
 * stale, not kept: it scored the majority row's STS-B as 0 for days. */
static void compare_merge_previous(cJSON *summary) {
    char path[4096];
    file_join(run_results_root(), "compare.json", path, sizeof path);
    cJSON *old = file_exists(path) ? json_file_read(path, 0) : NULL;
    cJSON *tasks = cJSON_GetObjectItemCaseSensitive(summary, "tasks");
    cJSON *models = cJSON_GetObjectItemCaseSensitive(summary, "models");
    const cJSON *otasks = cJSON_GetObjectItemCaseSensitive(old, "tasks");
    const cJSON *omodels = cJSON_GetObjectItemCaseSensitive(old, "models");
    if (!cJSON_IsArray(otasks) || !cJSON_IsArray(omodels) || !tasks || !models) {
        /* Replaced by this table: say so, it may hold rows nothing else has. */
        if (file_exists(path)) user_warning("%s is not a compare table (damaged?): replaced, none of its rows kept", path);
        cJSON_Delete(old);
        return;
    }
    cJSON *ran = cJSON_Duplicate(tasks, 1);
    for (const cJSON *ot = otasks->child; ot; ot = ot->next) {
        int have = !cJSON_IsString(ot);
        for (const cJSON *t = tasks->child; t && !have; t = t->next) have = strcmp(t->valuestring, ot->valuestring) == 0;
        /* A column the tables can show: a known task (one user's dataset is known at a time, this
         * compare's; another's cells stay in the rows, in compare.json). */
        if (!have && task_find(ot->valuestring))
            cJSON_AddItemToArray(tasks, cJSON_CreateString(ot->valuestring));
    }
    int rows = 0, cells = 0, bad = 0;
    for (const cJSON *om = omodels->child; om; om = om->next) {
        /* A row is {"model": NAME, "tasks": {...}}: another shape (a damaged
         * file) was kept as it was, and printing it crashed on its NULL name. */
        if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(om, "model")) ||
            !cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(om, "tasks"))) {
            bad++;
            continue;
        }
        cJSON *nm = compare_find_row(models, om);
        const cJSON *ocells = cJSON_GetObjectItemCaseSensitive(om, "tasks");
        if (!nm) { cJSON_AddItemToArray(models, cJSON_Duplicate(om, 1)), rows++; continue; }
        cJSON *per = cJSON_GetObjectItemCaseSensitive(nm, "tasks");
        int added = 0;
        for (const cJSON *c = ocells ? ocells->child : NULL; c && per; c = c->next)
            if (!cJSON_GetObjectItemCaseSensitive(per, c->string) && !compare_ran(ran, c->string)) {
                cJSON_AddItemToObject(per, c->string, cJSON_Duplicate(c, 1)), added++;
                compare_keep_cell_maker(nm, om, c->string);
            }
        if (!added) continue;
        static const char *const TOTALS[] = {"train_seconds", "eval_examples_per_sec", "num_params", "glue",
                                             "glue_with_subsets", "glue_seeds", "glue_std"};
        for (size_t k = 0; k < sizeof TOTALS / sizeof TOTALS[0]; k++) cJSON_DeleteItemFromObjectCaseSensitive(nm, TOTALS[k]);
        compare_totals(nm);
        cells += added;
    }
    cJSON_Delete(ran);
    if (bad) user_warning("%s: %d rows of the previous table are not rows of a compare table (damaged?): dropped", path, bad);
    if (rows || cells)
        fprintf(stderr, "%s: kept %d rows and %d cells of the previous table this compare did not compute\n", path,
                rows, cells);
    cJSON_Delete(old);
}

/* results/compare.json and results/compare.md. */
static int compare_write(const cJSON *summary) {
    const char *root = run_results_root();
    if (file_make_dir(root) != 0) return 1;
    char path[4096];
    file_join(root, "compare.json", path, sizeof path);
    if (json_file_write(path, summary) != 0) return 1;
    file_join(root, "compare.md", path, sizeof path);
    AtomicFile out;
    FILE *f = atomic_open(&out, path);
    if (!f) return 1;
    report_compare_markdown(summary, f);
    return atomic_commit(&out) ? 1 : 0;
}

int cmd_compare(int argc, char **argv) {
    CompareArgs c = {0};
    int rc = compare_parse(argc, argv, &c);
    if (rc) return rc;
    int threads = threads_init((int)c.threads);
    c.command = cli_command_line(argc, argv);
    cJSON *summary = cJSON_CreateObject();
    cJSON_AddItemToObject(summary, "provenance", provenance_json(threads, (long long)c.seed));
    cJSON_AddStringToObject(summary, "command", c.command);   /* what made the table, as protocol and quantize say */
    cJSON_AddNumberToObject(summary, "seed", (double)c.seed);
    cJSON *seeds = cJSON_AddArrayToObject(summary, "seeds");
    for (int k = 0; k < c.num_seeds; k++) cJSON_AddItemToArray(seeds, cJSON_CreateNumber((double)c.seeds[k]));
    rc = compare_pick_tasks(&c, summary);
    if (rc == 0) rc = compare_check_configs(&c, summary);
    if (rc == 0) {
        rc = compare_fill(&c, summary);
        compare_merge_previous(summary);
        int written = compare_write(summary) == 0;
        if (!written) rc = 1;
        if (c.json) {
            json_print_line(summary);
        } else {
            ReportTable *tab = report_compare_table(summary);
            report_table_print(tab, stdout);
            report_table_free(tab);
            report_compare_settings(summary, stdout, "");
            const cJSON *w = cJSON_GetObjectItemCaseSensitive(summary, "wnli_majority");
            if (w) printf("WNLI: the majority class gets %.2f accuracy on dev (what the GLUE baselines report)\n",
                          run_config_number(w, "accuracy", 0));
            if (written) printf("wrote %s/compare.json and %s/compare.md\n", run_results_root(), run_results_root());
        }
    }
    cJSON_Delete(summary);
    free(c.command);
    cli_task_free(task_find(c.target));   /* a user's dataset, if it was one */
    return rc;
}
