/* trainer.c — the fine-tuning loop (see trainer.h).
 *
 * One run is: check the config, load the splits, create (or resume) the model,
 * encode the splits once, then per epoch shuffle → train steps → evaluate every
 * dev split → keep the best checkpoint → save the state needed to resume.
 * results.json is written only when the run completes, so its presence means a
 * finished run (`glue compare` relies on that).
 *
 * Data parallel (trainer.h): every rank runs all of this; the files are
 * written by rank 0 only (run_save_atomic, run_save_progress,
 * run_write_outputs return at once elsewhere). The collectives, entered by
 * every rank at the same point: the agreement after preparation and the hash
 * check (trainer_run), and per step the interrupt flag, the gradient sum
 * (inside train_step_run) and the loss. A failed save on rank 0 ends its process
 * with a non-zero status, and dist_finalize then aborts the job. */
#include "train/trainer.h"

#include "core/blas.h"
#include "core/checkpoint.h"
#include "core/common.h"
#include "core/dist.h"
#include "core/files.h"
#include "core/interrupt.h"
#include "core/params.h"
#include "core/rng.h"
#include "train/evaluate.h"
#include "experiments/intermediate.h"
#include "models/run_config.h"
#include "train/run_dir.h"
#include "train/step.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Limits that catch a mistyped setting before hours are spent. */
/* Mixed into the seed for the shuffle streams, so they never coincide with the
 * streams a model draws its initialisation or dropout from. */
#define TRAINER_SHUFFLE_SALT 0x5348554646ull

typedef struct Run {
    const TrainerOptions *o;
    const Task *t;
    const ModelOps *ops;
    Model *m;
    int rank, size;              /* data parallel (dist.h); 0 of 1 in one process */
    Dataset train;
    Encoded *train_e;
    int num_dev;
    const TaskSplit *dev_split[TASK_MAX_SPLITS];
    Dataset dev[TASK_MAX_SPLITS];
    Encoded *dev_e[TASK_MAX_SPLITS];
    /* Settings the loop reads from the config. */
    int epochs, batch, eval_batch;
    float lr;
    double warmup;
    const char *schedule;
    double bucket_mb;            /* data parallel: the gradient sum's buckets (TrainState) */
    int group_by_length;         /* batches of rows of about one length (trainer_epoch_order) */
    MatmulPrecision precision;   /* of the training steps' products (RUN_SETTING_PRECISION), as it runs here */
    int *lengths;                /* then each training row's length, else NULL */
    /* Progress, saved in resume/trainer.json at the end of each epoch and every
     * checkpoint_every steps. */
    int start_epoch;             /* first epoch still to run (resume) */
    int start_row;               /* where in start_epoch's shuffled order to continue */
    double start_loss_sum;       /* start_epoch's loss sum over the rows before start_row */
    long step, total_steps;
    cJSON *history;              /* array of per-epoch records */
    cJSON *best;                 /* the best epoch's record, NULL before the first */
    double best_score;
    double train_seconds, eval_seconds;
    long eval_examples;
    cJSON *intermediate;         /* the intermediate stage's record (intermediate.h), or NULL */
    TrainStep *steps;            /* forward, head, backward, sum, update (step.h) */
} Run;

/* The progress line of an epoch on stderr: bar, loss, examples/s, ETA. On a
 * terminal redrawn in place at most every PROGRESS_INTERVAL seconds; into a
 * file or pipe (a job's log) one line at most every PROGRESS_LOG_INTERVAL
 * seconds, so that a long epoch is never minutes of silence. */
#define PROGRESS_INTERVAL 0.2
#define PROGRESS_LOG_INTERVAL 30.0
#define PROGRESS_WIDTH 24

typedef struct Progress {
    const char *label;
    long total;
    double start, last;
    int show, tty;
} Progress;

static void trainer_progress_start(Progress *p, const char *label, long total, int show) {
    double now = now_seconds();
    *p = (Progress){.label = label, .total = total, .start = now, .last = now, .show = show, .tty = show && isatty(2)};
}

static void trainer_progress_draw(Progress *p, long done, double loss, int final) {
    double now = now_seconds();
    if (!p->show) return;
    if (!p->tty) {   /* a log: a plain line now and then, none at the end (the epoch line follows) */
        if (final || now - p->last < PROGRESS_LOG_INTERVAL) return;
        p->last = now;
        double secs = now - p->start, rate = secs > 0 ? done / secs : 0;
        double eta = rate > 0 ? (p->total - done) / rate : 0;
        fprintf(stderr, "%s: %ld/%ld examples (%.0f%%), loss %.4f, %.0f ex/s, ETA %d:%02d\n", p->label, done,
                p->total, p->total ? 100.0 * done / p->total : 100.0, loss, rate, (int)(eta / 60), (int)eta % 60);
        fflush(stderr);
        return;
    }
    if (!final && now - p->last < PROGRESS_INTERVAL) return;
    p->last = now;
    double frac = p->total ? (double)done / (double)p->total : 1.0, secs = now - p->start;
    double rate = secs > 0 ? done / secs : 0, eta = rate > 0 ? (p->total - done) / rate : 0;
    char bar[PROGRESS_WIDTH + 1];
    for (int i = 0; i < PROGRESS_WIDTH; i++) bar[i] = i < (int)(frac * PROGRESS_WIDTH) ? '=' : ' ';
    bar[PROGRESS_WIDTH] = '\0';
    fprintf(stderr, "\r%s [%s] %3.0f%%  loss %.4f  %.0f ex/s  %s %d:%02d ", p->label, bar, 100 * frac, loss, rate,
            final ? "took" : "ETA", (int)((final ? secs : eta) / 60), (int)(final ? secs : eta) % 60);
    if (final) fputc('\n', stderr);
    fflush(stderr);
}

float trainer_lr(float lr, const char *schedule, double warmup, long step, long total) {
    long warm = (long)(warmup * (double)total);
    if (step < warm) return lr * (float)(step + 1) / (float)warm;
    if (schedule && strcmp(schedule, "constant") == 0) return lr;
    double p = (double)(step - warm) / (double)(total - warm > 0 ? total - warm : 1);
    if (p > 1) p = 1;
    if (schedule && strcmp(schedule, "cosine") == 0) return (float)(lr * 0.5 * (1.0 + cos(M_PI * p)));
    return (float)(lr * (1.0 - p));
}

int trainer_check_parallel(const ModelOps *ops) {
    if (dist_size() == 1 || ops->data_parallel) return 0;
    if (dist_rank() == 0)   /* every rank refuses; one says why */
        user_error("run it without mpirun, or fine-tune BERT (--model bert)",
                   "%s does not train data-parallel: under mpirun -np %d only BERT fine-tunes", ops->name,
                   dist_size());
    return EXIT_USAGE;
}

/* Settings that change no result beyond the order of sums. */
static const char *const TRAINER_FREE_KEYS[] = {"bucket_mb", NULL};
/* Settings added after runs were written (their configs lack them): absent
 * is the same as the value given here, the behaviour before them. */
static const struct {
    const char *key, *absent;   /* absent: the value as JSON */
} TRAINER_LATER_SETTINGS[] = {{"group_by_length", "false"}, {INTERMEDIATE_KEY, "\"" INTERMEDIATE_NONE "\""},
                              {"precision", "\"fp32\""}};

static int trainer_is_absent_value(const cJSON *it) {
    for (size_t i = 0; i < sizeof TRAINER_LATER_SETTINGS / sizeof TRAINER_LATER_SETTINGS[0]; i++) {
        if (strcmp(it->string, TRAINER_LATER_SETTINGS[i].key) != 0) continue;
        cJSON *v = cJSON_Parse(TRAINER_LATER_SETTINGS[i].absent);
        int same = cJSON_Compare(it, v, 1);
        cJSON_Delete(v);
        return same;
    }
    return 0;
}

static int trainer_key_in(const char *const *keys, const char *key) {
    for (; key && *keys; keys++)
        if (strcmp(key, *keys) == 0) return 1;
    return 0;
}

/* Every key of a that is not free is in b, equal (or a later setting, at
 * its value from before it in a and absent from b). */
static int trainer_config_within(const cJSON *a, const cJSON *b) {
    const cJSON *it;
    cJSON_ArrayForEach(it, a) {
        if (trainer_key_in(TRAINER_FREE_KEYS, it->string)) continue;
        const cJSON *o = cJSON_GetObjectItemCaseSensitive(b, it->string);
        if (!o && trainer_is_absent_value(it)) continue;
        if (!o || !cJSON_Compare(it, o, 1)) return 0;
    }
    return 1;
}

int trainer_config_same(const cJSON *a, const cJSON *b) {
    if (!cJSON_IsObject(a) || !cJSON_IsObject(b)) return a && b && cJSON_Compare(a, b, 1);
    return trainer_config_within(a, b) && trainer_config_within(b, a);
}

static int run_read_settings(Run *r) {
    const cJSON *c = r->o->config;
    SettingsReader s = settings_reader(c, r->ops->name, "glue finetune --help-settings lists the settings");
    s.required = 1;   /* every model's defaults have them */
    r->epochs = (int)settings_int(&s, "epochs", 1, 1, RUN_MAX_EPOCHS);
    r->batch = (int)settings_int(&s, "batch", 1, 1, RUN_MAX_BATCH);
    r->lr = (float)settings_real(&s, "lr", 1e-3, 1e-12, 10);
    s.required = 0;
    r->warmup = settings_real_below(&s, "warmup", 0.0, 0, 1);
    r->schedule = RUN_SCHEDULES[settings_choice(&s, "schedule", RUN_SCHEDULES, 3)];
    r->eval_batch = (int)settings_int(&s, "eval_batch", EVALUATE_BATCH_DEFAULT, 1, RUN_MAX_BATCH);
    r->bucket_mb = settings_real(&s, "bucket_mb", 2, 0, 1024);   /* data-parallel models have it */
    r->group_by_length = settings_bool(&s, "group_by_length", 0) && r->ops->length;
    int wanted = settings_choice(&s, "precision", MATMUL_PRECISION_NAMES, 2);
    if (s.failed) return EXIT_USAGE;
    r->precision = matmul_training_precision((MatmulPrecision)wanted, r->rank == 0);   /* run_train_epoch sets it */
    return 0;
}

/* The split a held-out run selects on (o->holdout): part of the training file. */
static const TaskSplit HELDOUT_SPLIT = {.name = TRAINER_HELDOUT_SPLIT};

/* Moves a fixed random o->holdout of the training examples into the one
 * evaluation split (TRAINER_HELDOUT_SPLIT): the same slice whatever the run's
 * seed and settings, so the trials of a search compete on the same examples
 * and the task's dev split is never looked at. 0 ok. */
static int run_hold_out(Run *r) {
    Dataset *tr = &r->train, *ho = &r->dev[0];
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
    r->dev_split[0] = &HELDOUT_SPLIT;
    r->num_dev = 1;
    free(out);
    free(perm);
    return 0;
}

/* Train split and the labelled dev splits: the selection split must load, the
 * others (MNLI mismatched) are reported when present. */
static int run_load_data(Run *r) {
    const Task *t = r->t;
    if (task_load(t, "train", r->o->data_root, r->o->strict, &r->train) != 0) return 1;
    if (r->train.n == 0) {
        user_error("check the file or fetch the data again: glue data fetch", "%s: the train split has no rows",
                   t->display);
        return 1;
    }
    /* "pair_swap": train on both orders of a symmetric pair task (a model whose
     * defaults lack the key never sees it set); after a hold-out, so that no
     * held-out pair is trained on in the other order. */
    int swap = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r->o->config, "pair_swap"));
    if (r->o->holdout > 0) {
        int rc = run_hold_out(r);
        return rc ? rc : swap && dataset_add_swapped_pairs(&r->train) != 0 ? EXIT_USAGE : 0;
    }
    if (swap && dataset_add_swapped_pairs(&r->train) != 0) return EXIT_USAGE;
    const TaskSplit *want[TASK_MAX_SPLITS];
    int n = task_dev_splits(t, want, TASK_MAX_SPLITS);
    if (n == 0) { user_error(NULL, "task %s has no labelled dev split to select a model on", t->name); return 1; }
    for (int i = 0; i < n; i++) {
        Dataset d;
        if (task_load(t, want[i]->name, r->o->data_root, r->o->strict, &d) != 0) {
            if (i == 0) return 1;
            user_warning("%s: %s not available, reporting %s only", t->display, want[i]->name, want[0]->name);
            continue;
        }
        r->dev_split[r->num_dev] = want[i];
        r->dev[r->num_dev++] = d;
    }
    return 0;
}

static void run_path(const Run *r, const char *file, char *out, size_t cap) {
    run_file_path(r->o->out_dir, file, out, cap);
}

/* Save through a temporary name so an interrupted save never replaces a good
 * model.ckpt with half a file. */
static int run_save_atomic(const Run *r, const char *file) {
    if (r->rank != 0) return 0;   /* the ranks hold the same weights; one writes them */
    char path[4096];
    run_path(r, file, path, sizeof path);
    AtomicFile out;
    atomic_begin(&out, path);
    if (r->ops->save(r->m, out.tmp) != 0) {
        atomic_abort(&out);
        user_error("check free disk space and permissions", "could not write %s", path);
        return -1;
    }
    return atomic_commit(&out);
}

/* The resume point: RUN_RESUME_DIR/{last.ckpt, last.state, trainer.json},
 * written as one rolling checkpoint directory (core/checkpoint.h) so that a
 * kill at any moment leaves a complete, consistent set (and the one before it
 * in RUN_RESUME_DIR.prev). */
static void run_resume_dir(const Run *r, char *out, size_t cap) { run_path(r, RUN_RESUME_DIR, out, cap); }

static void run_remove(const Run *r, const char *file) {
    char path[4096];
    run_path(r, file, path, sizeof path);
    unlink(path);
}

/* A resume point's trainer.json or a results.json was written with this
 * config, seed and hold-out fraction (recorded when > 0: it changes what the
 * run trains and selects on). */
static int run_identity_matches(const cJSON *st, const cJSON *config, uint64_t seed, double holdout) {
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(st, "seed");
    return trainer_config_same(cJSON_GetObjectItemCaseSensitive(st, "config"), config) && cJSON_IsNumber(s) &&
           (uint64_t)s->valuedouble == seed && run_config_number(st, "holdout", 0) == holdout;
}

/* The hold-out fraction beside the seed, where run_identity_matches reads it. */
static void run_add_holdout(cJSON *j, const TrainerOptions *o) {
    if (o->holdout > 0) cJSON_AddNumberToObject(j, "holdout", o->holdout);
}

int trainer_can_resume(const char *out_dir, const cJSON *config, uint64_t seed, double holdout) {
    char dirs[2][4300], path[4400];
    run_file_path(out_dir, RUN_RESUME_DIR, dirs[0], sizeof dirs[0]);
    checkpoint_dir_previous(dirs[0], dirs[1], sizeof dirs[1]);
    int can = 0;
    for (int i = 0; i < 2 && !can; i++) {
        run_file_path(dirs[i], RUN_TRAINER_STATE, path, sizeof path);
        cJSON *st = file_exists(path) ? json_file_read(path, 0) : NULL;
        can = st && run_identity_matches(st, config, seed, holdout);
        cJSON_Delete(st);
    }
    return can;
}

cJSON *trainer_finished_run(const char *dir, const cJSON *config, long seed, double holdout) {
    char path[4200], ckpt[4200];
    run_file_path(dir, RUN_RESULTS, path, sizeof path);
    run_file_path(dir, RUN_CKPT, ckpt, sizeof ckpt);
    if (!file_exists(path) || !file_exists(ckpt)) return NULL;
    cJSON *res = json_file_read(path, 0);
    if (res && seed >= 0 && run_identity_matches(res, config, (uint64_t)seed, holdout) &&
        cJSON_GetObjectItemCaseSensitive(res, "best"))
        return res;
    cJSON_Delete(res);
    return NULL;
}

/* Reads the resume point in dir: weights, optimizer state, progress. 0 ok; 1
 * after a message (missing or damaged file, other settings: *other = 1). */
static int run_resume_from(Run *r, const char *dir, int *other) {
    char path[4200];
    run_file_path(dir, RUN_TRAINER_STATE, path, sizeof path);
    cJSON *st = json_file_read(path, 1);
    if (!st) return 1;
    int rc = 1;
    if (!run_identity_matches(st, r->o->config, r->o->seed, r->o->holdout)) {
        user_error("resume with the same settings, --seed and --holdout, or drop --resume to start over",
                   "%s: the interrupted run used other settings", path);
        *other = 1;
        goto out;
    }
    run_file_path(dir, RUN_LAST_CKPT, path, sizeof path);
    r->m = r->ops->load(path, r->t);
    if (!r->m) goto out;
    if (r->ops->load_state) {
        run_file_path(dir, RUN_LAST_STATE, path, sizeof path);
        if (r->ops->load_state(r->m, path) != 0) goto out;
    } else {
        user_warning("model %s keeps no optimizer state: the resumed run will differ slightly from an "
                     "uninterrupted one", r->ops->name);
    }
    r->start_epoch = (int)run_config_number(st, "epoch", run_config_number(st, "epochs_done", 0));
    r->start_row = (int)run_config_number(st, "next_row", 0);
    r->start_loss_sum = json_exact(st, "loss_sum", 0);
    r->step = (long)run_config_number(st, "step", 0);
    r->train_seconds = run_config_number(st, "train_seconds", 0);
    r->eval_seconds = run_config_number(st, "eval_seconds", 0);
    r->eval_examples = (long)run_config_number(st, "eval_examples", 0);
    cJSON *h = cJSON_DetachItemFromObjectCaseSensitive(st, "history");
    cJSON *b = cJSON_DetachItemFromObjectCaseSensitive(st, "best");
    if (h && cJSON_IsArray(h)) { cJSON_Delete(r->history); r->history = h; } else cJSON_Delete(h);
    if (b && cJSON_IsObject(b)) {
        cJSON_Delete(r->best);
        r->best = b;
        r->best_score = json_exact(st, "best_score", run_config_number(b, "score", -INFINITY));
    } else {
        cJSON_Delete(b);
    }
    rc = 0;
out:
    if (rc && r->m) { r->ops->free(r->m); r->m = NULL; }
    cJSON_Delete(st);
    return rc;
}

/* Picks up an interrupted run: the resume point, or the one before it when
 * that is damaged or missing (a kill between the two renames of a save).
 * Returns 0 (resumed, or nothing to resume) or 1. */
static int run_resume(Run *r) {
    char dir[4096], prev[4200];
    run_resume_dir(r, dir, sizeof dir);
    checkpoint_dir_previous(dir, prev, sizeof prev);
    int have = file_exists(dir), have_prev = file_exists(prev), other = 0;
    if (!have && !have_prev) {
        user_warning("no interrupted run in %s; starting from the beginning", r->o->out_dir);
        return 0;
    }
    int rc = have ? run_resume_from(r, dir, &other) : 1;
    if (rc && have_prev && !other) {
        user_warning("%s %s; continuing from %s, the resume point saved before it", dir,
                     have ? "is damaged (above)" : "is missing (a save was interrupted)", prev);
        rc = run_resume_from(r, prev, &other);
    }
    if (rc == 0 && r->o->show_progress)
        fprintf(stderr, "resuming %s at epoch %d of %d, row %d (step %ld)\n", r->o->out_dir, r->start_epoch + 1,
                r->epochs, r->start_row, r->step);
    return rc;
}

/* Writes what --resume needs to continue epoch `epoch` (0-based) at row
 * `next_row` of its shuffled order, loss_sum being the epoch's loss sum so far
 * (next_row 0: the epoch has not started). */
static int run_save_progress(Run *r, int epoch, int next_row, double loss_sum) {
    if (r->rank != 0) return 0;
    char dir[4096], tmp[4200], path[4400];
    run_resume_dir(r, dir, sizeof dir);
    if (checkpoint_dir_begin(dir, tmp, sizeof tmp) != 0) return 1;
    run_file_path(tmp, RUN_LAST_CKPT, path, sizeof path);
    if (r->ops->save(r->m, path) != 0) return 1;
    run_file_path(tmp, RUN_LAST_STATE, path, sizeof path);
    if (r->ops->save_state && r->ops->save_state(r->m, path) != 0) return 1;
    cJSON *st = cJSON_CreateObject();
    cJSON_AddNumberToObject(st, "epoch", epoch);
    cJSON_AddNumberToObject(st, "next_row", next_row);
    json_add_exact(st, "loss_sum", loss_sum);   /* bit for bit: see run_dir.h */
    json_add_exact(st, "best_score", r->best_score);
    cJSON_AddNumberToObject(st, "step", (double)r->step);
    cJSON_AddNumberToObject(st, "seed", (double)r->o->seed);
    run_add_holdout(st, r->o);
    cJSON_AddNumberToObject(st, "train_seconds", r->train_seconds);
    cJSON_AddNumberToObject(st, "eval_seconds", r->eval_seconds);
    cJSON_AddNumberToObject(st, "eval_examples", (double)r->eval_examples);
    cJSON_AddItemToObject(st, "config", cJSON_Duplicate(r->o->config, 1));
    cJSON_AddItemToObject(st, "history", cJSON_Duplicate(r->history, 1));
    if (r->best) cJSON_AddItemToObject(st, "best", cJSON_Duplicate(r->best, 1));
    run_file_path(tmp, RUN_TRAINER_STATE, path, sizeof path);
    int rc = json_file_write(path, st);
    cJSON_Delete(st);
    if (rc == 0) rc = checkpoint_dir_commit(dir);
    return rc ? 1 : 0;
}

/* The message of a run stopped by a signal: how to continue. */
static void run_report_interrupt(const Run *r, int sig, int epoch, int row) {
    fprintf(stderr, "%s at step %ld (epoch %d, row %d); saved %s/%s; continue with the same command and --resume\n",
            interrupt_name(sig), r->step, epoch + 1, row, r->o->out_dir, RUN_RESUME_DIR);
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

/* One pass over the shuffled training rows (from start_row when resuming into
 * this epoch), saving the resume point every checkpoint_every steps. Returns
 * 0, 1 when the loss is not finite (diverged) or a save failed, or 128 + the
 * signal after saving when SIGINT/SIGTERM arrived. *mean_loss gets the
 * example-weighted mean loss. */
static int run_train_epoch(Run *r, int epoch, double *mean_loss) {
    int n = r->train.n;
    int *perm = xmalloc(sizeof(int) * (size_t)n);
    trainer_epoch_order(perm, n, r->o->seed, epoch, r->batch, r->lengths);
    char label[64];
    snprintf(label, sizeof label, "epoch %d/%d", epoch + 1, r->epochs);
    Progress bar;
    trainer_progress_start(&bar, label, n, r->o->show_progress);
    int first = epoch == r->start_epoch ? r->start_row : 0;
    double loss_sum = epoch == r->start_epoch ? r->start_loss_sum : 0, t0 = now_seconds();
    int rc = 0;
    matmul_set_precision(r->precision);
    for (int i = first; i < n; i += r->batch) {
        int sig = dist_max_int(interrupt_pending());   /* the ranks stop at the same step */
        if (sig) {
            r->train_seconds += now_seconds() - t0, t0 = now_seconds();
            rc = run_save_progress(r, epoch, i, loss_sum);
            if (rc == 0) {
                if (r->rank == 0) run_report_interrupt(r, sig, epoch, i);
                rc = 128 + sig;
            }
            break;
        }
        int b = n - i < r->batch ? n - i : r->batch;
        /* This rank's contiguous share of the global batch (all of it in one
         * process); a rank may get none of a last batch smaller than N, and
         * still joins the gradient sum. */
        int lo = (int)((long)b * r->rank / r->size), hi = (int)((long)b * (r->rank + 1) / r->size);
        TrainState st = {
            .step = r->step, .total_steps = r->total_steps, .epoch = epoch,
            .progress = (double)r->step / (double)r->total_steps,
            .lr = trainer_lr(r->lr, r->schedule, r->warmup, r->step, r->total_steps),
            .share = (double)(hi - lo) / (double)b, .rank = r->rank, .seed = r->o->seed,
            .bucket_mb = r->bucket_mb,
        };
        if (!r->steps) r->steps = train_step_create(r->ops, r->m, &r->train, r->train_e);
        double loss = train_step_run(r->steps, perm + i + lo, hi - lo, &st);
        if (r->size > 1) {   /* the global batch's mean: the ranks' means weighted by their shares */
            loss *= st.share;
            dist_allreduce_doubles(&loss, 1);
        }
        r->step++;
        if (!isfinite(loss)) {   /* the same sum on every rank: all stop here */
            trainer_progress_draw(&bar, i, loss_sum / (i ? i : 1), 1);
            if (r->rank == 0)
                user_error("lower the learning rate (--lr) or enable gradient clipping",
                           "training diverged: loss is %g at step %ld (epoch %d)", loss, r->step, epoch + 1);
            rc = 1;
            break;
        }
        loss_sum += loss * b;
        trainer_progress_draw(&bar, i + b, loss_sum / (i + b), 0);
        long every = r->o->checkpoint_every;
        if (every > 0 && r->step % every == 0 && i + b < n) {   /* the epoch's end saves its own */
            r->train_seconds += now_seconds() - t0, t0 = now_seconds();
            if ((rc = run_save_progress(r, epoch, i + b, loss_sum)) != 0) break;
        }
    }
    matmul_set_precision(MATMUL_FP32);   /* evaluation and checkpoints: fp32 */
    if (rc == 0) trainer_progress_draw(&bar, n, loss_sum / n, 1);
    r->train_seconds += now_seconds() - t0;
    *mean_loss = loss_sum / n;
    free(perm);
    return rc;
}

/* Metrics of every dev split into rec ({"dev": {...}}); returns the selection score. */
static double run_evaluate(Run *r, cJSON *rec) {
    int k = evaluate_num_outputs(r->t);
    double score = NAN;
    for (int s = 0; s < r->num_dev; s++) {
        int n = r->dev[s].n;
        float *out = xmalloc(sizeof(float) * (size_t)(n ? n : 1) * (size_t)k);  /* (n, K) */
        double secs;
        evaluate_predict_all(r->ops, r->m, r->dev_e[s], n, k, r->eval_batch, out, &secs);
        r->eval_seconds += secs;
        r->eval_examples += n;
        cJSON *metrics = evaluate_metrics(r->t, &r->dev[s], out);
        if (s == 0) score = evaluate_score(r->t, metrics);
        cJSON_AddItemToObject(rec, r->dev_split[s]->name, metrics);
        free(out);
    }
    return score;
}

/* "epoch 2/3  loss 0.4123  dev accuracy 91.23 f1 88.10  (best)" on stderr. */
static void run_log_epoch(const Run *r, const cJSON *rec, int epoch, double loss, int is_best) {
    if (!r->o->show_progress) return;
    fprintf(stderr, "epoch %d/%d  loss %.4f ", epoch + 1, r->epochs, loss);
    for (int s = 0; s < r->num_dev; s++) {
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(rec, r->dev_split[s]->name);
        fprintf(stderr, " %s", r->dev_split[s]->name);
        for (const cJSON *it = m ? m->child : NULL; it; it = it->next)
            fprintf(stderr, " %s %.2f", it->string, it->valuedouble);
    }
    fprintf(stderr, "%s\n", is_best ? "  (best)" : "");
}

/* Epoch record: evaluate, keep the checkpoint when it is the best so far. */
static int run_end_epoch(Run *r, int epoch, double loss, double seconds) {
    cJSON *rec = cJSON_CreateObject();
    cJSON_AddNumberToObject(rec, "epoch", epoch + 1);
    cJSON_AddNumberToObject(rec, "loss", loss);
    cJSON_AddNumberToObject(rec, "seconds", seconds);
    double score = run_evaluate(r, rec);
    cJSON_AddNumberToObject(rec, "score", isfinite(score) ? score : 0.0);
    /* Strictly better only: on ties the earlier (less trained) epoch stays. */
    int is_best = !r->best || (isfinite(score) && score > r->best_score);
    cJSON_AddItemToArray(r->history, rec);
    if (is_best) {
        cJSON_Delete(r->best);
        r->best = cJSON_Duplicate(rec, 1);
        r->best_score = isfinite(score) ? score : -INFINITY;
        if (run_save_atomic(r, RUN_CKPT) != 0) return 1;
    }
    run_log_epoch(r, rec, epoch, loss, is_best);
    if (epoch + 1 < r->epochs) return run_save_progress(r, epoch + 1, 0, 0);
    return 0;
}

static char *selection_text(const Run *r) {
    char buf[128];
    if (r->t->metrics[1] != METRIC_NONE)
        snprintf(buf, sizeof buf, "mean of %s and %s on %s", metric_name(r->t->metrics[0]),
                 metric_name(r->t->metrics[1]), r->dev_split[0]->name);
    else
        snprintf(buf, sizeof buf, "%s on %s", metric_name(r->t->metrics[0]), r->dev_split[0]->name);
    return xstrdup(buf);
}

static cJSON *run_results(const Run *r) {
    const TrainerOptions *o = r->o;
    cJSON *j = run_results_head(o->command, o->seed, o->threads, o->config);
    run_add_holdout(j, o);
    cJSON_AddStringToObject(j, "task", r->t->name);
    cJSON_AddStringToObject(j, "model", r->ops->name);
    cJSON_AddNumberToObject(j, "num_params", (double)r->ops->num_params(r->m));
    cJSON_AddNumberToObject(j, "train_examples", r->train.n);
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
    cJSON_AddNumberToObject(j, "train_seconds", r->train_seconds);
    cJSON_AddNumberToObject(j, "train_examples_per_sec",
                            r->train_seconds > 0 ? (double)r->train.n * r->epochs / r->train_seconds : 0);
    cJSON_AddNumberToObject(j, "eval_examples_per_sec",
                            r->eval_seconds > 0 ? (double)r->eval_examples / r->eval_seconds : 0);
    char *sel = selection_text(r);
    cJSON_AddStringToObject(j, "selection", sel);
    free(sel);
    if (r->intermediate) cJSON_AddItemToObject(j, INTERMEDIATE_KEY, cJSON_Duplicate(r->intermediate, 1));
    cJSON_AddItemToObject(j, "epochs", cJSON_Duplicate(r->history, 1));
    cJSON_AddItemToObject(j, "best", cJSON_Duplicate(r->best, 1));
    return j;
}

/* A finished run in out_dir is not trained over unless asked (nothing is
 * written yet when this is checked). 0, or EXIT_USAGE after a message. */
static int run_refuse_finished(const Run *r) {
    char done[4200];
    run_file_path(r->o->out_dir, RUN_RESULTS, done, sizeof done);
    if (r->o->resume || r->o->overwrite || !file_exists(done)) return 0;
    if (r->rank == 0)
        user_error("--overwrite replaces it, --out DIR trains elsewhere, glue eval scores it",
                   "%s already holds a finished run (%s)", r->o->out_dir, RUN_RESULTS);
    return EXIT_USAGE;
}

/* Model and features: resumed, or fresh (after the intermediate stage when
 * the config has one: it starts from that run), then every split encoded
 * once. 0, or the exit code after a message. */
static int run_prepare(Run *r) {
    if (r->o->resume && run_resume(r) != 0) return 1;
    if (!r->m) {
        cJSON *from = NULL;
        /* A finished run is refused before an intermediate stage's hours;
         * without one, after create (its settings errors come first) and
         * before every split is encoded. */
        int staged = strcmp(run_config_string(r->o->config, INTERMEDIATE_KEY, INTERMEDIATE_NONE), INTERMEDIATE_NONE);
        int rc = staged ? run_refuse_finished(r) : 0;
        if (rc == 0) rc = intermediate_stage(r->o, &from, &r->intermediate);
        if (rc != 0) return rc;
        r->m = r->ops->create(from ? from : r->o->config, r->t, &r->train, r->o->seed);
        cJSON_Delete(from);
        if (r->m && !staged && (rc = run_refuse_finished(r)) != 0) return rc;
    } else {
        r->intermediate = intermediate_record(r->o);   /* resumed: the stage ran before */
    }
    if (!r->m) return 1;
    r->train_e = r->ops->encode(r->m, &r->train);
    for (int s = 0; s < r->num_dev; s++) r->dev_e[s] = r->ops->encode(r->m, &r->dev[s]);
    if (!r->train_e) return 1;
    if (r->group_by_length) {
        r->lengths = xmalloc(sizeof(int) * (size_t)(r->train.n ? r->train.n : 1));
        for (int i = 0; i < r->train.n; i++) r->lengths[i] = r->ops->length(r->train_e, i);
    }
    for (int s = 0; s < r->num_dev; s++)
        if (!r->dev_e[s]) return 1;
    return 0;
}

static void run_free(Run *r) {
    for (int s = 0; s < r->num_dev; s++) {
        if (r->dev_e[s]) r->ops->encoded_free(r->dev_e[s]);
        dataset_free(&r->dev[s]);
    }
    train_step_free(r->steps);
    if (r->train_e) r->ops->encoded_free(r->train_e);
    free(r->lengths);
    if (r->m) r->ops->free(r->m);
    dataset_free(&r->train);
    cJSON_Delete(r->history);
    cJSON_Delete(r->best);
    cJSON_Delete(r->intermediate);
}

/* results.json at the end, then the resume files go. */
static int run_write_outputs(Run *r, cJSON *results) {
    if (r->rank != 0) return 0;
    char path[4096];
    run_path(r, RUN_RESULTS, path, sizeof path);
    if (json_file_write(path, results) != 0) return 1;
    char dir[4096];
    run_resume_dir(r, dir, sizeof dir);
    checkpoint_dir_remove(dir);
    return 0;
}

/* Data parallel: every rank must train the same run on the same data from
 * the same point (a resumed one included); a rank that differs ends the job
 * here with one message, not in a hang or a silently different model. */
static int run_check_ranks(const Run *r) {
    char *cfg = cJSON_PrintUnformatted(r->o->config);
    uint64_t h = dist_hash(DIST_HASH_INIT, cfg, strlen(cfg));
    free(cfg);
    long facts[6 + TASK_MAX_SPLITS] = {(long)r->o->seed, r->train.n, r->start_epoch, r->start_row, r->step,
                                       r->num_dev};
    for (int s = 0; s < r->num_dev; s++) facts[6 + s] = r->dev[s].n;
    h = dist_hash(h, r->t->name, strlen(r->t->name));
    h = dist_hash(h, facts, sizeof facts);
    return dist_check_same(h, "the run (task, data size, config, seed, or the point resumed from)");
}

/* What is about to run, once on stderr: a log then says what it is a log of. */
static void run_banner(const Run *r) {
    char *settings = cJSON_PrintUnformatted(r->o->config), ranks[48] = "";
    if (r->size > 1) snprintf(ranks, sizeof ranks, " x %d data-parallel ranks", r->size);
    fprintf(stderr, "%s %s: %d training examples, %s %d examples; %d epochs x %ld steps of %d = %ld steps, lr %g "
            "(%s, warm-up %.0f%%), seed %llu, %d threads%s -> %s\nsettings: %s\n",
            r->ops->name, r->t->display, r->train.n, r->dev_split[0]->name, r->dev[0].n, r->epochs,
            (long)((r->train.n + r->batch - 1) / r->batch), r->batch, r->total_steps, (double)r->lr, r->schedule,
            100 * r->warmup, (unsigned long long)r->o->seed, r->o->threads, ranks, r->o->out_dir, settings);
    free(settings);
}

int trainer_run(const TrainerOptions *opt, cJSON **results) {
    TrainerOptions own = *opt;
    int rank = dist_rank(), size = dist_size();
    own.show_progress = opt->show_progress && rank == 0;   /* one rank speaks */
    const TrainerOptions *o = &own;
    Run r = {.o = o, .t = o->task, .ops = o->ops, .rank = rank, .size = size, .history = cJSON_CreateArray(),
             .best_score = -INFINITY};
    if (results) *results = NULL;
    if (trainer_check_parallel(o->ops) != 0) {
        cJSON_Delete(r.history);
        return EXIT_USAGE;
    }
    int rc = run_read_settings(&r);
    if (rc == 0 && rank == 0) rc = file_make_dir(o->out_dir) ? 1 : 0;
    if (rc == 0) rc = run_load_data(&r);
    if (rc == 0) rc = run_prepare(&r);
    /* Data parallel: every rank has read what it needs from out_dir before
     * rank 0 writes there, and they go on together or not at all. */
    if (size > 1) {
        rc = dist_max_int(rc);
        if (rc == 0 && run_check_ranks(&r)) rc = EXIT_USAGE;
    }
    if (rc == 0 && rank == 0) {   /* config.json now, so a running job shows its settings */
        char path[4096];
        run_path(&r, RUN_CONFIG, path, sizeof path);
        run_remove(&r, RUN_RESULTS);   /* a stale one would look finished */
        rc = json_file_write(path, o->config) ? 1 : 0;
    }
    if (rc == 0) {
        r.total_steps = (long)r.epochs * ((r.train.n + r.batch - 1) / r.batch);
        if (o->show_progress) run_banner(&r);
        dist_stats_reset();   /* results.json's gradient_sums count the training's */
        interrupt_begin();
        for (int epoch = r.start_epoch; epoch < r.epochs && rc == 0; epoch++) {
            double loss, t0 = now_seconds();
            rc = run_train_epoch(&r, epoch, &loss);
            if (rc == 0) rc = run_end_epoch(&r, epoch, loss, now_seconds() - t0);
        }
        interrupt_end();
    }
    if (rc == 0) {
        cJSON *res = run_results(&r);
        rc = run_write_outputs(&r, res);
        if (rc == 0 && results) *results = res;
        else cJSON_Delete(res);
    }
    run_free(&r);
    return rc;
}
