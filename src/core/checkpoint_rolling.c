/* checkpoint_rolling.c — rolling checkpoint directories: a resume point of
 * several files (a directory DIR) written into DIR.tmp, then DIR becomes
 * DIR.prev and DIR.tmp becomes DIR (see checkpoint.h). Between those two
 * renames only DIR.prev exists, and it is complete. */
#include "core/checkpoint.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/common.h"

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
        user_error("check free disk space and permissions", "%s: cannot create: %s", tmp, strerror(errno));
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
        user_error("check free disk space and permissions", "%s: cannot replace it with %s: %s", dir, tmp,
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
