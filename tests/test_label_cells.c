/* test_label_cells.c — a label cell is its label without the whitespace
 * around it (" pos " is "pos", not a third class), and a cell that lists
 * labels of a single-label task ("pos,neg" beside rows "pos" and "neg") is an
 * error naming the file and line, strict or not; a label that merely holds a
 * comma ("Smith, John") is a label. Through the CLI for a user's TSV, CSV and
 * JSONL files and a GLUE task's file, and the rule itself in task.h. */
#include "tasks/task.h"
#include "tests/cli_fixture.h"
#include "tests/test.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The "labels" of DIR/dataset.json in f, as one string "a|b|c". */
static void labels_of(const CliFixture *f, const char *dir, char *out, size_t cap) {
    char path[600], cmd[700];
    cli_fixture_path(f, dir, path, sizeof path);
    snprintf(cmd, sizeof cmd, "cat '%s/dataset.json'", path);
    char *text = test_run(cmd, NULL);
    cJSON *j = cJSON_Parse(text);
    out[0] = '\0';
    const cJSON *l;
    cJSON_ArrayForEach(l, cJSON_GetObjectItem(j, "labels"))
        snprintf(out + strlen(out), cap - strlen(out), "%s%s", out[0] ? "|" : "", l->valuestring);
    cJSON_Delete(j);
    free(text);
}

TEST(label_cells_trimmed) {
    CliFixture f;
    if (cli_fixture_open(&f) != 0) return;
    int rc = cli_fixture_write(&f, "sp.tsv", "text\tlabel\ngood fine day\t pos \nbad sad day\tneg  \n"
                                             "fine good hour\tpos\nsad bad hour\t  neg\n", -1);
    rc |= cli_fixture_write(&f, "sp.csv", "text,label\ngood fine day,\" pos\"\nbad sad day,neg \nfine hour,pos\n"
                                          "sad hour,neg\n", -1);
    rc |= cli_fixture_write(&f, "sp.jsonl", "{\"text\": \"good\", \"label\": \"pos \"}\n"
                                            "{\"text\": \"bad\", \"label\": \" neg\"}\n", -1);
    rc |= cli_fixture_write(&f, "reg.tsv", "text\tlabel\none two\t 1.5 \nthree four\t2.5\nfive six\t3\n", -1);
    if (rc == 0) {
        static const char *const FILES[] = {"sp.tsv", "sp.csv", "sp.jsonl"};
        for (int k = 0; k < 3; k++) {
            char args[512], labels[256];
            snprintf(args, sizeof args, "finetune --train %s --dev %s --model fasttext --set bucket=1000 --epochs 1 "
                     "--out r%d", FILES[k], FILES[k], k);
            int st = -1;
            char *out = cli_fixture_glue(&f, args, &st);
            snprintf(args, sizeof args, "r%d", k);
            labels_of(&f, args, labels, sizeof labels);
            CHECK_MSG(st == 0 && strcmp(labels, "neg|pos") == 0 && !strstr(out, "skipped"),
                      "%s: exit %d, labels '%s': %.400s", FILES[k], st, labels, out);
            free(out);
        }
        int st = -1;
        char *out = cli_fixture_glue(&f, "finetune --train reg.tsv --dev reg.tsv --regression --model fasttext "
                                         "--set bucket=1000 --epochs 1 --strict --out r3", &st);
        CHECK_MSG(st == 0, "regression ' 1.5 ': exit %d: %.400s", st, out);
        free(out);
        /* A GLUE file: SST-2's " 1 " is class 1 (accuracy 100 against these predictions). */
        rc = cli_fixture_write(&f, "glue/SST-2/dev.tsv", "sentence\tlabel\ngood \t 1 \nbad \t0 \n", -1);
        rc |= cli_fixture_write(&f, "pred.tsv", "index\tprediction\n0\t 1\n1\t0\n", -1);
        out = rc ? NULL : cli_fixture_glue(&f, "score sst2 pred.tsv", &st);
        CHECK_MSG(out && st == 0 && strstr(out, "accuracy 100.00"), "sst2: exit %d: %s", st, out ? out : "");
        free(out);
    }
    cli_fixture_close(&f);
}

TEST(label_cells_list_in_single_label_task) {
    CliFixture f;
    if (cli_fixture_open(&f) != 0) return;
    static const char *const GOOD = "text\tlabel\ngood day\tpos\nbad day\tneg\nfine day\tpos\nsad day\tneg\n";
    int rc = cli_fixture_write(&f, "good.tsv", GOOD, -1);
    rc |= cli_fixture_write(&f, "train_list.tsv", "text\tlabel\ngood day\tpos\nbad day\tneg\nboth\tpos,neg\n", -1);
    rc |= cli_fixture_write(&f, "dev_list.tsv", "text\tlabel\ngood day\tpos\nboth\tneg , pos\n", -1);
    rc |= cli_fixture_write(&f, "list.csv", "text,label\ngood,pos\nbad,neg\n\"both, really\",\"pos,neg\"\n", -1);
    rc |= cli_fixture_write(&f, "list.jsonl", "{\"text\": \"good\", \"label\": \"pos\"}\n"
                                              "{\"text\": \"bad\", \"label\": \"neg\"}\n"
                                              "{\"text\": \"both\", \"label\": \"neg,pos\"}\n", -1);
    rc |= cli_fixture_write(&f, "names.tsv", "text\tlabel\na\tSmith, John\nb\tDoe, Jane\nc\tSmith, John\n", -1);
    rc |= cli_fixture_write(&f, "glue/SST-2/dev.tsv", "sentence\tlabel\ngood \t1\nboth \t0,1\n", -1);
    rc |= cli_fixture_write(&f, "pred.tsv", "index\tprediction\n0\t1\n1\t0\n", -1);
    if (rc) { cli_fixture_close(&f); return; }
    static const struct { const char *args, *where, *label; } LISTS[] = {
        {"finetune --train train_list.tsv --dev good.tsv --out a", "train_list.tsv:4", "'pos,neg'"},
        {"finetune --train good.tsv --dev dev_list.tsv --out b", "dev_list.tsv:3", "'neg , pos'"},
        {"finetune --train list.csv --dev list.csv --out c", "list.csv:4", "'pos,neg'"},
        {"finetune --train list.jsonl --dev list.jsonl --out d", "list.jsonl:3", "'neg,pos'"},
        {"score sst2 pred.tsv", "SST-2/dev.tsv:3", "'0,1'"},
    };
    for (size_t k = 0; k < sizeof LISTS / sizeof LISTS[0]; k++) {
        char args[512];
        snprintf(args, sizeof args, "%s%s", LISTS[k].args,
                 strncmp(LISTS[k].args, "finetune", 8) == 0 ? " --model fasttext --set bucket=1000 --epochs 1" : "");
        int st = -1;
        char *out = cli_fixture_glue(&f, args, &st);
        /* a list in a user's train file may mean multi-label data (the message says how);
         * in its dev file (train single-label) or in a GLUE task it may not */
        int own = strncmp(LISTS[k].args, "finetune", 8) == 0 && !strstr(LISTS[k].where, "dev_list");
        CHECK_MSG(st == 65 && strstr(out, LISTS[k].where) && strstr(out, LISTS[k].label) &&
                      strstr(out, "is single-label") && !strstr(out, "--multi-label") == !own,
                  "glue %s: exit %d: %.500s", args, st, out);
        free(out);
    }
    char labels[256];
    int st = -1;
    char *out = cli_fixture_glue(&f, "finetune --train names.tsv --dev names.tsv --model fasttext --set bucket=1000 "
                                     "--epochs 1 --out e", &st);
    labels_of(&f, "e", labels, sizeof labels);
    CHECK_MSG(st == 0 && strcmp(labels, "Doe, Jane|Smith, John") == 0, "names: exit %d, labels '%s': %.400s", st,
              labels, out);
    free(out);
    cli_fixture_close(&f);
}

TEST(label_cells_list_rule) {
    const char *const labels[] = {"pos", "neg", "Smith, John", "mixed"};
    CHECK(task_label_list_of("pos,neg", labels, 4));
    CHECK(task_label_list_of(" neg , pos ", labels, 4));
    CHECK(task_label_list_of("pos,neg,mixed", labels, 4));
    CHECK(!task_label_list_of("pos", labels, 4));             /* one label */
    CHECK(!task_label_list_of("Smith, John", labels, 4));     /* a label with a comma */
    CHECK(!task_label_list_of("pos,other", labels, 4));       /* not all of them labels */
    CHECK(!task_label_list_of("pos,", labels, 4));            /* an empty part */
    CHECK(!task_label_list_of("Smith, John,pos", labels, 4)); /* parts "Smith", " John": not labels */
    const Task *sst2 = task_find("sst2");
    if (CHECK(sst2)) {
        CHECK(task_label_index(sst2, " 1 ") == 1 && task_label_index(sst2, "0\r") == 0);
        CHECK(task_label_index(sst2, "1 0") < 0);
    }
}
