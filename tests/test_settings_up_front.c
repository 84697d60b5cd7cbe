/* test_settings_up_front.c — `glue compare` and `glue protocol` check every
 * run's settings before the first one trains (train/trainer.h
 * trainer_check_config): a bad value for the last model, task or --change
 * fails at once with one message naming the model, the task (and the row)
 * and the setting, exit 2, and nothing is written — where before the runs
 * ahead of it trained first. So are a bad --change name and an unreadable
 * --results. Real GLUE files (RTE, MRPC). */
#include "core/common.h"
#include "core/files.h"
#include "tests/scratch.h"
#include "tests/test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    const char *args;       /* after `glue` */
    const char *says[3];    /* what the message must name */
    int status;             /* the exit status */
} UpFront;

/* Runs each case in a fresh runs/results root: the exit status (2: usage), the one message, nothing written. */
static void check_up_front(const UpFront *cases, int n) {
    char data[1024];
    snprintf(data, sizeof data, "%s/data/glue", test_shared_dir());
    if (access(data, F_OK) != 0) { test_skip("no ../shared/data/glue"); return; }
    char dir[SCRATCH_PATH_MAX];
    if (!CHECK(scratch_dir("upfront", dir, sizeof dir))) return;
    for (int i = 0; i < n; i++) {
        char cmd[4096], runs[256], results[256];
        snprintf(runs, sizeof runs, "%s/runs%d", dir, i);
        snprintf(results, sizeof results, "%s/results%d", dir, i);
        snprintf(cmd, sizeof cmd, "GLUE_DATA=%s GLUE_RUNS=%s GLUE_RESULTS=%s %s %s --threads 1 2>&1", data, runs,
                 results, test_glue_bin(), cases[i].args);
        int st = -1;
        double t0 = now_seconds();
        char *out = test_run(cmd, &st);
        double secs = now_seconds() - t0;
        int named = 1, errors = 0;
        for (int k = 0; k < 3 && cases[i].says[k]; k++) named &= strstr(out, cases[i].says[k]) != NULL;
        for (const char *p = out; (p = strstr(p, "glue: error:")); p++) errors++;
        CHECK_MSG(st == cases[i].status && named && errors == 1, "glue %s: exit %d: %s",
                  cases[i].args, st, out);
        CHECK_MSG(!file_exists(runs) && !file_exists(results), "glue %s: wrote %s before refusing (%.1f s)",
                  cases[i].args, file_exists(runs) ? runs : results, secs);
        free(out);
    }
    char rm[256];
    snprintf(rm, sizeof rm, "rm -rf '%s'", dir);
    CHECK(system(rm) == 0);
}

TEST(compare_checks_every_run_up_front) {
    static const UpFront CASES[] = {
        /* the last model on the last task: out of range */
        {"compare rte --with mrpc --models fasttext,textcnn --set mrpc.filters=0",
         {"compare: textcnn on MRPC", "filters", NULL}, 2},
        /* not a number, on the second task */
        {"compare rte --with mrpc --models fasttext,textcnn --set mrpc.epochs=abc",
         {"compare: fasttext on MRPC", "epochs", NULL}, 2},
        /* a rule across keys (ops->check_config) */
        {"compare rte --models fasttext,textcnn --set windows=[3,99]", {"compare: textcnn on RTE", "window", NULL}, 2},
        /* a model/task combination: a siamese pair encoding scores regression */
        {"compare rte --with mrpc --models fasttext,bert --set pair_encoding=siamese",
         {"compare: bert on RTE", "pair_encoding", NULL}, 2},
    };
    check_up_front(CASES, (int)(sizeof CASES / sizeof CASES[0]));
}

TEST(protocol_checks_every_row_up_front) {
    static const UpFront CASES[] = {
        {"protocol --model fasttext --tasks rte,mrpc --seeds 1 --change ok:epochs=2 --change bad:mrpc.dim=0",
         {"protocol: row bad: fasttext on MRPC", "dim", NULL}, 2},
        {"protocol --model fasttext --tasks rte,mrpc --seeds 1 --change ok:epochs=2 --change bad:mrpc.dimm=5",
         {"protocol: row bad: fasttext on MRPC", "dimm", NULL}, 2},
        {"protocol --model fasttext --tasks rte,mrpc --seeds 1 --change ok:epochs=2 --change bad:loss=nope",
         {"protocol: row bad: fasttext on RTE", "loss", NULL}, 2},
        /* a row named .. trained into <root>/../rte-seed1, outside --out */
        {"protocol --model fasttext --tasks rte --seeds 1 --change ..:epochs=2", {"bad name '..'", NULL}, 2},
        /* a --results that cannot be read (here a folder) is refused before the
         * fine-tunes: they trained first, then the table could not be written */
        {"protocol --model fasttext --tasks rte --seeds 1 --results .", {"cannot read .", NULL}, 74},
    };
    check_up_front(CASES, (int)(sizeof CASES / sizeof CASES[0]));
}
