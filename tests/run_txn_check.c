/* run_txn_check.c — a training command's run directory as a transaction (see run_txn_check.h). */
#include "tests/run_txn_check.h"

#include "core/files.h"
#include "train/run_lock.h"
#include "tests/test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { TXN_MAX_FILES = 8 };

typedef struct {
    char *data[TXN_MAX_FILES];
    size_t len[TXN_MAX_FILES];
} Snap;

static void snap_take(const TxnCase *c, Snap *s) {
    char path[4400];
    for (int i = 0; i < c->nfiles && i < TXN_MAX_FILES; i++) {
        file_join(c->dir, c->files[i], path, sizeof path);
        s->data[i] = file_read(path, &s->len[i]);
    }
}

static void snap_free(const TxnCase *c, Snap *s) {
    for (int i = 0; i < c->nfiles && i < TXN_MAX_FILES; i++) free(s->data[i]), s->data[i] = NULL;
}

/* The first file that differs, or NULL. */
static const char *snap_differs(const TxnCase *c, const Snap *a, const Snap *b) {
    for (int i = 0; i < c->nfiles && i < TXN_MAX_FILES; i++)
        if (!a->data[i] != !b->data[i] ||
            (a->data[i] && (a->len[i] != b->len[i] || memcmp(a->data[i], b->data[i], a->len[i]) != 0)))
            return c->files[i];
    return NULL;
}

/* Every file of a finished run, of run_b. */
static int snap_is_b(const TxnCase *c, const Snap *s) {
    for (int i = 0; i < c->nfiles && i < TXN_MAX_FILES; i++)
        if (!s->data[i]) return 0;
    return strstr(s->data[0], c->b_marker) != NULL;
}

/* Runs `cmd --out dir extra`, killed after its kill_at-th write when > 0;
 * stdout and stderr in *out (may be NULL). The exit status, 137 when killed. */
static int txn_run(const TxnCase *c, const char *cmd, const char *extra, int kill_at, char **out) {
    char line[16384], env[64] = "";
    if (kill_at > 0) snprintf(env, sizeof env, "GLUE_TEST_KILL_AFTER_WRITES=%d ", kill_at);
    snprintf(line, sizeof line, "%s%s --out '%s' %s 2>&1; exit $?", env, cmd, c->dir, extra ? extra : "");
    int st = -1;
    char *o = test_run(line, &st);
    if (out) *out = o;
    else free(o);
    return st == -1 ? 137 : st;
}

/* 1 when dir + suffix exists ("" the directory, ".next" its stage). */
static int txn_exists(const TxnCase *c, const char *suffix) {
    char path[4400];
    snprintf(path, sizeof path, "%s%s", c->dir, suffix);
    return file_exists(path);
}

/* 1 when dir holds `name`. */
static int txn_has(const TxnCase *c, const char *name) {
    char path[4400];
    file_join(c->dir, name, path, sizeof path);
    return file_exists(path);
}

static void txn_clear(const TxnCase *c) {
    char path[4400];
    file_remove_tree(c->dir);
    snprintf(path, sizeof path, "%s.next", c->dir);
    file_remove_tree(path);
}

/* A finished run_a in dir, from nothing. 1 ok. */
static int txn_run_a(const TxnCase *c) {
    txn_clear(c);
    char *out;
    int st = txn_run(c, c->run_a, NULL, 0, &out);
    int ok = CHECK_MSG(st == 0, "%s: the first run failed: exit %d: %.600s", c->name, st, out);
    free(out);
    return ok;
}

int txn_check_lock(const TxnCase *c) {
    txn_clear(c);
    if (!CHECK(file_make_dir(c->dir) == 0)) return -1;
    RunLock l;
    if (!CHECK(run_lock_take(&l, c->dir) == 0)) return -1;   /* this process runs into dir */
    char *out, pid[64];
    int st = txn_run(c, c->run_a, NULL, 0, &out);
    snprintf(pid, sizeof pid, "glue pid %ld on", (long)getpid());
    int ok = CHECK_MSG(st == 2 && strstr(out, "in use by another run") && strstr(out, pid),
                       "%s into a locked directory: exit %d: %.600s", c->name, st, out);
    free(out);
    for (int i = 0; i < c->nfiles; i++)
        ok &= CHECK_MSG(!txn_has(c, c->files[i]), "%s: a refused run wrote %s", c->name, c->files[i]);
    ok &= CHECK_MSG(!txn_exists(c, ".next"), "%s: a refused run made a stage", c->name);
    run_lock_release(&l);
    return ok ? 0 : -1;
}

/* run_b (with extra) into run_a's finished run: exit `want` (0: any failure),
 * the message holding `says`, the old run unchanged, no lock or stage left. */
static int txn_refused(const TxnCase *c, const Snap *a, const char *cmd, const char *extra, int want,
                       const char *says) {
    char *out;
    int st = txn_run(c, cmd, extra, 0, &out);
    int ok = CHECK_MSG((want ? st == want : st != 0) && (!says || strstr(out, says)), "%s %s: exit %d: %.600s",
                       c->name, extra ? extra : "", st, out);
    free(out);
    Snap now = {0};
    snap_take(c, &now);
    const char *d = snap_differs(c, a, &now);
    ok &= CHECK_MSG(!d, "%s %s: a refused or failed run changed %s", c->name, extra ? extra : "", d);
    snap_free(c, &now);
    ok &= CHECK_MSG(!txn_has(c, RUN_LOCK_FILE) && !txn_exists(c, ".next"), "%s: a lock or a stage left",
                    c->name);
    return ok;
}

/* run_a (with extra) into a directory of someone else's files and no run
 * (notes.txt, a config.json): refused, the files as they were, nothing of a
 * run written, no lock or stage left. 1 ok. */
static int txn_refused_foreign(const TxnCase *c, const char *extra) {
    static const char *const MINE[][2] = {{"notes.txt", "my notes\n"}, {"config.json", "{\"mine\": 1}\n"}};
    char path[4400], *out;
    txn_clear(c);
    if (!CHECK(file_make_dir(c->dir) == 0)) return 0;
    for (int i = 0; i < 2; i++) {
        file_join(c->dir, MINE[i][0], path, sizeof path);
        if (!CHECK(atomic_write(path, MINE[i][1], strlen(MINE[i][1])) == 0)) return 0;
    }
    int st = txn_run(c, c->run_a, extra, 0, &out);
    int ok = CHECK_MSG(st == 2 && strstr(out, "holds files but no run") && strstr(out, "notes.txt"),
                       "%s %s into a folder of other files: exit %d: %.600s", c->name, extra ? extra : "", st, out);
    free(out);
    for (int i = 0; i < 2; i++) {
        size_t n = 0;
        file_join(c->dir, MINE[i][0], path, sizeof path);
        char *now = file_read(path, &n);
        ok &= CHECK_MSG(now && n == strlen(MINE[i][1]) && !memcmp(now, MINE[i][1], n), "%s: a refused run changed %s",
                        c->name, MINE[i][0]);
        free(now);
    }
    for (int i = 0; i < c->nfiles; i++)
        ok &= CHECK_MSG(!strcmp(c->files[i], "config.json") || !txn_has(c, c->files[i]), "%s: a refused run wrote %s",
                        c->name, c->files[i]);
    ok &= CHECK_MSG(!txn_has(c, RUN_LOCK_FILE) && !txn_exists(c, ".next"), "%s: a lock or a stage left", c->name);
    return ok;
}

int txn_check_refusals(const TxnCase *c) {
    int foreign = txn_refused_foreign(c, NULL) & txn_refused_foreign(c, "--overwrite");
    if (!txn_run_a(c)) return -1;
    Snap a = {0};
    snap_take(c, &a);
    int ok = txn_refused(c, &a, c->run_b, NULL, 2, "already holds a finished run");
    ok &= txn_refused(c, &a, c->fail_b, "--overwrite", 0, NULL);   /* fails: the old run kept */
    snap_free(c, &a);
    return ok && foreign ? 0 : -1;
}

int txn_check_interrupted(const TxnCase *c) {
    /* Killed after its first write that leaves a resume point. */
    char *out;
    int st = -1, n = 1;
    for (; n < 100; n++) {
        txn_clear(c);
        st = txn_run(c, c->run_a, NULL, n, NULL);
        if (st != 137 || txn_has(c, "resume")) break;
    }
    int ok = CHECK_MSG(st == 137 && txn_has(c, "resume"), "%s killed after write %d: exit %d, resume point %d",
                       c->name, n, st, txn_has(c, "resume"));
    Snap a = {0};
    snap_take(c, &a);
    st = txn_run(c, c->run_a, NULL, 0, &out);
    ok &= CHECK_MSG(st == 2 && strstr(out, "interrupted run") && strstr(out, "--resume") && strstr(out, "--overwrite"),
                    "%s over an interrupted run: exit %d: %.600s", c->name, st, out);
    free(out);
    Snap now = {0};
    snap_take(c, &now);
    const char *d = snap_differs(c, &a, &now);
    ok &= CHECK_MSG(!d && txn_has(c, "resume"), "%s: the refusal changed %s", c->name, d ? d : "resume/");
    snap_free(c, &now);
    snap_free(c, &a);
    st = txn_run(c, c->run_a, "--resume", 0, &out);
    ok &= CHECK_MSG(st == 0, "%s --resume: exit %d: %.600s", c->name, st, out);
    free(out);
    return ok ? 0 : -1;
}

int txn_check_overwrite_killed(const TxnCase *c, int min_kills) {
    if (!txn_run_a(c)) return -1;
    Snap a = {0}, now = {0};
    snap_take(c, &a);
    int st = -1, kills = 0, swapped = 0, ok = 1;
    for (int n = 1; n < 400 && ok; n++) {
        st = txn_run(c, c->run_b, "--overwrite", n, NULL);
        if (st != 137) break;
        kills++;
        snap_take(c, &now);
        const char *d = snap_differs(c, &a, &now);
        /* The old run, or (killed right after the swap) the whole new one,
         * which the next --overwrite replaces: the old run from then on. */
        int whole_new = d && snap_is_b(c, &now);
        ok = CHECK_MSG(!d || whole_new, "%s --overwrite killed after write %d: %s is neither the old run's nor the "
                       "new one's", c->name, n, d ? d : "-");
        swapped += whole_new;
        if (whole_new) snap_free(c, &a), a = now, memset(&now, 0, sizeof now);
        else snap_free(c, &now);
    }
    printf("  %s --overwrite: killed after each of its first %d writes (%d after the swap), then finished\n",
           c->name, kills, swapped);
    ok &= CHECK_MSG(st == 0 && kills >= min_kills && swapped >= 1, "%s --overwrite: exit %d after %d kills (%d after "
                    "the swap)", c->name, st, kills, swapped);
    snap_take(c, &now);
    ok &= CHECK_MSG(snap_is_b(c, &now), "%s: after --overwrite the directory is not the new run", c->name);
    ok &= CHECK_MSG(!txn_exists(c, ".next") && !txn_has(c, RUN_LOCK_FILE), "%s: a stage or lock left", c->name);
    snap_free(c, &now);
    snap_free(c, &a);
    return ok ? kills : -1;
}
