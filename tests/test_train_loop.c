/* test_train_loop.c — the training harness's loop and resume point
 * (src/train/loop.h, resume.h) with a client that only records what the loop
 * asks of it: the order of begin / step / end / save, the resume points of
 * checkpoint_every and the epoch ends, stop_at, max_steps, a diverged step,
 * the epoch records, and a resume point written, read back and refused when
 * it is another run's or of the older one-file format. */
#include "tests/capture.h"
#include "tests/scratch.h"
#include "tests/test.h"

#include "core/common.h"
#include "core/files.h"
#include "models/run_config.h"
#include "train/loop.h"
#include "train/resume.h"
#include "train/run_dir.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { FAKE_BATCHES = 5, FAKE_LOG = 256 };

typedef struct {
    char log[FAKE_LOG][16];   /* "b0", "s3", "e1", "v7" (begin epoch, step, end epoch, save at step) */
    int n;
    long nan_at;              /* step whose loss is not finite (-1: none) */
} Fake;

static void fake_note(Fake *f, char kind, long v) {
    if (f->n < FAKE_LOG) snprintf(f->log[f->n++], sizeof f->log[0], "%c%ld", kind, v);
}

static long fake_begin(void *ctx, TrainLoop *L) {
    fake_note(ctx, 'b', L->epoch);
    return FAKE_BATCHES;
}

static int fake_step(void *ctx, TrainLoop *L, double *loss) {
    Fake *f = ctx;
    fake_note(f, 's', L->step);
    *loss = L->step == f->nan_at ? NAN : 1.0 / (double)(L->step + 1);
    return 0;
}

static int fake_end(void *ctx, TrainLoop *L, double seconds) {
    fake_note(ctx, 'e', L->epoch);
    cJSON *rec = cJSON_CreateObject();
    cJSON_AddNumberToObject(rec, "epoch", L->epoch + 1);
    train_loop_record(L, rec, L->epoch == 1 ? 5.0 : 1.0);   /* epoch 2 is the best */
    return 0;
}

static int fake_save(void *ctx, TrainLoop *L) {
    fake_note(ctx, 'v', L->step);
    return 0;
}

static const TrainLoopOps FAKE_OPS = {.begin = fake_begin, .step = fake_step, .end = fake_end, .save = fake_save};

static void fake_loop(TrainLoop *L, Fake *f, int epochs) {
    memset(f, 0, sizeof *f);
    f->nan_at = -1;
    train_loop_init(L, &FAKE_OPS, f, "out", NULL, 0);
    L->epochs = epochs;
}

/* The log as one string: "b0 s0 s1 ..." */
static void fake_joined(const Fake *f, char *out, size_t cap) {
    size_t at = 0;
    out[0] = '\0';
    for (int i = 0; i < f->n && at < cap; i++) at += (size_t)snprintf(out + at, cap - at, "%s%s", i ? " " : "", f->log[i]);
}

TEST(train_loop_order_of_calls_and_resume_points) {
    TrainLoop L;
    Fake f;
    char got[2048];
    fake_loop(&L, &f, 3);
    L.checkpoint_every = 4;
    CHECK_EQ_INT(train_loop_run(&L), 0);
    fake_joined(&f, got, sizeof got);
    /* resume points every 4 steps within an epoch (4, 8, 12) and at the ends
     * of epochs 1 and 2 (steps 5, 10), not at the last one's */
    const char *want = "b0 s0 s1 s2 s3 v4 s4 e0 v5 b1 s5 s6 s7 v8 s8 s9 e1 v10 b2 s10 s11 v12 s12 s13 s14 e2";
    CHECK_MSG(strcmp(got, want) == 0, "calls: %s", got);
    CHECK_EQ_INT(L.epoch, 3);
    CHECK_EQ_INT(L.step, 15);
    CHECK_EQ_INT(cJSON_GetArraySize(L.history), 3);
    CHECK_EQ_INT(run_config_number(L.best, "epoch", 0), 2);
    train_loop_free(&L);
}

TEST(train_loop_stop_at_max_steps_and_divergence) {
    TrainLoop L;
    Fake f;
    char got[2048];
    /* stop_at 7: the resume point at the step boundary, then TRAIN_STOPPED */
    fake_loop(&L, &f, 3);
    L.stop_at = 7;
    CHECK_EQ_INT(train_loop_run(&L), TRAIN_STOPPED);
    fake_joined(&f, got, sizeof got);
    CHECK_MSG(strcmp(got, "b0 s0 s1 s2 s3 s4 e0 v5 b1 s5 s6 v7") == 0, "calls: %s", got);
    CHECK_EQ_INT(L.epoch, 1);
    CHECK_EQ_INT(L.batch, 2);
    train_loop_free(&L);
    /* max_steps 7: the partial epoch is ended like a full one, no save after it */
    fake_loop(&L, &f, 3);
    L.max_steps = 7;
    CHECK_EQ_INT(train_loop_run(&L), 0);
    fake_joined(&f, got, sizeof got);
    CHECK_MSG(strcmp(got, "b0 s0 s1 s2 s3 s4 e0 v5 b1 s5 s6 e1") == 0, "calls: %s", got);
    train_loop_free(&L);
    /* a loss that is not finite: one message, no end, no save, exit 1 */
    fake_loop(&L, &f, 3);
    f.nan_at = 3;
    StderrCapture cap;
    stderr_capture_begin(&cap);
    int rc = train_loop_run(&L);
    char *said = stderr_capture_end(&cap);
    fake_joined(&f, got, sizeof got);
    CHECK_EQ_INT(rc, 1);
    CHECK_MSG(strcmp(got, "b0 s0 s1 s2 s3") == 0, "calls: %s", got);
    CHECK_MSG(said && strstr(said, "training diverged at step 4"), "said: %s", said ? said : "");
    free(said);
    train_loop_free(&L);
}

/* The client's files of a resume point (a marker file) and its reader. */
static int fake_write_files(void *ctx, const ResumeFiles *f) { return atomic_write(f->ckpt, "weights", 7) != 0; }
/* One file written, the next failed (a disk that filled up). */
static int fake_write_fails(void *ctx, const ResumeFiles *f) { return atomic_write(f->ckpt, "weights", 7) == 0; }

static int fake_read_point(void *ctx, const ResumeFiles *f, const cJSON *position) {
    TrainLoop *L = ctx;
    if (run_config_number(position, "seed", -1) != (double)L->seed) return RESUME_OTHER;
    if (!file_exists(f->ckpt)) return 1;
    train_loop_restore(L, position);
    return 0;
}

TEST(train_loop_resume_point_round_trip) {
    char out[SCRATCH_PATH_MAX], cmd[256];
    if (!CHECK(scratch_dir("train_loop", out, sizeof out))) return;
    TrainLoop a, b;
    Fake f;
    fake_loop(&a, &f, 4);
    a.out_dir = out, a.seed = 7, a.max_steps = 12;
    CHECK_EQ_INT(train_loop_run(&a), 0);   /* two epochs and 2 batches of the third, ended */
    a.epoch = 2, a.batch = 3, a.step = 13;   /* a point within an epoch */
    cJSON *pos = train_loop_position(&a);
    CHECK(!resume_exists(out));
    CHECK_EQ_INT(resume_write(out, pos, fake_write_files, NULL), 0);
    CHECK(resume_exists(out));
    fake_loop(&b, &f, 4);
    b.out_dir = out, b.seed = 7;
    CHECK_EQ_INT(resume_read(out, fake_read_point, &b), 0);
    CHECK_EQ_INT(b.epoch, 2);
    CHECK_EQ_INT(b.batch, 3);
    CHECK_EQ_INT(b.step, 13);
    CHECK(cJSON_Compare(a.history, b.history, 1) && cJSON_Compare(a.best, b.best, 1));
    CHECK(b.best_score == a.best_score);
    train_loop_free(&b);
    /* a save whose files fail (a full disk): resume/ as it was, and no resume.tmp/ left taking the space */
    CHECK_EQ_INT(resume_write(out, pos, fake_write_fails, NULL), 1);
    snprintf(cmd, sizeof cmd, "%s/" RUN_RESUME_DIR ".tmp", out);
    CHECK_MSG(!file_exists(cmd) && resume_exists(out), "a failed save left resume.tmp/, or took resume/");
    /* another run's (seed): refused with exit 2, resume.prev/ not tried */
    CHECK_EQ_INT(resume_write(out, pos, fake_write_files, NULL), 0);   /* the first is now resume.prev/ */
    fake_loop(&b, &f, 4);
    b.out_dir = out, b.seed = 8;
    CHECK_EQ_INT(resume_read(out, fake_read_point, &b), 2);
    train_loop_free(&b);
    /* resume/ damaged (its weights gone): resume.prev/, after a warning */
    snprintf(cmd, sizeof cmd, "rm %s/" RUN_RESUME_DIR "/" RUN_LAST_CKPT, out);
    CHECK(system(cmd) == 0);
    fake_loop(&b, &f, 4);
    b.out_dir = out, b.seed = 7;
    StderrCapture cap;
    stderr_capture_begin(&cap);
    int rc = resume_read(out, fake_read_point, &b);
    char *said = stderr_capture_end(&cap);
    CHECK_MSG(rc == 0 && said && strstr(said, RUN_RESUME_DIR ".prev"), "rc %d: %s", rc, said ? said : "");
    free(said);
    train_loop_free(&b);
    /* gone: nothing to resume; an older glue's one-file point: refused (exit 2) */
    resume_remove(out);
    CHECK(!resume_exists(out));
    stderr_capture_begin(&cap);
    CHECK_EQ_INT(resume_read(out, fake_read_point, &b), RESUME_NONE);
    free(stderr_capture_end(&cap));
    snprintf(cmd, sizeof cmd, "echo old > %s/last.ckpt", out);
    CHECK(system(cmd) == 0);
    CHECK(resume_exists(out));
    stderr_capture_begin(&cap);
    rc = resume_read(out, fake_read_point, &b);
    said = stderr_capture_end(&cap);
    CHECK_MSG(rc == 2 && said && strstr(said, "older glue"), "rc %d: %s", rc, said ? said : "");
    free(said);
    cJSON_Delete(pos);
    train_loop_free(&a);
    snprintf(cmd, sizeof cmd, "rm -rf %s", out);
    CHECK(system(cmd) == 0);
}
