/* resume.c — the resume point of a training run (see resume.h). A save
 * writes resume.tmp/, then resume/ becomes resume.prev/ and resume.tmp/
 * resume/: between the two renames only resume.prev/ exists, complete. */
#include "train/resume.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/common.h"
#include "core/files.h"
#include "train/run_dir.h"

/* The one-file resume point of pretraining and translation before resume/,
 * and the one before it. */
#define RESUME_OLD_FILE "last.ckpt"
#define RESUME_OLD_PREV "prev.ckpt"

/* resume/, resume.prev/ and resume.tmp/ of out_dir into d; which of the
 * first two exist (bits 0 and 1). */
static int resume_dirs(const char *out_dir, char d[3][4200]) {
    file_join(out_dir, RUN_RESUME_DIR, d[0], sizeof d[0]);
    file_join(out_dir, RUN_RESUME_DIR ".prev", d[1], sizeof d[1]);
    file_join(out_dir, RUN_RESUME_DIR ".tmp", d[2], sizeof d[2]);
    return file_exists(d[0]) | file_exists(d[1]) << 1;
}

/* The files of the point in dir. */
static ResumeFiles resume_files(const char *dir) {
    ResumeFiles f = {.dir = dir};
    file_join(dir, RUN_LAST_CKPT, f.ckpt, sizeof f.ckpt);
    file_join(dir, RUN_LAST_STATE, f.state, sizeof f.state);
    return f;
}

/* Removes a directory of plain files; quiet when it is missing. */
static void resume_dir_remove(const char *dir) {
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[4400];
    while (d && (e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            file_join(dir, e->d_name, path, sizeof path), unlink(path);
    if (d) closedir(d);
    rmdir(dir);
}

int resume_write(const char *out_dir, const cJSON *position, ResumeWriteFn write, void *ctx) {
    char d[3][4200], path[4400];
    resume_dirs(out_dir, d);
    resume_dir_remove(d[2]);   /* a save interrupted earlier */
    if (mkdir(d[2], 0777) != 0) {
        user_error_io("check free disk space and permissions", "%s: cannot create: %s", d[2], strerror(errno));
        return 1;
    }
    file_join(d[2], RUN_TRAINER_STATE, path, sizeof path);
    ResumeFiles f = resume_files(d[2]);
    if (write(ctx, &f) != 0 || json_file_write(path, position) != 0) {
        resume_dir_remove(d[2]);   /* never read; its space back (a full disk is the usual cause) */
        return 1;
    }
    resume_dir_remove(d[1]);
    int moved = file_exists(d[0]) && rename(d[0], d[1]) == 0;
    if (moved) file_write_point();   /* a kill here leaves resume.prev/ alone: the reader's case */
    if ((file_exists(d[0]) && !moved) || rename(d[2], d[0]) != 0) {
        user_error_io("check free disk space and permissions", "%s: cannot replace it with %s: %s", d[0], d[2],
                   strerror(errno));
        return 1;
    }
    file_write_point();
    return 0;
}

/* read() on the point in dir. */
static int resume_read_dir(const char *dir, ResumeReadFn read, void *ctx) {
    char path[4400];
    file_join(dir, RUN_TRAINER_STATE, path, sizeof path);
    cJSON *position = json_file_read(path, 1);
    if (!position) return 1;
    ResumeFiles f = resume_files(dir);
    int rc = read(ctx, &f, position);
    cJSON_Delete(position);
    return rc;
}

int resume_is_old(const char *out_dir, char *old, size_t cap) {
    char d[3][4200];
    if (resume_dirs(out_dir, d)) return 0;
    file_join(out_dir, RESUME_OLD_FILE, old, cap);
    if (!file_exists(old)) file_join(out_dir, RESUME_OLD_PREV, old, cap);
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
    char d[3][4200];
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
    char d[3][4200], path[4400];
    resume_dirs(out_dir, d);
    for (int i = 0; i < 2; i++) {
        file_join(d[i], RUN_TRAINER_STATE, path, sizeof path);
        cJSON *position = file_exists(path) ? json_file_read(path, 0) : NULL;
        if (position) return position;
    }
    return NULL;
}

int resume_exists(const char *out_dir) {
    char d[3][4200], old[4200];
    return resume_dirs(out_dir, d) || resume_is_old(out_dir, old, sizeof old);
}

void resume_remove(const char *out_dir) {
    char d[3][4200];
    resume_dirs(out_dir, d);
    for (int i = 0; i < 3; i++) resume_dir_remove(d[i]);
}
