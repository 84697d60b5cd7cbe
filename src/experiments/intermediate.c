/* intermediate.c — the intermediate stage of a fine-tuning run (see
 * intermediate.h): train or reuse <out>/intermediate/, then run the target
 * from it. */
#include "experiments/intermediate.h"

#include "core/checkpoint.h"
#include "core/common.h"
#include "core/dist.h"
#include "core/files.h"
#include "models/run_config.h"
#include "train/resume.h"
#include "train/multitask.h"
#include "train/run_dir.h"

#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The settings that say which encoder a run starts from: the intermediate
 * run takes the target's, so both stages start from the same weights
 * ("init" first). */
static const char *const ENCODER_KEYS[] = {"init", "bert", "vocab"};

/* What the stage is: one task (t), or a multi-task run (n tasks; the
 * setting "multi" or "multi:A+B+...", train/multitask.h). */
typedef struct Stage {
    const Task *t;
    const Task *tasks[MULTITASK_MAX_TASKS];
    int n;
} Stage;

static const char *stage_name(const Stage *st) { return st->n ? MULTITASK_NAME : st->t->name; }

/* The stage's recipe from the target's encoder, with no stage of its own
 * (no chains): the intermediate task's default recipe for the model, or the
 * multi-task run's defaults. */
static cJSON *intermediate_config(const TrainerOptions *o, const Stage *st) {
    cJSON *c = st->n ? multitask_default_config(st->tasks, st->n) : o->ops->default_config(st->t);
    for (size_t i = 0; i < sizeof ENCODER_KEYS / sizeof ENCODER_KEYS[0]; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o->config, ENCODER_KEYS[i]);
        if (v) cJSON_ReplaceItemInObjectCaseSensitive(c, ENCODER_KEYS[i], cJSON_Duplicate(v, 1));
    }
    cJSON_ReplaceItemInObjectCaseSensitive(c, INTERMEDIATE_KEY, cJSON_CreateString(INTERMEDIATE_NONE));
    return c;
}

/* The target's config with the intermediate run as its start: "init" names
 * it, and the other encoder settings go back to the model's defaults (the
 * checkpoint brings its own architecture and vocabulary). */
static cJSON *intermediate_target_config(const TrainerOptions *o, const char *dir) {
    cJSON *c = cJSON_Duplicate(o->config, 1), *def = o->ops->default_config(o->task);
    for (size_t i = 0; i < sizeof ENCODER_KEYS / sizeof ENCODER_KEYS[0]; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(def, ENCODER_KEYS[i]);
        if (strcmp(ENCODER_KEYS[i], "init") == 0) v = NULL;
        cJSON_DeleteItemFromObjectCaseSensitive(c, ENCODER_KEYS[i]);
        if (v) cJSON_AddItemToObject(c, ENCODER_KEYS[i], cJSON_Duplicate(v, 1));
    }
    cJSON_AddStringToObject(c, "init", dir);
    cJSON_Delete(def);
    return c;
}

static cJSON *intermediate_summary(const Stage *st, const char *dir, const cJSON *res) {
    cJSON *s = cJSON_CreateObject();
    cJSON_AddStringToObject(s, "task", stage_name(st));
    if (st->n) cJSON_AddItemToObject(s, MULTITASK_TASKS_KEY, cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(res, MULTITASK_TASKS_KEY), 1));
    char portable[4200];
    file_portable_path(dir, portable, sizeof portable);
    cJSON_AddStringToObject(s, "run", portable);
    cJSON_AddStringToObject(s, "selection", run_config_string(res, "selection", ""));
    const cJSON *best = cJSON_GetObjectItemCaseSensitive(res, "best");
    if (best) cJSON_AddItemToObject(s, "best", cJSON_Duplicate(best, 1));
    return s;
}

/* Where o's stage runs: stage_dir, else <out_dir>/intermediate. */
static void intermediate_dir(const TrainerOptions *o, const char *stage_dir, char *dir, size_t size) {
    if (stage_dir) snprintf(dir, size, "%s", stage_dir);
    else file_join(o->out_dir, INTERMEDIATE_DIR, dir, size);
}

/* The stage o's config names (st->t NULL and st->n 0: none). 0, or
 * EXIT_USAGE after a message. */
static int intermediate_task(const TrainerOptions *o, Stage *st, int quiet) {
    const char *name = run_config_string(o->config, INTERMEDIATE_KEY, INTERMEDIATE_NONE);
    memset(st, 0, sizeof *st);
    if (strcmp(name, INTERMEDIATE_NONE) == 0) return 0;
    size_t m = strlen(MULTITASK_NAME);
    if (strncmp(name, MULTITASK_NAME, m) == 0 && (name[m] == '\0' || name[m] == ':')) {
        st->n = multitask_parse_tasks(name[m] ? name + m + 1 : MULTITASK_DEFAULT_TASKS, st->tasks, quiet);
        return st->n > 0 ? 0 : EXIT_USAGE;
    }
    const Task **t = &st->t;
    if (!(*t = quiet ? task_find(name) : task_find_or_report(name))) return EXIT_USAGE;
    if (*t != o->task) return 0;
    if (quiet) return EXIT_USAGE;
    user_error("name another task (mnli-9k before rte), or none", "%s: intermediate=%s is the task itself",
               o->task->name, name);
    return EXIT_USAGE;
}

void intermediate_shared_dir(const TrainerOptions *o, const char *root, char *dir, size_t size) {
    Stage st;
    dir[0] = '\0';
    int bad = intermediate_task(o, &st, 1);
    if (bad || (!st.t && !st.n)) return;   /* none, or an error intermediate_run reports */
    cJSON *config = intermediate_config(o, &st);
    char *text = cJSON_PrintUnformatted(config);
    uint64_t h = dist_hash(DIST_HASH_INIT, text, strlen(text));
    snprintf(dir, size, "%s/%s/%s-seed%llu-%08llx", root, INTERMEDIATE_DIR, stage_name(&st), (unsigned long long)o->seed,
             (unsigned long long)(h & 0xffffffffULL));
    free(text);
    cJSON_Delete(config);
}

/* The record of the finished intermediate run in dir, or NULL when there is
 * none (a resumed target's: its stage ran before it). */
static cJSON *intermediate_record(const TrainerOptions *o, const Stage *st, const char *dir) {
    cJSON *config = intermediate_config(o, st), *res = trainer_finished_run(dir, config, (long)o->seed, 0);
    cJSON *s = res ? intermediate_summary(st, dir, res) : NULL;
    cJSON_Delete(res);
    cJSON_Delete(config);
    return s;
}

/* Trains the stage st of the target o into dir (a run of other settings
 * there is replaced, an interrupted one of these continued): *res its
 * results. The exit code of its run. */
static int intermediate_train(const TrainerOptions *o, const Stage *st, const cJSON *config, const char *dir,
                              cJSON **res) {
    int resume = trainer_can_resume(dir, config, o->seed, 0);   /* the target's own state: continued */
    if (st->n) {
        MultiTaskOptions mo = {.n = st->n, .config = config, .seed = o->seed, .threads = o->threads, .out_dir = dir,
                               .data_root = o->data_root, .command = o->command, .resume = resume,
                               .strict = o->strict, .show_progress = o->show_progress, .overwrite = 1,
                               .checkpoint_every = o->checkpoint_every};
        memcpy(mo.tasks, st->tasks, sizeof st->tasks);
        return multitask_run(&mo, res);
    }
    TrainerOptions io = *o;
    io.task = st->t;
    io.config = config;
    io.out_dir = dir;
    io.model_config = NULL;
    io.intermediate = NULL;
    io.resume = resume;
    io.overwrite = 1;      /* a finished run of other settings is replaced */
    io.holdout = 0;        /* it selects on its own task's split, never on the target's */
    return trainer_run(&io, res);
}

/* Runs (or reuses) the stage st of the target o in dir. 0 with
 * *model_config the config to create the target's model from (o's, with
 * "init" the intermediate run) and *summary the record for results.json
 * (both the caller's to free), or the exit code of the stage's run. */
static int intermediate_stage(const TrainerOptions *o, const Stage *st, const char *dir, cJSON **model_config,
                              cJSON **summary) {
    *model_config = NULL;
    *summary = NULL;
    cJSON *config = intermediate_config(o, st);
    cJSON *res = trainer_finished_run(dir, config, (long)o->seed, 0);
    int rc = 0, say = o->show_progress && dist_rank() == 0;   /* one rank speaks */
    if (res) {
        if (say)
            fprintf(stderr, "intermediate task %s: the finished run in %s (seed %llu, best %s %.2f at epoch %d)\n",
                    stage_name(st), dir, (unsigned long long)o->seed, run_config_string(res, "selection", "score"),
                    run_config_number(cJSON_GetObjectItemCaseSensitive(res, "best"), "score", 0),
                    (int)run_config_number(cJSON_GetObjectItemCaseSensitive(res, "best"), "epoch", 0));
    } else {
        if (say) fprintf(stderr, "intermediate task %s first, into %s\n", stage_name(st), dir);
        rc = intermediate_train(o, st, config, dir, &res);
    }
    /* Data parallel: rank 0 wrote the weights every rank reads next. */
    if (dist_size() > 1) rc = dist_max_int(rc);
    if (rc == 0 && res) {
        *summary = intermediate_summary(st, dir, res);
        *model_config = intermediate_target_config(o, dir);
    }
    cJSON_Delete(res);
    cJSON_Delete(config);
    return rc ? rc : *model_config ? 0 : 1;
}

/* 1 when trainer_run continues a resume point in out_dir instead of
 * starting: --resume and one there (or the one saved before it: the pair
 * trainer_run reads). The target saves one only after its stage finished. */
static int intermediate_resuming(const TrainerOptions *o) {
    return o->resume && resume_exists(o->out_dir);
}

/* 1 when trainer_run would stop the target before training it: a finished
 * run in out_dir it must not replace, or a missing data file it reads (train,
 * and the selection's dev split unless a hold-out selects). Then no stage's
 * hours first: trainer_run says why at once. */
static int intermediate_target_blocked(const TrainerOptions *o) {
    char path[4300];
    file_join(o->out_dir, RUN_RESULTS, path, sizeof path);
    if (!o->resume && !o->overwrite && file_exists(path)) return 1;
    const TaskSplit *train = task_split(o->task, "train"), *dev = o->holdout > 0 ? NULL : task_dev_split(o->task);
    if (!train || (o->holdout <= 0 && !dev)) return 1;
    if (task_split_path(o->task, train, o->data_root, path, sizeof path) != 0) return 1;
    return dev && task_split_path(o->task, dev, o->data_root, path, sizeof path) != 0;
}

int intermediate_run(const TrainerOptions *o, const char *stage_dir, cJSON **results) {
    Stage st = {0};
    if (results) *results = NULL;
    if (!intermediate_target_blocked(o)) {
        int bad = intermediate_task(o, &st, 0);
        if (bad) return bad;
    }
    if (!st.t && !st.n) return trainer_run(o, results);
    char dir[4096];
    intermediate_dir(o, stage_dir, dir, sizeof dir);
    cJSON *from = NULL, *record = NULL;
    int rc = 0;
    if (intermediate_resuming(o)) {
        record = intermediate_record(o, &st, dir);
        /* Should the resume point not be read after all, the target starts
         * from the stage, never from the bare encoder. */
        if (record) from = intermediate_target_config(o, dir);
    } else {
        rc = intermediate_stage(o, &st, dir, &from, &record);
    }
    if (rc == 0) {
        TrainerOptions target = *o;
        target.model_config = from;
        target.intermediate = record;
        rc = trainer_run(&target, results);
    }
    cJSON_Delete(from);
    cJSON_Delete(record);
    return rc;
}
