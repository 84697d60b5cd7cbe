/* checkpoint_rolling.c — a run's rolling checkpoint (last.ckpt) with the one
 * before it kept as prev.ckpt, and a loader that falls back to prev.ckpt when
 * last.ckpt is damaged (see checkpoint.h, "rolling checkpoints").
 *
 * Rotation happens when a save starts: prev.ckpt becomes a hard link to the
 * current last.ckpt (through prev.ckpt.tmp and a rename, so prev.ckpt is always
 * a whole file), then the ordinary atomic save replaces last.ckpt. At every
 * moment last.ckpt is a complete checkpoint; a failed save leaves prev.ckpt and
 * last.ckpt the same file, which loses nothing. Without hard links (some
 * filesystems) last.ckpt is renamed to prev.ckpt instead, and a crash during
 * the save leaves only prev.ckpt, which the loader takes.
 *
 * The same for a resume point of several files (a directory DIR): written into
 * DIR.tmp, then DIR becomes DIR.prev and DIR.tmp becomes DIR. Between those two
 * renames only DIR.prev exists, and it is complete. */
#include "core/checkpoint.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/common.h"

#define ROLLING_LAST "last"
#define ROLLING_PREV "prev"

void checkpoint_previous_path(const char *path, char *out, size_t cap) {
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    int dir_len = (int)(base - path), n;
    if (strncmp(base, ROLLING_LAST, strlen(ROLLING_LAST)) == 0)
        n = snprintf(out, cap, "%.*s" ROLLING_PREV "%s", dir_len, path, base + strlen(ROLLING_LAST));
    else
        n = snprintf(out, cap, "%s." ROLLING_PREV, path);
    if (n < 0 || (size_t)n >= cap) DIE("checkpoint_previous_path: '%s' too long", path);
}

static int rolling_file_exists(const char *path) { return access(path, F_OK) == 0; }

/* prev := last (see the header comment). Best effort: a failure only costs the
 * older prev.ckpt's protection, never last.ckpt. */
static void rolling_rotate(const char *path) {
    if (!rolling_file_exists(path)) return;
    char prev[4096], tmp[4200];
    checkpoint_previous_path(path, prev, sizeof prev);
    snprintf(tmp, sizeof tmp, "%s.tmp", prev);
    unlink(tmp);
    if (link(path, tmp) == 0) {
        if (rename(tmp, prev) != 0) unlink(tmp);
        return;
    }
    if (errno == EPERM || errno == ENOTSUP || errno == EOPNOTSUPP || errno == EXDEV) rename(path, prev);
}

CkptWriter *checkpoint_rolling_open(const char *path, const cJSON *config, int level) {
    rolling_rotate(path);
    return checkpoint_writer_open(path, config, level);
}

int checkpoint_rolling_exists(const char *path) {
    char prev[4096];
    checkpoint_previous_path(path, prev, sizeof prev);
    return rolling_file_exists(path) || rolling_file_exists(prev);
}

Checkpoint *checkpoint_rolling_read(const char *path) {
    char prev[4096];
    checkpoint_previous_path(path, prev, sizeof prev);
    int have_last = rolling_file_exists(path);
    Checkpoint *c = have_last ? checkpoint_read(path) : NULL;
    if (c || !rolling_file_exists(prev)) return c ? c : have_last ? NULL : checkpoint_read(path);
    user_warning("%s %s; continuing from %s, the checkpoint saved before it", path,
                 have_last ? "is damaged (above)" : "is missing (a save was interrupted)", prev);
    return checkpoint_read(prev);
}

void checkpoint_rolling_remove(const char *path) {
    char prev[4096];
    checkpoint_previous_path(path, prev, sizeof prev);
    unlink(path);
    unlink(prev);
}

/* ---- rolling checkpoint directories ---- */

static void dir_name_with(const char *dir, const char *suffix, char *out, size_t cap) {
    int n = snprintf(out, cap, "%s%s", dir, suffix);
    if (n < 0 || (size_t)n >= cap) DIE("checkpoint_dir: '%s' too long", dir);
}

void checkpoint_dir_previous(const char *dir, char *out, size_t cap) { dir_name_with(dir, ".prev", out, cap); }

/* Removes a flat directory (files only) and its files; quiet when missing. */
static void dir_remove_flat(const char *dir) {
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        char path[4400];
        while ((e = readdir(d)))
            if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
                snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
                unlink(path);
            }
        closedir(d);
    }
    rmdir(dir);
}

int checkpoint_dir_begin(const char *dir, char *tmp, size_t cap) {
    dir_name_with(dir, ".tmp", tmp, cap);
    dir_remove_flat(tmp);   /* a save interrupted earlier */
    if (mkdir(tmp, 0777) != 0) {
        user_error_io("check free disk space and permissions", "%s: cannot create: %s", tmp, strerror(errno));
        return -1;
    }
    return 0;
}

int checkpoint_dir_commit(const char *dir) {
    char tmp[4200], prev[4200];
    dir_name_with(dir, ".tmp", tmp, sizeof tmp);
    checkpoint_dir_previous(dir, prev, sizeof prev);
    dir_remove_flat(prev);
    if ((access(dir, F_OK) == 0 && rename(dir, prev) != 0) || rename(tmp, dir) != 0) {
        user_error_io("check free disk space and permissions", "%s: cannot replace it with %s: %s", dir, tmp,
                   strerror(errno));
        return -1;
    }
    return 0;
}

void checkpoint_dir_remove(const char *dir) {
    char other[4200];
    dir_remove_flat(dir);
    checkpoint_dir_previous(dir, other, sizeof other);
    dir_remove_flat(other);
    dir_name_with(dir, ".tmp", other, sizeof other);
    dir_remove_flat(other);
}
