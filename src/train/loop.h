/* loop.h — the step/epoch loop of every training run. Fine-tuning
 * (trainer.c), pretraining (pretrain/train.c: one epoch of `steps` batches)
 * and translation (translate.c) are its clients: per epoch begin, step*, end,
 * and save at the resume points. The loop owns what they share:
 *   - where the run is (epoch, batch, step, training seconds), kept in and
 *     read from the resume point (resume.h);
 *   - SIGINT/SIGTERM (core/interrupt.h) and --stop-at, read at every step
 *     boundary (data parallel: the ranks stop at the same step): the resume
 *     point, one line saying how to continue, 128 + signal or TRAIN_STOPPED;
 *   - resume points every checkpoint_every steps and save_minutes within an
 *     epoch, and at every epoch end but the last (the end saves its own);
 *   - max_steps, a diverged step, the progress display (core/progress.h),
 *     the epoch records and the best one. */
#ifndef GLUE_TRAIN_LOOP_H
#define GLUE_TRAIN_LOOP_H

#include <stddef.h>
#include <stdint.h>

#include "core/progress.h"

typedef struct cJSON cJSON;
typedef struct TrainLoop TrainLoop;

typedef struct TrainLoopOps {
    /* Epoch L->epoch starts at batch L->batch (resumed: > 0): its batches. */
    long (*begin)(void *ctx, TrainLoop *L);
    /* Batch L->batch, optimizer step L->step (0-based; the loop counts both
     * on return): 0 and *loss (the same on every rank: not finite, the run
     * stops as diverged), or 1 after a message (a read failed). */
    int (*step)(void *ctx, TrainLoop *L, double *loss);
    /* The progress text ("loss 0.412"), asked for only when it is shown. */
    void (*describe)(void *ctx, const TrainLoop *L, char *text, size_t cap);
    /* The epoch is done (seconds: its training time): evaluate, record. 0 or 1. */
    int (*end)(void *ctx, TrainLoop *L, double seconds);
    /* The resume point at the loop's position (every rank calls it). 0 or 1. */
    int (*save)(void *ctx, TrainLoop *L);
} TrainLoopOps;

struct TrainLoop {
    const TrainLoopOps *ops;
    void *ctx;
    /* Settings (the client's). */
    const char *out_dir;
    const cJSON *config;        /* the run's settings: trainer.json's "config" */
    cJSON *inputs;              /* the files they name, as the run first started (run_inputs.h) */
    uint64_t seed;
    int epochs;
    long stop_at;               /* > 0: save and stop (TRAIN_STOPPED) once this many steps are done */
    long max_steps;             /* > 0: the run ends after this many steps */
    long checkpoint_every;      /* > 0: a resume point every this many steps */
    double save_minutes;        /* > 0: and one when this long has passed since the last */
    int show_progress, rank;    /* rank: data parallel; rank 0 alone speaks */
    const char *label;          /* of the progress display; NULL: "epoch E/N" */
    const char *unit;           /* of the progress display; NULL: "batches" */
    /* Where the run is (a resumed run: from trainer.json). */
    int epoch;
    long batch, step;
    double seconds;             /* training seconds over every session (not evaluation) */
    double t0;                  /* the start of the stretch not yet in seconds */
    /* The epoch records. */
    cJSON *history;             /* array of the records */
    cJSON *best;                /* the best record, NULL before the first */
    double best_score;
    Progress bar;               /* the epoch's progress display */
};

/* train_loop_run's return when it stopped at stop_at (not an error). */
enum { TRAIN_STOPPED = -1 };

/* A loop at the start of a run; the caller sets the other settings. */
void train_loop_init(TrainLoop *L, const TrainLoopOps *ops, void *ctx, const char *out_dir, const cJSON *config,
                     uint64_t seed);
void train_loop_free(TrainLoop *L);
/* Runs from the loop's position to the end. 0 done, TRAIN_STOPPED, 128 +
 * signal after saving, or 1 (a step, end or save failed). */
int train_loop_run(TrainLoop *L);
/* Training seconds so far (during the run: with the running stretch). */
double train_loop_seconds(const TrainLoop *L);
/* rec (taken) into the history, and the best when its score is strictly
 * higher, or equal with a "dev_loss" in rec no higher than the best's (the
 * first always; NAN never beats one). 1 when it is the best. */
int train_loop_record(TrainLoop *L, cJSON *rec, double score);

/* trainer.json with the loop's keys; the client adds its own and writes it
 * with resume_write. Caller frees. */
cJSON *train_loop_position(const TrainLoop *L);
/* The loop's keys from trainer.json: where to continue (said on stderr;
 * "batch" absent: L->batch stays). 0; -1 when a count is negative, not a
 * whole number or beyond its type (a damaged point: nothing restored). */
int train_loop_restore(TrainLoop *L, const cJSON *position);

#endif
