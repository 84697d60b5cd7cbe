/* trainer.c — the fine-tuning loop (see trainer.h).
 *
 * One run is: check the config, load the splits, create (or resume) the model,
 * encode the splits once, then per epoch shuffle → train steps → evaluate every
 * dev split → keep the best checkpoint → save the state needed to resume.
 * results.json is written only when the run completes, so its presence means a
 * finished run (`glue compare` relies on that).
 *
 * The loop, the resume point and the run directory are the harness's (loop.h,
 * resume.h, run_dir.h); this client supplies the order, step, evaluation, files.
 *
 * Data parallel (trainer.h): every rank runs all of this; the files are
 * written by rank 0 only. The collectives, entered by every rank at the same
 * point: the agreement after preparation and the hash check (trainer_run),
 * and per step the interrupt flag (loop.c), the gradient sum (inside
 * train_step_run) and the loss. A failed save on rank 0 ends its process
 * with a non-zero status, and dist_finalize then aborts the job. */
#include "train/trainer.h"

#include "core/blas.h"
#include "core/common.h"
#include "core/dist.h"
#include "core/files.h"
#include "core/params.h"
#include "core/rng.h"
#include "train/decision.h"
#include "train/dev_loss.h"
#include "train/evaluate.h"
#include "train/head.h"
#include "models/run_config.h"
#include "optim/schedule.h"
#include "train/loop.h"
#include "train/resume.h"
#include "train/run_dir.h"
#include "train/run_inputs.h"
#include "train/run_txn.h"
#include "train/step.h"
#include "tasks/user_data.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Mixed into the seed for the shuffle streams, so they never coincide with the
 * streams a model draws its initialisation or dropout from. */
#define TRAINER_SHUFFLE_SALT 0x5348554646ull

typedef struct Run {
    const TrainerOptions *o;
    const Task *t;
    const ModelOps *ops;
    Model *m;
    int rank, size;              /* data parallel (dist.h); 0 of 1 in one process */
    TrainerSplits d;
    TrainerRecipe recipe;        /* settings the loop reads from the config */
    Schedule sched;              /* the learning rate of each step, once total_steps is known */
    double bucket_mb;            /* data parallel: the gradient sum's buckets (TrainState) */
    int group_by_length;         /* batches of rows of about one length (trainer_epoch_order) */
    MatmulPrecision precision;   /* of the training steps' products (RUN_SETTING_PRECISION), as it runs here */
    int *lengths;                /* then each training row's length, else NULL */
    TrainLoop loop;              /* where the run is, the epoch records (loop.h) */
    long total_steps;
    int *perm;                   /* the epoch's order of the training rows */
    double loss_sum;             /* the epoch's loss so far (summed over its rows) */
    double eval_seconds;
    long eval_examples;
    TrainStep *steps;            /* forward, head, backward, sum, update (step.h) */
    Decision decision;           /* multi-label: the prediction rule, tuned on dev (decision.h) */
    cJSON *details, *best_details;  /* the selection split's per-label table and averages: this epoch's, the kept one's */
    RunDirTxn txn;               /* the run directory: lock, stage (run_txn.h); rank 0's */
} Run;

int trainer_check_parallel(const ModelOps *ops) {
    if (dist_size() == 1 || ops->data_parallel) return 0;
    if (dist_rank() == 0)   /* every rank refuses; one says why */
        user_error("run it without mpirun, or fine-tune BERT (--model bert)",
                   "%s does not train data-parallel: under mpirun -np %d only BERT fine-tunes", ops->name,
                   dist_size());
    return EXIT_USAGE;
}

/* Settings that change no result beyond the order of sums; settings added
 * after runs were written (their configs lack them), at the value that is
 * the behaviour before them. */
static const char *const TRAINER_FREE_KEYS[] = {"bucket_mb", NULL};
#define TRAINER_LATER_SETTINGS \
    "{\"group_by_length\": false, \"" INTERMEDIATE_KEY "\": \"" INTERMEDIATE_NONE "\", \"precision\": \"fp32\", " \
    "\"loss\": \"ce\", \"focal_gamma\": 2, \"class_weights\": \"none\", \"pos_weight\": \"none\", \"boost\": \"none\", " \
    "\"threshold\": \"0.5\", \"top_k\": 0}"

int trainer_config_same(const cJSON *a, const cJSON *b) {
    if (!cJSON_IsObject(a) || !cJSON_IsObject(b)) return a && b && cJSON_Compare(a, b, 1);
    cJSON *later = cJSON_Parse(TRAINER_LATER_SETTINGS);
    int same = run_config_diff(a, b, later, TRAINER_FREE_KEYS, NULL, 0) == 0;
    cJSON_Delete(later);
    return same;
}

void trainer_read_recipe(SettingsReader *s, TrainerRecipe *r) {
    s->required = 1;   /* every model's defaults have them */
    r->epochs = (int)settings_int(s, "epochs", 1, 1, RUN_MAX_EPOCHS);
    r->batch = (int)settings_int(s, "batch", 1, 1, RUN_MAX_BATCH);
    r->lr = (float)settings_real(s, "lr", 1e-3, 1e-12, 10);
    s->required = 0;
    r->warmup = settings_real_below(s, "warmup", 0.0, 0, 1);
    r->schedule = RUN_SCHEDULES[settings_choice(s, "schedule", RUN_SCHEDULES, 3)];
    r->eval_batch = (int)settings_int(s, "eval_batch", EVALUATE_BATCH_DEFAULT, 1, RUN_MAX_BATCH);
}

Schedule trainer_schedule(const TrainerRecipe *r, long total_steps) {
    ScheduleKind kind;
    schedule_parse(r->schedule, &kind);   /* RUN_SCHEDULES are schedule names */
    return (Schedule){.kind = kind, .lr = r->lr, .warmup = (long)(r->warmup * (double)total_steps),
                      .total = total_steps, .warmup_float = 1};
}

static int run_read_settings(Run *r) {
    const cJSON *c = r->o->config;
    SettingsReader s = settings_reader(c, r->ops->name, "glue finetune --help-settings lists the settings");
    trainer_read_recipe(&s, &r->recipe);
    r->bucket_mb = settings_real(&s, "bucket_mb", 2, 0, 1024);   /* data-parallel models have it */
    r->group_by_length = settings_bool(&s, "group_by_length", 0) && r->ops->length;
    int wanted = settings_choice(&s, "precision", MATMUL_PRECISION_NAMES, 2);
    if (s.failed) return EXIT_USAGE;
    /* the head's loss (a model with its own step has its own) and a multi-label prediction rule */
    if ((r->ops->forward && head_settings_check(c, r->t) != 0) || decision_read(&r->decision, c, r->t) != 0)
        return EXIT_USAGE;
    r->precision = matmul_training_precision((MatmulPrecision)wanted, r->rank == 0);   /* run_train_epoch sets it */
    return 0;
}

static int run_check_config(const ModelOps *ops, const Task *t, const cJSON *config) {
    Decision rule;
    if (ops->cannot && ops->cannot(t)) {
        user_error_usage("use another --model for this task", "%s: %s", t->name, ops->cannot(t));
        return 1;
    }
    return settings_table_check(config, ops->settings, ops->num_settings, ops->name,
                                "glue finetune --help-settings --model M lists the settings") != 0 ||
           (ops->check_config && ops->check_config(config, t) != 0) ||
           (ops->forward && head_settings_check(config, t) != 0) || decision_read(&rule, config, t) != 0;
}

int trainer_check_config(const ModelOps *ops, const Task *t, const cJSON *config, const char *who) {
    if (!who) return run_check_config(ops, t, config) ? EXIT_USAGE : 0;
    ErrorCapture c;   /* the cause, said once with the run it belongs to */
    error_capture_begin(&c);
    int bad = run_check_config(ops, t, config);
    error_capture_end();
    if (bad) user_error_usage(NULL, "%s: %s on %s: %s", who, ops->name, t->display, c.message);
    return bad ? EXIT_USAGE : 0;
}

/* The split a held-out run selects on (o->holdout): part of the training file. */
static const TaskSplit HELDOUT_SPLIT = {.name = TRAINER_HELDOUT_SPLIT};

/* Moves a fixed random o->holdout of the training examples into the one
 * evaluation split (TRAINER_HELDOUT_SPLIT): the same slice whatever the run's
 * seed and settings, so the trials of a search compete on the same examples
 * and the task's dev split is never looked at. 0 ok. */
static int run_hold_out(Run *r) {
    Dataset *tr = &r->d.train, *ho = &r->d.dev[0];
    int k = (int)lround(r->o->holdout * tr->n);
    if (k < 1 || k >= tr->n) {
        user_error("hold out a fraction that leaves examples on both sides", "%s: holding out %g of %d training "
                   "examples leaves %d", r->t->display, r->o->holdout, tr->n, k);
        return EXIT_USAGE;
    }
    int *perm = xmalloc(sizeof(int) * (size_t)tr->n);
    for (int i = 0; i < tr->n; i++) perm[i] = i;
    Rng rng;
    rng_seed(&rng, TRAINER_HELDOUT_SEED);
    rng_shuffle_int(&rng, perm, tr->n);
    unsigned char *out = xcalloc((size_t)tr->n, 1);
    for (int i = 0; i < k; i++) out[perm[i]] = 1;
    *ho = (Dataset){.task = tr->task, .split = &HELDOUT_SPLIT, .ex = xmalloc(sizeof(Example) * (size_t)k)};
    int kept = 0;
    for (int i = 0; i < tr->n; i++) {   /* file order on both sides */
        if (out[i]) ho->ex[ho->n++] = tr->ex[i];
        else tr->ex[kept++] = tr->ex[i];
    }
    tr->n = kept;
    r->d.dev_split[0] = &HELDOUT_SPLIT;
    r->d.num_dev = 1;
    free(out);
    free(perm);
    return 0;
}

int trainer_load_train(const Task *t, const char *data_root, int strict, Dataset *train) {
    if (task_load(t, "train", data_root, strict, train) != 0) return 1;
    if (train->n > 0) return 0;
    user_error_data("check the file or fetch the data again: glue data fetch", "%s: the train split has no rows",
               t->display);
    return 1;
}

int trainer_load_dev(const Task *t, const char *data_root, int strict, TrainerSplits *d, const char *purpose) {
    const TaskSplit *want[TASK_MAX_SPLITS];
    int n = task_dev_splits(t, want, TASK_MAX_SPLITS);
    if (n == 0) { user_error(NULL, "task %s has no labelled dev split to %s", t->name, purpose); return 1; }
    for (int i = 0; i < n; i++) {
        Dataset dev;
        if (task_load(t, want[i]->name, data_root, strict, &dev) != 0) {
            if (i == 0) return 1;
            user_warning("%s: %s not available, reporting %s only", t->display, want[i]->name, want[0]->name);
            continue;
        }
        d->dev_split[d->num_dev] = want[i];
        d->dev[d->num_dev++] = dev;
    }
    return 0;
}

void trainer_splits_free(const ModelOps *ops, TrainerSplits *d) {
    for (int s = 0; s < d->num_dev; s++) {
        if (d->dev_e[s]) ops->encoded_free(d->dev_e[s]);
        dataset_free(&d->dev[s]);
    }
    if (d->train_e) ops->encoded_free(d->train_e);
    dataset_free(&d->train);
}

void trainer_print_dev(const TrainerSplits *d, const cJSON *rec) {
    for (int s = 0; s < d->num_dev; s++) {
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(rec, d->dev_split[s]->name);
        fprintf(stderr, " %s", d->dev_split[s]->name);
        for (const cJSON *it = m ? m->child : NULL; it; it = it->next)
            fprintf(stderr, " %s %.2f", it->string, it->valuedouble);
    }
}

/* Train split and the labelled dev splits (or the held-out one). */
static int run_load_data(Run *r) {
    const Task *t = r->t;
    if (trainer_load_train(t, r->o->data_root, r->o->strict, &r->d.train) != 0) return 1;
    /* "pair_swap": train on both orders of a symmetric pair task (a model whose
     * defaults lack the key never sees it set); after a hold-out, so that no
     * held-out pair is trained on in the other order. */
    int swap = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r->o->config, "pair_swap"));
    if (r->o->holdout > 0) {
        int rc = run_hold_out(r);
        return rc ? rc : swap && dataset_add_swapped_pairs(&r->d.train) != 0 ? EXIT_USAGE : 0;
    }
    if (swap && dataset_add_swapped_pairs(&r->d.train) != 0) return EXIT_USAGE;
    return trainer_load_dev(t, r->o->data_root, r->o->strict, &r->d, "select a model on");
}

/* The hold-out fraction is recorded when > 0: it changes what the run trains
 * and selects on. */
int trainer_same_run(const cJSON *st, const cJSON *config, uint64_t seed, double holdout) {
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(st, "seed");
    return trainer_config_same(cJSON_GetObjectItemCaseSensitive(st, "config"), config) && cJSON_IsNumber(s) &&
           (uint64_t)s->valuedouble == seed && run_config_number(st, "holdout", 0) == holdout;
}

/* A run of these settings, seed and hold-out whose files (an init
 * checkpoint, ...) have changed since is another run's result: said on
 * stderr, since the caller will train again or look elsewhere. */
static int trainer_same_inputs(const char *dir, const cJSON *recorded, const cJSON *config) {
    char why[4400];
    if (run_inputs_same(recorded, config, why, sizeof why)) return 1;
    fprintf(stderr, "%s: not reused: %s\n", dir, why);
    return 0;
}

/* The hold-out fraction beside the seed, where trainer_same_run reads it. */
static void run_add_holdout(cJSON *j, const TrainerOptions *o) {
    if (o->holdout > 0) cJSON_AddNumberToObject(j, "holdout", o->holdout);
}

int trainer_can_resume(const char *out_dir, const cJSON *config, uint64_t seed, double holdout) {
    cJSON *st = resume_position(out_dir);
    int can = st && trainer_same_run(st, config, seed, holdout) &&
              trainer_same_inputs(out_dir, cJSON_GetObjectItemCaseSensitive(st, "inputs"), config);
    cJSON_Delete(st);
    return can;
}

cJSON *trainer_finished_run(const char *dir, const cJSON *config, long seed, double holdout) {
    char path[4200], ckpt[4200];
    file_join(dir, RUN_RESULTS, path, sizeof path);
    file_join(dir, RUN_CKPT, ckpt, sizeof ckpt);
    if (!file_exists(path) || !file_exists(ckpt)) return NULL;
    cJSON *res = json_file_read(path, 0);
    if (res && seed >= 0 && trainer_same_run(res, config, (uint64_t)seed, holdout) &&
        cJSON_GetObjectItemCaseSensitive(res, "best") &&
        trainer_same_inputs(dir, cJSON_GetObjectItemCaseSensitive(res, "inputs"), config))
        return res;
    cJSON_Delete(res);
    return NULL;
}

/* ---- the resume point (resume.h): the model's files; beside the loop's keys
 * the next row (next_row), the epoch's loss so far, hold-out, eval counters ---- */

static int run_write_files(void *ctx, const ResumeFiles *f) {
    Run *r = ctx;
    if (r->ops->save(r->m, f->ckpt) != 0) return 1;
    return r->ops->save_state && r->ops->save_state(r->m, f->state) != 0;
}

static int run_save(void *ctx, TrainLoop *L) {
    Run *r = ctx;
    if (r->rank != 0) return 0;
    cJSON *st = train_loop_position(L);
    cJSON_AddNumberToObject(st, "next_row", (double)L->batch * r->recipe.batch);
    json_add_exact(st, "loss_sum", r->loss_sum);   /* bit for bit: see run_dir.h */
    run_add_holdout(st, r->o);
    cJSON_AddNumberToObject(st, "eval_seconds", r->eval_seconds);
    cJSON_AddNumberToObject(st, "eval_examples", (double)r->eval_examples);
    cJSON_AddItemToObject(st, "labels", run_labels_json(r->t));   /* the order the weights were trained for */
    /* the kept epoch's per-label table: a run resumed past that epoch cannot evaluate it again */
    if (r->best_details) cJSON_AddItemToObject(st, "best_details", cJSON_Duplicate(r->best_details, 1));
    int rc = resume_write(r->o->out_dir, st, run_write_files, r);
    cJSON_Delete(st);
    return rc;
}

static int run_read_files(void *ctx, const ResumeFiles *f, const cJSON *st) {
    Run *r = ctx;
    const char *dir = f->dir;
    if (!trainer_same_run(st, r->o->config, r->o->seed, r->o->holdout)) {
        user_error("resume with the same settings, --seed and --holdout, or drop --resume to start over",
                   "%s/%s: the interrupted run used other settings", dir, RUN_TRAINER_STATE);
        return RESUME_OTHER;
    }
    cJSON *labels = run_labels_json(r->t);
    const cJSON *had = cJSON_GetObjectItemCaseSensitive(st, "labels");
    int same = !had || cJSON_Compare(had, labels, 1);
    cJSON_Delete(labels);
    if (!same) {
        user_error_data("a run's label order is fixed when it starts: restore it, or start over with --overwrite",
                        "%s/%s: the interrupted run was trained with other labels or another order than %s's",
                        dir, RUN_TRAINER_STATE, r->t->display);
        return RESUME_OTHER;
    }
    if (!(r->m = r->ops->load(f->ckpt, r->t))) return 1;
    if (!r->ops->load_state)
        user_warning("model %s keeps no optimizer state: the resumed run will differ slightly from an "
                     "uninterrupted one", r->ops->name);
    else if (r->ops->load_state(r->m, f->state) != 0) {
        r->ops->free(r->m);
        r->m = NULL;
        return 1;
    }
    double next_row = run_config_number(st, "next_row", 0), evals = run_config_number(st, "eval_examples", 0);
    if (next_row >= 0 && next_row < 1e15) r->loop.batch = (long)next_row / r->recipe.batch;   /* before "batch" was */
    if (!(next_row >= 0 && next_row < 1e15) || !(evals >= 0 && evals < 1e15) || train_loop_restore(&r->loop, st)) {
        user_error_data("delete it to start over", "%s/%s: a position out of range (damaged)", dir, RUN_TRAINER_STATE);
        r->ops->free(r->m);
        r->m = NULL;
        return 1;
    }
    r->loss_sum = json_exact(st, "loss_sum", 0);
    const cJSON *details = cJSON_GetObjectItemCaseSensitive(st, "best_details");
    if (cJSON_IsObject(details)) {
        cJSON_Delete(r->best_details);
        r->best_details = cJSON_Duplicate(details, 1);
    }
    r->eval_seconds = run_config_number(st, "eval_seconds", 0);
    r->eval_examples = (long)evals;
    return 0;
}

typedef struct {
    int length, pos, row;
} LengthKey;

/* Longest first; ties in shuffled order (pos), so the order is total. */
static int length_key_cmp(const void *a, const void *b) {
    const LengthKey *x = a, *y = b;
    if (x->length != y->length) return x->length > y->length ? -1 : 1;
    return (x->pos > y->pos) - (x->pos < y->pos);
}

void trainer_epoch_order(int *perm, int n, uint64_t seed, int epoch, int batch, const int *lengths) {
    for (int i = 0; i < n; i++) perm[i] = i;
    Rng rng;
    rng_seed_stream(&rng, seed ^ TRAINER_SHUFFLE_SALT, (uint64_t)epoch);
    rng_shuffle_int(&rng, perm, n);
    if (!lengths || batch < 1 || n <= batch) return;
    long group = (long)batch * TRAINER_LENGTH_GROUP_BATCHES;
    LengthKey *key = xmalloc(sizeof(LengthKey) * (size_t)(group < n ? group : n));
    int *order = xmalloc(sizeof(int) * (size_t)TRAINER_LENGTH_GROUP_BATCHES);
    int *sorted = xmalloc(sizeof(int) * (size_t)(group < n ? group : n));
    for (int g0 = 0; g0 < n; g0 += (int)group) {
        int m = n - g0 < group ? n - g0 : (int)group;
        for (int i = 0; i < m; i++) key[i] = (LengthKey){lengths[perm[g0 + i]], i, perm[g0 + i]};
        qsort(key, (size_t)m, sizeof *key, length_key_cmp);
        /* The group's full batches in a random order; a last partial batch
         * (the epoch's shortest rows) stays at the end. */
        int full = m / batch;
        for (int b = 0; b < full; b++) order[b] = b;
        rng_shuffle_int(&rng, order, full);
        for (int b = 0; b < full; b++)
            for (int j = 0; j < batch; j++) sorted[b * batch + j] = key[order[b] * batch + j].row;
        for (int i = full * batch; i < m; i++) sorted[i] = key[i].row;
        memcpy(perm + g0, sorted, sizeof(int) * (size_t)m);
    }
    free(key);
    free(order);
    free(sorted);
}

/* ---- the loop's client (loop.h): an epoch is the rows in trainer_epoch_order, in batches ---- */

/* The steps and their head: the loss settings, per-example weights, and a
 * resumed run's last label-error class weights (its last epoch record's). */
static void run_make_steps(Run *r, const TrainLoop *L) {
    r->steps = train_step_create(r->ops, r->m, &r->d.train, r->d.train_e);
    train_step_configure(r->steps, r->o->config);
    Head *h = train_step_head(r->steps);
    if (h && r->o->example_weights && head_example_weights(h, r->o->example_weights) != 0)
        DIE("trainer: example weights not checked");
    int last = cJSON_GetArraySize(L->history);
    const cJSON *cw = last ? cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(L->history, last - 1), "class_weights") : NULL;
    if (h && h->label_error && cJSON_GetArraySize(cw) == h->K) {
        float w[TASK_MAX_LABELS];
        for (int k = 0; k < h->K; k++) w[k] = (float)cJSON_GetArrayItem(cw, k)->valuedouble;
        head_set_class_weights(h, w);
    }
}

/* Per-example weights (stacked boosting) fit this run: 0, or EXIT_USAGE after a message. */
static int run_check_example_weights(const Run *r) {
    const TrainerOptions *o = r->o;
    if (!o->example_weights) return 0;
    const char *why = !r->ops->forward ? "its output layer is its loss (no head to weigh rows in)"
                      : r->t->multi_label || r->t->num_labels == 1 ? "the task is not single-label classification"
                      : o->holdout > 0 ? "a hold-out moves rows" : NULL;
    if (!why && o->num_example_weights != r->d.train.n) why = "the weights are not one per training row (pair_swap?)";
    if (!why) return 0;
    user_error_usage("boost a single-label classifier with logits (textcnn, bilstm, ...)",
                     "%s on %s takes no per-example weights: %s", r->ops->name, r->t->display, why);
    return EXIT_USAGE;
}

static long run_begin(void *ctx, TrainLoop *L) {
    Run *r = ctx;
    trainer_epoch_order(r->perm, r->d.train.n, r->o->seed, L->epoch, r->recipe.batch, r->lengths);
    matmul_set_precision(r->precision);
    return (r->d.train.n + r->recipe.batch - 1) / r->recipe.batch;
}

static int run_step(void *ctx, TrainLoop *L, double *mean_loss) {
    Run *r = ctx;
    int n = r->d.train.n, i = (int)(L->batch * r->recipe.batch);
    int b = n - i < r->recipe.batch ? n - i : r->recipe.batch;
    /* This rank's contiguous share of the global batch (all of it in one
     * process); a rank may get none of a last batch smaller than N, and
     * still joins the gradient sum. */
    int lo = (int)((long)b * r->rank / r->size), hi = (int)((long)b * (r->rank + 1) / r->size);
    TrainState st = {
        .step = L->step, .total_steps = r->total_steps, .epoch = L->epoch,
        .progress = (double)L->step / (double)r->total_steps, .lr = schedule_lr(&r->sched, L->step),
        .share = (double)(hi - lo) / (double)b, .rank = r->rank, .seed = r->o->seed, .bucket_mb = r->bucket_mb,
    };
    if (!r->steps) run_make_steps(r, L);
    double loss = train_step_run(r->steps, r->perm + i + lo, hi - lo, &st);
    if (r->size > 1) {   /* the global batch's mean: the ranks' means weighted by their shares */
        loss *= st.share;
        dist_allreduce_doubles(&loss, 1);
    }
    r->loss_sum += loss * b;
    *mean_loss = loss;
    return 0;
}

static void run_describe(void *ctx, const TrainLoop *L, char *text, size_t cap) {
    const Run *r = ctx;
    long rows = L->batch * r->recipe.batch < r->d.train.n ? L->batch * r->recipe.batch : r->d.train.n;
    snprintf(text, cap, "loss %.4f", rows ? r->loss_sum / (double)rows : 0.0);
}

/* Metrics of every dev split into rec ({"dev": {...}}); returns the selection score. */
static double run_evaluate(Run *r, cJSON *rec) {
    int k = evaluate_num_outputs(r->t);
    double score = NAN;
    for (int s = 0; s < r->d.num_dev; s++) {
        int n = r->d.dev[s].n;
        float *out = xmalloc(sizeof(float) * (size_t)(n ? n : 1) * (size_t)k);  /* (n, K) */
        double secs;
        evaluate_predict_all(r->ops, r->m, r->d.dev_e[s], n, r->t, r->recipe.eval_batch, out, &secs);
        r->eval_seconds += secs;
        r->eval_examples += n;
        if (s == 0 && r->t->multi_label) {   /* threshold=tuned: chosen on the selection split */
            uint8_t *gold = decision_gold(&r->d.dev[0], r->t->num_labels);
            decision_tune(&r->decision, out, gold, n);
            free(gold);
        }
        cJSON *metrics = evaluate_metrics_rule(r->t, &r->d.dev[s], out, &r->decision);
        if (s == 0) {
            cJSON_Delete(r->details);
            r->details = evaluate_details(r->t, &r->d.dev[s], out, &r->decision);
        }
        if (s == 0) score = evaluate_score(r->t, metrics);
        Head *h = s == 0 && r->steps ? train_step_head(r->steps) : NULL;
        if (h && h->label_error) {   /* the next epoch's class weights, from this one's dev accuracies */
            head_label_error_update(h, &r->d.dev[0], out);
            cJSON *cw = cJSON_AddArrayToObject(rec, "class_weights");
            for (int k = 0; k < h->K; k++) cJSON_AddItemToArray(cw, cJSON_CreateNumber(h->class_weight[k]));
        }
        double loss = s == 0 ? dev_loss(r->t, &r->d.dev[s], out) : NAN;   /* breaks a tie (loop.c) */
        if (isfinite(loss)) cJSON_AddNumberToObject(rec, "dev_loss", loss);
        cJSON_AddItemToObject(rec, r->d.dev_split[s]->name, metrics);
        free(out);
    }
    return score;
}

/* "epoch 2/3  loss 0.4123  dev accuracy 91.23 f1 88.10  (best)" on stderr. */
static void run_log_epoch(const Run *r, const cJSON *rec, int epoch, double loss, int is_best) {
    if (!r->o->show_progress) return;
    fprintf(stderr, "epoch %d/%d  loss %.4f ", epoch + 1, r->recipe.epochs, loss);
    trainer_print_dev(&r->d, rec);
    fprintf(stderr, "%s\n", is_best ? "  (best)" : "");
}

/* The epoch's record: evaluate, keep the checkpoint when it is the best so far. */
static int run_end(void *ctx, TrainLoop *L, double seconds) {
    Run *r = ctx;
    matmul_set_precision(MATMUL_FP32);   /* evaluation and checkpoints: fp32 */
    double loss = r->loss_sum / r->d.train.n;
    r->loss_sum = 0;
    cJSON *rec = cJSON_CreateObject();
    cJSON_AddNumberToObject(rec, "epoch", L->epoch + 1);
    cJSON_AddNumberToObject(rec, "loss", loss);
    cJSON_AddNumberToObject(rec, "seconds", seconds);
    double score = run_evaluate(r, rec);
    cJSON_AddNumberToObject(rec, "score", isfinite(score) ? score : 0.0);
    int is_best = train_loop_record(L, rec, score);
    char path[4200];
    file_join(r->o->out_dir, RUN_CKPT, path, sizeof path);
    /* one rank writes (the same weights on all); a model saves through core/checkpoint: atomically */
    if (is_best && r->rank == 0 && r->ops->save(r->m, path) != 0) return 1;
    if (is_best && r->rank == 0 && decision_save(&r->decision, r->t, r->o->out_dir) != 0) return 1;
    if (is_best) {
        cJSON_Delete(r->best_details);
        r->best_details = r->details;
        r->details = NULL;
    }
    run_log_epoch(r, rec, L->epoch, loss, is_best);
    return 0;
}

static const TrainLoopOps RUN_LOOP = {.begin = run_begin, .step = run_step, .describe = run_describe,
                                      .end = run_end, .save = run_save};

static char *selection_text(const Run *r) {
    char buf[128];
    if (r->t->metrics[1] != METRIC_NONE && !r->t->multi_label)   /* evaluate_score */
        snprintf(buf, sizeof buf, "mean of %s and %s on %s", metric_name(r->t->metrics[0]),
                 metric_name(r->t->metrics[1]), r->d.dev_split[0]->name);
    else
        snprintf(buf, sizeof buf, "%s on %s", metric_name(r->t->metrics[0]), r->d.dev_split[0]->name);
    return xstrdup(buf);
}

static cJSON *run_results(const Run *r) {
    const TrainerOptions *o = r->o;
    cJSON *j = run_results_head(o->command, o->seed, o->threads, o->config);
    cJSON_AddItemToObject(j, "inputs", cJSON_Duplicate(r->loop.inputs, 1));   /* what reuse checks */
    run_add_holdout(j, o);
    cJSON_AddStringToObject(j, "task", r->t->name);
    cJSON_AddStringToObject(j, "model", r->ops->name);
    cJSON_AddItemToObject(j, "labels", run_labels_json(r->t));   /* checked by run_dir_check_labels */
    cJSON_AddNumberToObject(j, "num_params", (double)r->ops->num_params(r->m));
    cJSON_AddNumberToObject(j, "train_examples", r->d.train.n);
    cJSON_AddStringToObject(j, "precision", MATMUL_PRECISION_NAMES[r->precision]);   /* what ran */
    if (r->size > 1) {
        cJSON_AddNumberToObject(j, "ranks", r->size);   /* data-parallel processes, each with `threads` */
        /* Rank 0's gradient sums in this process (a resumed run: since the
         * resume): buckets summed, and those started during the backward. */
        DistStats d = dist_stats();
        cJSON *g = cJSON_AddObjectToObject(j, "gradient_sums");
        cJSON_AddNumberToObject(g, "sums", (double)d.calls);
        cJSON_AddNumberToObject(g, "buckets", (double)d.buckets);
        cJSON_AddNumberToObject(g, "buckets_started_during_backward", (double)d.buckets_early);
    }
    double secs = r->loop.seconds;
    cJSON_AddNumberToObject(j, "train_seconds", secs);
    cJSON_AddNumberToObject(j, "train_examples_per_sec", secs > 0 ? (double)r->d.train.n * r->recipe.epochs / secs : 0);
    cJSON_AddNumberToObject(j, "eval_examples_per_sec",
                            r->eval_seconds > 0 ? (double)r->eval_examples / r->eval_seconds : 0);
    char *sel = selection_text(r);
    cJSON_AddStringToObject(j, "selection", sel);
    free(sel);
    if (o->intermediate) cJSON_AddItemToObject(j, INTERMEDIATE_KEY, cJSON_Duplicate(o->intermediate, 1));
    cJSON *head = r->steps ? train_step_describe(r->steps) : NULL;   /* the loss that ran */
    if (head) cJSON_AddItemToObject(j, "head", head);
    /* the kept epoch's per-label table on the selection split (a resumed
     * run's from its resume point) */
    if (r->best_details)
        cJSON_AddItemToObject(j, "details", cJSON_Duplicate(r->best_details, 1));
    cJSON_AddItemToObject(j, "epochs", cJSON_Duplicate(r->loop.history, 1));
    cJSON_AddItemToObject(j, "best", cJSON_Duplicate(r->loop.best, 1));
    return j;
}

/* A finished or interrupted run in out_dir is not trained over unless asked
 * (nothing is written yet when this is checked); asked (--overwrite), the run
 * trains in a stage swapped in when it finished (run_txn.h). 0, or the exit
 * code after a message. */
static int run_refuse_finished(Run *r) {
    const char *dir = r->txn.dir[0] ? r->txn.dir : r->o->out_dir;
    int rc = run_dir_check(r->o->run_kind, dir, r->o->out_dir, r->o->resume, r->o->overwrite, r->rank == 0);
    if (rc || r->rank != 0) return rc;
    if (run_dir_stage(&r->txn, r->o->overwrite, r->o->resume) != 0) return 1;
    ((TrainerOptions *)r->o)->out_dir = r->txn.work;   /* trainer_run's own copy */
    r->loop.out_dir = r->txn.work;
    return 0;
}

/* Model and features: resumed, or fresh (from o->model_config when given:
 * an intermediate stage's run), then every split encoded once. 0, or the
 * exit code after a message. */
static int run_prepare(Run *r) {
    if (r->o->resume && run_dir_check(r->o->run_kind, r->txn.dir[0] ? r->txn.dir : r->o->out_dir, r->o->out_dir, 1,
                                      r->o->overwrite, r->rank == 0))
        return EXIT_USAGE;
    if (r->o->resume && resume_read(r->o->out_dir, run_read_files, r) > 0) return 1;
    if (!r->m) {
        const cJSON *from = r->o->model_config ? r->o->model_config : r->o->config;
        r->m = r->ops->create(from, r->t, &r->d.train, r->o->seed);
        /* A finished run is refused after create (its settings errors come
         * first) and before every split is encoded. */
        int rc;
        if (r->m && (rc = run_refuse_finished(r)) != 0) return rc;
    }
    if (!r->m) return 1;
    r->d.train_e = r->ops->encode(r->m, &r->d.train);
    for (int s = 0; s < r->d.num_dev; s++) r->d.dev_e[s] = r->ops->encode(r->m, &r->d.dev[s]);
    if (!r->d.train_e) return 1;
    r->perm = xmalloc(sizeof(int) * (size_t)r->d.train.n);
    if (r->group_by_length) {
        r->lengths = xmalloc(sizeof(int) * (size_t)(r->d.train.n ? r->d.train.n : 1));
        for (int i = 0; i < r->d.train.n; i++) r->lengths[i] = r->ops->length(r->d.train_e, i);
    }
    for (int s = 0; s < r->d.num_dev; s++)
        if (!r->d.dev_e[s]) return 1;
    return 0;
}

static void run_free(Run *r) {
    trainer_splits_free(r->ops, &r->d);
    train_step_free(r->steps);
    cJSON_Delete(r->details);
    cJSON_Delete(r->best_details);
    free(r->lengths);
    free(r->perm);
    if (r->m) r->ops->free(r->m);
    train_loop_free(&r->loop);
}

/* Data parallel: every rank must train the same run on the same data from
 * the same point (a resumed one included); a rank that differs ends the job
 * here with one message, not in a hang or a silently different model. */
static int run_check_ranks(const Run *r) {
    char *cfg = cJSON_PrintUnformatted(r->o->config);
    uint64_t h = dist_hash(DIST_HASH_INIT, cfg, strlen(cfg));
    free(cfg);
    const TrainLoop *L = &r->loop;
    long facts[6 + TASK_MAX_SPLITS] = {(long)r->o->seed, r->d.train.n, L->epoch, L->batch, L->step, r->d.num_dev};
    for (int s = 0; s < r->d.num_dev; s++) facts[6 + s] = r->d.dev[s].n;
    h = dist_hash(h, r->t->name, strlen(r->t->name));
    h = dist_hash(h, facts, sizeof facts);
    return dist_check_same(h, "the run (task, data size, config, seed, or the point resumed from)");
}

/* What is about to run, once on stderr: a log then says what it is a log of. */
static void run_banner(const Run *r) {
    char *settings = cJSON_PrintUnformatted(r->o->config), ranks[48] = "";
    const TrainerRecipe *c = &r->recipe;
    if (r->size > 1) snprintf(ranks, sizeof ranks, " x %d data-parallel ranks", r->size);
    fprintf(stderr, "%s %s: %d training examples, %s %d examples; %d epochs x %ld steps of %d = %ld steps, lr %g "
            "(%s, warm-up %.0f%%), seed %llu, %d threads%s -> %s\nsettings: %s\n",
            r->ops->name, r->t->display, r->d.train.n, r->d.dev_split[0]->name, r->d.dev[0].n, c->epochs,
            (long)((r->d.train.n + c->batch - 1) / c->batch), c->batch, r->total_steps, (double)c->lr, c->schedule,
            100 * c->warmup, (unsigned long long)r->o->seed, r->o->threads, ranks, r->o->out_dir, settings);
    free(settings);
}

/* A user's dataset (tasks/user_data.h) beside the model, as dataset.json:
 * what eval and predict read the labels and files from. */
static int run_record_dataset(const Run *r) {
    char path[4400];
    file_join(r->o->out_dir, USER_DATA_FILE, path, sizeof path);
    return user_data_save(r->t, path) ? 1 : 0;
}

int trainer_run(const TrainerOptions *opt, cJSON **results) {
    TrainerOptions own = *opt;
    int rank = dist_rank(), size = dist_size();
    own.show_progress = opt->show_progress && rank == 0;   /* one rank speaks */
    const TrainerOptions *o = &own;
    Run r = {.o = o, .t = o->task, .ops = o->ops, .rank = rank, .size = size};
    if (results) *results = NULL;
    if (trainer_check_parallel(o->ops) != 0) return EXIT_USAGE;
    TrainLoop *L = &r.loop;
    train_loop_init(L, &RUN_LOOP, &r, o->out_dir, o->config, o->seed);
    L->checkpoint_every = o->checkpoint_every, L->show_progress = o->show_progress, L->rank = rank;
    int rc = run_read_settings(&r);
    L->epochs = r.recipe.epochs;
    if (rc == 0) rc = run_load_data(&r);
    if (rc == 0) rc = run_check_example_weights(&r);
    /* Settings that cannot fit are refused before the directory is touched. */
    if (rc == 0 && model_check_memory(o->ops, o->model_config ? o->model_config : o->config, o->task, &r.d.train))
        rc = EXIT_USAGE;
    /* The directory: locked (rank 0), and where this run works (run_txn.h). */
    r.txn.kind = o->run_kind;
    if (rc == 0 && rank == 0) rc = run_dir_open(&r.txn, opt->out_dir, o->resume);
    else if (rc == 0) run_dir_work(opt->out_dir, o->run_kind, o->resume, r.txn.work, sizeof r.txn.work);
    if (rc == 0) own.out_dir = L->out_dir = r.txn.work;
    if (rc == 0) rc = run_prepare(&r);
    /* Data parallel: every rank has read what it needs from out_dir before
     * rank 0 writes there, and they go on together or not at all. */
    if (size > 1) {
        rc = dist_max_int(rc);
        if (rc == 0 && run_check_ranks(&r)) rc = EXIT_USAGE;
    }
    if (rc == 0 && rank == 0) rc = run_dir_begin(o->out_dir, RUN_RESULTS, o->config);
    if (rc == 0 && rank == 0 && o->task->user) rc = run_record_dataset(&r);
    if (rc == 0) {
        r.total_steps = (long)r.recipe.epochs * ((r.d.train.n + r.recipe.batch - 1) / r.recipe.batch);
        r.sched = trainer_schedule(&r.recipe, r.total_steps);
        if (o->show_progress) run_banner(&r);
        if (rank == 0 && r.d.dev[0].n < DEV_LOSS_MIN_SELECT_ROWS)
            user_warning("%s has %d rows: too few to select an epoch on (one row is %.1f points); ties go to the "
                         "lower dev loss, then the later epoch", r.d.dev_split[0]->name, r.d.dev[0].n,
                         100.0 / (r.d.dev[0].n ? r.d.dev[0].n : 1));
        /* A user's dev file that repeats training rows (the same file twice, or splits cut with duplicates):
         * its score is how well the rows are fitted. GLUE's splits are what they are. */
        int shared = rank == 0 && o->task->user ? dataset_shared_rows(&r.d.dev[0], &r.d.train) : 0;
        if (shared)
            user_warning("%d of the %d %s rows (%.1f%%) are in the training data too, word for word: their score "
                         "is how well the model fits them, not how it does on text it has not seen; give a dev file "
                         "of other rows", shared, r.d.dev[0].n, r.d.dev_split[0]->name, 100.0 * shared / r.d.dev[0].n);
        dist_stats_reset();   /* results.json's gradient_sums count the training's */
        rc = train_loop_run(L);
        matmul_set_precision(MATMUL_FP32);
    }
    if (rc == 0) {
        cJSON *res = run_results(&r);
        rc = rank == 0 ? run_dir_finish(o->out_dir, RUN_RESULTS, res, 0) : 0;
        if (rc == 0 && rank == 0) rc = run_dir_commit(&r.txn);
        if (rc == 0 && results) *results = res;
        else cJSON_Delete(res);
    }
    run_dir_close(&r.txn, rc == 0);
    run_free(&r);
    return rc;
}
