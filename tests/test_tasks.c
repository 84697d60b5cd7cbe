/* test_tasks.c — the line reader, the task registry and the GLUE loaders.
 *
 * References are independent of the code under test: the official row counts,
 * awk/zcat reading the raw files of ../shared/data (every example of every split
 * is compared field by field), literal first/last rows copied from the files, the
 * fixtures in data/fixtures (official layouts), and broken files made here
 * (truncated / corrupt gzip, bad rows, wrong header, missing file). */
#include "core/lines.h"
#include "tasks/task.h"
#include "tests/scratch.h"
#include "tests/test.h"
#include "tests/capture.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FIXTURES "data/fixtures"

/* ---- helpers ---- */

typedef struct { int saved; char path[SCRATCH_PATH_MAX]; } Capture;

/* Redirect this process's stderr to a temporary file (loader messages). */
static void capture_start(Capture *c) {
    fflush(stderr);
    int fd = scratch_file("test_stderr", c->path, sizeof c->path);
    c->saved = dup(2);
    dup2(fd, 2);
    close(fd);
}

/* Restore stderr; returns what was written (malloc'd). */
static char *capture_end(Capture *c) {
    fflush(stderr);
    dup2(c->saved, 2);
    close(c->saved);
    FILE *f = fopen(c->path, "rb");
    char *s = calloc(1, 1 << 16);
    if (f) { size_t n = fread(s, 1, (1 << 16) - 1, f); s[n] = '\0'; fclose(f); }
    unlink(c->path);
    return s;
}

static char *make_tmpdir(void) {
    char *d = malloc(SCRATCH_PATH_MAX);
    if (d && scratch_dir("test_tasks", d, SCRATCH_PATH_MAX)) return d;
    free(d);
    return NULL;
}

static void remove_dir(char *d) {
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", d);
    free(test_run(cmd, NULL));
    free(d);
}

static void write_file(const char *path, const char *bytes, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f) { CHECK_MSG(0, "cannot write %s", path); return; }
    fwrite(bytes, 1, n, f);
    fclose(f);
}

static void shell(const char *cmd) {
    int st = -1;
    free(test_run(cmd, &st));
    CHECK_MSG(st == 0, "shell command failed: %s", cmd);
}

static int load_quiet(const Task *t, const char *split, const char *root, int strict, Dataset *d, char **err) {
    Capture c;
    capture_start(&c);
    int rc = task_load(t, split, root, strict, d);
    char *msg = capture_end(&c);
    if (err) *err = msg;
    else free(msg);
    return rc;
}

/* ---- line reader ---- */

TEST(lines_plain_crlf_and_final_line) {
    char *dir = make_tmpdir(), path[256];
    snprintf(path, sizeof path, "%s/a.txt", dir);
    write_file(path, "a\r\nbb\n\nla\0st", 12);     /* CRLF, empty line, NUL byte, no final newline */
    LineReader r;
    CHECK_EQ_INT(lines_open(&r, path), LINES_OK);
    const char *want[] = {"a", "bb", "", "la"};
    size_t want_len[] = {1, 2, 0, 5};
    char *line;
    size_t len;
    for (int i = 0; i < 4; i++) {
        CHECK_EQ_INT(lines_next(&r, &line, &len), 1);
        CHECK_EQ_INT(len, want_len[i]);
        CHECK_MSG(strcmp(line, want[i]) == 0, "line %d: '%s'", i + 1, line);
        CHECK_EQ_INT(r.line_no, i + 1);
    }
    CHECK_EQ_INT(lines_next(&r, &line, &len), 0);
    CHECK_EQ_INT(lines_next(&r, &line, &len), 0);
    lines_close(&r);
    long n = -1;
    CHECK_EQ_INT(lines_count(path, &n, NULL, 0), LINES_OK);
    CHECK_EQ_INT(n, 4);
    snprintf(path, sizeof path, "%s/empty.txt", dir);
    write_file(path, "", 0);
    CHECK_EQ_INT(lines_count(path, &n, NULL, 0), LINES_OK);
    CHECK_EQ_INT(n, 0);
    remove_dir(dir);
}

TEST(lines_gzip_long_line_and_find) {
    char *dir = make_tmpdir(), path[256], found[256], cmd[512];
    snprintf(path, sizeof path, "%s/long.txt", dir);
    size_t big = 3u << 20;                              /* one 3 MiB line, then a short one */
    char *buf = malloc(big + 16);
    memset(buf, 'x', big);
    memcpy(buf + big, "\nshort\n", 7);
    write_file(path, buf, big + 7);
    snprintf(cmd, sizeof cmd, "gzip '%s'", path);
    shell(cmd);
    CHECK_EQ_INT(lines_find(path, found, sizeof found), 0);   /* finds long.txt.gz */
    CHECK_MSG(strstr(found, "long.txt.gz") != NULL, "found %s", found);
    LineReader r;
    char *line;
    size_t len;
    CHECK_EQ_INT(lines_open(&r, found), LINES_OK);
    CHECK_EQ_INT(lines_next(&r, &line, &len), 1);
    CHECK_EQ_INT(len, big);
    CHECK(line[0] == 'x' && line[big - 1] == 'x' && line[big] == '\0');
    CHECK_EQ_INT(lines_next(&r, &line, &len), 1);
    CHECK(strcmp(line, "short") == 0);
    CHECK_EQ_INT(lines_next(&r, &line, &len), 0);
    lines_close(&r);
    snprintf(path, sizeof path, "%s/none.txt", dir);
    CHECK_EQ_INT(lines_find(path, found, sizeof found), -1);
    CHECK_EQ_INT(lines_open(&r, path), LINES_MISSING);
    lines_close(&r);
    /* The reporting opener: "long.txt" finds the .gz; a missing file is -1 with
     * the reader already closed (ASan would see a leak or a double close). */
    snprintf(path, sizeof path, "%s/long.txt", dir);
    CHECK_EQ_INT(lines_open_or_report(&r, path), 0);
    CHECK_EQ_INT(lines_next(&r, &line, &len), 1);
    CHECK_EQ_INT(len, big);
    lines_close(&r);
    snprintf(path, sizeof path, "%s/none.txt", dir);
    CHECK_EQ_INT(lines_open_or_report(&r, path), -1);
    free(buf);
    remove_dir(dir);
}

/* A gzip file cut short, one with a flipped byte, and plain text named .gz are all
 * errors with a message — never a silently shorter dataset. */
TEST(lines_truncated_and_corrupt_gzip) {
    char *dir = make_tmpdir(), cut[256], bad[256], fake[256], cmd[4096], err[512];
    snprintf(cut, sizeof cut, "%s/cut.tsv.gz", dir);
    snprintf(bad, sizeof bad, "%s/bad.tsv.gz", dir);
    snprintf(fake, sizeof fake, "%s/fake.tsv.gz", dir);
    snprintf(cmd, sizeof cmd, "head -c 50000 '%s/data/glue/CoLA/train.tsv.gz' > '%s' && "
             "cp '%s/data/glue/CoLA/train.tsv.gz' '%s' && chmod u+w '%s' && "
             "printf '\\377\\377\\377\\377' | dd of='%s' bs=1 seek=60000 conv=notrunc 2>/dev/null",
             test_shared_dir(), cut, test_shared_dir(), bad, bad, bad);
    shell(cmd);
    write_file(fake, "plain\ttext\n", 11);
    long n = -1;
    CHECK_EQ_INT(lines_count(cut, &n, err, sizeof err), LINES_TRUNCATED);
    CHECK_MSG(strstr(err, "truncated gzip stream") && strstr(err, "glue data fetch"), "message: %s", err);
    CHECK_EQ_INT(lines_count(bad, &n, err, sizeof err), LINES_CORRUPT);
    CHECK_EQ_INT(lines_count(fake, &n, err, sizeof err), LINES_CORRUPT);
    CHECK_MSG(strstr(err, "not a gzip file") != NULL, "message: %s", err);
    LineReader r;
    char *line;
    size_t len;
    int k, rows = 0;
    CHECK_EQ_INT(lines_open(&r, cut), LINES_OK);
    while ((k = lines_next(&r, &line, &len)) > 0) rows++;
    CHECK_EQ_INT(k, -1);
    CHECK_EQ_INT(r.status, LINES_TRUNCATED);
    CHECK(rows < 8551);
    lines_close(&r);
    remove_dir(dir);
}

TEST(lines_copy_decompresses_exactly) {
    char *dir = make_tmpdir(), dst[256], cmd[1024], src[512];
    snprintf(src, sizeof src, "%s/data/glue/CoLA/dev.tsv.gz", test_shared_dir());
    snprintf(dst, sizeof dst, "%s/dev.tsv", dir);
    long n = -1;
    CHECK_EQ_INT(lines_copy(src, dst, &n, NULL, 0), LINES_OK);
    CHECK_EQ_INT(n, 1043);            /* the official file has no final newline */
    snprintf(cmd, sizeof cmd, "zcat '%s' | cmp -s - '%s'", src, dst);
    int st = -1;
    free(test_run(cmd, &st));
    CHECK_MSG(st == 0, "copy differs from zcat output");
    remove_dir(dir);
}

/* ---- registry ---- */

TEST(tasks_registry_lookup) {
    CHECK_EQ_INT(NUM_TASKS, 10);
    const char *ids[] = {"cola", "sst2", "mrpc", "stsb", "qqp", "mnli", "qnli", "rte", "wnli", "ax"};
    for (int i = 0; i < 10; i++) CHECK(task_find(ids[i]) == &TASKS[i]);
    CHECK(task_find("SST-2") == task_find("sst2"));
    CHECK(task_find("sst-2") == task_find("sst2"));
    CHECK(task_find("STS-B") == task_find("stsb"));
    CHECK(task_find("CoLA") == task_find("cola"));
    CHECK(task_find("MNLI-m") == task_find("mnli"));
    CHECK(task_find("diagnostic") == task_find("ax"));
    CHECK(task_find("imdb") == NULL);
    CHECK(strcmp(task_suggest("mrcp"), "mrpc") == 0);
    CHECK(strcmp(task_suggest("sst"), "sst2") == 0);
    CHECK(strcmp(task_suggest("colaa"), "cola") == 0);
    CHECK_MSG(task_suggest("imdb") == NULL, "a name near no task suggests none");

    const Task *mnli = task_find("mnli");
    CHECK_EQ_INT(mnli->num_splits, 5);
    CHECK(task_split(mnli, "dev") == task_split(mnli, "dev_matched"));
    CHECK_EQ_INT(task_split(mnli, "train")->official_rows, 392702);
    CHECK_EQ_INT(task_split(mnli, "dev_mismatched")->official_rows, 9832);
    CHECK_EQ_INT(task_split(mnli, "test_mismatched")->official_rows, 9847);
    CHECK(strcmp(task_split(mnli, "test_matched")->submit, "MNLI-m.tsv") == 0);
    CHECK(strcmp(task_split(mnli, "test_mismatched")->submit, "MNLI-mm.tsv") == 0);
    CHECK_EQ_INT(task_split(task_find("qqp"), "test")->official_rows, 390965);
    CHECK_EQ_INT(task_split(task_find("qnli"), "train")->official_rows, 104743);
    CHECK(task_split(mnli, "validation") == NULL);

    const Task *ax = task_find("ax");
    CHECK(strcmp(ax->dir, "diagnostic") == 0 && strcmp(ax->scored_with, "mnli") == 0);
    CHECK(ax->metrics[0] == METRIC_MCC && ax->num_labels == 3 && task_dev_split(ax) == NULL);
    CHECK(strcmp(ax->splits[0].submit, "AX.tsv") == 0);
    const Task *stsb = task_find("stsb");
    CHECK(stsb->num_labels == 1 && stsb->metrics[0] == METRIC_PEARSON && stsb->metrics[1] == METRIC_SPEARMAN);
    CHECK(task_find("mrpc")->metrics[0] == METRIC_F1 && task_find("mrpc")->metrics[1] == METRIC_ACC);
    CHECK_EQ_INT(task_label_index(task_find("rte"), "not_entailment"), 1);
    CHECK_EQ_INT(task_label_index(mnli, "neutral"), 2);
    CHECK_EQ_INT(task_label_index(mnli, "-"), -1);
}

/* ---- the shared GLUE files ---- */

/* Compare every example with the fields awk cuts out of the raw file. */
static void check_against_awk(const Task *t, const TaskSplit *s, const char *path, const Dataset *d) {
    char cmd[1024], cols[4][16];
    int c[4] = {s->col_a, s->col_b, s->col_label, s->col_index};
    for (int k = 0; k < 4; k++)
        snprintf(cols[k], sizeof cols[k], c[k] >= 0 ? "$%d" : "\"-\"", c[k] + 1);
    snprintf(cmd, sizeof cmd, "zcat -f '%s' | awk -F'\\t' 'NR > %d { print %s \"\\t\" %s \"\\t\" %s \"\\t\" %s }'",
             path, s->has_header, cols[0], cols[1], cols[2], cols[3]);
    char *out = test_run(cmd, NULL), *save = NULL;
    int i = 0, bad = 0;
    for (char *row = strtok_r(out, "\n", &save); row; row = strtok_r(NULL, "\n", &save), i++) {
        if (i >= d->n) { i++; break; }
        char *f[4], *p = row;
        for (int k = 0; k < 4; k++) { f[k] = p; p = strchr(p, '\t'); if (p) *p++ = '\0'; else p = ""; }
        const Example *e = &d->ex[i];
        int ok = strcmp(e->a, f[0]) == 0 && (s->col_b < 0 ? e->b == NULL : strcmp(e->b, f[1]) == 0);
        if (s->col_label >= 0 && t->num_labels > 1) ok &= strcmp(t->labels[e->label], f[2]) == 0;
        if (s->col_label >= 0 && t->num_labels == 1) ok &= fabs(e->score - strtod(f[2], NULL)) < 1e-6;
        ok &= s->col_index >= 0 ? e->index == strtol(f[3], NULL, 10) : e->index == i;
        if (!ok && bad++ < 3) CHECK_MSG(0, "%s row %d differs from awk: '%s'", path, i + 1, f[0]);
    }
    CHECK_MSG(i == d->n, "%s: awk sees %d rows, loader %d", path, i, d->n);
    free(out);
}

TEST(tasks_shared_splits_load_exactly) {
    char root[512], path[1024];
    snprintf(root, sizeof root, "%s/data/glue", test_shared_dir());
    int available = 0;
    for (int i = 0; i < NUM_TASKS; i++)
        for (int k = 0; k < TASKS[i].num_splits; k++) {
            const Task *t = &TASKS[i];
            const TaskSplit *s = &t->splits[k];
            if (task_split_path(t, s, root, path, sizeof path) != 0) continue;
            available++;
            Dataset d;
            int rc = load_quiet(t, s->name, root, 1, &d, NULL);   /* strict: no malformed row at all */
            CHECK_MSG(rc == 0, "%s %s: load failed", t->name, s->name);
            if (rc != 0) continue;
            CHECK_MSG(d.n == s->official_rows, "%s %s: %d rows, official %ld", t->name, s->name, d.n,
                      s->official_rows);
            CHECK_EQ_INT(d.num_skipped, 0);
            CHECK(d.task == t && d.split == s);
            check_against_awk(t, s, path, &d);
            dataset_free(&d);
        }
    /* CoLA, SST-2, MRPC, STS-B, RTE, WNLI: 3 each; QNLI dev+test; AX test. */
    CHECK_EQ_INT(available, 21);
}

TEST(tasks_shared_spot_checks) {
    char root[512];
    snprintf(root, sizeof root, "%s/data/glue", test_shared_dir());
    Dataset d;
    if (load_quiet(task_find("cola"), "train", root, 1, &d, NULL) == 0) {
        CHECK(strcmp(d.ex[0].a, "Our friends won't buy this analysis, let alone the next one we propose.") == 0);
        CHECK(d.ex[0].label == 1 && d.ex[0].b == NULL && d.ex[0].line == 1);
        CHECK(strcmp(d.ex[d.n - 1].a, "What all did you get for Christmas?") == 0);
        dataset_free(&d);
    } else CHECK_MSG(0, "cola train");
    if (load_quiet(task_find("cola"), "dev", root, 1, &d, NULL) == 0) {   /* no final newline upstream */
        CHECK(strcmp(d.ex[d.n - 1].a, "John talked to Bill about himself.") == 0 && d.ex[d.n - 1].line == 1043);
        dataset_free(&d);
    } else CHECK_MSG(0, "cola dev");
    if (load_quiet(task_find("mrpc"), "train", root, 1, &d, NULL) == 0) {   /* header after a UTF-8 BOM */
        CHECK(strncmp(d.ex[0].a, "Amrozi accused his brother , whom he called \" the witness \"", 58) == 0);
        CHECK(strncmp(d.ex[0].b, "Referring to him as only \" the witness \"", 40) == 0);
        CHECK(d.ex[0].label == 1 && d.ex[0].index == 0 && d.ex[0].line == 2);
        dataset_free(&d);
    } else CHECK_MSG(0, "mrpc train");
    if (load_quiet(task_find("stsb"), "train", root, 1, &d, NULL) == 0) {
        CHECK(strcmp(d.ex[0].a, "A plane is taking off.") == 0 && strcmp(d.ex[0].b, "An air plane is taking off.") == 0);
        CHECK_NEAR(d.ex[0].score, 5.0, 1e-6);
        CHECK(d.ex[d.n - 1].index == 5748);
        dataset_free(&d);
    } else CHECK_MSG(0, "stsb train");
    if (load_quiet(task_find("sst2"), "dev", root, 1, &d, NULL) == 0) {   /* upstream trailing space kept */
        CHECK(strcmp(d.ex[0].a, "it 's a charming and often affecting journey . ") == 0 && d.ex[0].label == 1);
        dataset_free(&d);
    } else CHECK_MSG(0, "sst2 dev");
    if (load_quiet(task_find("qnli"), "dev", root, 1, &d, NULL) == 0) {
        CHECK(strcmp(d.ex[0].a, "What came into force after the new constitution was herald?") == 0);
        CHECK(d.ex[0].label == 0);   /* entailment */
        dataset_free(&d);
    } else CHECK_MSG(0, "qnli dev");
    if (load_quiet(task_find("ax"), "test", root, 1, &d, NULL) == 0) {
        CHECK(strcmp(d.ex[0].a, "The cat sat on the mat.") == 0 && strcmp(d.ex[0].b, "The cat did not sit on the mat.") == 0);
        CHECK(d.ex[0].label == -1 && d.ex[d.n - 1].index == 1103);
        dataset_free(&d);
    } else CHECK_MSG(0, "ax test");
}

/* ---- fixtures in the official layouts of the tasks missing offline ---- */

TEST(tasks_fixtures_load) {
    /* labels: first letter of each row's label as written in the file ('-': none);
     * the MNLI dev rows disagree among annotators, so only gold_label gives these. */
    const struct { const char *task, *split; int rows; const char *labels; } want[] = {
        {"mnli", "train", 10, "ececnecnee"}, {"mnli", "dev_matched", 6, "ecnecc"},
        {"mnli", "dev_mismatched", 6, "eecnce"}, {"mnli", "test_matched", 5, "-----"},
        {"mnli", "test_mismatched", 5, "-----"}, {"qqp", "train", 8, "10101010"},
        {"qqp", "dev", 5, "10101"}, {"qqp", "test", 6, "------"}, {"qnli", "train", 7, "enenene"},
    };
    for (int i = 0; i < (int)(sizeof want / sizeof want[0]); i++) {
        const Task *t = task_find(want[i].task);
        char path[512];
        Dataset d;
        CHECK(task_split_path(t, task_split(t, want[i].split), FIXTURES, path, sizeof path) == 0);
        if (load_quiet(t, want[i].split, FIXTURES, 1, &d, NULL) != 0) {
            CHECK_MSG(0, "%s %s fixture failed to load", want[i].task, want[i].split);
            continue;
        }
        CHECK_MSG(d.n == want[i].rows && d.num_skipped == 0, "%s %s: %d rows", want[i].task, want[i].split, d.n);
        for (int k = 0; k < d.n && k < want[i].rows; k++) {
            char got = d.ex[k].label < 0 ? '-' : t->labels[d.ex[k].label][0];
            CHECK_MSG(got == want[i].labels[k], "%s %s row %d: label %c, want %c", want[i].task, want[i].split,
                      k, got, want[i].labels[k]);
        }
        check_against_awk(t, d.split, path, &d);
        dataset_free(&d);
    }
    Dataset d;
    const Task *mnli = task_find("mnli");
    if (load_quiet(mnli, "train", FIXTURES, 1, &d, NULL) == 0) {
        CHECK(strcmp(d.ex[0].a, "The federal office closed its regional branch in 1998.") == 0);
        CHECK(strcmp(d.ex[0].b, "The regional branch was closed by the federal office.") == 0);
        CHECK(d.ex[0].label == task_label_index(mnli, "entailment") && d.ex[1].label == 0);
        dataset_free(&d);
    }
    if (load_quiet(mnli, "dev_mismatched", FIXTURES, 1, &d, NULL) == 0) {
        CHECK(strcmp(d.ex[1].a, "Your gift of $25 will help us buy books for the library.") == 0);
        CHECK(d.ex[5].index == 5 && d.ex[5].line == 7);
        dataset_free(&d);
    }
    if (load_quiet(task_find("qqp"), "train", FIXTURES, 1, &d, NULL) == 0) {
        CHECK(d.ex[0].index == 201359 && d.ex[0].label == 1 && d.ex[1].label == 0);
        CHECK(strcmp(d.ex[5].a, "What is \"machine learning\" in simple words?") == 0);
        dataset_free(&d);
    }
    if (load_quiet(task_find("qqp"), "test", FIXTURES, 1, &d, NULL) == 0) {
        CHECK(d.ex[5].index == 5 && d.ex[5].label == -1);
        CHECK(strcmp(d.ex[5].b, "What is the difference between a modem and a router?") == 0);
        dataset_free(&d);
    }
}

/* ---- bad input ---- */

TEST(tasks_bad_rows_skipped_or_fatal) {
    const char *bad = FIXTURES "/bad";
    Dataset d;
    char *err = NULL;
    const Task *rte = task_find("rte");
    CHECK_EQ_INT(load_quiet(rte, "train", bad, 0, &d, &err), 0);
    CHECK_EQ_INT(d.n, 3);
    CHECK_EQ_INT(d.num_skipped, 5);
    if (d.n == 3) CHECK(d.ex[0].index == 0 && d.ex[1].index == 4 && d.ex[2].index == 7 && d.ex[2].line == 9);
    CHECK_MSG(strstr(err, "bad/RTE/train.tsv:3: expected 4 tab-separated columns, found 3 (row skipped)"), "%s", err);
    CHECK_MSG(strstr(err, "train.tsv:4: label 'maybe' is not one of entailment, not_entailment"), "%s", err);
    CHECK_MSG(strstr(err, "train.tsv:5: invalid UTF-8 in sentence1 at byte 8"), "%s", err);
    CHECK_MSG(strstr(err, "train.tsv:7: expected 4 tab-separated columns, found 5"), "%s", err);
    CHECK_MSG(strstr(err, "train.tsv:8: index 'x6' is not a non-negative integer"), "%s", err);
    CHECK_MSG(strstr(err, "5 malformed rows skipped in data/fixtures/bad/RTE/train.tsv"), "%s", err);
    dataset_free(&d);
    free(err);

    CHECK(load_quiet(rte, "train", bad, 1, &d, &err) != 0);          /* strict: the first is fatal */
    CHECK_MSG(strstr(err, "train.tsv:3: expected 4") && !strstr(err, "train.tsv:4"), "%s", err);
    CHECK(d.n == 0 && d.ex == NULL);
    free(err);

    const Task *stsb = task_find("stsb");
    CHECK_EQ_INT(load_quiet(stsb, "dev", bad, 0, &d, &err), 0);
    CHECK_EQ_INT(d.n, 3);
    CHECK_EQ_INT(d.num_skipped, 6);
    if (d.n == 3) {
        CHECK_NEAR(d.ex[0].score, 5.0, 1e-6);
        CHECK_NEAR(d.ex[1].score, 0.0, 1e-6);
        CHECK_NEAR(d.ex[2].score, 2.75, 1e-6);
    }
    CHECK_MSG(strstr(err, "dev.tsv:3: score '5.5' is not a number in [0, 5]"), "%s", err);
    CHECK_MSG(strstr(err, "dev.tsv:10: invalid UTF-8 in sentence1 at byte 14"), "%s", err);
    dataset_free(&d);
    free(err);

    CHECK(load_quiet(task_find("sst2"), "dev", bad, 0, &d, &err) != 0);   /* wrong header: always fatal */
    CHECK_MSG(strstr(err, "header 'text\\tlabel' is not the official layout 'sentence\\tlabel'"), "%s", err);
    free(err);
}

TEST(tasks_missing_truncated_and_unknown_split) {
    char *dir = make_tmpdir(), cmd[1024];
    Dataset d;
    char *err = NULL;
    CHECK(load_quiet(task_find("mnli"), "train", dir, 0, &d, &err) != 0);
    CHECK_MSG(strstr(err, "MNLI/train.tsv: no such file") && strstr(err, "glue data fetch mnli"), "%s", err);
    free(err);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/CoLA' && head -c 50000 '%s/data/glue/CoLA/train.tsv.gz' > '%s/CoLA/train.tsv.gz'",
             dir, test_shared_dir(), dir);
    shell(cmd);
    CHECK(load_quiet(task_find("cola"), "train", dir, 0, &d, &err) != 0);
    CHECK_MSG(strstr(err, "CoLA/train.tsv.gz: truncated gzip stream"), "%s", err);
    CHECK(d.n == 0 && d.ex == NULL);
    free(err);
    CHECK_EQ_INT(load_quiet(task_find("cola"), "validation", dir, 0, &d, &err), 2);
    CHECK_MSG(strstr(err, "no split 'validation'"), "%s", err);
    free(err);
    remove_dir(dir);
}

/* ---- `glue tasks` ---- */

static cJSON *split_json(cJSON *doc, const char *task, const char *split) {
    cJSON *t;
    cJSON_ArrayForEach(t, cJSON_GetObjectItem(doc, "tasks")) {
        const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(t, "task"));
        if (!name || strcmp(name, task) != 0) continue;
        cJSON *s;
        cJSON_ArrayForEach(s, cJSON_GetObjectItem(t, "splits")) {
            const char *sname = cJSON_GetStringValue(cJSON_GetObjectItem(s, "split"));
            if (sname && strcmp(sname, split) == 0) return s;
        }
    }
    return NULL;
}

TEST(tasks_cli_table_and_json) {
    char cmd[1024];
    int st = -1;
    snprintf(cmd, sizeof cmd, "%s tasks --data '%s/data/glue' --json", test_glue_bin(), test_shared_dir());
    char *out = test_run(cmd, &st);
    CHECK_EQ_INT(st, 0);
    cJSON *doc = cJSON_Parse(out);
    CHECK_MSG(doc != NULL, "not JSON: %.200s", out);
    if (doc) {
        CHECK_EQ_INT(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "tasks")), 10 + 4 + 1);   /* + subsets, GoEmotions */
        const cJSON *ge = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "tasks"), 14);
        CHECK(ge && strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(ge, "task")), "goemotions") == 0 &&
              cJSON_IsTrue(cJSON_GetObjectItem(ge, "multi_label")) &&
              strcmp(cJSON_GetStringValue(cJSON_GetArrayItem(cJSON_GetObjectItem(ge, "label_names"), 27)), "neutral") == 0);
        const cJSON *sub = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "tasks"), 13);
        CHECK(sub && strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(sub, "task")), "qnli-9k") == 0 &&
              strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(sub, "subset_of")), "qnli") == 0);
        cJSON *s = split_json(doc, "sst2", "train");
        CHECK(s && cJSON_GetNumberValue(cJSON_GetObjectItem(s, "rows")) == 67349);
        s = split_json(doc, "mnli", "dev_mismatched");
        const char *status = s ? cJSON_GetStringValue(cJSON_GetObjectItem(s, "status")) : NULL;
        CHECK(status && strcmp(status, "missing") == 0);
        CHECK(s && cJSON_IsNull(cJSON_GetObjectItem(s, "rows")));
        s = split_json(doc, "ax", "test");
        CHECK(s && cJSON_GetNumberValue(cJSON_GetObjectItem(s, "rows")) == 1104);
        cJSON_Delete(doc);
    }
    free(out);
    snprintf(cmd, sizeof cmd, "%s tasks --data data/fixtures mnli qqp", test_glue_bin());
    out = test_run(cmd, &st);
    CHECK_EQ_INT(st, 0);
    CHECK_MSG(strstr(out, "train 10 (official 392702)") && strstr(out, "pair, 3 classes"), "%s", out);
    CHECK_MSG(strstr(out, "f1/accuracy") && !strstr(out, "cola"), "%s", out);
    free(out);
    snprintf(cmd, sizeof cmd, "%s tasks mrcp 2>&1", test_glue_bin());
    out = test_run(cmd, &st);
    CHECK_EQ_INT(st, 2);
    CHECK_MSG(strstr(out, "did you mean 'mrpc'"), "%s", out);
    free(out);
    snprintf(cmd, sizeof cmd, "%s tasks --bogus 2>&1", test_glue_bin());
    free(test_run(cmd, &st));
    CHECK_EQ_INT(st, 2);
    /* --help shows what the command takes (it said only "glue tasks [--json]") */
    snprintf(cmd, sizeof cmd, "%s tasks --help", test_glue_bin());
    out = test_run(cmd, &st);
    CHECK_MSG(st == 0 && strstr(out, "usage: glue tasks [TASK...] [--data DIR] [--json]"), "%s", out);
    free(out);
}

TEST(tasks_cli_reports_truncated_file) {
    char *dir = make_tmpdir(), cmd[1024];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/CoLA' && head -c 30000 '%s/data/glue/CoLA/train.tsv.gz' > '%s/CoLA/train.tsv.gz'",
             dir, test_shared_dir(), dir);
    shell(cmd);
    int st = -1;
    snprintf(cmd, sizeof cmd, "%s tasks cola --data '%s' 2>&1", test_glue_bin(), dir);
    char *out = test_run(cmd, &st);
    CHECK_EQ_INT(st, 1);
    CHECK_MSG(strstr(out, "train truncated, dev missing") && strstr(out, "truncated gzip stream"), "%s", out);
    free(out);
    remove_dir(dir);
}

/* Both orders of a symmetric pair task: the copies swap the texts and keep
 * label and score; an order-dependent task (QNLI) is refused. */
TEST(tasks_swapped_pairs) {
    Dataset d;
    if (!CHECK(load_quiet(task_find("qqp"), "train", FIXTURES, 1, &d, NULL) == 0)) return;
    int n = d.n;
    CHECK(dataset_add_swapped_pairs(&d) == 0);
    CHECK_EQ_INT(d.n, 2 * n);
    for (int i = 0; i < n && d.n == 2 * n; i++) {
        const Example *a = &d.ex[i], *b = &d.ex[n + i];
        CHECK(strcmp(a->a, b->b) == 0 && strcmp(a->b, b->a) == 0 && a->label == b->label && a->score == b->score);
        CHECK(a->a != b->b);   /* copies, freed apart */
    }
    dataset_free(&d);
    if (!CHECK(load_quiet(task_find("qnli"), "train", FIXTURES, 1, &d, NULL) == 0)) return;
    StderrCapture cap;
    stderr_capture_begin(&cap);
    int rc = dataset_add_swapped_pairs(&d);
    char *err = stderr_capture_end(&cap);
    CHECK_MSG(rc == -1 && strstr(err, "not symmetric"), "rc %d: %s", rc, err);
    free(err);
    dataset_free(&d);
}
