/* test_conflicting_flags.c — a command line that says two things about one
 * setting is refused, naming both, before anything is written: every
 * shorthand option with a --set of its key (finetune --epochs --lr --batch
 * --max-len --init; compare and protocol --init; pretrain --corpus), an
 * option given twice, an lr or batch beside --search (its grid sets them). A key --set twice is not (the later wins, in the order
 * written), nor a key set for one task (TASK.key) beside the plain key. */
#include "models/run_config.h"
#include "tests/capture.h"
#include "tests/cli_fixture.h"
#include "tests/test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *args;          /* after "glue" */
    const char *says[2];       /* both settings, as given */
} ConflictCase;

TEST(conflicting_flags_refused_before_writing) {
    CliFixture f;
    if (cli_fixture_open(&f) != 0) return;
    if (cli_fixture_two_class(&f, "tr.tsv", 12) != 0) { cli_fixture_close(&f); return; }
#define OWN "finetune --train tr.tsv --dev tr.tsv --out out --model "
    static const ConflictCase CASES[] = {
        {OWN "fasttext --epochs 3 --set epochs=5", {"--epochs 3", "--set epochs=5"}},
        {OWN "fasttext --set epochs=5 --epochs 3", {"--epochs 3", "--set epochs=5"}},
        {OWN "fasttext --lr 0.5 --set lr=0.1", {"--lr 0.5", "--set lr=0.1"}},
        {OWN "fasttext --batch 8 --set batch=16", {"--batch 8", "--set batch=16"}},
        {OWN "textcnn --max-len 20 --set max_len=30", {"--max-len 20", "--set max_len=30"}},
        {OWN "bert --init none --set init=models/x", {"--init none", "--set init=models/x"}},
        {OWN "bert --lr 1e-4 --set stsb.lr=2e-4 --set lr=3e-4", {"--lr 1e-4", "--set lr=3e-4"}},
        {OWN "fasttext --epochs 3 --epochs 5", {"option --epochs given more than once", "--epochs"}},
        {OWN "fasttext --epochs=3 --epochs 5", {"option --epochs given more than once", "--epochs"}},
        /* --search sets lr and batch from its grid: these were silently not used */
        {OWN "textcnn --search --lrs 1 --lr 2", {"--lr 2", "--search"}},
        {OWN "textcnn --search --lrs 1 --set batch=7", {"--set batch=7", "--search"}},
        {"compare sst2 --init a --set init=b", {"--init a", "--set init=b"}},
        {"protocol --init a --set init=b --out out", {"--init a", "--set init=b"}},
        {"pretrain --corpus a.txt --set corpus=[\\\"b.txt\\\"] --out out", {"--corpus a.txt", "--set corpus="}},
    };
#undef OWN
    for (size_t k = 0; k < sizeof CASES / sizeof CASES[0]; k++) {
        int st = -1;
        char *out = cli_fixture_glue(&f, CASES[k].args, &st);
        CHECK_MSG(st == 2 && strstr(out, CASES[k].says[0]) && strstr(out, CASES[k].says[1]) &&
                      (strstr(out, "both set") || strstr(out, "more than once")),
                  "glue %s: exit %d: %.400s", CASES[k].args, st, out);
        CHECK_MSG(!cli_fixture_exists(&f, "out") && !cli_fixture_exists(&f, "runs"), "glue %s wrote files",
                  CASES[k].args);
        free(out);
    }
    cli_fixture_close(&f);
}

TEST(conflicting_flags_task_key_is_not_a_conflict) {
    static const char *const LAYERED[] = {"stsb.epochs=2", "epochs=3", "rte.epochs=4", "epochs=5"};
    static const char *const FROM[] = {"--set", "--epochs", "--set", "--set"};
    CHECK(run_config_conflicts(LAYERED, NULL, 4) == 0);   /* all --set: the later wins */
    CHECK(run_config_conflicts(LAYERED, FROM, 3) == 0);   /* --epochs beside stsb.epochs and rte.epochs */
    StderrCapture c;
    stderr_capture_begin(&c);
    int rc = run_config_conflicts(LAYERED, FROM, 4);
    char *err = stderr_capture_end(&c);
    CHECK_MSG(rc == -1 && strstr(err, "--epochs 3 and --set epochs=5 both set epochs"), "%s", err);
    free(err);
}
