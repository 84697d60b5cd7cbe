/* fuzz_resume.c — the resume-state reader (train/resume.h): a run directory's
 * resume/trainer.json and resume.prev/trainer.json, read as `glue finetune
 * --resume` reads them: resume_position, resume_read with the loop's
 * restore (train_loop_restore: epoch, batch, step, history, best), the
 * identity check commands use before resuming (trainer_can_resume), and the
 * label order check of eval/predict (run_dir_check_labels). Checked beyond
 * "no crash": a restored position is never negative, a best score never NaN.
 * Input: byte 0 picks which files exist (bit 0 resume/, bit 1 resume.prev/,
 * bit 2 a results.json of the third part) and the task (bits 3-7); then
 * resume/trainer.json FUZZ_SEP resume.prev/trainer.json FUZZ_SEP results.json. */
#include "train/loop.h"
#include "train/resume.h"
#include "train/run_dir.h"
#include "train/run_txn.h"
#include "train/trainer.h"
#include "tests/fuzz/fuzz_util.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <sys/stat.h>

static const TrainLoopOps NO_OPS = {0};

static int restore(void *ctx, const ResumeFiles *f, const cJSON *position) {
    (void)f;
    TrainLoop *L = ctx;
    train_loop_restore(L, position);
    if (L->epoch < 0 || L->batch < 0 || L->step < 0 || isnan(L->best_score) || !(L->seconds >= 0)) __builtin_trap();
    return 0;
}

static void put(const char *sub, const char *name, const uint8_t *data, size_t n, int present) {
    char dir[600], path[700];
    snprintf(dir, sizeof dir, "%s/run%s%s", fuzz_dir(), sub[0] ? "/" : "", sub);
    mkdir(dir, 0777);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (present) fuzz_write(path, data, n, 0);
    else fuzz_remove(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    const uint8_t *part[3] = {0};
    size_t len[3] = {0};
    fuzz_split(data + 1, size - 1, part, len, 3);
    put("", "", NULL, 0, 0);
    put(RUN_RESUME_DIR, RUN_TRAINER_STATE, part[0], len[0], data[0] & 1);
    put(RUN_RESUME_DIR ".prev", RUN_TRAINER_STATE, part[1], len[1], data[0] & 2);
    put("", RUN_RESULTS, part[2], len[2], data[0] & 4);
    char run[600];
    snprintf(run, sizeof run, "%s/run", fuzz_dir());
    const Task *t = &TASKS[(data[0] >> 3) % NUM_TASKS];
    cJSON_Delete(resume_position(run));
    cJSON *config = cJSON_CreateObject();
    cJSON_AddNumberToObject(config, "epochs", 3);
    trainer_can_resume(run, config, 1, 0);
    TrainLoop L;
    train_loop_init(&L, &NO_OPS, NULL, run, config, 1);
    L.ctx = &L;
    resume_read(run, restore, &L);
    train_loop_free(&L);
    run_dir_check_labels(run, t);
    cJSON_Delete(config);
    return 0;
}
