/* multitask.c — multi-task fine-tuning over one shared encoder (see
 * multitask.h): the loop's client (loop.h) whose step is one task's batch
 * through that task's TrainStep (step.h) and whose epoch end scores every
 * task (evaluate.h); the resume point and the run directory are the
 * harness's (resume.h, run_dir.h). */
#include "train/multitask.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "core/dist.h"
#include "core/files.h"
#include "core/rng.h"
#include "models/bert/bert_multi.h"
#include "models/run_config.h"
#include "optim/schedule.h"
#include "train/evaluate.h"
#include "train/loop.h"
#include "train/resume.h"
#include "train/run_dir.h"
#include "train/run_txn.h"
#include "train/step.h"
#include "train/trainer.h"

/* Mixed into the seed for the order of an epoch's tasks, and (times the
 * task's index) for each task's row order: streams of their own. */
#define MT_ORDER_SALT 0x4d54534b4full
#define MT_TASK_SALT 0x9E3779B97F4A7C15ull
#define MT_PAIR_OWN "task"   /* pair_encoding: each task's own default head */
#define MT_HINT "glue finetune --help-settings lists the settings; temperature and what is refused: docs/multitask.md"

typedef struct MtTask {
    const Task *t;
    TrainerSplits d;
    Model *m;                    /* the task's model over the shared encoder (owned by the BertMulti) */
    TrainStep *step;
    long batches, quota;         /* its batches per pass, its steps per epoch */
    long drawn;                  /* batches taken so far in the run */
    int pass;                    /* the pass whose order perm holds (-1: none) */
    int *perm;
    double loss_sum;             /* this epoch: sum over its rows of the loss */
    long rows, steps;            /* this epoch */
} MtTask;

typedef struct Mt {
    const MultiTaskOptions *o;
    const ModelOps *ops;
    MtTask task[MULTITASK_MAX_TASKS];
    int n;
    BertMulti *mm;
    TrainerRecipe recipe;
    double temperature;
    Schedule sched;
    long steps_per_epoch, total_steps;
    int *order;                  /* (steps_per_epoch) the epoch's task of each step */
    double eval_seconds;
    TrainLoop loop;
} Mt;

/* ---- sampling ---- */

void multitask_quotas(const long *batches, const int *n, int count, double temperature, long *quota) {
    long total = 0;
    for (int t = 0; t < count; t++) total += batches[t];
    if (temperature == 1.0) {   /* every example once per epoch */
        for (int t = 0; t < count; t++) quota[t] = batches[t];
        return;
    }
    double w[MULTITASK_MAX_TASKS], sum = 0, rem[MULTITASK_MAX_TASKS];
    for (int t = 0; t < count; t++) sum += w[t] = pow((double)n[t], 1.0 / temperature);
    long given = 0;
    for (int t = 0; t < count; t++) {
        double share = (double)total * w[t] / sum;
        quota[t] = (long)floor(share);
        rem[t] = share - (double)quota[t];
        given += quota[t];
    }
    for (; given < total; given++) {   /* largest remainders, ties to the first task */
        int best = 0;
        for (int t = 1; t < count; t++)
            if (rem[t] > rem[best]) best = t;
        quota[best]++;
        rem[best] = -1;
    }
    for (int t = 0; t < count; t++)   /* no head goes untrained: a step from the largest */
        if (quota[t] == 0) {
            int big = 0;
            for (int u = 1; u < count; u++)
                if (quota[u] > quota[big]) big = u;
            quota[big]--, quota[t]++;
        }
}

/* ---- settings ---- */

cJSON *multitask_task_config(const cJSON *config, const Task *t) {
    static const char *const REFUSED[][3] = {
        {INTERMEDIATE_KEY, INTERMEDIATE_NONE, "an intermediate task (train it as one of the tasks instead)"},
        {"precision", "fp32", "bf16 training"},
    };
    for (size_t i = 0; i < sizeof REFUSED / sizeof REFUSED[0]; i++) {
        const char *v = run_config_string(config, REFUSED[i][0], REFUSED[i][1]);
        if (strcmp(v, REFUSED[i][1]) != 0) {
            user_error_usage(MT_HINT, "multi-task fine-tuning does not do %s: %s=%s", REFUSED[i][2], REFUSED[i][0], v);
            return NULL;
        }
    }
    static const char *const SWITCHES[] = {"pair_swap", "group_by_length"};
    for (int i = 0; i < 2; i++)
        if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(config, SWITCHES[i]))) {
            user_error_usage(MT_HINT, "multi-task fine-tuning does not do %s", SWITCHES[i]);
            return NULL;
        }
    cJSON *c = cJSON_Duplicate(config, 1);
    cJSON_DeleteItemFromObjectCaseSensitive(c, MULTITASK_TASKS_KEY);
    cJSON_DeleteItemFromObjectCaseSensitive(c, MULTITASK_TEMPERATURE_KEY);
    if (strcmp(run_config_string(c, "pair_encoding", MT_PAIR_OWN), MT_PAIR_OWN) == 0) {
        const ModelOps *bert = model_find("bert");
        cJSON *own = bert->default_config(t);
        cJSON_ReplaceItemInObjectCaseSensitive(c, "pair_encoding",
                                               cJSON_CreateString(run_config_string(own, "pair_encoding", "cross")));
        cJSON_Delete(own);
    }
    return c;
}

int multitask_parse_tasks(const char *list, const Task **tasks, int quiet) {
    const char *hint = "e.g. --tasks cola,sst2,mrpc,stsb";
    int n = 0;
    for (const char *p = list ? list : ""; *p;) {
        size_t len = strcspn(p, ",+");
        char name[64];
        if (len > 0 && len < sizeof name) {
            if (n == MULTITASK_MAX_TASKS) {
                if (!quiet) user_error(hint, "multi-task: more than %d tasks in %s", MULTITASK_MAX_TASKS, list);
                return -1;
            }
            memcpy(name, p, len);
            name[len] = '\0';
            const Task *t = quiet ? task_find(name) : task_find_or_report(name);
            if (!t) return -1;
            if (t->scored_with || t->multi_label) {
                if (!quiet) user_error(hint, "multi-task: %s %s", t->display, t->multi_label ? "is multi-label, which the "
                           "heads do not train yet" : "has no training data");
                return -1;
            }
            for (int j = 0; j < n; j++)
                if (tasks[j] == t) {
                    if (!quiet) user_error("name each task once", "multi-task: %s is in %s twice", t->name, list);
                    return -1;
                }
            tasks[n++] = t;
        } else if (len > 0) {
            if (!quiet) user_error(hint, "multi-task: no task is called %.*s", (int)len, p);
            return -1;
        }
        p += len;
        if (*p) p++;
    }
    if (n == 0 && !quiet) user_error(hint, "multi-task: '%s' names no task", list ? list : "");
    else if (n == 1 && !quiet) user_error("glue finetune TASK trains one task", "multi-task: '%s' names one task; a "
                                "multi-task run needs two or more", list);
    return n >= 2 ? n : -1;
}

cJSON *multitask_default_config(const Task *const *tasks, int n) {
    cJSON *d = model_find("bert")->default_config(NULL);
    cJSON_ReplaceItemInObjectCaseSensitive(d, "pair_encoding", cJSON_CreateString(MT_PAIR_OWN));
    cJSON_AddNumberToObject(d, MULTITASK_TEMPERATURE_KEY, 1);
    cJSON *names = cJSON_AddArrayToObject(d, MULTITASK_TASKS_KEY);
    for (int i = 0; i < n; i++) cJSON_AddItemToArray(names, cJSON_CreateString(tasks[i]->name));
    return d;
}

static int mt_read_settings(Mt *r) {
    SettingsReader s = settings_reader(r->o->config, "multi-task", MT_HINT);
    trainer_read_recipe(&s, &r->recipe);
    r->temperature = settings_real(&s, MULTITASK_TEMPERATURE_KEY, 1, 1, 1000);
    return s.failed ? EXIT_USAGE : 0;
}

/* ---- data and model ---- */

static int mt_load_task(Mt *r, MtTask *k) {
    if (trainer_load_train(k->t, r->o->data_root, r->o->strict, &k->d.train) != 0 ||
        trainer_load_dev(k->t, r->o->data_root, r->o->strict, &k->d, "score") != 0)
        return 1;
    k->batches = (k->d.train.n + r->recipe.batch - 1) / r->recipe.batch;
    k->perm = xmalloc(sizeof(int) * (size_t)k->d.train.n);
    k->pass = -1;
    return 0;
}

static int mt_create_model(Mt *r) {
    cJSON *configs[MULTITASK_MAX_TASKS] = {0};
    const Task *tasks[MULTITASK_MAX_TASKS];
    int rc = 0;
    for (int i = 0; i < r->n && rc == 0; i++) {
        tasks[i] = r->task[i].t;
        if (!(configs[i] = multitask_task_config(r->o->config, tasks[i]))) rc = EXIT_USAGE;
        else if (model_check_memory(r->ops, configs[i], tasks[i], &r->task[i].d.train)) rc = EXIT_USAGE;
    }
    if (rc == 0 && !(r->mm = bert_multi_create((const cJSON *const *)configs, tasks, r->n, r->o->seed))) rc = 1;
    for (int i = 0; i < r->n; i++) cJSON_Delete(configs[i]);
    for (int i = 0; i < r->n && rc == 0; i++) {
        MtTask *k = &r->task[i];
        k->m = bert_multi_task(r->mm, i);
        if (!(k->d.train_e = r->ops->encode(k->m, &k->d.train))) rc = 1;
        for (int s = 0; s < k->d.num_dev && rc == 0; s++)
            if (!(k->d.dev_e[s] = r->ops->encode(k->m, &k->d.dev[s]))) rc = 1;
        if (rc == 0) k->step = train_step_create(r->ops, k->m, &k->d.train, k->d.train_e);
    }
    return rc;
}

static void mt_free(Mt *r) {
    for (int i = 0; i < r->n; i++) {
        MtTask *k = &r->task[i];
        train_step_free(k->step);
        trainer_splits_free(r->ops, &k->d);
        free(k->perm);
    }
    bert_multi_free(r->mm);
    free(r->order);
    train_loop_free(&r->loop);
}

/* ---- the resume point ---- */

static int mt_write_files(void *ctx, const ResumeFiles *f) {
    Mt *r = ctx;
    return bert_multi_save(r->mm, f->ckpt) != 0 || bert_multi_save_state(r->mm, f->state) != 0;
}

static int mt_save(void *ctx, TrainLoop *L) {
    Mt *r = ctx;
    cJSON *st = train_loop_position(L);
    cJSON *tasks = cJSON_AddObjectToObject(st, "task_sums");   /* the epoch's losses so far, bit for bit */
    for (int i = 0; i < r->n; i++) {
        cJSON *o = cJSON_AddObjectToObject(tasks, r->task[i].t->name);
        json_add_exact(o, "loss_sum", r->task[i].loss_sum);
        cJSON_AddNumberToObject(o, "rows", (double)r->task[i].rows);
        cJSON_AddNumberToObject(o, "steps", (double)r->task[i].steps);
    }
    cJSON_AddNumberToObject(st, "eval_seconds", r->eval_seconds);
    int rc = resume_write(r->o->out_dir, st, mt_write_files, r);
    cJSON_Delete(st);
    return rc;
}

static int mt_read_files(void *ctx, const ResumeFiles *f, const cJSON *st) {
    Mt *r = ctx;
    if (!trainer_same_run(st, r->o->config, r->o->seed, 0)) {
        user_error("resume with the same tasks, settings and --seed, or drop --resume to start over",
                   "%s/%s: the interrupted run used other settings", f->dir, RUN_TRAINER_STATE);
        return RESUME_OTHER;
    }
    if (bert_multi_load(r->mm, f->ckpt) != 0 || bert_multi_load_state(r->mm, f->state) != 0) return 1;
    train_loop_restore(&r->loop, st);
    const cJSON *sums = cJSON_GetObjectItemCaseSensitive(st, "task_sums");
    for (int i = 0; i < r->n; i++) {
        const cJSON *o = cJSON_GetObjectItemCaseSensitive(sums, r->task[i].t->name);
        r->task[i].loss_sum = json_exact(o, "loss_sum", 0);
        r->task[i].rows = (long)run_config_number(o, "rows", 0);
        r->task[i].steps = (long)run_config_number(o, "steps", 0);
    }
    r->eval_seconds = run_config_number(st, "eval_seconds", 0);
    return 0;
}

/* ---- the loop's client ---- */

/* The epoch's order of tasks (each t quota[t] times, shuffled), and each
 * task's batches drawn before the loop's position. */
static long mt_begin(void *ctx, TrainLoop *L) {
    Mt *r = ctx;
    long at = 0;
    for (int i = 0; i < r->n; i++)
        for (long q = 0; q < r->task[i].quota; q++) r->order[at++] = i;
    Rng rng;
    rng_seed_stream(&rng, r->o->seed ^ MT_ORDER_SALT, (uint64_t)L->epoch);
    rng_shuffle_int(&rng, r->order, (int)at);
    for (int i = 0; i < r->n; i++) r->task[i].drawn = (long)L->epoch * r->task[i].quota;
    for (long b = 0; b < L->batch; b++) r->task[r->order[b]].drawn++;
    return r->steps_per_epoch;
}

static int mt_step(void *ctx, TrainLoop *L, double *mean_loss) {
    Mt *r = ctx;
    MtTask *k = &r->task[r->order[L->batch]];
    int pass = (int)(k->drawn / k->batches), b = (int)(k->drawn % k->batches);
    if (pass != k->pass) {   /* a new pass over the task's rows: its shuffle */
        uint64_t seed = r->o->seed ^ (MT_TASK_SALT * (uint64_t)(k - r->task));
        trainer_epoch_order(k->perm, k->d.train.n, seed, pass, r->recipe.batch, NULL);
        k->pass = pass;
    }
    int i = b * r->recipe.batch, n = k->d.train.n - i < r->recipe.batch ? k->d.train.n - i : r->recipe.batch;
    TrainState st = {
        .step = L->step, .total_steps = r->total_steps, .epoch = L->epoch,
        .progress = (double)L->step / (double)r->total_steps, .lr = schedule_lr(&r->sched, L->step),
        .share = 1, .seed = r->o->seed,
    };
    double loss = train_step_run(k->step, k->perm + i, n, &st);
    k->drawn++;
    k->loss_sum += loss * n;
    k->rows += n;
    k->steps++;
    *mean_loss = loss;
    return 0;
}

static void mt_describe(void *ctx, const TrainLoop *L, char *text, size_t cap) {
    const Mt *r = ctx;
    double sum = 0;
    long rows = 0;
    for (int i = 0; i < r->n; i++) sum += r->task[i].loss_sum, rows += r->task[i].rows;
    snprintf(text, cap, "loss %.4f", rows ? sum / (double)rows : 0.0);
}

/* Task k's dev metrics into rec (its splits' objects); its score. */
static double mt_evaluate_task(Mt *r, MtTask *k, cJSON *rec) {
    int K = evaluate_num_outputs(k->t);
    double score = NAN;
    for (int s = 0; s < k->d.num_dev; s++) {
        int n = k->d.dev[s].n;
        float *out = xmalloc(sizeof(float) * (size_t)(n ? n : 1) * (size_t)K);
        double secs;
        evaluate_predict_all(r->ops, k->m, k->d.dev_e[s], n, k->t, r->recipe.eval_batch, out, &secs);
        r->eval_seconds += secs;
        cJSON *metrics = evaluate_metrics(k->t, &k->d.dev[s], out);
        if (s == 0) score = evaluate_score(k->t, metrics);
        cJSON_AddItemToObject(rec, k->d.dev_split[s]->name, metrics);
        free(out);
    }
    return score;
}

/* "epoch 2/3  loss 0.4123  mean 61.20  (best)" then a line per task. */
static void mt_log_epoch(const Mt *r, const cJSON *rec, double loss, double mean, int is_best) {
    if (!r->o->show_progress) return;
    fprintf(stderr, "epoch %d/%d  loss %.4f  mean score %.2f%s\n", (int)run_config_number(rec, "epoch", 0),
            r->recipe.epochs, loss, mean, is_best ? "  (best)" : "");
    const cJSON *tasks = cJSON_GetObjectItemCaseSensitive(rec, "tasks");
    for (int i = 0; i < r->n; i++) {
        const MtTask *k = &r->task[i];
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(tasks, k->t->name);
        fprintf(stderr, "  %-10s %5ld steps  loss %.4f ", k->t->name, (long)run_config_number(t, "batches", 0),
                run_config_number(t, "loss", 0));
        trainer_print_dev(&k->d, t);
        fprintf(stderr, "\n");
    }
}

static int mt_end(void *ctx, TrainLoop *L, double seconds) {
    Mt *r = ctx;
    cJSON *rec = cJSON_CreateObject();
    cJSON_AddNumberToObject(rec, "epoch", L->epoch + 1);
    double sum = 0, mean = 0;
    long rows = 0;
    cJSON *tasks = cJSON_CreateObject();
    for (int i = 0; i < r->n; i++) {
        MtTask *k = &r->task[i];
        cJSON *t = cJSON_AddObjectToObject(tasks, k->t->name);
        cJSON_AddNumberToObject(t, "loss", k->rows ? k->loss_sum / (double)k->rows : 0.0);
        cJSON_AddNumberToObject(t, "batches", (double)k->steps);
        double score = mt_evaluate_task(r, k, t);
        cJSON_AddNumberToObject(t, "score", isfinite(score) ? score : 0.0);
        mean += (isfinite(score) ? score : 0.0) / r->n;
        sum += k->loss_sum, rows += k->rows;
        k->loss_sum = 0, k->rows = 0, k->steps = 0;
    }
    double loss = rows ? sum / (double)rows : 0.0;
    cJSON_AddNumberToObject(rec, "loss", loss);
    cJSON_AddNumberToObject(rec, "seconds", seconds);
    cJSON_AddNumberToObject(rec, "score", mean);
    cJSON_AddItemToObject(rec, "tasks", tasks);
    int is_best = train_loop_record(L, rec, mean);
    char path[4200];
    file_join(r->o->out_dir, RUN_CKPT, path, sizeof path);
    if (is_best && bert_multi_save(r->mm, path) != 0) return 1;
    mt_log_epoch(r, rec, loss, mean, is_best);
    return 0;
}

static const TrainLoopOps MT_LOOP = {.begin = mt_begin, .step = mt_step, .describe = mt_describe,
                                     .end = mt_end, .save = mt_save};

/* ---- the run ---- */

static cJSON *mt_results(const Mt *r) {
    const MultiTaskOptions *o = r->o;
    cJSON *j = run_results_head(o->command, o->seed, o->threads, o->config);
    cJSON_AddItemToObject(j, "inputs", cJSON_Duplicate(r->loop.inputs, 1));   /* what reuse checks */
    cJSON_AddStringToObject(j, "task", MULTITASK_NAME);
    cJSON_AddStringToObject(j, "model", r->ops->name);
    cJSON *names = cJSON_AddArrayToObject(j, MULTITASK_TASKS_KEY);
    cJSON *quotas = cJSON_CreateObject();
    long examples = 0;
    for (int i = 0; i < r->n; i++) {
        cJSON_AddItemToArray(names, cJSON_CreateString(r->task[i].t->name));
        cJSON_AddNumberToObject(quotas, r->task[i].t->name, (double)r->task[i].quota);
        examples += r->task[i].d.train.n;
    }
    cJSON_AddNumberToObject(j, MULTITASK_TEMPERATURE_KEY, r->temperature);
    cJSON_AddItemToObject(j, "quotas", quotas);
    cJSON_AddNumberToObject(j, "num_params", (double)bert_multi_num_params(r->mm));
    cJSON_AddNumberToObject(j, "train_examples", (double)examples);
    cJSON_AddNumberToObject(j, "train_seconds", r->loop.seconds);
    cJSON_AddNumberToObject(j, "train_steps_per_sec", r->loop.seconds > 0 ? r->loop.step / r->loop.seconds : 0);
    cJSON_AddNumberToObject(j, "eval_seconds", r->eval_seconds);
    cJSON_AddStringToObject(j, "selection", "mean over the tasks of each task's score (its metrics' mean on its "
                                            "first dev split)");
    cJSON_AddItemToObject(j, "epochs", cJSON_Duplicate(r->loop.history, 1));
    cJSON_AddItemToObject(j, "best", cJSON_Duplicate(r->loop.best, 1));
    return j;
}

static void mt_banner(const Mt *r) {
    const TrainerRecipe *c = &r->recipe;
    fprintf(stderr, "multi-task %s over %d tasks: %d epochs x %ld steps of %d = %ld steps, lr %g (%s, warm-up "
            "%.0f%%), temperature %g, seed %llu, %d threads -> %s\n", r->ops->name, r->n, c->epochs,
            r->steps_per_epoch, c->batch, r->total_steps, (double)c->lr, c->schedule, 100 * c->warmup, r->temperature,
            (unsigned long long)r->o->seed, r->o->threads, r->o->out_dir);
    for (int i = 0; i < r->n; i++)
        fprintf(stderr, "  %-10s %7d training examples, %6ld steps an epoch, %s %d examples\n", r->task[i].t->name,
                r->task[i].d.train.n, r->task[i].quota, r->task[i].d.dev_split[0]->name, r->task[i].d.dev[0].n);
}

/* Settings, data, model and the epoch's draw: everything before the run directory. */
static int mt_prepare(Mt *r) {
    int rc = mt_read_settings(r);
    for (int i = 0; i < r->n && rc == 0; i++) rc = mt_load_task(r, &r->task[i]);
    if (rc == 0) rc = mt_create_model(r);
    if (rc != 0) return rc;
    long batches[MULTITASK_MAX_TASKS] = {0}, quota[MULTITASK_MAX_TASKS] = {0};
    int sizes[MULTITASK_MAX_TASKS] = {0};
    for (int i = 0; i < r->n; i++) batches[i] = r->task[i].batches, sizes[i] = r->task[i].d.train.n;
    multitask_quotas(batches, sizes, r->n, r->temperature, quota);
    for (int i = 0; i < r->n; i++) r->task[i].quota = quota[i], r->steps_per_epoch += quota[i];
    r->order = xmalloc(sizeof(int) * (size_t)r->steps_per_epoch);
    r->total_steps = (long)r->recipe.epochs * r->steps_per_epoch;
    r->sched = trainer_schedule(&r->recipe, r->total_steps);
    return 0;
}

/* A run directory as every run's (run_txn.h): locked, a finished or interrupted
 * run refused unless --resume or --overwrite, an --overwrite trained apart. */
static const RunKind MT_RUN_KIND = {.results = RUN_RESULTS, .finished = "glue finetune TASK --init DIR fine-tunes from it"};

int multitask_run(const MultiTaskOptions *opt, cJSON **results) {
    MultiTaskOptions own = *opt;   /* out_dir: where this run writes (a stage with --overwrite) */
    const MultiTaskOptions *o = &own;
    if (results) *results = NULL;
    if (dist_size() > 1) {
        if (dist_rank() == 0) user_error("run it without mpirun", "multi-task fine-tuning does not run data-parallel");
        return EXIT_USAGE;
    }
    if (o->n < 1 || o->n > MULTITASK_MAX_TASKS) DIE("multitask_run: %d tasks", o->n);
    Mt r = {.o = o, .ops = model_find("bert"), .n = o->n};
    for (int i = 0; i < o->n; i++) r.task[i].t = o->tasks[i];
    TrainLoop *L = &r.loop;
    train_loop_init(L, &MT_LOOP, &r, o->out_dir, o->config, o->seed);
    L->checkpoint_every = o->checkpoint_every, L->show_progress = o->show_progress;
    RunDirTxn txn = {.kind = &MT_RUN_KIND};
    int rc = mt_prepare(&r);
    if (rc == 0) rc = run_dir_enter(&txn, opt->out_dir, o->resume, o->overwrite);
    if (rc == 0) own.out_dir = L->out_dir = txn.work;
    if (rc == 0 && o->resume) {
        int got = resume_read(o->out_dir, mt_read_files, &r);
        rc = got > 0 ? got : 0;
    }
    L->epochs = r.recipe.epochs;
    if (rc == 0) rc = run_dir_begin(o->out_dir, RUN_RESULTS, o->config);
    if (rc == 0) {
        if (o->show_progress) mt_banner(&r);
        rc = train_loop_run(L);
    }
    if (rc == 0) {
        cJSON *res = mt_results(&r);
        rc = run_dir_finish(o->out_dir, RUN_RESULTS, res, 0);
        if (rc == 0) rc = run_dir_commit(&txn);
        if (rc == 0 && results) *results = res;
        else cJSON_Delete(res);
    }
    run_dir_close(&txn, rc == 0);
    mt_free(&r);
    return rc;
}
