/* loop.c — the step/epoch loop of every training run (see loop.h). */
#include "train/loop.h"

#include <cjson/cJSON.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>

#include "core/common.h"
#include "core/dist.h"
#include "core/files.h"
#include "core/interrupt.h"
#include "models/run_config.h"
#include "train/run_dir.h"
#include "train/run_inputs.h"

void train_loop_init(TrainLoop *L, const TrainLoopOps *ops, void *ctx, const char *out_dir, const cJSON *config,
                     uint64_t seed) {
    *L = (TrainLoop){.ops = ops, .ctx = ctx, .out_dir = out_dir, .config = config, .seed = seed};
    L->history = cJSON_CreateArray();
    L->inputs = run_inputs_json(config);
    L->best_score = -INFINITY;
}

void train_loop_free(TrainLoop *L) {
    cJSON_Delete(L->history);
    cJSON_Delete(L->best);
    cJSON_Delete(L->inputs);
    L->history = L->best = L->inputs = NULL;
}

/* The training clock: runs during the steps (and the saves among them), not
 * during the epochs' evaluations. t0 0: stopped. */
static void loop_clock_stop(TrainLoop *L) {
    if (L->t0 > 0) L->seconds += now_seconds() - L->t0;
    L->t0 = 0;
}

static void loop_clock_lap(TrainLoop *L) {
    loop_clock_stop(L);
    L->t0 = now_seconds();
}

double train_loop_seconds(const TrainLoop *L) { return L->seconds + (L->t0 > 0 ? now_seconds() - L->t0 : 0); }

static int loop_out_of_steps(const TrainLoop *L) { return L->max_steps > 0 && L->step >= L->max_steps; }

/* ---- progress ---- */

static void loop_bar_start(TrainLoop *L, long first, long n) {
    char label[64];
    if (L->label) snprintf(label, sizeof label, "%s", L->label);
    else snprintf(label, sizeof label, "epoch %d/%d", L->epoch + 1, L->epochs);
    progress_start(&L->bar, label, n - first, L->show_progress && L->rank == 0 ? PROGRESS_AUTO : PROGRESS_QUIET);
    L->bar.unit = L->unit ? L->unit : "batches";
}

/* done: batches of this session's stretch of the epoch (its rate and ETA). */
static void loop_bar_update(TrainLoop *L, long done) {
    char text[PROGRESS_TEXT_MAX] = "";
    if (L->ops->describe && progress_due(&L->bar)) L->ops->describe(L->ctx, L, text, sizeof text);   /* when shown */
    progress_update(&L->bar, done, text[0] ? "%s" : NULL, text);
}

static void loop_bar_finish(TrainLoop *L) {
    char text[PROGRESS_TEXT_MAX] = "";
    if (L->ops->describe) L->ops->describe(L->ctx, L, text, sizeof text);
    progress_finish(&L->bar, "%s", text);
}

/* ---- the loop ---- */

/* " (epoch E, batch B)" of a run of several epochs, for messages. */
static const char *loop_where(const TrainLoop *L, char *out, size_t cap) {
    out[0] = '\0';
    if (L->epochs > 1) snprintf(out, cap, " (epoch %d, batch %ld)", L->epoch + 1, L->batch);
    return out;
}

/* Stopped by a signal (sig) or by stop_at (sig 0): the resume point, then how
 * to continue. */
static int loop_stop(TrainLoop *L, int sig) {
    char where[64];
    loop_bar_finish(L);
    loop_clock_lap(L);
    if (L->ops->save(L->ctx, L) != 0) return 1;
    if (L->rank == 0 && (L->show_progress || sig))
        /* compare, protocol, search and boost continue an interrupted run by themselves */
        fprintf(stderr, "%s at step %ld%s; saved %s/%s; to continue, run the same command again (glue finetune, "
                        "pretrain, translate train: with --resume)\n",
                sig ? interrupt_name(sig) : "stopped", L->step, loop_where(L, where, sizeof where), L->out_dir,
                RUN_RESUME_DIR);
    return sig ? 128 + sig : TRAIN_STOPPED;
}

/* The steps of the epoch from L->batch to n (or to max_steps). 0, or the
 * run's return. */
static int loop_epoch(TrainLoop *L, long n) {
    char where[64];
    long first = L->batch;
    double last_save = now_seconds();
    loop_bar_start(L, first, n);
    while (L->batch < n && !loop_out_of_steps(L)) {
        int sig = dist_max_int(interrupt_pending());   /* the ranks stop at the same step */
        if (sig || (L->stop_at > 0 && L->step >= L->stop_at)) return loop_stop(L, sig);
        double loss = 0;
        int rc = L->ops->step(L->ctx, L, &loss);
        if (rc == 0 && !isfinite(loss)) {   /* the same on every rank: all stop here */
            if (L->rank == 0)
                user_error("lower the learning rate, raise the warm-up or clip the gradients",
                           "training diverged at step %ld%s: the loss is %g", L->step + 1,
                           loop_where(L, where, sizeof where), loss);
            rc = 1;
        }
        if (rc) {
            loop_bar_finish(L);
            return rc;
        }
        L->batch++, L->step++;
        loop_bar_update(L, L->batch - first);
        double now = now_seconds();
        int due = (L->checkpoint_every > 0 && L->step % L->checkpoint_every == 0) ||
                  (L->save_minutes > 0 && now - last_save > 60 * L->save_minutes);
        if (due && L->batch < n) {   /* the epoch's end saves its own */
            loop_clock_lap(L);
            if (L->ops->save(L->ctx, L) != 0) return 1;
            last_save = now;
        }
    }
    loop_bar_finish(L);
    return 0;
}

int train_loop_run(TrainLoop *L) {
    int rc = 0;
    interrupt_begin();
    while (rc == 0 && L->epoch < L->epochs) {
        long n = L->ops->begin(L->ctx, L);
        double t0 = now_seconds();
        L->t0 = t0;
        rc = loop_epoch(L, n);
        loop_clock_stop(L);
        if (rc == 0) rc = L->ops->end(L->ctx, L, now_seconds() - t0);
        if (rc) break;
        int last = L->epoch + 1 >= L->epochs || loop_out_of_steps(L);
        L->epoch++;
        L->batch = 0;
        if (!last) rc = L->ops->save(L->ctx, L) ? 1 : 0;
        if (last) break;
    }
    loop_clock_stop(L);
    interrupt_end();
    return rc;
}

/* ---- epoch records ---- */

/* A tie on the score goes to the lower "dev_loss", at equal loss to the
 * later epoch: a model perfect on a small dev set from its first epoch keeps
 * learning, and keeps the checkpoint that did. Without losses (translation,
 * pretraining) the earlier stays. */
static int loop_wins_tie(const cJSON *rec, const cJSON *best) {
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(rec, "dev_loss");
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(best, "dev_loss");
    return cJSON_IsNumber(a) && cJSON_IsNumber(b) && a->valuedouble <= b->valuedouble;
}

int train_loop_record(TrainLoop *L, cJSON *rec, double score) {
    cJSON_AddItemToArray(L->history, rec);
    if (L->best && !(isfinite(score) && (score > L->best_score || (score == L->best_score &&
                                                                   loop_wins_tie(rec, L->best)))))
        return 0;
    cJSON_Delete(L->best);
    L->best = cJSON_Duplicate(rec, 1);
    L->best_score = isfinite(score) ? score : -INFINITY;
    return 1;
}

/* ---- the resume point's keys ---- */

cJSON *train_loop_position(const TrainLoop *L) {
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "epoch", L->epoch);
    cJSON_AddNumberToObject(j, "batch", (double)L->batch);
    cJSON_AddNumberToObject(j, "step", (double)L->step);
    cJSON_AddNumberToObject(j, "seed", (double)L->seed);
    cJSON_AddNumberToObject(j, "train_seconds", train_loop_seconds(L));
    json_add_exact(j, "best_score", L->best_score);   /* bit for bit */
    cJSON_AddItemToObject(j, "config", cJSON_Duplicate(L->config, 1));
    cJSON_AddItemToObject(j, "inputs", cJSON_Duplicate(L->inputs, 1));
    cJSON_AddItemToObject(j, "history", cJSON_Duplicate(L->history, 1));
    if (L->best) cJSON_AddItemToObject(j, "best", cJSON_Duplicate(L->best, 1));
    return j;
}

/* A count of the position: a whole number in [0, max], else -1 (damaged) and *out kept. */
static int loop_count(const cJSON *p, const char *key, double fallback, double max, double *out) {
    double v = run_config_number(p, key, fallback);
    if (!(v >= 0 && v <= max && v == floor(v))) return -1;
    *out = v;
    return 0;
}

int train_loop_restore(TrainLoop *L, const cJSON *p) {
    double epoch = 0, batch = (double)L->batch, step = 0, secs = 0;
    const cJSON *h = cJSON_GetObjectItemCaseSensitive(p, "history");
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(p, "best");
    /* A best score that is not a number would never be beaten (every comparison false). */
    double best = cJSON_IsObject(b) ? json_exact(p, "best_score", run_config_number(b, "score", -INFINITY)) : 0;
    if (loop_count(p, "epoch", 0, INT_MAX, &epoch) | loop_count(p, "batch", (double)L->batch, LONG_MAX / 2, &batch) |
        loop_count(p, "step", 0, LONG_MAX / 2, &step) ||
        !((secs = run_config_number(p, "train_seconds", 0)) >= 0 && secs < 1e300) || isnan(best))
        return -1;   /* out of range, negative or not a number: nothing restored */
    L->epoch = (int)epoch;
    L->batch = (long)batch;
    L->step = (long)step;
    L->seconds = secs;
    if (cJSON_IsArray(h)) cJSON_Delete(L->history), L->history = cJSON_Duplicate(h, 1);
    /* The files as the run first read them (its weights descend from those),
     * not as they are at the resume. */
    const cJSON *in = cJSON_GetObjectItemCaseSensitive(p, "inputs");
    if (cJSON_IsObject(in)) cJSON_Delete(L->inputs), L->inputs = cJSON_Duplicate(in, 1);
    if (cJSON_IsObject(b)) {
        cJSON_Delete(L->best);
        L->best = cJSON_Duplicate(b, 1);
        L->best_score = best;
    }
    char where[64];
    if (L->show_progress && L->rank == 0)
        fprintf(stderr, "resuming %s at step %ld%s\n", L->out_dir, L->step, loop_where(L, where, sizeof where));
    return 0;
}
