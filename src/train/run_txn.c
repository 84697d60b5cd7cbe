/* run_txn.c — a run directory as a transaction (see run_txn.h). */
#include "train/run_txn.h"

#include "core/common.h"
#include "core/files.h"
#include "train/resume.h"
#include "train/run_dir.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

const RunKind RUN_KIND_FINETUNE = {.results = RUN_RESULTS, .finished = "glue eval scores it"};

static const RunKind *run_kind(const RunKind *k) { return k ? k : &RUN_KIND_FINETUNE; }

int run_dir_holds(const char *dir, const RunKind *kind) {
    char path[4400];
    int holds = resume_exists(dir) ? RUN_HOLDS_RESUME : 0;
    file_join(dir, run_kind(kind)->results, path, sizeof path);
    if (file_exists(path)) holds |= RUN_HOLDS_RESULTS;
    file_join(dir, RUN_CKPT, path, sizeof path);
    if (file_exists(path)) holds |= RUN_HOLDS_CKPT;
    return holds;
}

/* dir without trailing slashes (so "<dir>.next" is a sibling, never inside). */
static void run_txn_name(const char *dir, char *out, size_t cap) {
    snprintf(out, cap, "%s", dir);
    for (size_t n = strlen(out); n > 1 && out[n - 1] == '/'; n--) out[n - 1] = '\0';
}

static void run_txn_stage_path(const char *dir, char *out, size_t cap) {
    char d[4200];
    run_txn_name(dir, d, sizeof d);
    if (snprintf(out, cap, "%s%s", d, RUN_STAGE_SUFFIX) >= (int)cap) DIE("run directory path too long: %s", d);
}

/* A resume point of a run that has not finished. */
static int run_txn_interrupted(const char *dir, const RunKind *kind) {
    int h = run_dir_holds(dir, kind);
    return (h & RUN_HOLDS_RESUME) && !(run_kind(kind)->keeps_resume && (h & RUN_HOLDS_RESULTS));
}

void run_dir_work(const char *dir, const RunKind *kind, int resume, char *work, size_t cap) {
    char stage[4200];
    run_txn_stage_path(dir, stage, sizeof stage);
    if (resume && !run_txn_interrupted(dir, kind) && run_txn_interrupted(stage, kind))
        snprintf(work, cap, "%s", stage);
    else run_txn_name(dir, work, cap);
}

int run_dir_open(RunDirTxn *x, const char *dir, int resume) {
    x->lock.fd = x->stage_lock.fd = -1;
    run_txn_name(dir, x->dir, sizeof x->dir);
    run_dir_work(x->dir, x->kind, resume, x->work, sizeof x->work);
    x->made = !file_exists(x->dir);
    if (file_make_dir(x->dir) != 0) return 1;
    int rc = run_lock_take(&x->lock, x->dir);
    if (rc == 0 && strcmp(x->work, x->dir) != 0) rc = run_lock_take(&x->stage_lock, x->work);
    return rc;
}

/* The first regular file of dir that no run of this kind writes before its
 * first save (config.json, the lock, kind->early) into out: a directory that
 * holds such a file and no run is someone else's. Folders are not counted:
 * runs nest (seed runs, an intermediate stage's run) and a run writes none
 * of its own into a folder it did not make. 1 when found. */
static int run_dir_foreign_file(const char *dir, const RunKind *kind, char *out, size_t cap) {
    DIR *d = opendir(dir);
    struct dirent *e;
    int found = 0;
    char path[4400];
    while (d && !found && (e = readdir(d))) {
        const char *n = e->d_name;
        if (!strcmp(n, ".") || !strcmp(n, "..") || !strcmp(n, RUN_LOCK_FILE) || !strcmp(n, RUN_CONFIG) ||
            (kind->early && !strcmp(n, kind->early)))
            continue;
        struct stat st;
        file_join(dir, n, path, sizeof path);
        if (stat(path, &st) == 0 && !S_ISDIR(st.st_mode)) {   /* a link to a folder is a folder: runs are linked */
            snprintf(out, cap, "%s", n);
            found = 1;
        }
    }
    if (d) closedir(d);
    return found;
}

/* run_dir_refuse_foreign with what work holds already known. */
static int run_dir_refuse_foreign_holding(const RunKind *kind, const char *dir, const char *work, int holds, int say) {
    char foreign[256];
    if (holds || !run_dir_foreign_file(work, kind, foreign, sizeof foreign)) return 0;
    if (say)
        user_error("give --out a new or empty directory, or move the files away",
                   "%s holds files but no run (%s, ...): a run writes %s, %s and %s there, and --overwrite "
                   "replaces a run's directory whole", dir, foreign, RUN_CONFIG, RUN_CKPT, kind->results);
    return EXIT_USAGE;
}

int run_dir_refuse_foreign(const RunKind *kind, const char *dir, const char *work, int say) {
    kind = run_kind(kind);
    return run_dir_refuse_foreign_holding(kind, dir, work, run_dir_holds(work, kind), say);
}

int run_dir_check(const RunKind *kind, const char *dir, const char *work, int resume, int overwrite, int say) {
    kind = run_kind(kind);
    int holds = run_dir_holds(work, kind);   /* one look at the directory for every refusal */
    if (run_dir_refuse_foreign_holding(kind, dir, work, holds, say)) return EXIT_USAGE;
    if (overwrite) return 0;
    if (!resume && (holds & RUN_HOLDS_RESULTS)) {
        char advice[512];
        snprintf(advice, sizeof advice, "--overwrite replaces it (the old run kept until the new one finishes), "
                 "--out DIR trains elsewhere, %s", kind->finished);
        if (say) user_error(advice, "%s already holds a finished run (%s)", dir, kind->results);
        return EXIT_USAGE;
    }
    if (!resume && (holds & RUN_HOLDS_RESUME)) {
        if (say)
            user_error("--resume continues it; --overwrite starts over (the interrupted run kept until the new one "
                       "finishes)", "%s holds an interrupted run (its resume point %s/)", dir, RUN_RESUME_DIR);
        return EXIT_USAGE;
    }
    if (!resume && (holds & RUN_HOLDS_CKPT)) {
        if (say)
            user_error("--overwrite replaces it, --out DIR trains elsewhere",
                       "%s holds a run's %s without %s or a resume point (a run stopped before its first save)",
                       dir, RUN_CKPT, kind->results);
        return EXIT_USAGE;
    }
    if (resume && (holds & RUN_HOLDS_RESULTS) && !(holds & RUN_HOLDS_RESUME)) {
        if (say)
            user_error(kind->finished, "%s holds a finished run: nothing to resume (--overwrite trains it again)",
                       dir);
        return EXIT_USAGE;
    }
    return 0;
}

int run_dir_stage(RunDirTxn *x, int overwrite, int resume) {
    if (!overwrite || strcmp(x->work, x->dir) != 0) return 0;
    if (resume && (run_dir_holds(x->dir, x->kind) & RUN_HOLDS_RESUME)) return 0;   /* continued in place */
    if (!run_dir_holds(x->dir, x->kind)) return 0;
    char stage[4200];
    run_txn_stage_path(x->dir, stage, sizeof stage);
    /* A stage left by an overwrite that was killed: ours now (we hold dir). */
    if (file_remove_tree(stage) != 0 || file_make_dir(stage) != 0) {
        user_error_io("check free disk space and permissions", "%s: cannot make a fresh directory: %s", stage,
                      strerror(errno));
        return 1;
    }
    snprintf(x->work, sizeof x->work, "%s", stage);
    return run_lock_take(&x->stage_lock, x->work) ? 1 : 0;
}

int run_dir_enter(RunDirTxn *x, const char *dir, int resume, int overwrite) {
    int rc = run_dir_open(x, dir, resume);
    if (rc == 0) rc = run_dir_check(x->kind, x->dir, x->work, resume, overwrite, 1);
    if (rc == 0) rc = run_dir_stage(x, overwrite, resume);
    return rc;
}

/* stage and dir trade places: atomically where the file system can
 * (RENAME_EXCHANGE), else by two renames (between them dir is <dir>.old). */
static int run_txn_exchange(const char *dir, const char *stage) {
    if (renameat2(AT_FDCWD, stage, AT_FDCWD, dir, RENAME_EXCHANGE) == 0) return 0;
    if (errno != EINVAL && errno != ENOSYS) return -1;
    char old[4300];
    snprintf(old, sizeof old, "%s.old", dir);
    if (file_remove_tree(old) != 0 || rename(dir, old) != 0) return -1;
    if (rename(stage, dir) != 0) {
        int e = errno;
        rename(old, dir);
        errno = e;
        return -1;
    }
    return rename(old, stage);
}

/* Folders of the old run that are not its own files (an intermediate stage's
 * run, seed runs) move into the new one: a run directory can hold other runs
 * the new run was made from. */
static void run_txn_keep_nested(const char *old, const char *dir) {
    DIR *d = opendir(old);
    struct dirent *e;
    char from[4400], to[4400];
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.' || strncmp(e->d_name, RUN_RESUME_DIR, strlen(RUN_RESUME_DIR)) == 0) continue;
        file_join(old, e->d_name, from, sizeof from);
        file_join(dir, e->d_name, to, sizeof to);
        struct stat st;
        if (stat(from, &st) == 0 && S_ISDIR(st.st_mode) && !file_exists(to)) rename(from, to);
    }
    if (d) closedir(d);
}

int run_dir_commit(RunDirTxn *x) {
    if (strcmp(x->work, x->dir) == 0) return 0;
    if (run_txn_exchange(x->dir, x->work) != 0) {
        user_error_io("check permissions; the new run is in the stage", "%s: cannot swap in %s: %s", x->dir, x->work,
                      strerror(errno));
        return 1;
    }
    file_write_point();
    /* The old run (and its lock file) is the stage now; the new run's lock is dir's. */
    run_txn_keep_nested(x->work, x->dir);
    file_remove_tree(x->work);
    if (x->lock.fd >= 0) close(x->lock.fd);
    x->lock = x->stage_lock;
    file_join(x->dir, RUN_LOCK_FILE, x->lock.path, sizeof x->lock.path);
    x->stage_lock.fd = -1;
    snprintf(x->work, sizeof x->work, "%s", x->dir);
    return 0;
}

void run_dir_close(RunDirTxn *x, int ok) {
    if (!x->dir[0]) return;   /* never opened */
    int staged = strcmp(x->work, x->dir) != 0;
    run_lock_release(&x->stage_lock);
    if (!ok && staged && !(run_dir_holds(x->work, x->kind) & RUN_HOLDS_RESUME)) file_remove_tree(x->work);
    run_lock_release(&x->lock);
    if (!ok && x->made) rmdir(x->dir);   /* only when empty */
}

cJSON *run_labels_json(const Task *t) {
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; t->num_labels > 1 && i < t->num_labels; i++)
        cJSON_AddItemToArray(a, cJSON_CreateString(t->labels[i] ? t->labels[i] : ""));
    return a;
}

/* "a, b, c" of a JSON array of strings into out. */
static void run_labels_text(const cJSON *a, char *out, size_t cap) {
    size_t n = 0;
    out[0] = '\0';
    for (const cJSON *e = a ? a->child : NULL; e && n < cap; e = e->next)
        n += (size_t)snprintf(out + n, cap - n, "%s%s", n ? ", " : "", cJSON_IsString(e) ? e->valuestring : "?");
}

int run_dir_check_labels(const char *dir, const Task *t) {
    char path[4400], from[4400];
    file_join(dir, RUN_RESULTS, path, sizeof path);
    cJSON *rec = file_exists(path) ? json_file_read(path, 0) : NULL;
    snprintf(from, sizeof from, "%s", path);
    if (!cJSON_GetObjectItemCaseSensitive(rec, "labels")) {
        cJSON_Delete(rec);
        rec = resume_position(dir);
        snprintf(from, sizeof from, "%s/%s/%s", dir, RUN_RESUME_DIR, RUN_TRAINER_STATE);
    }
    const cJSON *had = cJSON_GetObjectItemCaseSensitive(rec, "labels");
    cJSON *want = run_labels_json(t);
    int rc = 0;
    if (had && !cJSON_Compare(had, want, 1)) {
        char a[1024], b[1024];
        run_labels_text(had, a, sizeof a);
        run_labels_text(want, b, sizeof b);
        user_error_data("a run's label order is fixed when it is trained: restore the order, or train again",
                        "%s was trained with the labels (%s) in that order (%s); %s gives (%s)", dir, a, from,
                        t->display, b);
        rc = -1;
    }
    cJSON_Delete(want);
    cJSON_Delete(rec);
    return rc;
}
