/* test_settings_ranges.c — the ranges `glue finetune --help-settings` prints
 * are the ranges the settings are held to, for every model: each numeric
 * setting is driven at its printed minimum and maximum (accepted) and just
 * outside them (refused with exit 2, before anything is written).
 *
 * "Accepted" is checked without training: the dev file has only a header, so
 * a command line whose settings pass every check (the model's table and the
 * trainer's own reading) stops at the data, exit 65 (or, refused by a rule
 * across keys such as dim against heads, at exit 2 before it); a maximum that would
 * need a huge model is never built this way. settings_ranges_run_minimum then
 * trains each model for real with each setting at its minimum, and with its
 * maximum where that is small (and a hair below an open end), on a tiny
 * dataset: a run or a clear refusal, never a crash. */
#include "tests/cli_fixture.h"
#include "tests/test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const RANGE_MODELS[] = {"bert", "fasttext", "textcnn", "bilstm", "dpcnn", "transformer", "dmn", "entnet",
                                           "seq2seq_attn"};
#define NUM_RANGE_MODELS ((int)(sizeof RANGE_MODELS / sizeof RANGE_MODELS[0]))
#define RANGE_MAX_SETTINGS 64

typedef struct {
    char key[64];
    int whole;           /* a whole number, else a real */
    int below;           /* real in [lo, hi) */
    double lo, hi;
} PrintedRange;

/* The numeric settings of `glue finetune --help-settings --model M` (lines
 * "  key  default  a whole number in [lo, hi]"). Returns how many. */
static int ranges_printed(const char *model, PrintedRange *out, int max) {
    char cmd[512];
    snprintf(cmd, sizeof cmd, "%s finetune --help-settings --model %s 2>&1", test_glue_bin(), model);
    int st = -1, n = 0;
    char *text = test_run(cmd, &st);
    CHECK_MSG(st == 0, "--help-settings --model %s: exit %d", model, st);
    for (char *line = strtok(text, "\n"); line && n < max; line = strtok(NULL, "\n")) {
        PrintedRange r = {0};
        const char *w = strstr(line, "a whole number in ["), *x = strstr(line, "a number in [");
        if ((!w && !x) || sscanf(line, " %63s", r.key) != 1) continue;
        r.whole = w != NULL;
        char close = 0;
        if (sscanf(strchr(w ? w : x, '[') + 1, "%lf, %lf%c", &r.lo, &r.hi, &close) != 3) {
            CHECK_MSG(0, "%s: cannot read the range of '%s'", model, line);
            continue;
        }
        r.below = close == ')';
        out[n++] = r;
    }
    free(text);
    CHECK_MSG(n >= 3, "%s: only %d numeric settings printed", model, n);
    return n;
}

/* The values to try: inside[0..2) (minimum, maximum) and outside[0..2). */
static void ranges_values(const PrintedRange *r, double inside[2], double outside[2]) {
    inside[0] = r->lo;
    if (r->whole) {
        inside[1] = r->hi;
        outside[0] = r->lo - 1;
        outside[1] = r->hi + 1;
        return;
    }
    /* just below an open end, at a float's resolution (some are stored as floats) */
    inside[1] = r->below ? r->hi - 1e-6 * fmax(1, fabs(r->hi)) : r->hi;
    outside[0] = r->lo > 0 ? r->lo / 2 : r->lo - 1e-9 * fmax(1, fabs(r->lo));
    outside[1] = r->below ? r->hi : r->hi + 1e-6 * fmax(1, fabs(r->hi));
}

/* A tiny two-class training file and a header-only dev file in f. */
static int ranges_fixture(CliFixture *f) {
    if (cli_fixture_open(f) != 0) return -1;
    if (cli_fixture_two_class(f, "tr.tsv", 16) || cli_fixture_write(f, "empty.tsv", "text\tlabel\n", -1) ||
        cli_fixture_two_class(f, "dev.tsv", 8))
        return -1;
    return 0;
}

/* --set key=v for the model, through to the data: exit 65 when accepted. */
static void range_try(const CliFixture *f, const char *model, const PrintedRange *r, double v, int inside) {
    char args[512], val[64];
    if (r->whole) snprintf(val, sizeof val, "%.0f", v);
    else snprintf(val, sizeof val, "%.17g", v);
    snprintf(args, sizeof args, "finetune --train tr.tsv --dev empty.tsv --model %s --set %s=%s --out out", model,
             r->key, val);
    int st = -1;
    char *out = cli_fixture_glue(f, args, &st);
    /* Inside its range a value passes to the data, unless a rule across keys
     * (the model's check_config: dim against heads, minn against maxn)
     * refuses it first: exit 2 without a range in the message, nothing written. */
    int rule = st == 2 && !strstr(out, " in [") && !strstr(out, " in (") && !cli_fixture_exists(f, "out");
    if (inside)
        CHECK_MSG((st == 65 && strstr(out, "has no rows")) || rule, "%s %s=%s (printed [%g, %g%c) should pass to the "
                  "data: exit %d: %.400s", model, r->key, val, r->lo, r->hi, r->below ? ')' : ']', st, out);
    else
        CHECK_MSG(st == 2 && strstr(out, r->key) && !cli_fixture_exists(f, "out"),
                  "%s %s=%s (printed [%g, %g%c) should be refused first: exit %d%s: %.400s", model, r->key, val, r->lo,
                  r->hi, r->below ? ')' : ']', st, cli_fixture_exists(f, "out") ? ", out written" : "", out);
    free(out);
    char rm[600];
    snprintf(rm, sizeof rm, "rm -rf '%s/out'", f->dir);
    free(test_run(rm, NULL));
}

TEST(settings_ranges_printed_are_enforced) {
    CliFixture f;
    if (ranges_fixture(&f) != 0) { cli_fixture_close(&f); return; }
    int tried = 0;
    for (int m = 0; m < NUM_RANGE_MODELS; m++) {
        PrintedRange r[RANGE_MAX_SETTINGS];
        int n = ranges_printed(RANGE_MODELS[m], r, RANGE_MAX_SETTINGS);
        for (int k = 0; k < n; k++) {
            double in[2], out[2];
            /* top_k applies to multi-label tasks only (this data is single-label, which refuses it
             * whatever its value): its range is held in test_multilabel_train.c and test_tasks_multilabel.c */
            if (strcmp(r[k].key, "top_k") == 0) continue;
            ranges_values(&r[k], in, out);
            for (int i = 0; i < 2; i++) {
                range_try(&f, RANGE_MODELS[m], &r[k], in[i], 1);
                range_try(&f, RANGE_MODELS[m], &r[k], out[i], 0);
                tried += 2;
            }
        }
    }
    printf("  %d settings values tried\n", tried);
    cli_fixture_close(&f);
}

/* Maxima trained for real: those that do not scale a model's size or its
 * running time (a maximum dimension, batch, length or number of epochs needs
 * memory or hours; settings_ranges_printed_are_enforced checks those). */
static int range_max_is_small(const PrintedRange *r) {
    return !r->whole || r->hi <= 256 || !strcmp(r->key, "minCount") || !strcmp(r->key, "min_count");
}

/* One real training of model with key=v on the tiny set: it runs (exit 0), or
 * it is refused clearly (an error message and a usage, data or failure
 * code: a diverged run's metric is not a number), never a crash. */
static void range_run(const CliFixture *f, const char *model, const PrintedRange *r, double v, int *runs,
                      int *refusals) {
    char args[1024], val[64], vocab[512];
    if (r->whole) snprintf(val, sizeof val, "%.0f", v);
    else snprintf(val, sizeof val, "%.17g", v);
    /* random weights, named: the fixture's folder has no shipped encoder */
    snprintf(vocab, sizeof vocab, " --set vocab=%s/models/vocab/bert-base-uncased-vocab.txt --init none",
             test_shared_dir());
    snprintf(args, sizeof args, "finetune --train tr.tsv --dev dev.tsv --model %s --set %s=%s%s%s --threads 1 "
             "--overwrite --out run", model, r->key, val, strcmp(r->key, "epochs") ? " --epochs 1" : "",
             strcmp(model, "bert") ? "" : vocab);
    int st = -1;
    char *out = cli_fixture_glue(f, args, &st);
    int clear = (st == 1 || st == 2 || st == 65) && strstr(out, "glue: error:");
    CHECK_MSG(st == 0 || clear, "%s %s=%s: exit %d (a crash?): %.600s", model, r->key, val, st, out);
    *runs += st == 0;
    *refusals += clear;
    const char *why = clear ? strstr(out, "glue: error:") : NULL;
    if (why) printf("  refused %s %s=%s: %.*s\n", model, r->key, val, (int)strcspn(why + 13, "\n"), why + 13);
    free(out);
}

TEST(settings_ranges_run_minimum) {
    CliFixture f;
    if (ranges_fixture(&f) != 0) { cli_fixture_close(&f); return; }
    int runs = 0, refusals = 0;
    for (int m = 0; m < NUM_RANGE_MODELS; m++) {
        PrintedRange r[RANGE_MAX_SETTINGS];
        int n = ranges_printed(RANGE_MODELS[m], r, RANGE_MAX_SETTINGS);
        for (int k = 0; k < n; k++) {
            double in[2], out[2];
            ranges_values(&r[k], in, out);
            range_run(&f, RANGE_MODELS[m], &r[k], in[0], &runs, &refusals);
            if (range_max_is_small(&r[k])) range_run(&f, RANGE_MODELS[m], &r[k], in[1], &runs, &refusals);
            /* closer to an open end than a float can tell (dropout 0.999999999
             * was 1.0f and aborted the dropout op) */
            if (r[k].below) range_run(&f, RANGE_MODELS[m], &r[k], r[k].hi - 1e-9, &runs, &refusals);
        }
    }
    printf("  %d trainings ran, %d refused clearly\n", runs, refusals);
    cli_fixture_close(&f);
}
