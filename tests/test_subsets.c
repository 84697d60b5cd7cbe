/* test_subsets.c — the GLUE training subsets as tasks (tasks/subsets.c,
 * tasks/load_json.c): named so nobody mistakes them for the official tasks,
 * selecting on "heldout" (qnli-9k: the official QNLI dev), the real files of
 * ../shared/data/glue-subsets loading with the label counts of MANIFEST.md
 * section 4, every kind of malformed entry reported as file + entry key (skipped
 * with a count, fatal with strict), a cut or corrupt file one clear error, a
 * fetch that refuses a subset with the wrong entry count, and the GLUE score
 * counting qnli-9k as QNLI only when asked. */
#include "metrics/glue_score.h"
#include "eval/report.h"
#include "tasks/task.h"
#include "tests/capture.h"
#include "tests/scratch.h"
#include "tests/test.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *subset_tmpdir(void) {
    char *d = malloc(SCRATCH_PATH_MAX);
    if (d && scratch_dir("test_subsets", d, SCRATCH_PATH_MAX)) return d;
    free(d);
    return NULL;
}

static void subset_sh(const char *cmd) {
    int st = -1;
    free(test_run(cmd, &st));
    CHECK_MSG(st == 0, "shell command failed: %s", cmd);
}

static int subset_load(const Task *t, const char *split, const char *root, int strict, Dataset *d, char **err) {
    StderrCapture c;
    stderr_capture_begin(&c);
    int rc = task_load(t, split, root, strict, d);
    *err = stderr_capture_end(&c);
    return rc;
}

TEST(subsets_named_apart_from_official) {
    CHECK_EQ_INT(NUM_TASKS, 10);            /* the official table is unchanged */
    CHECK_EQ_INT(NUM_SUBSET_TASKS, 4);
    const char *ids[] = {"mnli-9k", "snli-9k", "qqp-9k", "qnli-9k"};
    for (int i = 0; i < 4; i++) {
        const Task *t = task_find(ids[i]);
        CHECK_MSG(t == &SUBSET_TASKS[i], "%s", ids[i]);
        if (!t) continue;
        CHECK(t->subset_of != NULL && task_find(t->subset_of) != t);
        CHECK_MSG(strstr(t->display, "9k") || strstr(t->display, "8,999"), "%s", t->display);
        const TaskSplit *sel = task_dev_split(t);
        /* the selection split: the held-out slice of train, never called "dev"... */
        if (i < 3) CHECK_MSG(sel && strcmp(sel->name, "heldout") == 0, "%s", sel ? sel->name : "none");
        CHECK(task_split(t, "heldout") != NULL);
    }
    /* ...except qnli-9k, which selects on and reports the official QNLI dev. */
    const Task *q = task_find("QNLI-9k");
    CHECK(q && strcmp(q->display, "QNLI, 8,999 of 104,743 training pairs") == 0);
    const TaskSplit *dev = q ? task_dev_split(q) : NULL;
    CHECK(dev && strcmp(dev->name, "dev") == 0 && dev->dir && strcmp(dev->dir, "QNLI") == 0 &&
          dev->official_rows == 5463);
    CHECK(task_find("mnli") == &TASKS[5] && task_find("subsets/MNLI") == NULL);
    /* table headers say which splits the numbers are on (not MNLI's "m/mm") */
    char head[128];
    report_task_header(q, head, sizeof head);
    CHECK_MSG(strcmp(head, "QNLI, 8,999 of 104,743 training pairs (acc dev/heldout)") == 0, "%s", head);
    report_task_header(task_find("mnli"), head, sizeof head);
    CHECK_MSG(strcmp(head, "MNLI (m/mm)") == 0, "%s", head);
    report_task_header(task_find("mnli-9k"), head, sizeof head);
    CHECK_MSG(strcmp(head, "MNLI 9k subset (acc)") == 0, "%s", head);
}

TEST(subsets_real_files_load) {
    char *dir = subset_tmpdir(), cmd[2048], *err = NULL;
    snprintf(cmd, sizeof cmd, "%s data fetch subsets qnli-9k --mirror '%s/data' --dest '%s' >/dev/null 2>&1",
             test_glue_bin(), test_shared_dir(), dir);
    subset_sh(cmd);
    char root[1024];
    snprintf(root, sizeof root, "%s/glue", dir);
    /* MANIFEST.md section 4: pairs and labels of each file */
    struct { const char *task, *split; int n, counts[3]; } want[] = {
        {"mnli-9k", "train", 8999, {2958, 3061, 2980}},   /* C E N in the label order */
        {"mnli-9k", "heldout", 1000, {320, 347, 333}},
        {"snli-9k", "train", 8999, {3024, 2981, 2994}},
        {"qqp-9k", "heldout", 1000, {623, 377, 0}},
        {"qnli-9k", "train", 8999, {4523, 4476, 0}},
        {"qnli-9k", "heldout", 1000, {504, 496, 0}},
    };
    for (int i = 0; i < 6; i++) {
        Dataset d;
        CHECK_EQ_INT(subset_load(task_find(want[i].task), want[i].split, root, 1, &d, &err), 0);
        free(err);
        CHECK_MSG(d.n == want[i].n, "%s %s: %d", want[i].task, want[i].split, d.n);
        int counts[3] = {0};
        for (int k = 0; k < d.n; k++) counts[d.ex[k].label]++;
        for (int c = 0; c < 3; c++) CHECK_MSG(counts[c] == want[i].counts[c], "%s %s class %d: %d", want[i].task,
                                                 want[i].split, c, counts[c]);
        CHECK(d.n > 0 && d.ex[0].a && d.ex[0].b && d.ex[0].index == 0);
        dataset_free(&d);
    }
    Dataset d;
    CHECK_EQ_INT(subset_load(task_find("qnli-9k"), "dev", root, 1, &d, &err), 0);   /* the official dev */
    free(err);
    CHECK_EQ_INT(d.n, 5463);
    dataset_free(&d);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    subset_sh(cmd);
    free(dir);
}

/* Entries that are each wrong in one way, and two good ones. */
static const char BAD_JSON[] =
    "{\n"
    "  \"0\": {\"text_a\": \"good\", \"text_b\": \"pair\", \"label\": \"entailment\"},\n"
    "  \"1\": {\"text_a\": \"no b\", \"label\": \"entailment\"},\n"
    "  \"2\": {\"text_a\": 7, \"text_b\": \"x\", \"label\": \"entailment\"},\n"
    "  \"3\": {\"text_a\": \"a\", \"text_b\": \"b\", \"label\": \"maybe\"},\n"
    "  \"4\": {\"text_a\": \"caf\xE9\", \"text_b\": \"b\", \"label\": \"entailment\"},\n"
    "  \"5\": {\"text_a\": \"nul\\u0000here\", \"text_b\": \"b\", \"label\": \"entailment\"},\n"
    "  \"6\": {\"text_a\": \"raw\0nul\", \"text_b\": \"b\", \"label\": \"entailment\"},\n"
    "  \"7\": [\"not\", \"an\", \"object\"],\n"
    "  \"8\": {\"text_a\": \"a\", \"text_b\": \"b\", \"label\": true},\n"
    "  \"9\": {\"text_a\": \"back\\\\u0000slash\", \"text_b\": \"\\u00e9\", \"label\": \"not_entailment\"}\n"
    "}\n";

TEST(subsets_malformed_entries_reported) {
    char *dir = subset_tmpdir(), path[1024], cmd[4 * 1024 + 64], *err = NULL;
    snprintf(path, sizeof path, "%s/subsets/QNLI", dir);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", path);
    subset_sh(cmd);
    snprintf(path, sizeof path, "%s/subsets/QNLI/train.json", dir);
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (f) { fwrite(BAD_JSON, 1, sizeof BAD_JSON - 1, f); fclose(f); }
    const Task *q = task_find("qnli-9k");
    Dataset d;
    CHECK_EQ_INT(subset_load(q, "train", dir, 0, &d, &err), 0);
    CHECK_EQ_INT(d.n, 2);
    CHECK_EQ_INT(d.num_skipped, 8);
    if (d.n == 2) {
        CHECK(strcmp(d.ex[0].a, "good") == 0 && strcmp(d.ex[0].b, "pair") == 0 && d.ex[0].label == 0);
        /* an escaped backslash before u0000 is text, not a NUL; \u00e9 is UTF-8 */
        CHECK(strcmp(d.ex[1].a, "back\\u0000slash") == 0 && strcmp(d.ex[1].b, "\xC3\xA9") == 0);
        CHECK(d.ex[1].label == 1 && d.ex[1].index == 9);
    }
    const char *msgs[] = {
        "train.json: entry \"1\": no \"text_b\" (row skipped)",
        "train.json: entry \"2\": \"text_a\" is not a string",
        "train.json: entry \"3\": label 'maybe' is not one of entailment, not_entailment",
        "train.json: entry \"4\": invalid UTF-8 in text_a at byte 4",
        "train.json: entry \"5\": NUL byte in text_a",
        "train.json: entry \"6\": NUL byte in text_a",
        "train.json: entry \"7\": not a JSON object",
        "train.json: entry \"8\": \"label\" is neither a string nor a number",
        "8 malformed rows skipped in",
    };
    for (int i = 0; i < 9; i++) CHECK_MSG(strstr(err, msgs[i]), "missing '%s' in:\n%s", msgs[i], err);
    dataset_free(&d);
    free(err);
    /* strict: the first bad entry is fatal */
    CHECK(subset_load(q, "train", dir, 1, &d, &err) != 0);
    CHECK_MSG(strstr(err, "entry \"1\": no \"text_b\"") && !strstr(err, "entry \"2\""), "%s", err);
    free(err);
    /* cut short: one error naming where parsing stopped */
    snprintf(cmd, sizeof cmd, "head -c 300 '%s' > '%s.cut' && mv '%s.cut' '%s'", path, path, path, path);
    subset_sh(cmd);
    CHECK(subset_load(q, "train", dir, 0, &d, &err) != 0);
    CHECK_MSG(strstr(err, "train.json:6: not valid JSON here (a truncated or corrupt file?)"), "%s", err);
    free(err);
    /* a truncated gzip stream: the line reader's error */
    snprintf(cmd, sizeof cmd, "rm '%s' && head -c 20000 '%s/data/glue-subsets/QNLI/train.json.gz' > '%s.gz'", path,
             test_shared_dir(), path);
    subset_sh(cmd);
    CHECK(subset_load(q, "train", dir, 0, &d, &err) != 0);
    CHECK_MSG(strstr(err, "train.json.gz") && strstr(err, "truncated"), "%s", err);
    free(err);
    /* not an object of entries */
    snprintf(cmd, sizeof cmd, "rm '%s.gz' && echo '[1, 2]' > '%s'", path, path);
    subset_sh(cmd);
    CHECK(subset_load(q, "train", dir, 0, &d, &err) != 0);
    CHECK_MSG(strstr(err, "not a JSON object of entries"), "%s", err);
    free(err);
    /* a fetch from a mirror whose subset has the wrong entry count installs nothing */
    snprintf(cmd, sizeof cmd,
             "mkdir -p '%s/m/glue-subsets/MNLI' && printf '{\"0\": {\"text_a\": \"a\", \"text_b\": \"b\", "
             "\"label\": \"neutral\"}}' | gzip > '%s/m/glue-subsets/MNLI/train.json.gz' && cp "
             "'%s/data/glue-subsets/MNLI/dev.json.gz' '%s/m/glue-subsets/MNLI/'",
             dir, dir, test_shared_dir(), dir);
    subset_sh(cmd);
    int st = -1;
    snprintf(cmd, sizeof cmd, "%s data fetch mnli-9k --mirror '%s/m' --dest '%s/out' 2>&1; test ! -e '%s/out/glue/subsets/MNLI/train.json'",
             test_glue_bin(), dir, dir, dir);
    char *out = test_run(cmd, &st);
    CHECK_MSG(strstr(out, "has 1 rows, official 8999") && strstr(out, "1 copied") && strstr(out, "1 failed"), "%s", out);
    CHECK_EQ_INT(st, 0);   /* the short file was not installed */
    free(out);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    subset_sh(cmd);
    free(dir);
}

TEST(subsets_glue_score_qnli_9k_only_when_asked) {
    GlueRecord rec[] = {{"rte", NULL, 1, {0.6, 0}}, {"qnli-9k", NULL, 1, {0.8, 0}}, {"mnli-9k", NULL, 1, {0.9, 0}}};
    GlueScore s;
    CHECK(glue_score_compute(rec, 3, &s) == 0);   /* by default no subset counts */
    CHECK_EQ_INT(s.num_tasks, 1);
    CHECK_EQ_INT(s.num_ignored, 2);
    CHECK_NEAR(s.score, 0.6, 1e-12);
    GlueScoreOptions o = {.qnli_9k_as_qnli = 1};
    CHECK(glue_score_compute_opts(rec, 3, &o, &s) == 0);   /* asked: qnli-9k fills QNLI, labelled */
    CHECK_EQ_INT(s.num_tasks, 2);
    CHECK_EQ_INT(s.num_ignored, 1);                       /* mnli-9k still never counts */
    CHECK_NEAR(s.score, 0.7, 1e-12);
    CHECK(s.num_tasks == 2 && strcmp(s.tasks[0].display, "QNLI-9k") == 0 && s.tasks[0].from_subset);
    char line[512];
    glue_score_describe(&s, line, sizeof line);
    CHECK_MSG(strstr(line, "QNLI-9k") && strstr(line, "8,999 of QNLI's 104,743"), "%s", line);
}
