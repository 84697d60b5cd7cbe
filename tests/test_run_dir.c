/* test_run_dir.c — a run directory is a transaction (train/run_txn.h): a
 * refusal writes nothing; one run at a time (a lock naming its owner; a stale
 * one taken over); an interrupted run is not started over unless asked;
 * --overwrite swaps the new run in only when it finished (an interrupted
 * one continues from its stage with --resume) — killed after
 * every one of its writes (checkpoint, results, dataset, resume point), the
 * directory holds the old run, never a mix; the label order a run was
 * trained with is checked; epoch ties go to the lower dev loss; a folder of
 * someone else's files is no run directory. */
#include "core/files.h"
#include "tasks/user_data.h"
#include "train/dev_loss.h"
#include "train/loop.h"
#include "train/run_lock.h"
#include "tests/cli_fixture.h"
#include "tests/run_txn_check.h"
#include "tests/test.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FT "finetune --model fasttext --threads 1 --epochs 3 --batch 8 --checkpoint-every 1 --set bucket=1000 --out out "
#define RUN_A FT "--train a.tsv --dev a.tsv"
#define RUN_B FT "--train b.tsv --dev b.tsv --set lr=0.5"

/* The files that make a finished run, as bytes. */
static const char *const RUN_FILES[] = {"results.json", "model.ckpt", "dataset.json", "config.json"};
enum { NFILES = 4 };

typedef struct { char *data[NFILES]; size_t len[NFILES]; } Snapshot;

static void snap_take(const CliFixture *f, const char *dir, Snapshot *s) {
    char path[512], name[256];
    for (int i = 0; i < NFILES; i++) {
        snprintf(name, sizeof name, "%s/%s", dir, RUN_FILES[i]);
        cli_fixture_path(f, name, path, sizeof path);
        s->data[i] = file_read(path, &s->len[i]);
    }
}

/* The name of the first file that differs, or NULL when the same. */
static const char *snap_differs(const Snapshot *a, const Snapshot *b) {
    for (int i = 0; i < NFILES; i++)
        if (!a->data[i] != !b->data[i] || (a->data[i] && (a->len[i] != b->len[i] ||
                                                          memcmp(a->data[i], b->data[i], a->len[i]))))
            return RUN_FILES[i];
    return NULL;
}

static void snap_free(Snapshot *s) {
    for (int i = 0; i < NFILES; i++) free(s->data[i]);
}

/* Two own datasets of other labels: a.tsv (pos/neg), b.tsv (yes/no). */
static int two_datasets(const CliFixture *f) {
    char a[4096] = "text\tlabel\n", b[4096] = "text\tlabel\n";
    for (int i = 0; i < 40; i++) {
        char row[96];
        snprintf(row, sizeof row, "%s w%d\t%s\n", i % 2 ? "bad awful poor" : "good great fine", i,
                 i % 2 ? "neg" : "pos");
        strcat(a, row);
        snprintf(row, sizeof row, "%s v%d\t%s\n", i % 2 ? "no never not" : "yes sure right", i, i % 2 ? "no" : "yes");
        strcat(b, row);
        if (i == 11) cli_fixture_write(f, "bsmall.tsv", b, -1);   /* 12 rows: a dev too small to select on */
    }
    return cli_fixture_write(f, "a.tsv", a, -1) || cli_fixture_write(f, "b.tsv", b, -1) ? -1 : 0;
}

/* Every file of a finished run, of b's dataset. */
static int now_is_b(const Snapshot *s) {
    for (int i = 0; i < NFILES; i++)
        if (!s->data[i]) return 0;
    return strstr(s->data[0], "\"yes\"") && strstr(s->data[2], "\"yes\"");
}

static int glue_ok(const CliFixture *f, const char *args) {
    int st = -1;
    char *out = cli_fixture_glue(f, args, &st);
    CHECK_MSG(st == 0, "glue %s: exit %d: %.600s", args, st, out);
    free(out);
    return st;
}

TEST(run_dir_refusals_write_nothing) {
    CliFixture f;
    if (cli_fixture_open(&f) != 0 || two_datasets(&f) != 0) return;
    if (glue_ok(&f, RUN_A) != 0) { cli_fixture_close(&f); return; }
    Snapshot a, now;
    snap_take(&f, "out", &a);
    /* Another dataset into a finished run: refused, and dataset.json (which
     * predict and eval read the labels and the dev file from) untouched. */
    int st = -1;
    char *out = cli_fixture_glue(&f, RUN_B, &st);
    CHECK_MSG(st == 2 && strstr(out, "already holds a finished run") && strstr(out, "--overwrite"), "%d: %s", st, out);
    free(out);
    snap_take(&f, "out", &now);
    const char *d = snap_differs(&a, &now);
    CHECK_MSG(!d, "a refused run changed out/%s", d);
    snap_free(&now);
    /* --resume of a finished run: nothing to resume, nothing written. */
    out = cli_fixture_glue(&f, RUN_A " --resume", &st);
    CHECK_MSG(st == 2 && strstr(out, "nothing to resume"), "%d: %s", st, out);
    free(out);
    snap_take(&f, "out", &now);
    CHECK(!snap_differs(&a, &now));
    snap_free(&now);
    CHECK_MSG(!cli_fixture_exists(&f, "out/run.lock") && !cli_fixture_exists(&f, "out.next"), "lock or stage left");
    snap_free(&a);
    cli_fixture_close(&f);
}

/* --out into a folder of other files and no run (the top folder, a data
 * folder): refused, with or without --overwrite, nothing written. It wrote
 * its config.json over the folder's own, and a later --overwrite would have
 * deleted the folder's files with the run. The checks of every training
 * command (tests/run_txn_check.h). */
TEST(run_dir_refuses_a_folder_of_other_files) {
    CliFixture f;
    if (cli_fixture_open(&f) != 0 || two_datasets(&f) != 0) return;
    static const char *const FILES[] = {"config.json", "model.ckpt", "results.json", "dataset.json"};
    char a[4096], b[4096], fail[4096], dir[4096];
    snprintf(a, sizeof a, "cd '%s' && GLUE_RUNS=runs '%s' finetune --model fasttext --threads 1 --epochs 2 "
             "--batch 8 --set bucket=1000 --train a.tsv --dev a.tsv", f.dir, cli_fixture_bin());
    snprintf(b, sizeof b, "%.3000s --set lr=0.5", a);
    snprintf(fail, sizeof fail, "%.3000s --set lr=0.5 --test missing.tsv", a);
    cli_fixture_path(&f, "out", dir, sizeof dir);
    TxnCase c = {.name = "finetune", .run_a = a, .run_b = b, .fail_b = fail, .dir = dir, .files = FILES,
                 .nfiles = 4, .b_marker = "\"lr\":\t0.5"};
    txn_check_refusals(&c);
    cli_fixture_close(&f);
}

TEST(run_dir_lock_names_its_owner) {
    CliFixture f;
    if (cli_fixture_open(&f) != 0 || two_datasets(&f) != 0) return;
    char dir[512];
    cli_fixture_path(&f, "out", dir, sizeof dir);
    CHECK(file_make_dir(dir) == 0);
    RunLock l;
    CHECK(run_lock_take(&l, dir) == 0);   /* this process runs into out */
    int st = -1;
    char *out = cli_fixture_glue(&f, RUN_A, &st);
    char pid[64];
    snprintf(pid, sizeof pid, "glue pid %ld on", (long)getpid());
    CHECK_MSG(st == 2 && strstr(out, "in use by another run") && strstr(out, pid), "%d: %s", st, out);
    free(out);
    CHECK(!cli_fixture_exists(&f, "out/results.json") && !cli_fixture_exists(&f, "out/dataset.json"));
    run_lock_release(&l);
    CHECK(!cli_fixture_exists(&f, "out/run.lock"));
    /* A lock file whose process died (the kernel released its flock): said, taken over. */
    CHECK(cli_fixture_write(&f, "out/run.lock", "pid=2147483000\nhost=elsewhere\n", -1) == 0);
    out = cli_fixture_glue(&f, RUN_A, &st);
    CHECK_MSG(st == 0 && strstr(out, "stale lock of glue pid 2147483000 on elsewhere") && strstr(out, "taken over"),
              "%d: %s", st, out);
    free(out);
    CHECK_MSG(!cli_fixture_exists(&f, "out/run.lock"), "the lock outlived its run");
    cli_fixture_close(&f);
}

TEST(run_dir_lock_file_parse) {
    RunLockOwner o;
    CHECK(run_lock_parse("pid=42\nhost=a-b\n", 16, &o) == 0 && o.pid == 42 && strcmp(o.host, "a-b") == 0);
    CHECK(run_lock_parse("host=x\npid=7", 12, &o) == 0 && o.pid == 7 && strcmp(o.host, "x") == 0);
    static const char *const BAD[] = {"", "pid=", "pid=0", "pid=-3", "pid=12a", "pid=99999999999999999999",
                                      "host=x\n", "PID=4"};
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++)
        CHECK_MSG(run_lock_parse(BAD[i], strlen(BAD[i]), &o) == -1, "'%s' parsed", BAD[i]);
    CHECK(run_lock_parse("pid=5\nhost=two words\n", 21, &o) == 0 && o.host[0] == '\0');
}

/* Kills `args` after its Nth write (core/files.h file_write_point). The exit status (137: killed). */
static int glue_killed_at(const CliFixture *f, const char *args, int n, char **out) {
    char v[16];
    snprintf(v, sizeof v, "%d", n);
    setenv("GLUE_TEST_KILL_AFTER_WRITES", v, 1);
    int st = -1;
    *out = cli_fixture_glue(f, args, &st);
    unsetenv("GLUE_TEST_KILL_AFTER_WRITES");
    return st;
}

TEST(run_dir_interrupted_is_not_restarted) {
    CliFixture f;
    if (cli_fixture_open(&f) != 0 || two_datasets(&f) != 0) return;
    char *out;
    int st = glue_killed_at(&f, RUN_A, 6, &out);   /* after a resume point */
    CHECK_MSG(st == 137 && cli_fixture_exists(&f, "out/resume"), "%d: %s", st, out);
    free(out);
    st = -1;
    out = cli_fixture_glue(&f, RUN_A, &st);
    CHECK_MSG(st == 2 && strstr(out, "interrupted run") && strstr(out, "--resume") && strstr(out, "--overwrite"),
              "%d: %s", st, out);
    free(out);
    CHECK(cli_fixture_exists(&f, "out/resume") && !cli_fixture_exists(&f, "out/results.json"));
    CHECK(glue_ok(&f, RUN_A " --resume") == 0);
    CHECK(cli_fixture_exists(&f, "out/results.json") && !cli_fixture_exists(&f, "out/resume"));
    /* An --overwrite interrupted in its stage: the old run stays; --resume
     * continues the stage and swaps it in. */
    Snapshot a, now;
    snap_take(&f, "out", &a);
    st = glue_killed_at(&f, RUN_B " --overwrite", 12, &out);
    free(out);
    snap_take(&f, "out", &now);
    CHECK_MSG(st == 137 && !snap_differs(&a, &now) && cli_fixture_exists(&f, "out.next/resume"), "exit %d", st);
    snap_free(&now);
    CHECK(glue_ok(&f, RUN_B " --resume") == 0);
    snap_take(&f, "out", &now);
    CHECK_MSG(now_is_b(&now) && !cli_fixture_exists(&f, "out.next"), "the stage was not swapped in");
    snap_free(&now);
    snap_free(&a);
    cli_fixture_close(&f);
}

/* The eval of out names b's labels: the new run is whole (its dataset, its model). */
static int eval_names(const CliFixture *f, const char *label) {
    int st = -1;
    char *out = cli_fixture_glue(f, "predict b --run out --model fasttext 'yes sure right'", &st);
    int ok = st == 0 && strstr(out, label);
    CHECK_MSG(ok, "predict: %d: %s", st, out);
    free(out);
    return ok;
}

TEST(run_dir_overwrite_killed_at_every_write) {
    CliFixture f;
    if (cli_fixture_open(&f) != 0 || two_datasets(&f) != 0) return;
    if (glue_ok(&f, RUN_A) != 0) { cli_fixture_close(&f); return; }
    Snapshot a, now;
    snap_take(&f, "out", &a);
    int n = 1, st = -1, kills = 0, swapped = 0;
    for (; n < 200; n++) {
        char *out;
        st = glue_killed_at(&f, RUN_B " --overwrite", n, &out);
        free(out);
        if (st != 137) break;
        kills++;
        snap_take(&f, "out", &now);
        const char *d = snap_differs(&a, &now);
        /* The old run, or (killed right after the swap) the whole new one,
         * which the next --overwrite then replaces: the old run from then on. */
        int whole_new = d && now_is_b(&now);
        CHECK_MSG(!d || whole_new, "killed after write %d of --overwrite: out/%s is not the old run's", n, d);
        swapped += whole_new;
        if (whole_new) snap_free(&a), a = now;
        else snap_free(&now);
        if (d && !whole_new) break;
    }
    printf("  --overwrite: killed after each of its first %d writes (%d after the swap), then finished\n", kills,
           swapped);
    CHECK_MSG(st == 0 && kills >= 10 && swapped >= 1, "--overwrite: exit %d after %d kills (%d after the swap)", st,
              kills, swapped);
    snap_take(&f, "out", &now);
    for (int i = 0; i < NFILES; i++) CHECK_MSG(now.data[i], "out/%s missing after the swap", RUN_FILES[i]);
    CHECK_MSG(now.data[2] && strstr(now.data[2], "\"yes\"") && now.data[0] && strstr(now.data[0], "\"yes\""),
              "the new run's dataset and results are not b's");
    snap_free(&now);
    CHECK(!cli_fixture_exists(&f, "out.next") && !cli_fixture_exists(&f, "out/run.lock"));
    eval_names(&f, "yes");
    snap_free(&a);
    cli_fixture_close(&f);
}

TEST(run_dir_fresh_run_killed_at_every_write) {
    CliFixture f;
    if (cli_fixture_open(&f) != 0 || two_datasets(&f) != 0) return;
    int kills = 0;
    for (int n = 1; n < 200; n++) {
        char *out;
        int st = glue_killed_at(&f, RUN_B " --overwrite", n, &out);
        free(out);
        if (st != 137) { CHECK_MSG(st == 0, "exit %d", st); break; }
        kills++;
        /* Nothing, an unfinished run, or a whole one: results.json only beside its model and dataset. */
        if (cli_fixture_exists(&f, "out/results.json"))
            CHECK_MSG(cli_fixture_exists(&f, "out/model.ckpt") && cli_fixture_exists(&f, "out/dataset.json"),
                      "killed after write %d: results without its model or dataset", n);
        /* Then from nothing again, to be killed one write later. */
        char rm[600];
        snprintf(rm, sizeof rm, "rm -rf '%s/out' '%s/out.next'", f.dir, f.dir);
        if (system(rm) != 0) break;
    }
    printf("  a fresh run: killed after each of its first %d writes, then finished\n", kills);
    CHECK_MSG(kills >= 8, "only %d kill points", kills);
    eval_names(&f, "yes");
    cli_fixture_close(&f);
}

TEST(run_dir_label_order_checked) {
    CliFixture f;
    if (cli_fixture_open(&f) != 0 || two_datasets(&f) != 0) return;
    if (glue_ok(&f, RUN_B) != 0) { cli_fixture_close(&f); return; }
    char path[512];
    cli_fixture_path(&f, "out/dataset.json", path, sizeof path);
    cJSON *d = json_file_read(path, 1);
    cJSON *labels = cJSON_GetObjectItemCaseSensitive(d, "labels");
    CHECK(cJSON_GetArraySize(labels) == 2);
    cJSON *first = cJSON_DetachItemFromArray(labels, 0);
    cJSON_AddItemToArray(labels, first);   /* ["yes", "no"] */
    CHECK(json_file_write(path, d) == 0);
    cJSON_Delete(d);
    static const char *const CMDS[] = {"predict b --run out --model fasttext 'yes sure'", "eval b --run out --model fasttext"};
    for (int i = 0; i < 2; i++) {
        int st = -1;
        char *out = cli_fixture_glue(&f, CMDS[i], &st);
        CHECK_MSG(st == 65 && strstr(out, "trained with the labels (no, yes)") && strstr(out, "gives (yes, no)"),
                  "%s: %d: %s", CMDS[i], st, out);
        free(out);
    }
    cli_fixture_close(&f);
}

/* dev is perfect from the first epoch (the words decide the class): the run
 * keeps the epoch that went on learning (lower dev loss), and says dev is small. */
TEST(run_dir_ties_go_to_lower_dev_loss) {
    CliFixture f;
    if (cli_fixture_open(&f) != 0 || two_datasets(&f) != 0) return;
    int st = -1;
    char *out = cli_fixture_glue(&f, "finetune --model fasttext --threads 1 --epochs 6 --out out --train b.tsv "
                                     "--dev bsmall.tsv --set lr=0.5", &st);
    CHECK_MSG(st == 0 && strstr(out, "too few to select an epoch on"), "%d: %s", st, out);
    free(out);
    char path[512];
    cli_fixture_path(&f, "out/results.json", path, sizeof path);
    cJSON *r = json_file_read(path, 1);
    const cJSON *best = cJSON_GetObjectItemCaseSensitive(r, "best");
    const cJSON *ep = cJSON_GetObjectItemCaseSensitive(r, "epochs");
    double low = 1e9;
    int at = 0, all_perfect = 1;
    for (const cJSON *e = ep ? ep->child : NULL; e; e = e->next) {
        double l = cJSON_GetObjectItemCaseSensitive(e, "dev_loss")->valuedouble;
        if (cJSON_GetObjectItemCaseSensitive(e, "score")->valuedouble < 100) all_perfect = 0;
        if (l <= low) low = l, at = cJSON_GetObjectItemCaseSensitive(e, "epoch")->valueint;
    }
    CHECK_MSG(all_perfect, "the fixture's dev is not perfect from epoch 1");
    int kept = cJSON_GetObjectItemCaseSensitive(best, "epoch")->valueint;
    CHECK_MSG(kept == at && kept > 1, "kept epoch %d; the lowest dev loss is epoch %d", kept, at);
    cJSON_Delete(r);
    cli_fixture_close(&f);
}

/* glue compare adds to the table before it: the rows and cells it did not
 * compute stay (it replaced the whole table). */
TEST(run_dir_compare_merges_rows) {
    CliFixture f;
    if (cli_fixture_open(&f) != 0 || two_datasets(&f) != 0) return;
    static const char *const CMDS[] = {
        "finetune --train a.tsv --dev a.tsv --model fasttext --threads 1 --set bucket=1000",
        "compare a --models fasttext --threads 1 --set bucket=1000",
        "finetune --train b.tsv --dev b.tsv --model fasttext --threads 1 --set bucket=1000",
        "compare b --models fasttext --threads 1 --set bucket=1000 --set epochs=2",
    };
    for (int i = 0; i < 4; i++)
        if (glue_ok(&f, CMDS[i]) != 0) { cli_fixture_close(&f); return; }
    char path[512];
    cli_fixture_path(&f, "results/compare.json", path, sizeof path);
    cJSON *j = json_file_read(path, 1);
    const cJSON *tasks = cJSON_GetObjectItemCaseSensitive(j, "tasks");
    const cJSON *models = cJSON_GetObjectItemCaseSensitive(j, "models");
    /* The table's columns: b (a's dataset is not loaded by compare b; its cells stay in the rows). */
    CHECK_MSG(cJSON_GetArraySize(tasks) == 1, "tasks: %d", cJSON_GetArraySize(tasks));
    int fasttext_rows = 0, settings_rows = 0;
    for (const cJSON *m = models ? models->child : NULL; m; m = m->next) {
        const cJSON *cells = cJSON_GetObjectItemCaseSensitive(m, "tasks");
        if (strcmp(cJSON_GetObjectItemCaseSensitive(m, "model")->valuestring, "fasttext") != 0) continue;
        fasttext_rows++;
        /* compare a's row (bucket=1000) and compare b's (with epochs=2): two rows, a and b kept */
        settings_rows += cJSON_GetObjectItemCaseSensitive(cells, "a") || cJSON_GetObjectItemCaseSensitive(cells, "b");
    }
    CHECK_MSG(fasttext_rows == 2 && settings_rows == 2, "%d fasttext rows, %d with their cells", fasttext_rows,
              settings_rows);
    const cJSON *maj = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(models, 0), "tasks");
    CHECK_MSG(cJSON_GetObjectItemCaseSensitive(maj, "a") && cJSON_GetObjectItemCaseSensitive(maj, "b"),
              "the majority row lost a task");
    cJSON_Delete(j);
    /* compare.md names the row compare b kept, and what made it */
    cli_fixture_path(&f, "results/compare.md", path, sizeof path);
    char *md = file_read(path, NULL);
    const char *kept = md ? strstr(md, "Rows kept from earlier tables") : NULL;
    CHECK_MSG(kept && strstr(kept, "by `glue compare a --models fasttext --threads 1 --set bucket=1000` (glue ") &&
                  !strstr(kept, "--set epochs=2` ("),
              "%s", md ? md : "(no compare.md)");
    free(md);
    /* compare a's row recomputed on b: its cell a is kept inside the row, and
     * the row and compare.md say what made that cell. */
    if (glue_ok(&f, "compare b --models fasttext --threads 1 --set bucket=1000") != 0) { cli_fixture_close(&f); return; }
    cli_fixture_path(&f, "results/compare.json", path, sizeof path);
    j = json_file_read(path, 1);
    const cJSON *by_a = NULL;
    for (const cJSON *m = cJSON_GetObjectItemCaseSensitive(j, "models")->child; m; m = m->next)
        if (cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(m, "tasks"), "a") &&
            strcmp(cJSON_GetObjectItemCaseSensitive(m, "model")->valuestring, "fasttext") == 0)
            by_a = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(m, "cells_kept"), "a");
    const char *cmd_a = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(by_a, "command"));
    CHECK_MSG(cmd_a && strcmp(cmd_a, "glue compare a --models fasttext --threads 1 --set bucket=1000") == 0,
              "the kept cell's maker: %s", cmd_a ? cmd_a : "(none)");
    cJSON_Delete(j);
    cli_fixture_path(&f, "results/compare.md", path, sizeof path);
    md = file_read(path, NULL);
    kept = md ? strstr(md, "Cells kept inside rows") : NULL;
    CHECK_MSG(kept && strstr(kept, "on a by `glue compare a --models fasttext --threads 1 --set bucket=1000` (glue "),
              "%s", md ? md : "(no compare.md)");
    free(md);
    cli_fixture_close(&f);
}

/* A recomputed row does not keep an old cell of a task this compare ran but
 * the row has none for: the majority row of a score (a regression dataset
 * has no majority class) kept a 0 from an older table and counted it in its
 * GLUE score. A task the compare did not run keeps its cell. */
TEST(run_dir_compare_drops_stale_cells) {
    CliFixture f;
    if (cli_fixture_open(&f) != 0) return;
    char r[4096] = "text\tlabel\n";
    for (int i = 0; i < 40; i++) {
        char row[96];
        snprintf(row, sizeof row, "%s w%d\t%d.5\n", i % 2 ? "bad awful poor" : "good great fine", i, i % 2 ? 1 : 4);
        strcat(r, row);
    }
    if (cli_fixture_write(&f, "r.tsv", r, -1) != 0 ||
        glue_ok(&f, "finetune --train r.tsv --dev r.tsv --regression --model fasttext --threads 1 --set bucket=1000") != 0) {
        cli_fixture_close(&f);
        return;
    }
    CHECK(cli_fixture_write(&f, "results/compare.json",
                            "{\"tasks\": [\"r\", \"wnli\"], \"models\": [{\"model\": \"majority\", \"tasks\": {\"r\": "
                            "{\"dev\": {\"pearson\": 0, \"spearman\": 0}}, \"wnli\": {\"dev\": {\"accuracy\": 56.34}}}}]}",
                            -1) == 0);
    if (glue_ok(&f, "compare r --models fasttext --threads 1 --set bucket=1000") != 0) { cli_fixture_close(&f); return; }
    char path[512];
    cli_fixture_path(&f, "results/compare.json", path, sizeof path);
    cJSON *j = json_file_read(path, 1);
    const cJSON *maj = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "models"), 0),
                                                        "tasks");
    CHECK_MSG(maj && !cJSON_GetObjectItemCaseSensitive(maj, "r"), "the majority row kept a stale cell of r");
    CHECK_MSG(cJSON_GetObjectItemCaseSensitive(maj, "wnli"), "the majority row lost the cell of a task not run");
    cJSON_Delete(j);
    cli_fixture_close(&f);
}

/* What fuzz_resume and fuzz_dataset_json found: a resume position beyond
 * its type (an epoch of 1e308 was cast to int: undefined) is a damaged
 * point, nothing restored; a dataset.json naming a label twice (every cell
 * of it was the first class) is refused. */
TEST(run_dir_damaged_position_and_repeated_label) {
    static const char *const BAD[] = {"{\"epoch\": 1e308}", "{\"step\": -1}", "{\"batch\": 2.5}",
                                      "{\"epoch\": 1, \"train_seconds\": -3}", "{\"step\": 1e19}",
                                      "{\"epoch\": 1, \"best\": {\"epoch\": 1}, \"best_score\": \"nan\"}"};
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        cJSON *p = cJSON_Parse(BAD[i]), *config = cJSON_CreateObject();
        TrainLoop L;
        train_loop_init(&L, NULL, NULL, "x", config, 1);
        CHECK_MSG(train_loop_restore(&L, p) == -1 && L.epoch == 0 && L.step == 0, "%s restored", BAD[i]);
        train_loop_free(&L);
        cJSON_Delete(p);
        cJSON_Delete(config);
    }
    CliFixture f;
    if (cli_fixture_open(&f) != 0) return;
    static const char *const LABELS[] = {"[\"a\", \"a\"]", "[\"a\", \"\"]", "[\"a\", \"b\"]"};
    for (int i = 0; i < 3; i++) {
        char text[512], path[512];
        snprintf(text, sizeof text, "{\"name\": \"x\", \"format\": \"tsv\", \"header\": true, \"columns\": {\"text_a\": "
                 "\"text\", \"label\": \"label\"}, \"labels\": %s, \"files\": {\"train\": \"t\", \"dev\": \"d\"}}",
                 LABELS[i]);
        CHECK(cli_fixture_write(&f, "dataset.json", text, -1) == 0);
        cli_fixture_path(&f, "dataset.json", path, sizeof path);
        const Task *t = user_data_load(path);
        CHECK_MSG(i == 2 ? t != NULL : t == NULL, "labels %s: %s", LABELS[i], t ? "loaded" : "refused");
        user_data_free(t);
    }
    cli_fixture_close(&f);
}

/* The tie-breaking loss of a multi-label split: binary cross-entropy per
 * label of the sigmoid probabilities, as the head trains on (by hand: rows
 * {1} and {} over K = 2). */
TEST(run_dir_dev_loss_multi_label) {
    Task t = {.name = "ml", .num_labels = 2, .multi_label = 1};
    int one[] = {1};
    Example ex[2] = {{.a = "x", .label = -1, .labels = one, .nlabels = 1}, {.a = "y", .label = -1}};
    Dataset d = {.ex = ex, .n = 2};
    float out[] = {0.2f, 0.9f, 0.1f, 0.3f};
    double want = ((-log(0.8) - log(0.9)) / 2 + (-log(0.9) - log(0.7)) / 2) / 2;
    CHECK_NEAR(dev_loss(&t, &d, out), want, 2e-6);
}
