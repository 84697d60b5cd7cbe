/* test_invalid_utf8.c — text that is not UTF-8 is refused alike by the two
 * commands that take text to a model: `glue predict` and `glue translate`
 * (which used to drop the bad bytes and translate the rest, exit 0). As an
 * argument: the command is refused before the model loads, exit 65, naming
 * the argument and the first bad byte. On stdin: that line gets no answer
 * (predict "-", translate an empty line, so outputs stay aligned), the others
 * are answered, exit 65. Several kinds of bad byte sequence, and a NUL. */
#include "tests/cli_fixture.h"
#include "tests/test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* printf(1) escapes of bad sequences, and the byte each first goes wrong at
 * within "ab<bad>": a stray byte, a truncated sequence, a surrogate, an
 * overlong '/'. */
static const struct { const char *bytes; int at; } BAD[] = {
    {"\\377", 3}, {"\\303", 3}, {"\\355\\240\\200", 3}, {"\\300\\257", 3},
};

/* glue args (after "cd fixture && glue", or from the repository when f is
 * NULL) with stdin from a printf format: the exit status and output. */
static char *utf8_run(const CliFixture *f, const char *input, const char *args, int *st) {
    char cmd[4096];
    if (f) {
        snprintf(cmd, sizeof cmd, "printf '%s' | (cd '%s' && GLUE_DATA=%s/glue '%s' %s) 2>&1", input ? input : "",
                 f->dir, f->dir, cli_fixture_bin(), args);
    } else {
        snprintf(cmd, sizeof cmd, "printf '%s' | %s %s 2>&1", input ? input : "", test_glue_bin(), args);
    }
    return test_run(cmd, st);
}

TEST(invalid_utf8_refused_by_predict_and_translate) {
    CliFixture f;
    if (cli_fixture_open(&f) != 0) return;
    if (cli_fixture_two_class(&f, "tr.tsv", 12)) { cli_fixture_close(&f); return; }
    int st = -1;
    char *out = cli_fixture_glue(&f, "finetune --train tr.tsv --dev tr.tsv --model fasttext --set bucket=1000 "
                                     "--epochs 2 --out run", &st);
    CHECK_MSG(st == 0, "finetune: exit %d: %.300s", st, out);
    free(out);
    for (size_t k = 0; k < sizeof BAD / sizeof BAD[0]; k++) {
        char arg[128], args[512], want[64], input[256];
        snprintf(arg, sizeof arg, "\"$(printf 'ab%s')\"", BAD[k].bytes);
        snprintf(want, sizeof want, "argument 1: invalid UTF-8 at byte %d", BAD[k].at);
        /* predict: an argument (the model is never loaded), then stdin */
        snprintf(args, sizeof args, "predict --run run --model fasttext %s", arg);
        out = utf8_run(&f, NULL, args, &st);
        CHECK_MSG(st == 65 && strstr(out, want), "predict %s: exit %d: %s", BAD[k].bytes, st, out);
        free(out);
        snprintf(input, sizeof input, "good day\\nab%s\\nbad day\\n", BAD[k].bytes);
        out = utf8_run(&f, input, "predict --run run --model fasttext", &st);
        CHECK_MSG(st == 65 && strstr(out, "stdin:2: invalid UTF-8 at byte 3") && strstr(out, "\n-\n") &&
                      strstr(out, "1 of 3 lines skipped"), "predict stdin %s: exit %d: %s", BAD[k].bytes, st, out);
        free(out);
        /* translate, the shipped model (from the repository) */
        snprintf(args, sizeof args, "translate --model models/translate-en-de-multi30k --beam 1 %s", arg);
        out = utf8_run(NULL, NULL, args, &st);
        CHECK_MSG(st == 65 && strstr(out, want), "translate %s: exit %d: %s", BAD[k].bytes, st, out);
        free(out);
        snprintf(input, sizeof input, "a dog\\nab%s\\na man\\n", BAD[k].bytes);
        out = utf8_run(NULL, input, "translate --model models/translate-en-de-multi30k --beam 1", &st);
        CHECK_MSG(st == 65 && strstr(out, "stdin:2: invalid UTF-8 at byte 3") && strstr(out, "\n\n") &&
                      strstr(out, "1 of 3 lines skipped"), "translate stdin %s: exit %d: %s", BAD[k].bytes, st, out);
        free(out);
    }
    /* an empty argument is refused as an empty stdin line is (it was predicted, exit 0) */
    out = utf8_run(&f, NULL, "predict --run run --model fasttext ''", &st);
    CHECK_MSG(st == 65 && strstr(out, "argument 1: empty text"), "predict '': exit %d: %s", st, out);
    free(out);
    /* a NUL inside a line would end its text silently (predict read "a b" of "a b\0c", exit 0) */
    out = utf8_run(&f, "good day\\na b\\000c\\nbad day\\n", "predict --run run --model fasttext", &st);
    CHECK_MSG(st == 65 && strstr(out, "stdin:2: NUL byte at byte 4") && strstr(out, "\n-\n"), "predict NUL: exit %d: %s",
              st, out);
    free(out);
    out = utf8_run(NULL, "a dog\\na b\\000c\\n", "translate --model models/translate-en-de-multi30k --beam 1", &st);
    CHECK_MSG(st == 65 && strstr(out, "stdin:2: NUL byte at byte 4"), "translate NUL: exit %d: %s", st, out);
    free(out);
    cli_fixture_close(&f);
}
