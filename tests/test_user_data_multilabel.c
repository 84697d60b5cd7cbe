/* test_user_data_multilabel.c — a user's own multi-label dataset
 * (tasks/user_data.h): fastText lines with several __label__ tags, JSONL label
 * lists, TSV cells joined by --label-sep; --multi-label, or detection from a
 * train row with several labels, said in one line; a single-label file never
 * read as multi-label; each bad label set (no label, an empty element, a label
 * twice, a dev label train never had, one label everywhere) as file:line,
 * skipped or fatal with strict; bad option combinations; dataset.json keeping
 * the multi-label description; and the round trip through the binary
 * (finetune, eval, predict with label names; libglue's predicted labels). */
#include "include/glue.h"
#include "tasks/user_data.h"
#include "tests/capture.h"
#include "tests/scratch.h"
#include "tests/test.h"

#include <cjson/cJSON.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct { char dir[SCRATCH_PATH_MAX]; } MlDir;

static int ml_mkdir(MlDir *d) {
    return CHECK(scratch_dir("test_mlud", d->dir, sizeof d->dir));
}

static void ml_rmdir(const MlDir *d) {
    char cmd[192];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", d->dir);
    free(test_run(cmd, NULL));
}

/* Writes d/name with text; path (cap 256) gets its path. */
static void ml_file(const MlDir *d, const char *name, const char *text, char *path) {
    snprintf(path, 256, "%s/%s", d->dir, name);
    FILE *f = fopen(path, "wb");
    if (!CHECK_MSG(f != NULL, "cannot write %s", path)) return;
    fputs(text, f);
    fclose(f);
}

/* user_data_create with its messages in *err (caller frees). */
static const Task *ml_create(const UserDataOptions *o, char **err) {
    StderrCapture cap;
    stderr_capture_begin(&cap);
    const Task *t = user_data_create(o);
    *err = stderr_capture_end(&cap);
    return t;
}

static int ml_load(const Task *t, const char *split, int strict, Dataset *d, char **err) {
    StderrCapture cap;
    stderr_capture_begin(&cap);
    int rc = task_load(t, split, NULL, strict, d);
    *err = stderr_capture_end(&cap);
    return rc;
}

/* "a+b" for row i's labels, by name. */
static void ml_set(const Task *t, const Example *e, char *out, size_t cap) {
    out[0] = '\0';
    for (int k = 0; k < e->nlabels; k++)
        snprintf(out + strlen(out), cap - strlen(out), "%s%s", k ? "+" : "", t->labels[e->labels[k]]);
}

static void ml_want_sets(const Task *t, const Dataset *d, const char *const *want, int n) {
    CHECK_EQ_INT(d->n, n);
    for (int i = 0; i < n && i < d->n; i++) {
        char got[256];
        ml_set(t, &d->ex[i], got, sizeof got);
        CHECK_MSG(strcmp(got, want[i]) == 0 && d->ex[i].label == -1, "row %d: '%s', want '%s'", i, got, want[i]);
    }
}

TEST(user_data_fasttext_multi_label_detected) {
    MlDir d;
    if (!ml_mkdir(&d)) return;
    char train[256], dev[256], meta[256], *err;
    ml_file(&d, "t.train.txt", "__label__sun __label__warm a bright day\n__label__rain wet\n__label__warm  x\n", train);
    ml_file(&d, "t.dev.txt",
            "__label__warm __label__sun  ok\n"       /* 1: fine, labels sorted */
            "__label__sun __label__sun twice\n"      /* 2 */
            "__label__fog a label train never had\n" /* 3 */
            "__label__ empty\n"                      /* 4 */
            "__label__rain\n",                       /* 5: no text */
            dev);
    UserDataOptions o = {.train = train, .dev = dev, .format = "fasttext", .name = "weather"};
    const Task *t = ml_create(&o, &err);
    CHECK_MSG(t && t->multi_label && strstr(err, "t.train.txt:1: 2 labels on one row: the dataset is multi-label") &&
              strchr(err, '\n') == err + strlen(err) - 1, "one line said: %s", err);
    free(err);
    if (!t) { ml_rmdir(&d); return; }
    CHECK(t->num_labels == 3 && strcmp(t->labels[0], "rain") == 0 && strcmp(t->labels[2], "warm") == 0);
    CHECK(t->metrics[0] == METRIC_MACRO_F1 && t->metrics[1] == METRIC_MICRO_F1);
    Dataset ds;
    CHECK_EQ_INT(ml_load(t, "train", 1, &ds, &err), 0);
    const char *want_train[] = {"sun+warm", "rain", "warm"};
    ml_want_sets(t, &ds, want_train, 3);
    dataset_free(&ds);
    free(err);
    CHECK_EQ_INT(ml_load(t, "dev", 0, &ds, &err), 0);
    const char *want_dev[] = {"sun+warm"};
    ml_want_sets(t, &ds, want_dev, 1);
    CHECK_MSG(strstr(err, "t.dev.txt:2: label 'sun' twice in the row (row skipped)") &&
              strstr(err, "t.dev.txt:3: label 'fog' does not occur in the train file") &&
              strstr(err, "t.dev.txt:4: empty label after __label__") &&
              strstr(err, "t.dev.txt:5: no text after the label") && strstr(err, "4 malformed rows skipped"), "%s", err);
    dataset_free(&ds);
    free(err);
    CHECK(ml_load(t, "dev", 1, &ds, &err) != 0);   /* strict: the first bad row is fatal */
    CHECK_MSG(strstr(err, "t.dev.txt:2: label 'sun' twice") && !strstr(err, "t.dev.txt:3"), "%s", err);
    free(err);
    /* dataset.json keeps it multi-label, with the same classes */
    snprintf(meta, sizeof meta, "%s/%s", d.dir, USER_DATA_FILE);
    CHECK(user_data_save(t, meta) == 0);
    user_data_free(t);
    const Task *back = user_data_load(meta);
    CHECK(back && back->multi_label && back->num_labels == 3 && back->metrics[0] == METRIC_MACRO_F1);
    if (back && ml_load(back, "train", 1, &ds, &err) == 0) {
        ml_want_sets(back, &ds, want_train, 3);
        dataset_free(&ds);
    }
    if (back) free(err);
    user_data_free(back);
    ml_rmdir(&d);
}

TEST(user_data_jsonl_lists) {
    MlDir d;
    if (!ml_mkdir(&d)) return;
    char train[256], dev[256], single[256], *err;
    ml_file(&d, "j.train.jsonl",
            "{\"text\": \"a\", \"label\": [\"x\", \"y\"]}\n{\"text\": \"b\", \"label\": \"z\"}\n"
            "{\"text\": \"c\", \"label\": [1, \"x\"]}\n",
            train);
    ml_file(&d, "j.dev.jsonl",
            "{\"text\": \"a\", \"label\": [\"y\", 1]}\n"          /* 1: fine */
            "{\"text\": \"b\", \"label\": []}\n"                  /* 2 */
            "{\"text\": \"c\", \"label\": [\"x\", \"\"]}\n"       /* 3 */
            "{\"text\": \"d\", \"label\": [{\"k\": 1}]}\n"        /* 4 */
            "{\"text\": \"e\", \"label\": [\"x\", \"x\"]}\n",     /* 5 */
            dev);
    UserDataOptions o = {.train = train, .dev = dev, .name = "lists"};
    const Task *t = ml_create(&o, &err);
    CHECK_MSG(t && t->multi_label && strstr(err, "j.train.jsonl:1: 2 labels on one row"), "%s", err);
    free(err);
    Dataset ds;
    if (t && CHECK(ml_load(t, "dev", 0, &ds, &err) == 0)) {
        const char *want[] = {"1+y"};
        ml_want_sets(t, &ds, want, 1);
        CHECK_MSG(strstr(err, "j.dev.jsonl:2: no label") && strstr(err, "j.dev.jsonl:3: an empty label") &&
                  strstr(err, "j.dev.jsonl:4: element 1 of \"label\" is neither a string nor a number") &&
                  strstr(err, "j.dev.jsonl:5: label 'x' twice") && strstr(err, "4 malformed rows skipped"), "%s", err);
        dataset_free(&ds);
        free(err);
    }
    user_data_free(t);
    /* One label per row, some written as a list of one: single-label, said nothing. */
    ml_file(&d, "s.train.jsonl", "{\"text\": \"a\", \"label\": [\"x\"]}\n{\"text\": \"b\", \"label\": \"y\"}\n", single);
    UserDataOptions so = {.train = single, .dev = single, .name = "single"};
    t = ml_create(&so, &err);
    CHECK_MSG(t && !t->multi_label && !strstr(err, "multi-label") && t->metrics[0] == METRIC_ACC, "%s", err);
    free(err);
    if (t && CHECK(ml_load(t, "train", 1, &ds, &err) == 0)) {
        CHECK(ds.n == 2 && ds.ex[0].label == 0 && ds.ex[1].label == 1 && ds.ex[0].labels == NULL);
        dataset_free(&ds);
        free(err);
    }
    user_data_free(t);
    ml_rmdir(&d);
}

TEST(user_data_tsv_label_lists) {
    MlDir d;
    if (!ml_mkdir(&d)) return;
    char train[256], dev[256], pipe[256], *err;
    ml_file(&d, "l.train.tsv", "text\tlabels\nfirst\tsports, politics\nsecond\tpolitics\nthird\tart\n", train);
    ml_file(&d, "l.dev.tsv",
            "text\tlabels\n"
            "fine\tart,sports\n"       /* 2 */
            "empty element\tart,,x\n"  /* 3 */
            "no label\t \n"            /* 4 */
            "twice\tart, art\n"        /* 5 */
            "unseen\tart,music\n",     /* 6 */
            dev);
    /* Without --multi-label a cell is one label, with a hint when it holds ','. */
    UserDataOptions o = {.train = train, .dev = dev, .name = "topics"};
    const Task *t = ml_create(&o, &err);
    CHECK_MSG(t && !t->multi_label && t->num_labels == 3 && strstr(err, "label 'sports, politics' holds ','") &&
              strstr(err, "say --multi-label"), "%s", err);
    free(err);
    user_data_free(t);
    o.multi_label = 1;
    t = ml_create(&o, &err);
    CHECK_MSG(t && t->multi_label && t->num_labels == 3 && !strstr(err, "holds"), "%s", err);
    free(err);
    Dataset ds;
    if (t && CHECK(ml_load(t, "dev", 0, &ds, &err) == 0)) {
        const char *want[] = {"art+sports"};
        ml_want_sets(t, &ds, want, 1);
        CHECK_MSG(strstr(err, "l.dev.tsv:3: an empty label in the list 'art,,x'") && strstr(err, "l.dev.tsv:4: no label") &&
                  strstr(err, "l.dev.tsv:5: label 'art' twice") &&
                  strstr(err, "l.dev.tsv:6: label 'music' does not occur in the train file") &&
                  strstr(err, "4 malformed rows skipped"), "%s", err);
        dataset_free(&ds);
        free(err);
    }
    user_data_free(t);
    /* --label-sep '|': commas belong to the labels; --multi-label on one label per row is said */
    ml_file(&d, "p.train.tsv", "text\tlabels\na\tx, y|z\nb\tz\n", pipe);
    UserDataOptions po = {.train = pipe, .dev = pipe, .name = "piped", .multi_label = 1, .label_sep = "|"};
    t = ml_create(&po, &err);
    CHECK_MSG(t && t->num_labels == 2 && strcmp(t->labels[0], "x, y") == 0, "%s", err);
    free(err);
    user_data_free(t);
    ml_file(&d, "o.train.tsv", "text\tlabels\na\tx\nb\ty\n", pipe);
    t = ml_create(&po, &err);
    CHECK_MSG(t && t->multi_label && strstr(err, "--multi-label, but every row has one label"), "%s", err);
    free(err);
    user_data_free(t);
    ml_rmdir(&d);
}

TEST(user_data_multi_label_bad_files_and_options) {
    MlDir d;
    if (!ml_mkdir(&d)) return;
    char one[256], ft[256], *err;
    ml_file(&d, "one.tsv", "text\tlabels\na\tx\nb\t x \nc\tx,x\n", one);   /* one label everywhere */
    UserDataOptions o = {.train = one, .dev = one, .name = "one", .multi_label = 1};
    const Task *t = ml_create(&o, &err);
    CHECK_MSG(!t && strstr(err, "one.tsv: 1 distinct label in column 'labels'"), "%s", err);
    free(err);
    ml_file(&d, "ft.txt", "__label__a __label__b t\n__label__c t\n", ft);
    struct { UserDataOptions o; const char *want; } cases[] = {
        {{.train = one, .dev = one, .label_sep = ";"}, "--label-sep splits a list of labels: add --multi-label"},
        {{.train = one, .dev = one, .multi_label = 1, .regression = 1}, "--multi-label and --regression exclude"},
        {{.train = ft, .dev = ft, .format = "fasttext", .multi_label = 1, .label_sep = ";"},
         "--label-sep is for a TSV/CSV label column"},
        {{.train = one, .dev = one, .multi_label = 1, .label_sep = ""}, "--label-sep must not be empty"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cases[i].o.name = "bad";
        t = ml_create(&cases[i].o, &err);
        CHECK_MSG(!t && strstr(err, cases[i].want), "case %zu: want '%s': %s", i, cases[i].want, err);
        free(err);
        user_data_free(t);
    }
    ml_rmdir(&d);
}

/* Rows of a fastText-format multi-label file: each row 1-2 of four topics,
 * each topic shown by one of its words among filler. */
static void ml_write_topics(const MlDir *d, const char *name, int n, unsigned seed, char *path) {
    static const char *const TOPIC[4] = {"sport", "music", "food", "news"};
    static const char *const WORD[4][3] = {{"goal", "match", "team"}, {"song", "guitar", "band"},
                                           {"pizza", "bread", "soup"}, {"election", "vote", "minister"}};
    static const char *const FILL[6] = {"the", "a", "today", "we", "saw", "really"};
    snprintf(path, 256, "%s/%s", d->dir, name);
    FILE *f = fopen(path, "w");
    if (!CHECK(f != NULL)) return;
    unsigned r = seed;
    for (int i = 0; i < n; i++) {
        r = r * 1103515245u + 12345u;
        int a = (int)(r >> 16) % 4, two = (r >> 8) % 3 == 0, b = (a + 1 + (int)(r >> 20) % 3) % 4;
        fprintf(f, "__label__%s%s%s", TOPIC[a], two ? " __label__" : "", two ? TOPIC[b] : "");
        fprintf(f, " %s %s %s", FILL[(r >> 3) % 6], WORD[a][(r >> 5) % 3], FILL[(r >> 7) % 6]);
        if (two) fprintf(f, " %s", WORD[b][(r >> 9) % 3]);
        fprintf(f, "\n");
    }
    fclose(f);
}

/* The round trip on a user's multi-label data through the binary: detection
 * said, finetune (fastText's one-vs-all, thresholds tuned on dev), eval
 * (macro-F1 from the checkpoint, the per-label table by label name, written
 * beside the run), predict (label names with probabilities). */
TEST(user_data_multi_label_round_trip) {
    MlDir d;
    if (!ml_mkdir(&d)) return;
    char tr[256], dv[256], cmd[4096];
    ml_write_topics(&d, "train.txt", 400, 7, tr);
    ml_write_topics(&d, "dev.txt", 120, 8, dv);
    snprintf(cmd, sizeof cmd, "%s finetune --train %s --dev %s --format fasttext --name topics --model fasttext "
             "--threads 1 --set dim=16 --set bucket=10000 --set epochs=15 --set lr=0.5 --set threshold=tuned "
             "--out %s/run --json 2>%s/err.txt", test_glue_bin(), tr, dv, d.dir, d.dir);
    int st = -1;
    char *out = test_run(cmd, &st);
    snprintf(cmd, sizeof cmd, "cat %s/err.txt", d.dir);
    char *err = test_run(cmd, NULL);
    CHECK_MSG(st == 0 && strstr(err, "the dataset is multi-label"), "finetune exit %d: %s", st, err);
    free(err);
    cJSON *res = cJSON_Parse(out ? out : "");
    const cJSON *dev = cJSON_GetObjectItem(cJSON_GetObjectItem(res, "best"), "dev");
    double f1 = cJSON_GetNumberValue(cJSON_GetObjectItem(dev, "macro_f1"));
    CHECK_MSG(f1 > 90, "dev macro-F1 %.1f", f1);
    CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetObjectItem(res, "details"), "per_label")) == 4);
    cJSON_Delete(res);
    free(out);
    /* eval: the same number from the checkpoint and thresholds.json, the table by name */
    snprintf(cmd, sizeof cmd, "%s eval --model fasttext --run %s/run --json 2>&1", test_glue_bin(), d.dir);
    out = test_run(cmd, &st);
    res = cJSON_Parse(out ? out : "");
    const cJSON *task = cJSON_GetObjectItem(cJSON_GetObjectItem(res, "tasks"), "topics");
    double again = cJSON_GetNumberValue(cJSON_GetObjectItem(cJSON_GetObjectItem(task, "dev"), "macro_f1"));
    const cJSON *table = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(task, "details"), "dev"), "per_label");
    CHECK_MSG(st == 0 && fabs(again - f1) < 1e-9 && cJSON_GetArraySize(table) == 4, "eval exit %d: %s", st, out);
    int named = 0;
    for (const cJSON *row = table ? table->child : NULL; row; row = row->next)
        named += strcmp(cJSON_GetObjectItem(row, "label")->valuestring, "sport") == 0;
    CHECK(named == 1);
    cJSON_Delete(res);
    free(out);
    snprintf(cmd, sizeof cmd, "test -s %s/run/dev_per_label.md && test -s %s/run/thresholds.json && "
             "grep -q '| music |' %s/run/dev_per_label.md", d.dir, d.dir, d.dir);
    free(test_run(cmd, &st));
    CHECK_MSG(st == 0, "per-label table or thresholds missing in %s/run", d.dir);
    /* predict: the label by name with its probability, under the tuned thresholds */
    snprintf(cmd, sizeof cmd, "%s predict --model fasttext --run %s/run 'today soup we' 2>&1", test_glue_bin(), d.dir);
    out = test_run(cmd, &st);
    CHECK_MSG(st == 0 && strncmp(out, "food=0.", 7) == 0 && !strchr(out, '\t'), "predict exit %d: %s", st, out);
    free(out);
    /* top_k=2: both topics of a two-topic text */
    snprintf(cmd, sizeof cmd, "%s finetune --train %s --dev %s --format fasttext --name topics --model fasttext "
             "--threads 1 --set dim=16 --set bucket=10000 --set epochs=15 --set lr=0.5 --set top_k=2 --out %s/run2 "
             ">/dev/null 2>&1 && %s predict --model fasttext --run %s/run2 'the goal really song' 2>&1",
             test_glue_bin(), tr, dv, d.dir, test_glue_bin(), d.dir);
    out = test_run(cmd, &st);
    CHECK_MSG(st == 0 && strstr(out, "sport=0.") && strstr(out, "music=0.") && !strstr(out, "food="),
              "top_k=2 predict exit %d: %s", st, out);
    free(out);
    /* libglue (and glue serve, its client): the same rule, exactly two labels a
     * text; it had used a fixed 0.5 whatever the run's rule */
    snprintf(cmd, sizeof cmd, "%s/run2", d.dir);
    glue_model *m = NULL;
    char lerr[GLUE_ERROR_MAX];
    if (CHECK_MSG(glue_open(cmd, 1, &m, lerr, sizeof lerr) == GLUE_OK, "glue_open: %s", lerr)) {
        const char *texts[] = {"the goal match team", "the soup bread", "the song today", "the goal really song"};
        float p[4 * 4];
        unsigned char set[4 * 4];
        CHECK(glue_is_multi_label(m) && glue_num_labels(m) == 4);
        CHECK_MSG(glue_predict(m, texts, NULL, 4, p, set, lerr, sizeof lerr) == GLUE_OK, "glue_predict: %s", lerr);
        for (int i = 0; i < 4; i++)
            CHECK_MSG(set[4 * i] + set[4 * i + 1] + set[4 * i + 2] + set[4 * i + 3] == 2, "top_k=2: '%s' gets %d labels",
                      texts[i], set[4 * i] + set[4 * i + 1] + set[4 * i + 2] + set[4 * i + 3]);
        glue_close(m);
    }
    snprintf(cmd, sizeof cmd, "%s finetune --train %s --dev %s --format fasttext --multi-label --label-sep x --model fasttext 2>&1",
             test_glue_bin(), tr, dv);
    out = test_run(cmd, &st);
    CHECK_MSG(st == 2 && strstr(out, "--label-sep is for a TSV/CSV label column"), "exit %d: %s", st, out);
    free(out);
    ml_rmdir(&d);
}
