/* test_tasks_multilabel.c — the multi-label task layer: GoEmotions in the task
 * table (found by name, its labels and metrics, its test split labelled and
 * never a dev split, never in the GLUE score), its three splits from
 * ../shared/data loaded strictly with every row's label set equal to what awk
 * cuts out of the file, and every malformed label set (no label, an empty
 * element, a repeat, an id out of range, a name instead of an id) reported as
 * file:line and skipped, or fatal with strict; and settings that do not fit
 * it refused with one line (training it: test_multilabel_train.c,
 * test_user_data_multilabel.c). */
#include "metrics/glue_score.h"
#include "tasks/task.h"
#include "tests/capture.h"
#include "tests/scratch.h"
#include "tests/test.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int ml_load(const Task *t, const char *split, const char *root, int strict, Dataset *d, char **err) {
    StderrCapture cap;
    stderr_capture_begin(&cap);
    int rc = task_load(t, split, root, strict, d);
    char *msg = stderr_capture_end(&cap);
    if (err) *err = msg;
    else free(msg);
    return rc;
}

TEST(tasks_goemotions_in_the_table) {
    const Task *t = task_find("goemotions");
    if (!CHECK(t != NULL)) return;
    CHECK(t == &EXTRA_TASKS[0] && task_find("GoEmotions") == t && task_find("go-emotions") == t);
    CHECK(t->multi_label && t->num_labels == 28 && strcmp(t->label_sep, ",") == 0);
    CHECK(t->metrics[0] == METRIC_MACRO_F1 && t->metrics[1] == METRIC_MICRO_F1);
    CHECK(strcmp(task_label_name(t, 0), "admiration") == 0 && strcmp(task_label_name(t, 27), "neutral") == 0);
    CHECK_EQ_INT(task_label_index(t, "27"), 27);
    CHECK_EQ_INT(task_label_index(t, "28"), -1);
    for (int i = 0; i < NUM_TASKS; i++) CHECK(&TASKS[i] != t && !TASKS[i].multi_label);
    const TaskSplit *test = task_split(t, "test"), *dev[TASK_MAX_SPLITS];
    CHECK(test && test->is_test && test->col_label >= 0 && test->submit == NULL && test->official_rows == 5427);
    CHECK(task_dev_split(t) == task_split(t, "dev"));
    CHECK_EQ_INT(task_dev_splits(t, dev, TASK_MAX_SPLITS), 1);   /* test is never a selection split */
    CHECK_EQ_INT(task_split(t, "train")->official_rows, 43410);
}

TEST(tasks_goemotions_never_in_glue_score) {
    GlueRecord rec[] = {{"sst2", NULL, 1, {0.9, 0}}, {"goemotions", "test", 2, {0.4, 0.5}}};
    GlueScore s;
    CHECK(glue_score_compute(rec, 2, &s) == 0);
    CHECK_EQ_INT(s.num_tasks, 1);
    CHECK_EQ_INT(s.num_ignored, 1);
    CHECK_NEAR(s.score, 0.9, 1e-12);
}

/* Every row's label set, joined with ',', against awk's second column. */
static void ml_check_against_awk(const char *path, const Dataset *d) {
    char cmd[4400];
    snprintf(cmd, sizeof cmd, "zcat -f '%s' | awk -F'\\t' '{ print $2 \"\\t\" $1 }'", path);
    char *out = test_run(cmd, NULL), *save = NULL;
    int i = 0, bad = 0;
    for (char *row = strtok_r(out, "\n", &save); row; row = strtok_r(NULL, "\n", &save), i++) {
        if (i >= d->n) { i++; break; }
        const Example *e = &d->ex[i];
        char set[512] = "";
        for (int k = 0; k < e->nlabels; k++)
            snprintf(set + strlen(set), sizeof set - strlen(set), "%s%d", k ? "," : "", e->labels[k]);
        char *tab = strchr(row, '\t');
        int ok = tab && e->label == -1 && e->nlabels >= 1 && strncmp(row, set, (size_t)(tab - row)) == 0 &&
                 strlen(set) == (size_t)(tab - row) && strcmp(tab + 1, e->a) == 0 && e->b == NULL;
        if (!ok && bad++ < 3) CHECK_MSG(0, "%s row %d: labels '%s', awk '%.60s'", path, i + 1, set, row);
    }
    CHECK_MSG(i == d->n, "%s: awk sees %d rows, loader %d", path, i, d->n);
    free(out);
}

TEST(tasks_goemotions_loads_shared_exactly) {
    char root[512], path[1024];
    snprintf(root, sizeof root, "%s/data", test_shared_dir());   /* goemotions/ at the mirror's top */
    const Task *t = task_find("goemotions");
    long multi = 0;
    for (int k = 0; k < t->num_splits; k++) {
        const TaskSplit *s = &t->splits[k];
        if (!CHECK_MSG(task_split_path(t, s, root, path, sizeof path) == 0, "%s missing", path)) continue;
        Dataset d;
        if (!CHECK_MSG(ml_load(t, s->name, root, 1, &d, NULL) == 0, "%s: strict load failed", s->name)) continue;
        CHECK_MSG(d.n == s->official_rows && d.num_skipped == 0, "%s: %d rows", s->name, d.n);
        ml_check_against_awk(path, &d);
        for (int i = 0; i < d.n; i++) multi += d.ex[i].nlabels > 1;
        dataset_free(&d);
    }
    /* rows with 2, 3, 4 and 5 labels over the three files: 8124 + 655 + 37 + 1 */
    CHECK_EQ_INT(multi, 8817);
}

TEST(tasks_multilabel_bad_label_sets) {
    char dir[SCRATCH_PATH_MAX], path[256], cmd[512];
    if (!CHECK(scratch_dir("test_ml", dir, sizeof dir))) return;
    snprintf(path, sizeof path, "%s/goemotions", dir);
    CHECK(mkdir(path, 0700) == 0);
    snprintf(path, sizeof path, "%s/goemotions/train.tsv", dir);
    static const char ROWS[] =
        "fine\t3,27\ta1\n"           /* 1 */
        "no label\t\ta2\n"           /* 2 */
        "empty element\t3,,27\ta3\n" /* 3 */
        "twice\t3,3\ta4\n"           /* 4 */
        "range\t28\ta5\n"            /* 5 */
        "a name\tjoy\ta6\n"          /* 6 */
        "spaces\t 4 , 2 \ta7\n"      /* 7: fine, trimmed and sorted */
        "trailing\t5,\ta8\n"         /* 8 */
        "two columns\t5\n"           /* 9 */
        "bad \xff text\t1\ta10\n";   /* 10: labels parsed, then the text refused */
    FILE *f = fopen(path, "wb");
    if (CHECK(f != NULL)) {
        fputs(ROWS, f);
        fclose(f);
    }
    const Task *t = task_find("goemotions");
    Dataset d;
    char *err = NULL;
    CHECK_EQ_INT(ml_load(t, "train", dir, 0, &d, &err), 0);
    CHECK_EQ_INT(d.n, 2);
    CHECK_EQ_INT(d.num_skipped, 8);
    if (d.n == 2) {
        CHECK(d.ex[0].nlabels == 2 && d.ex[0].labels[0] == 3 && d.ex[0].labels[1] == 27 && d.ex[0].line == 1);
        CHECK(d.ex[1].nlabels == 2 && d.ex[1].labels[0] == 2 && d.ex[1].labels[1] == 4 && d.ex[1].line == 7);
    }
    const char *want[] = {
        "train.tsv:2: no label (row skipped)",
        "train.tsv:3: an empty label in the list '3,,27'",
        "train.tsv:4: label '3' twice in the row",
        "train.tsv:5: label id 28 is out of range (0-27)",
        "train.tsv:6: label 'joy' is not a label id (0-27)",
        "train.tsv:8: an empty label in the list '5,'",
        "train.tsv:9: expected 3 tab-separated columns, found 2",
        "train.tsv:10: invalid UTF-8",
        "8 malformed rows skipped",
    };
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) CHECK_MSG(strstr(err, want[k]), "want '%s' in:\n%s", want[k], err);
    dataset_free(&d);
    free(err);
    CHECK(ml_load(t, "train", dir, 1, &d, &err) != 0);   /* strict: the first is fatal */
    CHECK_MSG(strstr(err, "train.tsv:2: no label") && !strstr(err, "train.tsv:3"), "%s", err);
    free(err);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    free(test_run(cmd, NULL));
}

/* Settings that do not fit GoEmotions (or the task), and glue score on it
 * (prediction files hold one label per row), refuse with one line and exit
 * 2 before anything is written; the data need not be there. */
TEST(tasks_goemotions_bad_settings_refused) {
    char dir[SCRATCH_PATH_MAX], cmd[8192];
    if (!CHECK(scratch_dir("test_mlrun", dir, sizeof dir))) return;
    static const struct { const char *args, *want; } cases[] = {
        {"finetune goemotions --model textcnn --set class_weights=balanced", "class_weights applies to single-label"},
        {"finetune goemotions --model bilstm --set threshold=1.5", "threshold must be a probability in (0, 1)"},
        {"finetune goemotions --model textcnn --set top_k=29", "top_k must be a whole number in [1, 28]"},
        {"finetune goemotions --model textcnn --set top_k=2 --set threshold=0.3", "two prediction rules"},
        {"finetune goemotions --model textcnn --set focal_gamma=-1", "focal_gamma"},
        {"finetune sst2 --model textcnn --set pos_weight=balanced", "pos_weight applies to multi-label"},
        {"finetune sst2 --model bilstm --set threshold=0.3", "threshold applies to multi-label"},
        {"finetune stsb --model textcnn --set class_weights=balanced", "STS-B is regression"},
        {"finetune sst2 --model textcnn --set class_weights=positive:2,sideways:1", "'sideways' is not a label of SST-2"},
        {"score goemotions preds.tsv", "prediction files of label sets are not read"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char bin[4096];
        if (!CHECK(realpath(test_glue_bin(), bin) != NULL)) break;   /* the command runs in dir */
        snprintf(cmd, sizeof cmd, "cd '%s' && GLUE_DATA=data GLUE_RUNS=runs GLUE_RESULTS=results '%s' %s 2>&1", dir,
                 bin, cases[i].args);
        int st = -1;
        char *out = test_run(cmd, &st);
        CHECK_MSG(st == 2 && strncmp(out, "glue: error: ", 13) == 0 && strstr(out, cases[i].want),
                  "%s: exit %d, '%s'", cases[i].args, st, out);
        free(out);
    }
    snprintf(cmd, sizeof cmd, "ls -A '%s' | wc -l", dir);
    char *out = test_run(cmd, NULL);
    CHECK_MSG(atoi(out) == 0, "files written: %s", out);
    free(out);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    free(test_run(cmd, NULL));
}
