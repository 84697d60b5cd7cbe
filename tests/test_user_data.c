/* test_user_data.c — a user's own dataset end to end (tasks/user_data.h):
 * per format (TSV pairs with a header, CSV with RFC 4180 quoting and named
 * columns, JSONL regression, fastText's __label__ lines) a small file is
 * written here, fastText is fine-tuned on it through the CLI, the dev number is
 * learnt (so texts and labels went through the right columns), `glue eval --run`
 * reproduces it from the recorded dataset.json, and `glue predict` answers
 * with the user's own label names. Malformed rows are reported as file:line and
 * skipped with a count, or fatal with --strict; bad options are clear errors. */
#include "tests/cli_fixture.h"
#include "tests/scratch.h"
#include "tests/test.h"

#include <cjson/cJSON.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* fastText, small hash table, enough epochs for these tiny sets */
#define UD_BASE "--model fasttext --set bucket=20000 --threads 1"
#define UD_MODEL UD_BASE " --epochs 15"

typedef struct { char dir[SCRATCH_PATH_MAX]; } UdDir;

static void ud_mkdir(UdDir *d) {
    CHECK(scratch_dir("test_user", d->dir, sizeof d->dir));
}

static void ud_rmdir(UdDir *d) {
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", d->dir);
    free(test_run(cmd, NULL));
}

static FILE *ud_open(const UdDir *d, const char *name) {
    char path[256];
    snprintf(path, sizeof path, "%s/%s", d->dir, name);
    FILE *f = fopen(path, "wb");
    CHECK_MSG(f != NULL, "cannot write %s", path);
    return f;
}

/* Deterministic words: class k's words are "k<letter>" style tokens, so a bag
 * of words separates the classes; filler words are shared. */
static unsigned ud_rand(unsigned *s) { return *s = *s * 1103515245u + 12345u, (*s >> 16) & 0x7fff; }

static const char *const UD_WORDS[3][4] = {
    {"sunny", "bright", "warm", "clear"}, {"rainy", "grey", "wet", "stormy"}, {"snowy", "icy", "frozen", "white"}};
static const char *const UD_FILL[4] = {"the", "day", "was", "today"};

/* A text of class k: four words, two of them the class's. */
static void ud_text(unsigned *s, int k, char *out, size_t cap) {
    snprintf(out, cap, "%s %s %s %s", UD_FILL[ud_rand(s) % 4], UD_WORDS[k][ud_rand(s) % 4], UD_FILL[ud_rand(s) % 4],
             UD_WORDS[k][ud_rand(s) % 4]);
}

/* One row of a format, from the generator state s. */
typedef void (*UdRowFn)(FILE *o, unsigned *s, int i);

/* Writes d/name: head, n rows, then tail (malformed rows; NULL: none). 0 or -1. */
static int ud_write(const UdDir *d, const char *name, const char *head, int n, UdRowFn row, unsigned seed,
                    const char *tail) {
    FILE *o = ud_open(d, name);
    if (!o) return -1;
    fputs(head, o);
    for (int i = 0; i < n; i++) row(o, &seed, i);
    if (tail) fputs(tail, o);
    fclose(o);
    return 0;
}

/* A fresh d holding STEM.train.EXT (n_train rows, then bad_tail) and
 * STEM.dev.EXT (n_dev rows). 0, or -1 (d is then removed). */
static int ud_files(UdDir *d, const char *stem, const char *ext, const char *head, UdRowFn row, int n_train,
                    int n_dev, const char *bad_tail) {
    char train[128], dev[128];
    snprintf(train, sizeof train, "%s.train.%s", stem, ext);
    snprintf(dev, sizeof dev, "%s.dev.%s", stem, ext);
    ud_mkdir(d);
    if (ud_write(d, train, head, n_train, row, 7, bad_tail) == 0 && ud_write(d, dev, head, n_dev, row, 8, NULL) == 0)
        return 0;
    ud_rmdir(d);
    return -1;
}

/* Runs a glue command line; returns stdout+stderr (caller frees), status in *st. */
static char *ud_glue(const char *args, int *st) {
    char cmd[16384];
    snprintf(cmd, sizeof cmd, "%s %s 2>&1", test_glue_bin(), args);
    return test_run(cmd, st);
}

/* The best epoch's value of metric on split in DIR/results.json; NAN if absent. */
static double ud_best(const char *dir, const char *split, const char *metric) {
    char cmd[512];
    snprintf(cmd, sizeof cmd, "cat '%s/results.json'", dir);
    char *text = test_run(cmd, NULL);
    cJSON *r = cJSON_Parse(text);
    free(text);
    const cJSON *v = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "best"), split), metric);
    double x = cJSON_IsNumber(v) ? v->valuedouble : NAN;
    cJSON_Delete(r);
    return x;
}

/* `glue eval --run DIR --json`: the metric on split. */
static double ud_eval(const char *dir, const char *split_opt, const char *split, const char *metric) {
    char args[1024];
    int st = -1;
    snprintf(args, sizeof args, "eval --run '%s' --model fasttext %s --json", dir, split_opt);
    char *out = ud_glue(args, &st);
    CHECK_MSG(st == 0, "eval: %s", out);
    const char *json = strchr(out, '{');
    cJSON *r = json ? cJSON_Parse(json) : NULL;
    const cJSON *tasks = cJSON_GetObjectItem(r, "tasks");
    const cJSON *v = cJSON_GetObjectItem(cJSON_GetObjectItem(tasks ? tasks->child : NULL, split), metric);
    double x = cJSON_IsNumber(v) ? v->valuedouble : NAN;
    CHECK_MSG(!cJSON_GetObjectItem(r, "glue"), "a user's dataset has no GLUE score: %s", out);
    cJSON_Delete(r);
    free(out);
    return x;
}

/* Fine-tunes with args, checks the dev metric reached at least want and that
 * eval reproduces it; returns the dev value. */
static double ud_round_trip(const UdDir *d, const char *args, const char *metric, double want) {
    char full[4096], run[256];
    int st = -1;
    snprintf(run, sizeof run, "%s/run", d->dir);
    snprintf(full, sizeof full, "finetune %s " UD_MODEL " --out '%s'", args, run);
    char *out = ud_glue(full, &st);
    CHECK_MSG(st == 0, "finetune %s:\n%s", args, out);
    free(out);
    double dev = ud_best(run, "dev", metric);
    CHECK_MSG(dev >= want, "dev %s %.2f < %.2f (%s)", metric, dev, want, args);
    double again = ud_eval(run, "", "dev", metric);
    CHECK_MSG(fabs(again - dev) < 1e-6, "eval gives %.4f, training recorded %.4f", again, dev);
    return dev;
}

/* `glue predict --run DIR TEXTS` output. */
static char *ud_predict(const UdDir *d, const char *texts, int *st) {
    char args[1024];
    snprintf(args, sizeof args, "predict --run '%s/run' --model fasttext %s", d->dir, texts);
    return ud_glue(args, st);
}

#define TSV_HEAD "id\tsentence1\tsentence2\tlabel\n"   /* default column names */

/* The label follows the SECOND text. */
static void tsv_row(FILE *o, unsigned *s, int i) {
    static const char *const LABELS[3] = {"sun", "rain", "snow"};
    char a[128], b[128];
    int k = (int)(ud_rand(s) % 3);
    ud_text(s, (int)(ud_rand(s) % 3), a, sizeof a);
    ud_text(s, k, b, sizeof b);
    fprintf(o, "%d\t%s\t%s\t%s\n", i, a, b, LABELS[k]);
}

TEST(user_data_tsv_pairs_header) {
    UdDir d;
    /* bad rows: train lines 602, 603 */
    if (ud_files(&d, "w", "tsv", TSV_HEAD, tsv_row, 600, 150, "x\tonly two\tcolumns\n9\ta\tb\tfog\n") != 0) return;
    char args[1024];
    snprintf(args, sizeof args, "--train %s/w.train.tsv --dev %s/w.dev.tsv", d.dir, d.dir);
    /* the label "fog" appears once in train: it is a class (train defines the classes) */
    ud_round_trip(&d, args, "accuracy", 90.0);
    int st = -1;
    char *out = ud_predict(&d, "'a b c' 'the day was icy'", &st);
    CHECK_MSG(st == 0 && strncmp(out, "snow\t", 5) == 0 && strstr(out, "fog=") && strstr(out, "rain="), "%s", out);
    free(out);
    snprintf(args, sizeof args, "cat '%s/run/dataset.json'", d.dir);
    out = test_run(args, NULL);
    CHECK_MSG(strstr(out, "\"labels\":\t[\"fog\", \"rain\", \"snow\", \"sun\"]") && strstr(out, "\"sentence2\""),
              "sorted labels, resolved columns: %s", out);
    free(out);
    /* the malformed row is reported with file:line; --strict makes it fatal */
    snprintf(args, sizeof args, "finetune --train %s/w.train.tsv --dev %s/w.dev.tsv " UD_BASE " --epochs 1 --out %s/r2",
             d.dir, d.dir, d.dir);
    out = ud_glue(args, &st);
    CHECK_MSG(st == 0 && strstr(out, "w.train.tsv:602: expected 4 tab-separated columns, found 3 (row skipped)") &&
              strstr(out, "1 malformed row skipped in"), "%s", out);
    free(out);
    ud_rmdir(&d);
}

#define CSV_HEAD "weather,note,verdict\r\n"

/* A quoted comma, a doubled quote and a line break inside quotes; quotes and
 * commas in the labels too (good "day" / bad, wet). */
static void csv_row(FILE *o, unsigned *s, int i) {
    char a[128];
    int k = (int)(ud_rand(s) % 2);
    ud_text(s, k, a, sizeof a);
    fprintf(o, "\"%s, \"\"%s\"\"\",\"line one\nline two\",%s\r\n", a, i % 2 ? "x" : "y",
            k ? "\"bad, wet\"" : "\"good \"\"day\"\"\"");
}

TEST(user_data_csv_quoting_named_columns) {
    UdDir d;
    if (ud_files(&d, "c", "csv", CSV_HEAD, csv_row, 500, 150, NULL) != 0 ||
        ud_write(&d, "c.test.csv", CSV_HEAD, 150, csv_row, 13, NULL) != 0 ||
        ud_write(&d, "c.bad.csv", CSV_HEAD, 150, csv_row, 12, "\"never closed,note,x\n") != 0)   /* never ends */
        return;
    char args[1024];
    snprintf(args, sizeof args, "--train %s/c.train.csv --dev %s/c.dev.csv --test %s/c.test.csv --columns weather,verdict",
             d.dir, d.dir, d.dir);
    ud_round_trip(&d, args, "accuracy", 95.0);
    char run[256];
    snprintf(run, sizeof run, "%s/run", d.dir);
    double test = ud_eval(run, "--split test", "test", "accuracy");
    CHECK_MSG(test >= 95.0, "test accuracy %.2f", test);
    int st = -1;
    char *out = ud_predict(&d, "'today was stormy and wet'", &st);
    CHECK_MSG(st == 0 && strncmp(out, "bad, wet\t", 9) == 0 && strstr(out, "good \"day\"="), "%s", out);
    free(out);
    snprintf(args, sizeof args, "finetune --train %s/c.train.csv --dev %s/c.bad.csv --columns weather,verdict "
             UD_BASE " --epochs 1 --out %s/r2", d.dir, d.dir, d.dir);
    out = ud_glue(args, &st);
    CHECK_MSG(strstr(out, "c.bad.csv:302: a quoted field opened on this line is never closed (row skipped)"), "%s", out);
    free(out);
    /* a name not in the header; names without a header */
    snprintf(args, sizeof args, "finetune --train %s/c.train.csv --dev %s/c.dev.csv --columns weather,label " UD_MODEL,
             d.dir, d.dir);
    out = ud_glue(args, &st);
    CHECK_MSG(st == 2 && strstr(out, "c.train.csv: no column 'label' in the header"), "%s", out);
    free(out);
    snprintf(args, sizeof args, "finetune --train %s/c.train.csv --dev %s/c.dev.csv --no-header --columns weather,verdict "
             UD_MODEL, d.dir, d.dir);
    out = ud_glue(args, &st);
    CHECK_MSG(st == 2 && strstr(out, "give 1-based column numbers"), "%s", out);
    free(out);
    ud_rmdir(&d);
}

/* The target counts the word "up" (plus .5). */
static void jsonl_row(FILE *o, unsigned *s, int i) {
    int ups = (int)(ud_rand(s) % 5);
    char text[256] = "level";
    for (int k = 0; k < 4; k++) strcat(text, k < ups ? " up" : " flat");
    fprintf(o, "{\"text\": \"%s\", \"id\": %d, \"label\": %d.5}\n", text, i, ups);
}

TEST(user_data_jsonl_regression) {
    UdDir d;
    if (ud_files(&d, "r", "jsonl", "", jsonl_row, 1500, 200,
                 "{\"text\": \"level up\", \"label\": \"high\"}\n{\"text\": 3, \"label\": 1}\nnot json\n") != 0)
        return;
    char args[1024];
    snprintf(args, sizeof args, "--train %s/r.train.jsonl --dev %s/r.dev.jsonl --regression", d.dir, d.dir);
    ud_round_trip(&d, args, "pearson", 90.0);
    int st = -1;
    char *out = ud_predict(&d, "'level up up up flat'", &st);
    double v = st == 0 ? atof(out) : -1;
    CHECK_MSG(v > 2.0 && v < 5.0, "predicted %s", out);
    free(out);
    snprintf(args, sizeof args, "finetune --train %s/r.train.jsonl --dev %s/r.dev.jsonl --regression " UD_BASE
             " --epochs 1 --out %s/r2", d.dir, d.dir, d.dir);
    out = ud_glue(args, &st);
    CHECK_MSG(strstr(out, "r.train.jsonl:1501: score 'high' is not a number") &&
              strstr(out, "r.train.jsonl:1502: \"text\" is not a string") &&
              strstr(out, "r.train.jsonl:1503: not valid JSON") && strstr(out, "3 malformed rows skipped"), "%s", out);
    free(out);
    snprintf(args, sizeof args, "finetune --train %s/r.train.jsonl --dev %s/r.dev.jsonl --regression " UD_BASE
             " --epochs 1 --out %s/r3 --strict", d.dir, d.dir, d.dir);
    out = ud_glue(args, &st);
    CHECK_MSG(st != 0 && strstr(out, "r.train.jsonl:1501: score 'high' is not a number") &&
              !strstr(out, "1502") && strstr(out, "fix or remove the row"), "%s", out);
    free(out);
    ud_rmdir(&d);
}

static void ft_row(FILE *o, unsigned *s, int i) {
    static const char *const LABELS[3] = {"hot", "wet", "cold"};   /* sunny, rainy, snowy words */
    char a[128];
    (void)i;
    int k = (int)(ud_rand(s) % 3);
    ud_text(s, k, a, sizeof a);
    fprintf(o, "__label__%s %s\n", LABELS[k], a);
}

TEST(user_data_fasttext_format) {
    UdDir d;
    if (ud_files(&d, "f", "txt", "", ft_row, 600, 150,
                 "no label here\n__label__hot\n") != 0)
        return;
    char args[8192];
    snprintf(args, sizeof args, "--train %s/f.train.txt --dev %s/f.dev.txt --format fasttext --name weather", d.dir,
             d.dir);
    ud_round_trip(&d, args, "accuracy", 95.0);
    int st = -1;
    char *out = ud_predict(&d, "'frozen white snowy day'", &st);
    CHECK_MSG(st == 0 && strncmp(out, "cold\t", 5) == 0, "%s", out);
    free(out);
    /* eval by name, through runs/<name>/<model>/dataset.json */
    char bin[4096];
    CHECK(realpath(test_glue_bin(), bin) != NULL);
    snprintf(args, sizeof args,
             "cd '%s' && mkdir -p runs/weather && cp -r run runs/weather/fasttext && GLUE_RUNS=runs '%s' eval weather "
             "--model fasttext 2>&1", d.dir, bin);
    out = test_run(args, &st);
    CHECK_MSG(st == 0 && strstr(out, "weather (acc)"), "%s", out);
    free(out);
    /* compare by name: the majority row from the user's files, fastText retrained with its defaults */
    snprintf(args, sizeof args, "cd '%s' && GLUE_RUNS=runs GLUE_RESULTS=results '%s' compare weather --models fasttext "
             "--json 2>/dev/null", d.dir, bin);
    out = test_run(args, &st);
    cJSON *cmp = cJSON_Parse(out);
    const cJSON *models = cJSON_GetObjectItem(cmp, "models");
    const cJSON *maj = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetArrayItem(models, 0), "tasks"), "weather");
    const cJSON *ft = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetArrayItem(models, 1), "tasks"), "weather");
    double maj_acc = cJSON_GetNumberValue(cJSON_GetObjectItem(cJSON_GetObjectItem(maj, "dev"), "accuracy"));
    double ft_acc = cJSON_GetNumberValue(cJSON_GetObjectItem(cJSON_GetObjectItem(ft, "dev"), "accuracy"));
    CHECK_MSG(st == 0 && maj_acc > 25 && maj_acc < 50 && ft_acc >= 95 && !cJSON_GetObjectItem(cJSON_GetArrayItem(models, 1), "glue"),
              "majority %.2f fasttext %.2f: %.400s", maj_acc, ft_acc, out);
    cJSON_Delete(cmp);
    free(out);
    /* A setting for the dataset by its name reaches it (it was refused: "no
     * task 'weather'"), one for no task is refused. A damaged row of the
     * previous compare.json is dropped with a warning: it was kept, and
     * printing it crashed (SIGSEGV). */
    snprintf(args, sizeof args, "cd '%s' && printf '{\"tasks\":[\"rte\"],\"models\":[5,{\"tasks\":{}}]}' > "
             "results/compare.json && GLUE_RUNS=runs GLUE_RESULTS=results '%s' compare weather --models fasttext 2>&1",
             d.dir, bin);
    out = test_run(args, &st);
    CHECK_MSG(st == 0 && strstr(out, "2 rows") && strstr(out, "dropped"), "exit %d: %s", st, out);
    free(out);
    snprintf(args, sizeof args, "cd '%s' && GLUE_RUNS=runs GLUE_RESULTS=results '%s' compare weather --models fasttext "
             "--set weather.epochs=3 2>&1", d.dir, bin);
    out = test_run(args, &st);
    CHECK_MSG(st == 0 && strstr(out, "fasttext *") && strstr(out, "weather.epochs=3"), "exit %d: %s", st, out);
    free(out);
    snprintf(args, sizeof args, "cd '%s' && GLUE_RUNS=runs GLUE_RESULTS=results '%s' compare weather --models fasttext "
             "--set wether.epochs=3 2>&1", d.dir, bin);
    out = test_run(args, &st);
    CHECK_MSG(st == 2 && strstr(out, "no task 'wether'"), "exit %d: %s", st, out);
    free(out);
    /* A results folder that cannot be made: exit 74, and no "wrote" line after the error. */
    snprintf(args, sizeof args, "cd '%s' && GLUE_RUNS=runs GLUE_RESULTS=f.train.txt '%s' compare weather --models "
             "fasttext 2>&1", d.dir, bin);
    out = test_run(args, &st);
    CHECK_MSG(st == 74 && strstr(out, "not a directory") && !strstr(out, "wrote"), "exit %d: %s", st, out);
    free(out);
    /* the bad lines, fatal under --strict with the first one's line */
    snprintf(args, sizeof args, "finetune --train %s/f.train.txt --dev %s/f.dev.txt --format fasttext --name weather "
             UD_BASE " --epochs 1 --out %s/r2", d.dir, d.dir, d.dir);
    out = ud_glue(args, &st);
    CHECK_MSG(strstr(out, "f.train.txt:601: the line does not start with __label__LABEL") &&
              strstr(out, "f.train.txt:602: no text after the label") && strstr(out, "2 malformed rows skipped") &&
              !strstr(out, "multi-label"), "%s", out);
    free(out);
    ud_rmdir(&d);
}

TEST(user_data_option_errors) {
    UdDir d;
    ud_mkdir(&d);
    FILE *o = ud_open(&d, "one.tsv");
    if (o) { fprintf(o, "text\tlabel\na\tx\nb\tx\n"); fclose(o); }
    /* usage 2, the data 65, a missing file 74 (core/exit_codes.h) */
    struct { const char *args, *want; int status; } cases[] = {
        {"--train %s/one.tsv", "your own dataset needs --dev FILE", 2},
        {"--train %s/one.tsv --dev %s/one.tsv", "1 distinct label in column 'label'", 65},
        {"--train %s/one.tsv --dev %s/nothere.tsv", "--dev %s/nothere.tsv: no such file", 74},
        {"--train %s/one.tsv --dev %s/one.tsv --name rte", "'rte' is a GLUE task", 2},
        {"--train %s/one.tsv --dev %s/one.tsv --format xml", "unknown format 'xml'", 2},
        {"--train %s/one.tsv --dev %s/one.tsv --columns text", "expected TEXT,LABEL or TEXT_A,TEXT_B,LABEL", 2},
        {"sst2 --train %s/one.tsv --dev %s/one.tsv", "a TASK and --train/--dev both given", 2},
        /* every row malformed: the rows are shown before the error */
        {"--train %s/one.tsv --dev %s/one.tsv --columns 1,5", "one.tsv:2: no column 5 (the row has 2)", 65},
    };
    for (int i = 0; i < 8; i++) {
        char a[1024], want[512], args[1200];
        snprintf(a, sizeof a, cases[i].args, d.dir, d.dir);
        snprintf(want, sizeof want, cases[i].want, d.dir);
        snprintf(args, sizeof args, "finetune %s " UD_MODEL, a);
        int st = -1;
        char *out = ud_glue(args, &st);
        CHECK_MSG(st == cases[i].status && strstr(out, want), "%s: want '%s' (%d), got (%d) %s", a, want,
                  cases[i].status, st, out);
        free(out);
    }
    ud_rmdir(&d);
}

/* A dev file that repeats training rows, word for word (the same file twice,
 * splits cut with duplicates): a warning that counts them, as the score is
 * how well those rows are fitted; none for a dev file of other rows. A pair
 * counts only when both texts are the same. It trained without a word. */
TEST(user_data_dev_rows_in_train_said) {
    CliFixture f;
    if (cli_fixture_open(&f) != 0) return;
    const char *train = "text_a\ttext_b\tlabel\nthe sky is blue\tit is day\tyes\nthe sky is dark\tit is day\tno\n"
                        "sun and warm\tit is day\tyes\nrain and cold\tit is night\tno\n";
    CHECK(cli_fixture_write(&f, "tr.tsv", train, -1) == 0);
    /* one row of train, one whose first text is train's but not its second, one new */
    CHECK(cli_fixture_write(&f, "dev.tsv", "text_a\ttext_b\tlabel\nsun and warm\tit is day\tyes\n"
                                          "rain and cold\tit is day\tno\nsnow\tit is night\tno\n", -1) == 0);
    CHECK(cli_fixture_write(&f, "other.tsv", "text_a\ttext_b\tlabel\nsnow\tit is night\tno\nfog\tit is day\tyes\n", -1) == 0);
    static const struct { const char *dev, *says; } CASES[] = {
        {"tr.tsv", "4 of the 4 dev rows (100.0%) are in the training data too"},
        {"dev.tsv", "1 of the 3 dev rows (33.3%) are in the training data too"},
        {"other.tsv", NULL},
    };
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        char args[512];
        snprintf(args, sizeof args, "finetune --train tr.tsv --dev %s --model fasttext --epochs 1 --threads 1 "
                 "--set bucket=1000 --set dim=8 --out r%zu", CASES[i].dev, i);
        int st = -1;
        char *out = cli_fixture_glue(&f, args, &st);
        CHECK_MSG(st == 0 && (CASES[i].says ? strstr(out, CASES[i].says) != NULL : !strstr(out, "training data too")),
                  "--dev %s: exit %d: %.800s", CASES[i].dev, st, out);
        free(out);
    }
    cli_fixture_close(&f);
}
