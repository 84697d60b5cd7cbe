/* test_empty_split.c — a split without a single row (a header-only TSV, an
 * empty JSONL file) is an error naming the file, exit 65, from every command
 * that reads one: never a run that trains and reports "accuracy 0.00" with
 * exit 0. The cases cover a user's own files (TSV, JSONL, train and dev) and
 * a GLUE task's files (finetune, score, compare, eval of a trained model). */
#include "tests/cli_fixture.h"
#include "tests/test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* glue args in f: exit 65, file named, no metric printed. */
static void empty_refused(const CliFixture *f, const char *args, const char *file) {
    int st = -1;
    char *out = cli_fixture_glue(f, args, &st);
    CHECK_MSG(st == 65 && strstr(out, file) && strstr(out, "has no rows") && !strstr(out, "accuracy") &&
                  !strstr(out, "pearson"),
              "glue %s: exit %d: %.500s", args, st, out);
    free(out);
}

TEST(empty_split_own_files) {
    CliFixture f;
    if (cli_fixture_open(&f) != 0) return;
    int rc = cli_fixture_two_class(&f, "tr.tsv", 12);
    rc |= cli_fixture_write(&f, "header.tsv", "text\tlabel\n", -1);
    rc |= cli_fixture_write(&f, "empty.jsonl", "", -1);
    rc |= cli_fixture_write(&f, "tr.jsonl", "{\"text\": \"good day\", \"label\": \"pos\"}\n"
                                            "{\"text\": \"bad day\", \"label\": \"neg\"}\n", -1);
    rc |= cli_fixture_write(&f, "score.tsv", "text\tlabel\ntwo words\t1.5\nthree more words\t2.5\n", -1);
    if (rc == 0) {
        empty_refused(&f, "finetune --train tr.tsv --dev header.tsv --model fasttext --out a", "header.tsv");
        empty_refused(&f, "finetune --train tr.jsonl --dev empty.jsonl --model fasttext --out b", "empty.jsonl");
        empty_refused(&f, "finetune --train header.tsv --dev score.tsv --regression --model fasttext --out c",
                      "header.tsv");
        /* --test is read by eval --split test (finetune never looks at it) */
        int st = -1;
        char *out = cli_fixture_glue(&f, "finetune --train tr.tsv --dev tr.tsv --test header.tsv --model fasttext "
                                         "--epochs 1 --out d", &st);
        CHECK_MSG(st == 0, "finetune with a --test file: exit %d: %.400s", st, out);
        free(out);
        empty_refused(&f, "eval --run d --model fasttext --split test", "header.tsv");
        CHECK_MSG(!cli_fixture_exists(&f, "a/results.json") && !cli_fixture_exists(&f, "b/results.json"),
                  "an empty split left a finished run");
    }
    cli_fixture_close(&f);
}

TEST(empty_split_glue_task) {
    CliFixture f;
    if (cli_fixture_open(&f) != 0) return;
    /* SST-2's layout: "sentence<TAB>label", labels 0 and 1. */
    char train[4096] = "sentence\tlabel\n";
    for (int i = 0; i < 24; i++)
        snprintf(train + strlen(train), sizeof train - strlen(train), "%s movie %d \t%d\n",
                 i % 2 ? "a great" : "an awful", i, i % 2);
    int rc = cli_fixture_write(&f, "glue/SST-2/train.tsv", train, -1);
    rc |= cli_fixture_write(&f, "glue/SST-2/dev.tsv", "sentence\tlabel\n", -1);
    rc |= cli_fixture_write(&f, "pred.tsv", "index\tprediction\n", -1);
    if (rc == 0) {
        empty_refused(&f, "finetune sst2 --model fasttext --epochs 1", "SST-2/dev.tsv");
        empty_refused(&f, "score sst2 pred.tsv", "SST-2/dev.tsv");
        empty_refused(&f, "compare sst2 --models fasttext", "SST-2/dev.tsv");
        /* A model trained on a dev split with rows, scored on one without. */
        rc = cli_fixture_write(&f, "glue/SST-2/dev.tsv", train, -1);
        int st = -1;
        char *out = cli_fixture_glue(&f, "finetune sst2 --model fasttext --epochs 2 --overwrite", &st);
        CHECK_MSG(st == 0, "finetune on rows: exit %d: %.400s", st, out);
        free(out);
        rc |= cli_fixture_write(&f, "glue/SST-2/dev.tsv", "sentence\tlabel\n", -1);
        if (rc == 0) empty_refused(&f, "eval sst2 --model fasttext", "SST-2/dev.tsv");
        if (rc == 0) empty_refused(&f, "eval sst2 --model fasttext --json", "SST-2/dev.tsv");
    }
    cli_fixture_close(&f);
}
