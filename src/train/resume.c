/* resume.c — the resume point of a training run (see resume.h). */
#include "train/resume.h"

#include <cjson/cJSON.h>

#include "core/checkpoint.h"
#include "core/common.h"
#include "core/files.h"
#include "train/run_dir.h"

/* The one-file resume point of pretraining and translation before resume/,
 * and the one before it. */
#define RESUME_OLD_FILE "last.ckpt"
#define RESUME_OLD_PREV "prev.ckpt"

/* resume/ and resume.prev/ of out_dir into dirs; which exist (bits 0 and 1). */
static int resume_dirs(const char *out_dir, char dirs[2][4200]) {
    run_file_path(out_dir, RUN_RESUME_DIR, dirs[0], sizeof dirs[0]);
    checkpoint_dir_previous(dirs[0], dirs[1], sizeof dirs[1]);
    return file_exists(dirs[0]) | file_exists(dirs[1]) << 1;
}

int resume_write(const char *out_dir, const cJSON *position, ResumeWriteFn write, void *ctx) {
    char d[2][4200], tmp[4300], path[4400];
    resume_dirs(out_dir, d);
    if (checkpoint_dir_begin(d[0], tmp, sizeof tmp) != 0 || write(ctx, tmp) != 0) return 1;
    run_file_path(tmp, RUN_TRAINER_STATE, path, sizeof path);
    if (json_file_write(path, position) != 0) return 1;
    return checkpoint_dir_commit(d[0]) ? 1 : 0;
}

/* read() on the point in dir. */
static int resume_read_dir(const char *dir, ResumeReadFn read, void *ctx) {
    char path[4400];
    run_file_path(dir, RUN_TRAINER_STATE, path, sizeof path);
    cJSON *position = json_file_read(path, 1);
    if (!position) return 1;
    int rc = read(ctx, dir, position);
    cJSON_Delete(position);
    return rc;
}

int resume_is_old(const char *out_dir, char *old, size_t cap) {
    char d[2][4200];
    if (resume_dirs(out_dir, d)) return 0;
    run_file_path(out_dir, RESUME_OLD_FILE, old, cap);
    if (!file_exists(old)) run_file_path(out_dir, RESUME_OLD_PREV, old, cap);
    return file_exists(old);
}

/* A resume point of the format before resume/: refused, with what to do. */
static int resume_refuse_old(const char *out_dir) {
    char old[4200];
    if (!resume_is_old(out_dir, old, sizeof old)) return 0;
    user_error("finish the run with the glue that started it, or start over without --resume (of a pretraining "
               "run, glue pretrain snapshot keeps the weights to continue from: --set init=DIR)",
               "%s is a resume point of an older glue (one file); this glue resumes from %s/%s/", old, out_dir,
               RUN_RESUME_DIR);
    return EXIT_USAGE;
}

int resume_read(const char *out_dir, ResumeReadFn read, void *ctx) {
    char d[2][4200];
    int have = resume_dirs(out_dir, d);
    if (!have) {
        int rc = resume_refuse_old(out_dir);
        if (rc) return rc;
        user_warning("no interrupted run in %s; starting from the beginning", out_dir);
        return RESUME_NONE;
    }
    int rc = have & 1 ? resume_read_dir(d[0], read, ctx) : 1;
    if (rc != 0 && rc != RESUME_OTHER && have & 2) {
        user_warning("%s %s; continuing from %s, the resume point saved before it", d[0],
                     have & 1 ? "is damaged (above)" : "is missing (a save was interrupted)", d[1]);
        rc = resume_read_dir(d[1], read, ctx);
    }
    return rc == RESUME_OTHER ? EXIT_USAGE : rc ? 1 : 0;
}

cJSON *resume_position(const char *out_dir) {
    char d[2][4200], path[4400];
    resume_dirs(out_dir, d);
    for (int i = 0; i < 2; i++) {
        run_file_path(d[i], RUN_TRAINER_STATE, path, sizeof path);
        cJSON *position = file_exists(path) ? json_file_read(path, 0) : NULL;
        if (position) return position;
    }
    return NULL;
}

int resume_exists(const char *out_dir) {
    char d[2][4200], old[4200];
    return resume_dirs(out_dir, d) || resume_is_old(out_dir, old, sizeof old);
}

void resume_remove(const char *out_dir) {
    char d[2][4200];
    resume_dirs(out_dir, d);
    checkpoint_dir_remove(d[0]);
}
