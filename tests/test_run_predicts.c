/* test_run_predicts.c — every run predicts by itself: for EVERY model in the
 * registry (a model added later is covered without editing this file), a run
 * trained on a user's dataset answers `glue predict --run DIR TEXT` and
 * `glue eval --run DIR` without --model, refuses a --model that contradicts
 * it, and a missing run's hint names a command that exists.
 *
 * The commands run in a re-executed test binary (RUN_CHILD_ENV), so models
 * only the tests register (testbow) are covered too. */
#include "cli/commands.h"
#include "core/common.h"
#include "models/model.h"
#include "tests/cli_fixture.h"
#include "tests/test.h"

#include <cjson/cJSON.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define RUN_CHILD_ENV "GLUE_TEST_RUN_PREDICTS_CHILD"

/* Child mode: `glue_tests finetune|eval|predict ARGS` runs the command. */
__attribute__((constructor)) static void run_predicts_child(int argc, char **argv) {
    if (!getenv(RUN_CHILD_ENV) || argc < 2) return;
    CommandFn fn = strcmp(argv[1], "finetune") == 0 ? cmd_finetune
                   : strcmp(argv[1], "eval") == 0   ? cmd_eval
                   : strcmp(argv[1], "predict") == 0 ? cmd_predict
                                                     : NULL;
    exit(fn ? exit_code_resolve(fn(argc - 1, argv + 1)) : 99);   /* as main() does */
}

/* Settings that keep a model's one-epoch run small and quick; a model not
 * listed trains with its defaults. */
static const char *quick_settings(const char *model, char *buf, size_t cap) {
    char repo[PATH_MAX];
    if (!getcwd(repo, sizeof repo)) repo[0] = '\0';
    if (strcmp(model, "bert") == 0)   /* the shipped encoder: BERT needs a vocabulary */
        snprintf(buf, cap, "--init '%s/models/bert-tiny-wiki' --max-len 32 --batch 16", repo);
    else if (strcmp(model, "fasttext") == 0)
        snprintf(buf, cap, "--set bucket=10000 --set dim=16");
    else
        buf[0] = '\0';
    return buf;
}

/* Runs `glue_tests ARGS` as glue in the fixture's folder; output (stdout and
 * stderr together, or stdout only) and status. Caller frees. */
static char *run_glue(const CliFixture *f, const char *args, int with_stderr, int *status) {
    char self[PATH_MAX], cmd[8192];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    self[n > 0 ? n : 0] = '\0';
    snprintf(cmd, sizeof cmd,
             "cd '%s' && " RUN_CHILD_ENV "=1 GLUE_DATA=%s/glue GLUE_RUNS=%s/runs GLUE_RESULTS=%s/results OMP_NUM_THREADS=1 "
             "'%s' %s %s", f->dir, f->dir, f->dir, f->dir, self, args, with_stderr ? "2>&1" : "2>/dev/null");
    return test_run(cmd, status);
}

/* The probabilities of a `predict --json` line: 1 when they are those of both
 * classes and sum to 1. */
static int probabilities_ok(const char *json) {
    cJSON *o = cJSON_Parse(json);
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(o, "probabilities");
    double sum = 0;
    int n = 0;
    for (const cJSON *v = p ? p->child : NULL; v; v = v->next, n++) sum += cJSON_IsNumber(v) ? v->valuedouble : -9;
    cJSON_Delete(o);
    return n == 2 && fabs(sum - 1) < 1e-4;
}

static void run_predicts_one(const CliFixture *f, const ModelOps *ops, const ModelOps *other) {
    char args[4096], quick[2048];
    int st;
    snprintf(args, sizeof args, "finetune --train days.tsv --dev days.tsv --model %s --out run-%s --epochs 1 --threads 1 %s",
             ops->name, ops->name, quick_settings(ops->name, quick, sizeof quick));
    char *out = run_glue(f, args, 1, &st);
    CHECK_MSG(st == 0, "%s: finetune exit %d: %s", ops->name, st, out);
    free(out);

    snprintf(args, sizeof args, "predict --run run-%s --json 'the sunny day was warm'", ops->name);
    out = run_glue(f, args, 0, &st);
    CHECK_MSG(st == 0 && probabilities_ok(out), "%s: predict --run without --model: exit %d: %s", ops->name, st, out);
    free(out);

    snprintf(args, sizeof args, "eval --run run-%s --json", ops->name);
    out = run_glue(f, args, 0, &st);
    CHECK_MSG(st == 0 && strstr(out, "\"accuracy\""), "%s: eval --run without --model: exit %d: %s", ops->name, st, out);
    free(out);

    /* The run's own name agrees; another model's contradicts it. */
    snprintf(args, sizeof args, "predict --run run-%s --model %s 'a day'", ops->name, ops->name);
    out = run_glue(f, args, 1, &st);
    CHECK_MSG(st == 0, "%s: predict --model of the run's own kind: exit %d: %s", ops->name, st, out);
    free(out);
    snprintf(args, sizeof args, "eval --run run-%s --model %s", ops->name, other->name);
    out = run_glue(f, args, 1, &st);
    CHECK_MSG(st == EXIT_USAGE && strstr(out, "contradicts") && strstr(out, ops->name),
              "%s: eval --model %s: exit %d: %s", ops->name, other->name, st, out);
    free(out);
}

TEST(run_predicts_every_model_without_model_option) {
    CliFixture f;
    if (cli_fixture_open(&f) != 0 || cli_fixture_two_class(&f, "days.tsv", 60) != 0) return;
    CHECK(model_count() >= 4);
    for (int i = 0; i < model_count(); i++) run_predicts_one(&f, model_at(i), model_at((i + 1) % model_count()));
    cli_fixture_close(&f);
}

/* A fixture with `run`, the test model trained one epoch on a two-class
 * dataset of its own. 0, or -1 (the fixture closed) when that fails. */
static int run_predicts_trained(CliFixture *f) {
    if (cli_fixture_open(f) != 0) return -1;
    int st = -1;
    char *out = cli_fixture_two_class(f, "train.tsv", 20) != 0 ? NULL
                : run_glue(f, "finetune --train train.tsv --dev train.tsv --model testbow --out run --epochs 1", 1, &st);
    CHECK_MSG(st == 0, "finetune: %s", out ? out : "(no dataset)");
    free(out);
    if (st != 0) cli_fixture_close(f);
    return st == 0 ? 0 : -1;
}

/* A run trained on a user's dataset that has no checkpoint (yet): the hint
 * trains it from its files, never `glue finetune NAME` (no such task). */
TEST(run_predicts_hint_names_a_command_that_exists) {
    CliFixture f;
    if (run_predicts_trained(&f) != 0) return;
    int st;
    char path[4200];
    cli_fixture_path(&f, "run/model.ckpt", path, sizeof path);
    CHECK(unlink(path) == 0);
    char *out = run_glue(&f, "predict --run run 'a day'", 1, &st);
    CHECK_MSG(st == EXIT_IO && strstr(out, "glue finetune --train FILE --dev FILE") && !strstr(out, "finetune train"),
              "exit %d: %s", st, out);
    free(out);
    cli_fixture_close(&f);
}

/* An empty stdin is nothing to predict: no output line (JSON: an empty list),
 * exit 0, as `glue translate` does (it used to crash). */
TEST(run_predicts_empty_stdin) {
    CliFixture f;
    if (run_predicts_trained(&f) != 0) return;
    int st;
    char *out = run_glue(&f, "predict --run run < /dev/null", 1, &st);
    CHECK_MSG(st == 0 && out[0] == '\0', "exit %d: %s", st, out);
    free(out);
    out = run_glue(&f, "predict --run run --json < /dev/null", 1, &st);
    CHECK_MSG(st == 0 && strcmp(out, "{\"predictions\":[]}\n") == 0, "exit %d: %s", st, out);
    free(out);
    cli_fixture_close(&f);
}

/* --run naming nothing, or a folder that is not a run: one message that says
 * which (both were "no task named"), exit 74 (a missing file). */
TEST(run_predicts_not_a_run) {
    CliFixture f;
    if (cli_fixture_open(&f) != 0) return;
    int st;
    char *out = run_glue(&f, "eval --run no-such-run", 1, &st);
    CHECK_MSG(st == EXIT_IO && strstr(out, "no-such-run: no such run"), "exit %d: %s", st, out);
    free(out);
    out = run_glue(&f, "predict --run no-such-run 'a day'", 1, &st);
    CHECK_MSG(st == EXIT_IO && strstr(out, "no-such-run: no such run"), "exit %d: %s", st, out);
    free(out);
    char dir[4200];
    cli_fixture_path(&f, "empty", dir, sizeof dir);
    CHECK(mkdir(dir, 0755) == 0);
    out = run_glue(&f, "eval --run empty", 1, &st);
    CHECK_MSG(st == EXIT_IO && strstr(out, "empty says no task"), "exit %d: %s", st, out);
    free(out);
    cli_fixture_close(&f);
}

/* A registry task's run (SST-2 here) says its task too: no TASK needed. */
TEST(run_predicts_registry_task_from_the_run) {
    CliFixture f;
    if (cli_fixture_open(&f) != 0) return;
    const char *rows = "sentence\tlabel\na warm and sunny film \t1\na cold and dull film \t0\n"
                       "sunny and warm \t1\ndull and cold \t0\n";
    CHECK(cli_fixture_write(&f, "glue/SST-2/train.tsv", rows, -1) == 0);
    CHECK(cli_fixture_write(&f, "glue/SST-2/dev.tsv", rows, -1) == 0);
    int st;
    char *out = run_glue(&f, "finetune sst2 --model testbow --out run --epochs 1", 1, &st);
    CHECK_MSG(st == 0, "finetune: %s", out);
    free(out);
    out = run_glue(&f, "predict --run run --json 'a sunny film'", 0, &st);
    CHECK_MSG(st == 0 && probabilities_ok(out) && strstr(out, "\"positive\""), "predict: exit %d: %s", st, out);
    free(out);
    out = run_glue(&f, "predict SST-2 --run run 'a sunny film'", 0, &st);
    CHECK_MSG(st == 0 && (strncmp(out, "positive", 8) == 0 || strncmp(out, "negative", 8) == 0), "exit %d: %s", st, out);
    free(out);
    out = run_glue(&f, "eval --run run --json", 0, &st);
    CHECK_MSG(st == 0 && strstr(out, "\"sst2\""), "eval: exit %d: %s", st, out);
    free(out);
    out = run_glue(&f, "eval mrpc --run run", 1, &st);
    CHECK_MSG(st == EXIT_USAGE && strstr(out, "trained on the task 'sst2'"), "eval mrpc: exit %d: %s", st, out);
    free(out);
    /* Another task named before the text: refused as eval refuses it (it said "give one text" of one text);
     * a single word that is a task's name, alone, is a text. */
    out = run_glue(&f, "predict cola --run run 'a sunny film'", 1, &st);
    CHECK_MSG(st == EXIT_USAGE && strstr(out, "trained on the task 'sst2', not 'cola'"), "predict cola: exit %d: %s",
              st, out);
    free(out);
    out = run_glue(&f, "predict --run run cola", 0, &st);
    CHECK_MSG(st == 0 && (strncmp(out, "positive", 8) == 0 || strncmp(out, "negative", 8) == 0), "exit %d: %s", st, out);
    free(out);
    cli_fixture_close(&f);
}

/* --run the folder of a --seeds run (seeds.json beside seed-<s>/): refused,
 * naming a seed's run to give instead, where it said "no trained bert model"
 * (of fastText runs) with the advice to train one. */
TEST(run_predicts_seeds_folder_names_a_seed) {
    CliFixture f;
    if (cli_fixture_open(&f) != 0) return;
    int st = -1;
    char *out = cli_fixture_two_class(&f, "train.tsv", 20) != 0 ? NULL
                : run_glue(&f, "finetune --train train.tsv --dev train.tsv --model testbow --out many --epochs 1 "
                               "--seeds 2,1", 1, &st);
    CHECK_MSG(st == 0, "finetune --seeds: %s", out ? out : "(no dataset)");
    free(out);
    static const char *const CMDS[] = {"eval --run many", "predict --run many 'a day'"};
    for (int i = 0; i < 2 && st == 0; i++) {
        int rc = -1;
        out = run_glue(&f, CMDS[i], 1, &rc);
        CHECK_MSG(rc == 2 && strstr(out, "many holds the runs of 2 seeds") && strstr(out, "--run many/seed-1"),
                  "%s: exit %d: %s", CMDS[i], rc, out);
        free(out);
    }
    cli_fixture_close(&f);
}
