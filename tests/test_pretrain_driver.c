/* test_pretrain_driver.c — `glue pretrain` end to end on a tiny corpus and a
 * micro BERT (V 28, C 32, one layer), through the binary as a user runs it:
 * the loss falls below what a model blind to context can reach; a run
 * stopped at step k (--stop-at, SIGTERM at an arbitrary moment, SIGKILL as a
 * crash) and resumed gives exactly the per-step losses, accuracies, gradient
 * norms and learning rates of an uninterrupted run; `glue pretrain eval` is
 * deterministic and agrees with the run's own final evaluation; `glue
 * finetune --init RUN_DIR` takes the result (with the vocabulary stored in
 * it); user errors (unknown or bad setting, missing corpus, changed settings
 * on resume, an existing run without --resume, eval of a fine-tuned model
 * without MLM head or of a file that is no checkpoint) give one message and
 * exit code 2 or 1. A long run carried on from its snapshot (`glue pretrain
 * snapshot`, --set init, init_step, rewarm): the snapshot keeps ELECTRA's
 * generator and the step, the continuation starts with both models as kept,
 * on the original schedule, and resumes exactly. */
#include "tests/kill_loop.h"
#include "tests/run_txn_check.h"
#include "tests/test.h"
#include "tests/pretrain_fixture.h"

#include "core/checkpoint.h"
#include "core/common.h"
#include "core/files.h"
#include "core/gemm_bf16.h"
#include "core/half.h"
#include "core/kernels.h"
#include "core/rng.h"
#include "train/run_dir.h"
#include "optim/schedule.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static double mean(const double *x, int lo, int hi) {
    double s = 0;
    for (int i = lo; i < hi; i++) s += x[i];
    return s / (hi - lo);
}

TEST(pretrain_driver_loss_falls_and_eval_agrees) {
    Fixture fx;
    if (!CHECK(fixture_init(&fx))) return;
    char args[512], *out;
    snprintf(args, sizeof args, "--set steps=400 --set checkpoint_every=150 --out %s/run", fx.dir);
    int rc = pretrain(&fx, args, &out);
    CHECK_MSG(rc == 0, "exit %d: %s", rc, out);
    free(out);
    char dir[256];
    snprintf(dir, sizeof dir, "%s/run", fx.dir);
    Log lg;
    CHECK_EQ_INT(read_log(dir, &lg), 400);
    /* From ln 28 = 3.33 to well below the 2.89 of a model blind to context. */
    double first = mean(lg.loss, 0, 10), last = mean(lg.loss, 390, 400);
    CHECK_MSG(first > 3.1 && last < 2.6, "loss %.3f -> %.3f", first, last);
    CHECK_MSG(mean(lg.acc, 390, 400) > 0.25, "accuracy %.3f", mean(lg.acc, 390, 400));
    CHECK_NEAR(lg.lr[19], 5e-3, 1e-9);   /* warm-up peak at step 20, then linear decay */
    CHECK_NEAR(lg.lr[399], 5e-3 * (1.0 - 379.0 / 380.0), 1e-9);
    /* `glue pretrain eval` on the run's model (with the vocabulary stored in
     * it: no --vocab) with the run's shape gives the run's final held-out
     * number, and the same number twice. */
    CHECK(lg.eval_loss > 0 && lg.eval_loss < 2.6);
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "%s pretrain eval --init %s --corpus text:%s/heldout.txt --cache %s/cache "
             "--batch 32 --seq-len 24 --json --threads 1",
             test_glue_bin(), dir, fx.dir, fx.dir);
    double loss[2] = {-1, -2}, acc = -1;
    for (int k = 0; k < 2; k++) {
        int st;
        char *o = test_run(cmd, &st);
        cJSON *j = cJSON_Parse(o);
        const cJSON *l = cJSON_GetObjectItemCaseSensitive(j, "loss"), *a = cJSON_GetObjectItemCaseSensitive(j, "accuracy");
        if (CHECK_MSG(st == 0 && cJSON_IsNumber(l) && cJSON_IsNumber(a), "eval: %s", o)) loss[k] = l->valuedouble, acc = a->valuedouble;
        cJSON_Delete(j);
        free(o);
    }
    CHECK(loss[0] == loss[1]);
    CHECK_NEAR(loss[0], lg.eval_loss, 1e-5);
    /* Accuracy in percent, as everywhere else: the run's summary has the fraction. */
    char sp[300];
    snprintf(sp, sizeof sp, "%s/summary.json", dir);
    cJSON *sj = json_file_read(sp, 1);
    const cJSON *sa = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(sj, "eval"), "accuracy");
    CHECK_MSG(cJSON_IsNumber(sa) && fabs(acc - 100 * sa->valuedouble) < 1e-3, "eval --json accuracy %g vs summary %g",
              acc, cJSON_IsNumber(sa) ? sa->valuedouble : -1);
    cJSON_Delete(sj);
    /* The summary and the weights-only checkpoint are there. */
    snprintf(cmd, sizeof cmd, "test -s %s/summary.json && test -s %s/model.ckpt && test -s %s/config.json", dir,
             dir, dir);
    CHECK(system(cmd) == 0);
    /* Fine-tuning starts from the run directory, with the vocabulary stored
     * in model.ckpt (the default vocabulary would not fit this model). */
    char glue[256], path[300];
    snprintf(glue, sizeof glue, "%s/glue/SST-2", fx.dir);
    snprintf(cmd, sizeof cmd, "mkdir -p %s", glue);
    CHECK(system(cmd) == 0);
    static const char *const SPLITS[] = {"train.tsv", "dev.tsv"};
    for (int k = 0; k < 2; k++) {
        snprintf(path, sizeof path, "%s/%s", glue, SPLITS[k]);
        FILE *f = fopen(path, "w");
        if (!CHECK(f != NULL)) break;
        fprintf(f, "sentence\tlabel\n");
        for (int i = 0; i < 40; i++)
            fprintf(f, "the %s sat on the mat .\t%d\n", i % 2 ? "dog" : "cat", i % 2);
        fclose(f);
    }
    snprintf(cmd, sizeof cmd,
             "GLUE_DATA=%s/glue %s finetune sst2 --init %s --epochs 1 --max-len 24 --threads 1 --out %s/ft "
             "--json 2>&1",
             fx.dir, test_glue_bin(), dir, fx.dir);
    int st;
    char *o = test_run(cmd, &st);
    CHECK_MSG(st == 0 && strstr(o, "\"num_params\""), "finetune --init: exit %d: %s", st, o);
    free(o);
    /* The fine-tuned model has no MLM head: eval says so. */
    snprintf(cmd, sizeof cmd, "%s pretrain eval --init %s/ft/model.ckpt --corpus text:%s/heldout.txt 2>&1",
             test_glue_bin(), fx.dir, fx.dir);
    o = test_run(cmd, &st);
    CHECK_MSG(st == 1 && strstr(o, "no masked-LM head"), "exit %d: %s", st, o);
    free(o);
    fixture_free(&fx);
}

/* Starts a run in the background, waits until its log has `lines` lines,
 * sends `sig`; returns the exit status of the run ("wait" in sh). */
static int run_and_signal(const Fixture *fx, const char *args, const char *dir, int lines, const char *sig) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "exec 2>/dev/null; %s pretrain %s %s --out %s >/dev/null & pid=$!; i=0; "
             "while [ \"$(cat %s/log.jsonl 2>/dev/null | wc -l)\" -lt %d ] && [ $i -lt 600 ]; do "
             "sleep 0.05; i=$((i+1)); done; kill -%s $pid; wait $pid; echo $?",
             test_glue_bin(), fx->common, args, dir, dir, lines, sig);
    int st;
    char *code = test_run(cmd, &st);
    int rc = atoi(code);
    free(code);
    return rc;
}

/* Stopped, SIGTERMed and SIGKILLed runs of `objective` resume to the losses of
 * an uninterrupted run, bit for bit. */
static void resume_is_exact(const char *objective) {
    Fixture fx;
    if (!CHECK(fixture_init(&fx))) return;
    /* A long schedule that nothing here finishes; the data position crosses
     * epochs of the small corpus; held-out evaluations in between must not
     * disturb anything. */
    char run[512];
    snprintf(run, sizeof run,
             "--set steps=100000 --set batch=8 --set checkpoint_every=7 --set eval_every=10 "
             "--set eval_batches=1 %s",
             objective);
    char args[1024], dir[256], *out;
    Log ref, lg;

    /* 1. --stop-at 17 (between checkpoints), then --resume to 30. */
    snprintf(args, sizeof args, "%s --out %s/stopped --stop-at 17", run, fx.dir);
    int rc = pretrain(&fx, args, &out);
    CHECK_MSG(rc == 0 && strstr(out, "stopped at step 17"), "exit %d: %s", rc, out);
    free(out);
    snprintf(args, sizeof args, "%s --out %s/stopped --resume --stop-at 30", run, fx.dir);
    CHECK(pretrain(&fx, args, NULL) == 0);

    /* 2. SIGTERM at whatever step it lands: saved at the step boundary, exit 143. */
    snprintf(dir, sizeof dir, "%s/term", fx.dir);
    rc = run_and_signal(&fx, run, dir, 3, "TERM");
    CHECK_MSG(rc == 143, "exit code %d after SIGTERM", rc);
    int k_term = read_log(dir, &lg);
    CHECK(k_term >= 3);
    snprintf(args, sizeof args, "%s --out %s --resume --stop-at %d", run, dir, k_term + 5);
    CHECK(pretrain(&fx, args, NULL) == 0);

    /* 3. SIGKILL (a crash): the log runs ahead of the last checkpoint; the
     * resumed run drops those lines and computes the steps again. */
    snprintf(dir, sizeof dir, "%s/kill", fx.dir);
    rc = run_and_signal(&fx, run, dir, 10, "KILL");
    int k_kill = read_log(dir, &lg);
    CHECK_MSG(rc == 137 && k_kill >= 10, "exit %d after %d steps", rc, k_kill);
    snprintf(args, sizeof args, "%s --out %s --resume --stop-at %d", run, dir, k_kill + 5);
    CHECK(pretrain(&fx, args, NULL) == 0);

    /* 4. The resume point's weights damaged after they were written (a flipped
     * bit): --resume says so and continues from resume.prev/, the resume
     * point before it (step 14). */
    snprintf(dir, sizeof dir, "%s/damaged", fx.dir);
    snprintf(args, sizeof args, "%s --out %s --stop-at 17", run, dir);
    CHECK(pretrain(&fx, args, NULL) == 0);
    char last_ckpt[300];
    snprintf(last_ckpt, sizeof last_ckpt, "%s/" RUN_RESUME_DIR "/" RUN_LAST_CKPT, dir);
    CHECK(test_flip_byte(last_ckpt, 100, 1) == 0);
    snprintf(args, sizeof args, "%s --out %s --resume --stop-at 30", run, dir);
    rc = pretrain(&fx, args, &out);
    CHECK_MSG(rc == 0 && strstr(out, "checksum mismatch") && strstr(out, "continuing from") &&
              strstr(out, RUN_RESUME_DIR ".prev"), "exit %d: %s", rc, out);
    free(out);

    /* The uninterrupted reference. */
    int last = k_term > k_kill ? k_term : k_kill;
    snprintf(args, sizeof args, "%s --out %s/ref --stop-at %d", run, fx.dir, (last > 25 ? last : 25) + 5);
    CHECK(pretrain(&fx, args, NULL) == 0);
    snprintf(dir, sizeof dir, "%s/ref", fx.dir);
    read_log(dir, &ref);
    static const char *const CASES[] = {"stopped", "term", "kill", "damaged"};
    for (int c = 0; c < 4; c++) {
        snprintf(dir, sizeof dir, "%s/%s", fx.dir, CASES[c]);
        int n = read_log(dir, &lg);
        CHECK_MSG(n == (c == 0 || c == 3 ? 30 : c == 1 ? k_term + 5 : k_kill + 5), "%s: %d log lines", CASES[c], n);
        int same = n <= ref.n;
        for (int i = 0; i < n && same; i++)
            same = lg.loss[i] == ref.loss[i] && lg.acc[i] == ref.acc[i] && lg.norm[i] == ref.norm[i] &&
                   lg.lr[i] == ref.lr[i];
        CHECK_MSG(same, "%s %s: the resumed run's losses differ from the uninterrupted run's", objective, CASES[c]);
    }
    fixture_free(&fx);
}

TEST(pretrain_driver_resume_is_exact) { resume_is_exact(""); }

/* ELECTRA: the generator's weights, its AdamW state and the sample RNG resume too. */
TEST(pretrain_driver_resume_is_exact_electra) {
    resume_is_exact("--set objective=electra --set mask_token_prob=0.85 --set random_token_prob=0");
}

/* Interruption: `glue pretrain` killed with SIGKILL at random moments
 * (checkpoint every step), resumed after each kill, logs the per-step losses
 * of an uninterrupted run and ends with the same model.ckpt
 * (tests/kill_loop.h; the long version: GLUE_KILL_TEST_KILLS=N). */
TEST(pretrain_driver_killed_resumes_bit_identical) {
    Fixture fx;
    if (!CHECK(fixture_init(&fx))) return;
    enum { STEPS = 40 };
    char cmd[4096], ref[256], cut[256];
    snprintf(cmd, sizeof cmd, "%s pretrain %s --set steps=%d --set batch=8 --set checkpoint_every=1 --set eval_every=0",
             test_glue_bin(), fx.common, STEPS);
    KillTest t = {.name = "pretrain", .command = cmd, .killed = "", .dir = fx.dir, .watch = RUN_RESUME_DIR "/" RUN_TRAINER_STATE,
                  .seed = 13};
    kill_test(&t);
    snprintf(ref, sizeof ref, "%s/ref", fx.dir);
    snprintf(cut, sizeof cut, "%s/cut", fx.dir);
    Log a, b;
    int na = read_log(ref, &a), nb = read_log(cut, &b), same = na == STEPS && nb == STEPS;
    for (int i = 0; i < na && same; i++)
        same = a.loss[i] == b.loss[i] && a.acc[i] == b.acc[i] && a.norm[i] == b.norm[i] && a.lr[i] == b.lr[i];
    CHECK_MSG(same, "the per-step log differs from the uninterrupted run's (%d and %d steps)", na, nb);
    fixture_free(&fx);
}

TEST(pretrain_driver_user_errors) {
    Fixture fx;
    if (!CHECK(fixture_init(&fx))) return;
    char args[512], *out;
    snprintf(args, sizeof args, "--set stpes=3 --out %s/a", fx.dir);
    int rc = pretrain(&fx, args, &out);
    CHECK_MSG(rc == 2 && strstr(out, "stpes"), "exit %d: %s", rc, out);
    free(out);
    snprintf(args, sizeof args, "--set steps=0 --out %s/a", fx.dir);
    rc = pretrain(&fx, args, &out);
    CHECK_MSG(rc == 2 && strstr(out, "steps"), "exit %d: %s", rc, out);
    free(out);
    snprintf(args, sizeof args, "--set steps=4 --corpus %s/none.txt --out %s/a", fx.dir, fx.dir);
    rc = pretrain(&fx, args, &out);
    CHECK_MSG(rc == 74 && strstr(out, "none.txt"), "exit %d: %s", rc, out);
    free(out);
    /* A finished run: again without --resume is refused; --resume with other settings too. */
    snprintf(args, sizeof args, "--set steps=4 --out %s/b", fx.dir);
    CHECK(pretrain(&fx, args, NULL) == 0);
    rc = pretrain(&fx, args, &out);
    CHECK_MSG(rc == 2 && strstr(out, "--resume"), "exit %d: %s", rc, out);
    free(out);
    snprintf(args, sizeof args, "--set steps=4 --set mask_prob=0.2 --resume --out %s/b", fx.dir);
    rc = pretrain(&fx, args, &out);
    CHECK_MSG(rc == 2 && strstr(out, "mask_prob"), "exit %d: %s", rc, out);
    free(out);
    /* steps may change on --resume: the schedule's end moves. Cut at step 4 of
     * 8 and resumed with steps=6, steps 1-4 are the 8-step run's and the rates
     * of 5-6 a 6-step run's; an end at or before the run's step is refused. */
    snprintf(args, sizeof args, "--set steps=8 --set warmup=2 --stop-at 4 --out %s/c", fx.dir);
    CHECK(pretrain(&fx, args, NULL) == 0);
    snprintf(args, sizeof args, "--set steps=4 --set warmup=2 --resume --out %s/c", fx.dir);
    rc = pretrain(&fx, args, &out);
    CHECK_MSG(rc == 2 && strstr(out, "at step 4") && strstr(out, "steps=4"), "exit %d: %s", rc, out);
    free(out);
    snprintf(args, sizeof args, "--set steps=6 --set warmup=2 --resume --out %s/c", fx.dir);
    rc = pretrain(&fx, args, &out);
    CHECK_MSG(rc == 0 && strstr(out, "steps 8 -> 6"), "exit %d: %s", rc, out);
    free(out);
    static const char *const LENGTHS[] = {"8", "6"};
    Log cut, full[2];
    for (int k = 0; k < 2; k++) {
        snprintf(args, sizeof args, "--set steps=%s --set warmup=2 --stop-at 6 --out %s/full%s", LENGTHS[k], fx.dir, LENGTHS[k]);
        CHECK(pretrain(&fx, args, NULL) == 0);
        snprintf(args, sizeof args, "%s/full%s", fx.dir, LENGTHS[k]);
        read_log(args, &full[k]);
    }
    snprintf(args, sizeof args, "%s/c", fx.dir);
    int same = read_log(args, &cut) == 6 && full[0].n == 6 && full[1].n == 6;
    for (int i = 0; i < 6 && same; i++)
        same = cut.lr[i] == full[i < 4 ? 0 : 1].lr[i] && (i < 4 ? cut.loss[i] == full[0].loss[i] : 1);
    CHECK_MSG(same && full[0].lr[5] != full[1].lr[5], "the run resumed with steps=6 does not follow the new schedule");
    /* eval on a checkpoint that is not a pretraining model, and on a missing one. */
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s pretrain eval --init %s/vocab.txt --vocab %s/vocab.txt 2>&1", test_glue_bin(),
             fx.dir, fx.dir);
    int st;
    out = test_run(cmd, &st);
    CHECK_MSG(st == 65 && strstr(out, "vocab.txt"), "exit %d: %s", st, out);
    free(out);
    snprintf(cmd, sizeof cmd, "%s pretrain eval 2>&1", test_glue_bin());
    out = test_run(cmd, &st);
    CHECK_MSG(st == 2 && strstr(out, "--init"), "exit %d: %s", st, out);
    free(out);
    fixture_free(&fx);
}

/* glue pretrain snapshot into a folder that holds a run (the run itself)
 * is refused and writes nothing: it replaced the run's model.ckpt with
 * half-precision weights, exit 0. A RUN_DIR that is not there is an I/O
 * error (74, was 1), and so is pretrain screen's, found before any proxy
 * fine-tune of the runs named before it (they were fine-tuned first). */
/* A log that can no longer be written (a full disk; here a file-size limit,
 * `ulimit -f`, with SIGXFSZ ignored so that the write fails with EFBIG): the
 * run stops there, exit 74 naming log.jsonl. It trained on with a log that
 * lacked lines. */
TEST(pretrain_driver_log_write_failure_stops) {
    Fixture fx;
    if (!CHECK(fixture_init(&fx))) return;
    char args[512], *out;
    snprintf(args, sizeof args, "--set steps=3000 --set checkpoint_every=100000 --out %s/full", fx.dir);
    int rc = pretrain_launched(&fx, "trap '' XFSZ; ulimit -f 128;", args, &out);
    CHECK_MSG(rc == 74 && strstr(out, "log.jsonl: cannot write: File too large"), "exit %d: %.800s", rc,
              out ? out : "");
    free(out);
    fixture_free(&fx);
}

TEST(pretrain_snapshot_and_screen_refuse_before_writing) {
    Fixture fx;
    if (!CHECK(fixture_init(&fx))) return;
    char args[512], cmd[1024], path[256], *out;
    snprintf(args, sizeof args, "--set steps=2 --out %s/a", fx.dir);
    CHECK(pretrain(&fx, args, NULL) == 0);
    snprintf(path, sizeof path, "%s/a/model.ckpt", fx.dir);
    size_t before = 0, after = 0;
    free(file_read(path, &before));
    int st;
    snprintf(cmd, sizeof cmd, "%s pretrain snapshot %s/a %s/a 2>&1", test_glue_bin(), fx.dir, fx.dir);
    out = test_run(cmd, &st);
    free(file_read(path, &after));
    snprintf(path, sizeof path, "%s/a/pretrain_config.json", fx.dir);
    CHECK_MSG(st == 2 && strstr(out, "holds a run") && after == before && !file_exists(path),
              "snapshot into its run: exit %d, model.ckpt %zu -> %zu bytes: %s", st, before, after, out);
    free(out);
    snprintf(cmd, sizeof cmd, "%s pretrain snapshot %s/none %s/snap 2>&1", test_glue_bin(), fx.dir, fx.dir);
    out = test_run(cmd, &st);
    snprintf(path, sizeof path, "%s/snap", fx.dir);
    CHECK_MSG(st == 74 && strstr(out, "none") && !file_exists(path), "snapshot of no run: exit %d: %s", st, out);
    free(out);
    snprintf(cmd, sizeof cmd, "GLUE_DATA=%s/glue %s pretrain screen %s/a %s/none --tasks sst2 --results %s/t.json 2>&1",
             fx.dir, test_glue_bin(), fx.dir, fx.dir, fx.dir);
    out = test_run(cmd, &st);
    snprintf(path, sizeof path, "%s/a/screen", fx.dir);
    CHECK_MSG(st == 74 && strstr(out, "none: no such run directory") && !file_exists(path),
              "screen of a missing run: exit %d: %s", st, out);
    free(out);
    fixture_free(&fx);
}

/* SST-2 of the fixture's words: label 1 iff the sentence holds "dog". */
static void write_sst2(const Fixture *fx) {
    static const char *const WORDS[] = {"the", "cat", "sat", "on", "mat", "ran", "a", "big", "red", "house"};
    char path[256];
    snprintf(path, sizeof path, "mkdir -p %s/glue/SST-2", fx->dir);
    if (system(path) != 0) DIE("mkdir failed");
    Rng r;
    rng_seed(&r, 3);
    for (int k = 0; k < 2; k++) {
        snprintf(path, sizeof path, "%s/glue/SST-2/%s", fx->dir, k ? "dev.tsv" : "train.tsv");
        FILE *f = fopen(path, "w");
        if (!f) DIE("cannot write %s", path);
        fprintf(f, "sentence\tlabel\n");
        for (int i = 0; i < (k ? 60 : 200); i++) {
            int y = (int)rng_below(&r, 2), at = (int)rng_below(&r, 5);
            for (int w = 0; w < 5; w++) fprintf(f, "%s%s", w ? " " : "", y && w == at ? "dog" : WORDS[rng_below(&r, 10)]);
            fprintf(f, "\t%d\n", y);
        }
        fclose(f);
    }
}

/* The best dev accuracy a proxy fine-tune wrote, and its epochs setting. */
static double proxy_accuracy(const char *run, int seed, int *epochs) {
    char path[512];
    snprintf(path, sizeof path, "%s/screen/sst2-seed%d/results.json", run, seed);
    cJSON *j = json_file_read(path, 0);
    if (!j) return -1;
    const cJSON *best = cJSON_GetObjectItemCaseSensitive(j, "best");
    double acc = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(best, "dev"), "accuracy")->valuedouble;
    *epochs = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "config"), "epochs")->valueint;
    cJSON_Delete(j);
    return acc;
}

/* `glue pretrain screen`: every proxy fine-tune runs from the run's encoder,
 * the table holds their numbers and means, rows are replaced by name and
 * added for new runs, an unfinished run is refused. */
TEST(pretrain_screen_table) {
    Fixture fx;
    if (!CHECK(fixture_init(&fx))) return;
    write_sst2(&fx);
    char args[512], cmd[2048], path[256], *out;
    snprintf(args, sizeof args, "--set steps=6 --set batch=8 --out %s/mlm", fx.dir);
    CHECK(pretrain(&fx, args, NULL) == 0);
    snprintf(args, sizeof args, "--set steps=6 --set batch=8 --set objective=electra --out %s/el", fx.dir);
    CHECK(pretrain(&fx, args, NULL) == 0);
    snprintf(args, sizeof args, "--set steps=6 --set batch=8 --stop-at 3 --out %s/half", fx.dir);
    CHECK(pretrain(&fx, args, NULL) == 0);
    const char *screen = "GLUE_DATA=%s/glue %s pretrain screen %s/%s --tasks sst2 --seeds 1,2 --results %s/t/screen.json "
                         "--set max_len=24 --threads 1 2>&1";
    snprintf(cmd, sizeof cmd, screen, fx.dir, test_glue_bin(), fx.dir, "mlm", fx.dir);
    int st;
    out = test_run(cmd, &st);
    CHECK_MSG(st == 0, "exit %d: %s", st, out);
    free(out);
    snprintf(cmd, sizeof cmd, screen, fx.dir, test_glue_bin(), fx.dir, "el", fx.dir);
    out = test_run(cmd, &st);
    CHECK_MSG(st == 0, "exit %d: %s", st, out);
    free(out);
    snprintf(cmd, sizeof cmd, screen, fx.dir, test_glue_bin(), fx.dir, "mlm", fx.dir);   /* again: replaced */
    free(test_run(cmd, &st));
    CHECK(st == 0);
    snprintf(cmd, sizeof cmd, screen, fx.dir, test_glue_bin(), fx.dir, "half", fx.dir);
    out = test_run(cmd, &st);
    CHECK_MSG(st == 1 && strstr(out, "not a finished pretraining run"), "exit %d: %s", st, out);
    free(out);

    snprintf(path, sizeof path, "%s/t/screen.json", fx.dir);
    cJSON *j = json_file_read(path, 1);
    const cJSON *runs = cJSON_GetObjectItemCaseSensitive(j, "runs");
    CHECK_EQ_INT(cJSON_GetArraySize(runs), 2);
    static const char *const NAMES[] = {"mlm", "el"}, *const OBJ[] = {"mlm", "electra"};
    for (int i = 0; i < 2 && cJSON_GetArraySize(runs) == 2; i++) {
        const cJSON *row = cJSON_GetArrayItem(runs, i);
        CHECK(strcmp(cJSON_GetObjectItemCaseSensitive(row, "run")->valuestring, NAMES[i]) == 0);
        CHECK(strcmp(cJSON_GetObjectItemCaseSensitive(row, "objective")->valuestring, OBJ[i]) == 0);
        char run[256];
        snprintf(run, sizeof run, "%s/%s", fx.dir, NAMES[i]);
        int e1 = 0, e2 = 0;
        double a1 = proxy_accuracy(run, 1, &e1), a2 = proxy_accuracy(run, 2, &e2);
        CHECK_MSG(a1 >= 0 && a2 >= 0 && e1 == 1 && e2 == 1, "%s: proxy runs %g %g, epochs %d %d", NAMES[i], a1, a2,
                  e1, e2);
        const cJSON *sst = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(row, "tasks"), "sst2");
        const cJSON *seeds = cJSON_GetObjectItemCaseSensitive(sst, "seed_scores");
        CHECK_NEAR(cJSON_GetArrayItem(seeds, 0)->valuedouble, a1, 1e-9);
        CHECK_NEAR(cJSON_GetArrayItem(seeds, 1)->valuedouble, a2, 1e-9);
        CHECK_NEAR(cJSON_GetObjectItemCaseSensitive(sst, "score")->valuedouble, (a1 + a2) / 2, 1e-9);
        CHECK_NEAR(cJSON_GetObjectItemCaseSensitive(row, "proxy_score")->valuedouble, (a1 + a2) / 2, 1e-9);
        CHECK(strstr(cJSON_GetObjectItemCaseSensitive(row, "cpu")->valuestring, "family") != NULL);
    }
    cJSON_Delete(j);
    snprintf(path, sizeof path, "%s/t/screen.md", fx.dir);
    char *text = file_read(path, NULL);
    CHECK_MSG(text && strstr(text, "| mlm | mlm |") && strstr(text, "| el | electra |"), "markdown:\n%s",
              text ? text : "(none)");
    free(text);
    fixture_free(&fx);
}

/* The encoder tensors (bert.embeddings.*, bert.encoder.*) of two checkpoints
 * hold equal values: 1; the count compared in *n. */
static int same_encoder(const char *a_path, const char *b_path, int *n) {
    Checkpoint *a = checkpoint_read(a_path), *b = checkpoint_read(b_path);
    int same = a && b;
    *n = 0;
    for (int i = 0; same && i < a->n_tensors; i++) {
        const CkptTensor *t = &a->tensors[i];
        if (strncmp(t->name, "bert.embeddings.", 16) && strncmp(t->name, "bert.encoder.", 13)) continue;
        const CkptTensor *u = checkpoint_find_tensor(b, t->name);
        same = u && u->numel == t->numel;
        /* equal values (a weight rounded to -0 in half precision may come back +0) */
        for (long k = 0; same && k < t->numel; k++) same = u->data[k] == t->data[k];
        (*n)++;
    }
    checkpoint_free(a);
    checkpoint_free(b);
    return same;
}

/* --set init=DIR starts from a run's weights: with lr 0 one step leaves the
 * encoder exactly as it was in DIR; ELECTRA starts from an MLM run (its
 * replaced-token head fresh); another architecture is refused. */
TEST(pretrain_driver_init_from_weights) {
    Fixture fx;
    if (!CHECK(fixture_init(&fx))) return;
    char args[1024], a[256], b[256], *out;
    snprintf(args, sizeof args, "--set steps=3 --out %s/a", fx.dir);
    CHECK(pretrain(&fx, args, NULL) == 0);
    snprintf(args, sizeof args, "--set steps=1 --set warmup=0 --set lr=0 --set init=%s/a --out %s/b", fx.dir, fx.dir);
    int rc = pretrain(&fx, args, &out);
    CHECK_MSG(rc == 0 && strstr(out, "starting from the weights of"), "exit %d: %s", rc, out);
    free(out);
    snprintf(a, sizeof a, "%s/a/model.ckpt", fx.dir);
    snprintf(b, sizeof b, "%s/b/model.ckpt", fx.dir);
    int n = 0;
    CHECK_MSG(same_encoder(a, b, &n) && n > 4, "the encoder moved or was not loaded (%d tensors)", n);
    /* a fresh run with lr 0 is not the same: the check can fail */
    snprintf(args, sizeof args, "--set steps=1 --set warmup=0 --set lr=0 --set seed=7 --out %s/c", fx.dir);
    CHECK(pretrain(&fx, args, NULL) == 0);
    snprintf(b, sizeof b, "%s/c/model.ckpt", fx.dir);
    CHECK(!same_encoder(a, b, &n));
    /* A half-precision snapshot of run a, and a run continued from it. */
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s pretrain snapshot %s/a %s/snap 2>&1", test_glue_bin(), fx.dir, fx.dir);
    int st;
    out = test_run(cmd, &st);
    CHECK_MSG(st == 0 && strstr(out, "(step 3)"), "snapshot: exit %d: %s", st, out);
    free(out);
    snprintf(args, sizeof args, "--set steps=1 --set warmup=0 --set lr=0 --set init=%s/snap --out %s/g", fx.dir, fx.dir);
    CHECK(pretrain(&fx, args, NULL) == 0);
    snprintf(a, sizeof a, "%s/snap/model.ckpt", fx.dir);
    snprintf(b, sizeof b, "%s/g/model.ckpt", fx.dir);
    CHECK_MSG(same_encoder(a, b, &n) && n > 4, "not continued from the snapshot (%d tensors)", n);
    snprintf(a, sizeof a, "%s/a/model.ckpt", fx.dir);
    CHECK(!same_encoder(a, b, &n));   /* half precision: not the float32 weights */
    snprintf(args, sizeof args, "--set steps=2 --set objective=electra --set init=%s/a/model.ckpt --out %s/d", fx.dir,
             fx.dir);
    rc = pretrain(&fx, args, &out);
    CHECK_MSG(rc == 0 && strstr(out, "holds no ELECTRA generator") && strstr(out, "the generator starts fresh"),
              "ELECTRA from an MLM run: exit %d: %s", rc, out);
    free(out);
    char wide[256];   /* the micro model, two layers */
    snprintf(wide, sizeof wide, "%s/micro2.json", fx.dir);
    FILE *f = fopen(wide, "w");
    if (f) {
        fprintf(f, "{\"vocab_size\": 28, \"hidden_size\": 32, \"num_hidden_layers\": 2, \"num_attention_heads\": 2,"
                   " \"intermediate_size\": 64, \"max_position_embeddings\": 64}");
        fclose(f);
    }
    snprintf(args, sizeof args, "--set steps=2 --set model=%s --set init=%s/a --out %s/e", wide, fx.dir, fx.dir);
    rc = pretrain(&fx, args, &out);
    CHECK_MSG(rc != 0 && strstr(out, "another architecture"), "exit %d: %s", rc, out);
    free(out);
    snprintf(args, sizeof args, "--set steps=2 --set init=%s/nothing --out %s/f", fx.dir, fx.dir);
    rc = pretrain(&fx, args, &out);
    CHECK_MSG(rc == 74 && strstr(out, "nothing"), "exit %d: %s", rc, out);
    free(out);
    fixture_free(&fx);
}

/* ---- a long run carried on from its snapshot (issue #17) ---- */

/* The ELECTRA recipe of the fixture runs below: a schedule of 40 steps
 * (warm-up 20, lr 5e-3: the fixture's), 8 sequences a step. */
#define SNAP_RUN "--set objective=electra --set mask_token_prob=0.85 --set random_token_prob=0 --set steps=40 --set batch=8"

/* The micro model with `layers` layers, written to dir/micro<layers>.json. */
static void write_micro_layers(const Fixture *fx, int layers, char *path, size_t cap) {
    snprintf(path, cap, "%s/micro%d.json", fx->dir, layers);
    FILE *f = fopen(path, "w");
    if (!f) return;
    fprintf(f, "{\"vocab_size\": 28, \"hidden_size\": 32, \"num_hidden_layers\": %d, \"num_attention_heads\": 2,"
               " \"intermediate_size\": 64, \"max_position_embeddings\": 64}", layers);
    fclose(f);
}

/* Every tensor of layer `from` in a equals the same tensor of layer `to` in
 * b, and there are some: the number compared, or -1 on a difference. */
static int same_layer(const Checkpoint *a, int from, const Checkpoint *b, int to) {
    char pa[64], pb[64], name[256];
    snprintf(pa, sizeof pa, "bert.encoder.layer.%d.", from);
    snprintf(pb, sizeof pb, "bert.encoder.layer.%d.", to);
    int n = 0;
    for (int i = 0; a && b && i < a->n_tensors; i++) {
        const CkptTensor *t = &a->tensors[i];
        if (strncmp(t->name, pa, strlen(pa)) != 0) continue;
        snprintf(name, sizeof name, "%s%s", pb, t->name + strlen(pa));
        const CkptTensor *u = checkpoint_find_tensor(b, name);
        if (!u || u->numel != t->numel || memcmp(u->data, t->data, sizeof(float) * (size_t)t->numel) != 0) return -1;
        n++;
    }
    return n;
}

/* --set init_stack=1 grows a shallower run into a deeper model (progressive
 * stacking): with lr 0, layer l of the four is exactly layer l mod 2 of the
 * two-layer run, the embeddings its embeddings; an ELECTRA snapshot's generator
 * comes along at its own depth (generator_layers). Refused with one message
 * each: init_stack without init, a checkpoint as deep as the model or
 * deeper, a stacked generator left at the model's depth. */
TEST(pretrain_driver_init_stack_grows_layers) {
    Fixture fx;
    if (!CHECK(fixture_init(&fx))) return;
    char args[2048], two[256], four[256], a[300], b[300], cmd[1024], *out;
    write_micro_layers(&fx, 2, two, sizeof two);
    write_micro_layers(&fx, 4, four, sizeof four);
    snprintf(args, sizeof args, "--set steps=3 --set model=%s --out %s/a", two, fx.dir);
    CHECK(pretrain(&fx, args, NULL) == 0);
    snprintf(args, sizeof args, "--set steps=1 --set warmup=0 --set lr=0 --set model=%s --set init=%s/a --set init_stack=1 "
             "--out %s/s", four, fx.dir, fx.dir);
    int rc = pretrain(&fx, args, &out);
    CHECK_MSG(rc == 0 && strstr(out, "its layers stacked"), "exit %d: %s", rc, out);
    free(out);
    snprintf(a, sizeof a, "%s/a/model.ckpt", fx.dir);
    snprintf(b, sizeof b, "%s/s/model.ckpt", fx.dir);
    Checkpoint *ca = checkpoint_read(a), *cb = checkpoint_read(b);
    if (CHECK(ca && cb)) {
        for (int l = 0; l < 4; l++)
            CHECK_MSG(same_layer(ca, l % 2, cb, l) > 4, "layer %d is not the stored layer %d", l, l % 2);
        CHECK(same_layer(ca, 0, cb, 3) < 0);   /* the layers differ: the check can tell them apart */
        const CkptTensor *t = checkpoint_find_tensor(ca, "bert.embeddings.word_embeddings.weight"),
                         *u = checkpoint_find_tensor(cb, "bert.embeddings.word_embeddings.weight");
        CHECK(t && u && t->numel == u->numel && memcmp(t->data, u->data, sizeof(float) * (size_t)t->numel) == 0);
        CHECK(checkpoint_find_tensor(cb, "bert.encoder.layer.4.attention.output.dense.weight") == NULL);
    }
    checkpoint_free(ca);
    checkpoint_free(cb);

    /* ELECTRA: the snapshot's one-layer generator, kept at one layer. */
    snprintf(args, sizeof args, SNAP_RUN " --stop-at 2 --out %s/e", fx.dir);
    CHECK(pretrain(&fx, args, NULL) == 0);
    snprintf(cmd, sizeof cmd, "%s pretrain snapshot %s/e %s/snap >/dev/null 2>&1", test_glue_bin(), fx.dir, fx.dir);
    CHECK(system(cmd) == 0);
    snprintf(args, sizeof args, SNAP_RUN " --set model=%s --set init=%s/snap --set init_stack=1 --set generator_layers=1 "
             "--set init_step=2 --stop-at 3 --out %s/es", four, fx.dir, fx.dir);
    rc = pretrain(&fx, args, &out);
    CHECK_MSG(rc == 0 && strstr(out, "(encoder and generator), its layers stacked at step 2"), "exit %d: %s", rc, out);
    free(out);

    char set[3][600];
    snprintf(set[0], sizeof set[0], "--set init_stack=1");
    snprintf(set[1], sizeof set[1], "--set init_stack=1 --set init=%s/a", fx.dir);   /* two layers into one */
    snprintf(set[2], sizeof set[2], "--set init_stack=1 --set init=%s/snap --set model=%s --set objective=electra", fx.dir,
             four);
    static const char *const SAYS[] = {"init_stack without init", "another architecture", "generator_layers"};
    static const int EXIT[] = {2, 1, 1};
    for (int k = 0; k < 3; k++) {
        snprintf(args, sizeof args, "--set steps=2 %s --out %s/r%d", set[k], fx.dir, k);
        rc = pretrain(&fx, args, &out);
        CHECK_MSG(rc == EXIT[k] && strstr(out, SAYS[k]), "case %d: exit %d: %s", k, rc, out);
        free(out);
        snprintf(cmd, sizeof cmd, "test -e %s/r%d/model.ckpt", fx.dir, k);
        CHECK_MSG(system(cmd) != 0, "case %d wrote a model", k);
    }
    fixture_free(&fx);
}

/* Every tensor of `a` whose name starts with prefix is in b with a's shape
 * and a's values: b's rounded to half precision (round = 1; a weight rounded
 * to -0 may come back +0, equal as a value) or b's exactly. 1 when so; the
 * count compared in *n. */
static int same_tensors(const Checkpoint *a, const Checkpoint *b, const char *prefix, int round, int *n) {
    int same = a && b;
    *n = 0;
    for (int i = 0; same && i < a->n_tensors; i++) {
        const CkptTensor *t = &a->tensors[i];
        if (strncmp(t->name, prefix, strlen(prefix)) != 0) continue;
        const CkptTensor *u = checkpoint_find_tensor(b, t->name);
        same = u && u->ndim == t->ndim && u->numel == t->numel;
        for (int d = 0; same && d < t->ndim; d++) same = u->shape[d] == t->shape[d];
        for (long k = 0; same && k < t->numel; k++)
            same = t->data[k] == (round ? half_to_float(half_from_float(u->data[k])) : u->data[k]);
        if (!same) fprintf(stderr, "  tensor %s differs\n", t->name);
        (*n)++;
    }
    return same;
}

/* Tensors of c named prefix... but not skip... (NULL: none skipped). */
static int count_tensors(const Checkpoint *c, const char *prefix, const char *skip) {
    int n = 0;
    for (int i = 0; c && i < c->n_tensors; i++)
        n += strncmp(c->tensors[i].name, prefix, strlen(prefix)) == 0 &&
             !(skip && strncmp(c->tensors[i].name, skip, strlen(skip)) == 0);
    return n;
}

static Checkpoint *read_ckpt(const char *dir, const char *file) {
    char path[300];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    return checkpoint_read(path);
}

/* `glue pretrain snapshot` of an ELECTRA run keeps, in half precision, the
 * discriminator and the generator's own tensors (not its optimizer state)
 * with the step; a run started from it (--set init) has both models exactly
 * as the snapshot holds them; `glue finetune --init` still reads it as an
 * encoder; a run whose generator has another shape is refused with one
 * message naming the file and what differs. */
TEST(pretrain_driver_electra_snapshot_keeps_generator) {
    Fixture fx;
    if (!CHECK(fixture_init(&fx))) return;
    write_sst2(&fx);
    char args[1024], cmd[2048], dir[256], snap[256], want[512], *out;
    snprintf(args, sizeof args, SNAP_RUN " --stop-at 12 --out %s/a", fx.dir);
    CHECK(pretrain(&fx, args, NULL) == 0);
    snprintf(snap, sizeof snap, "%s/snap", fx.dir);
    snprintf(cmd, sizeof cmd, "%s pretrain snapshot %s/a %s 2>&1", test_glue_bin(), fx.dir, snap);
    int st;
    out = test_run(cmd, &st);
    snprintf(want, sizeof want, "--set init=%s --set init_step=12 --set rewarm=200", snap);
    CHECK_MSG(st == 0 && strstr(out, "(step 12)") && strstr(out, "generator") && strstr(out, want),
              "snapshot: exit %d: %s", st, out);
    free(out);

    snprintf(dir, sizeof dir, "%s/a", fx.dir);
    Checkpoint *s = read_ckpt(snap, "model.ckpt"), *last = read_ckpt(dir, RUN_RESUME_DIR "/" RUN_LAST_CKPT);
    if (!CHECK(s && last)) goto done;
    const cJSON *step = cJSON_GetObjectItemCaseSensitive(s->config, "step");
    const cJSON *gen = cJSON_GetObjectItemCaseSensitive(s->config, "generator");
    CHECK_MSG(cJSON_IsNumber(step) && step->valuedouble == 12, "the snapshot's step");
    CHECK_MSG(cJSON_IsObject(gen) &&
              cJSON_GetObjectItemCaseSensitive(gen, "hidden_size")->valueint == 16,   /* 0.25 x 32, at least 16 */
              "the snapshot's generator record");
    /* Every tensor is the run's rounded to half precision; every weight of
     * the generator is there, no optimizer state. */
    int n_gen = 0, n_all = 0;
    CHECK_MSG(same_tensors(s, last, "generator.", 1, &n_gen) && n_gen > 4,
              "the snapshot's generator is not the run's in half precision (%d tensors)", n_gen);
    CHECK_EQ_INT(n_gen, count_tensors(last, "generator.", "generator.optim."));
    CHECK_MSG(same_tensors(s, last, "", 1, &n_all), "the snapshot's tensors are not the run's in half precision");
    /* the discriminator's: all of the resume point's weights but the generator's tensors */
    CHECK_EQ_INT(n_all - n_gen, count_tensors(last, "", "optim.") - count_tensors(last, "generator.", NULL));
    CHECK_EQ_INT(count_tensors(s, "optim.", NULL) + count_tensors(s, "generator.optim.", NULL), 0);
    checkpoint_free(last);

    /* Carried on from it with lr 0 for one step: both models are the snapshot's. */
    snprintf(args, sizeof args, SNAP_RUN " --set lr=0 --set init=%s --set init_step=12 --stop-at 13 --out %s/b",
             snap, fx.dir);
    int rc = pretrain(&fx, args, &out);
    CHECK_MSG(rc == 0 && strstr(out, "(encoder and generator) at step 12"), "exit %d: %s", rc, out);
    free(out);
    snprintf(dir, sizeof dir, "%s/b", fx.dir);
    Checkpoint *b = read_ckpt(dir, RUN_RESUME_DIR "/" RUN_LAST_CKPT);
    int n = 0;
    CHECK_MSG(same_tensors(s, b, "", 0, &n) && n == n_all, "the continued run's models are not the snapshot's");
    checkpoint_free(b);

    /* Fine-tuning reads the snapshot as an encoder (the generator ignored). */
    snprintf(cmd, sizeof cmd,
             "GLUE_DATA=%s/glue %s finetune sst2 --init %s --epochs 1 --max-len 24 --threads 1 --out %s/ft --json 2>&1",
             fx.dir, test_glue_bin(), snap, fx.dir);
    out = test_run(cmd, &st);
    CHECK_MSG(st == 0 && strstr(out, "\"num_params\""), "finetune --init snapshot: exit %d: %s", st, out);
    free(out);

    /* Another generator than the snapshot's: shallower (the snapshot of a
     * run with a two-layer generator: its first layer's tensors alone would
     * load silently), then wider. */
    snprintf(args, sizeof args, SNAP_RUN " --set generator_layers=2 --stop-at 2 --out %s/deep", fx.dir);
    CHECK(pretrain(&fx, args, NULL) == 0);
    snprintf(cmd, sizeof cmd, "%s pretrain snapshot %s/deep %s/snap2 >/dev/null 2>&1", test_glue_bin(), fx.dir, fx.dir);
    CHECK(system(cmd) == 0);
    static const char *const FROM[] = {"snap2", "snap"}, *const SET[] = {"", "--set generator_size=1"};
    static const char *const DIFF[] = {"(hidden 16, layers 2, heads 2, FFN 64) is not this run's (hidden 16, layers 1",
                                       "is not this run's (hidden 32"};
    for (int k = 0; k < 2; k++) {
        snprintf(args, sizeof args, SNAP_RUN " %s --set init=%s/%s --set init_step=12 --out %s/m%d", SET[k], fx.dir,
                 FROM[k], fx.dir, k);
        rc = pretrain(&fx, args, &out);
        char name[64];
        snprintf(name, sizeof name, "%s/model.ckpt: its ELECTRA generator", FROM[k]);
        CHECK_MSG(rc == 1 && strstr(out, name) && strstr(out, DIFF[k]) && strstr(out, "generator_size"),
                  "case %d: exit %d: %s", k, rc, out);
        free(out);
    }
done:
    checkpoint_free(s);
    fixture_free(&fx);
}

/* A resume point of an older glue (one file, <out>/last.ckpt; here a copy of
 * a run's resume point's weights, which hold what that file held for a
 * snapshot): --resume refuses it with one message saying what to do, a new
 * run does not train over it, and `glue pretrain snapshot` still takes its
 * weights. */
TEST(pretrain_driver_old_resume_point_refused_snapshot_kept) {
    Fixture fx;
    if (!CHECK(fixture_init(&fx))) return;
    char args[1024], cmd[2048], *out;
    snprintf(args, sizeof args, SNAP_RUN " --stop-at 3 --out %s/a", fx.dir);
    CHECK(pretrain(&fx, args, NULL) == 0);
    snprintf(cmd, sizeof cmd, "mkdir -p %s/old && cp %s/a/" RUN_RESUME_DIR "/" RUN_LAST_CKPT " %s/old/last.ckpt && "
             "cp %s/a/config.json %s/a/log.jsonl %s/old/", fx.dir, fx.dir, fx.dir, fx.dir, fx.dir, fx.dir);
    CHECK(system(cmd) == 0);
    snprintf(args, sizeof args, SNAP_RUN " --out %s/old --resume", fx.dir);
    int rc = pretrain(&fx, args, &out);
    CHECK_MSG(rc == 2 && strstr(out, "older glue") && strstr(out, "snapshot") && !strstr(out, "from the beginning"),
              "exit %d: %s", rc, out);
    free(out);
    snprintf(args, sizeof args, SNAP_RUN " --out %s/old", fx.dir);
    rc = pretrain(&fx, args, &out);
    CHECK_MSG(rc == 2 && strstr(out, "holds an interrupted run"), "exit %d: %s", rc, out);
    free(out);
    snprintf(cmd, sizeof cmd, "%s pretrain snapshot %s/old %s/snap 2>&1", test_glue_bin(), fx.dir, fx.dir);
    int st;
    out = test_run(cmd, &st);
    CHECK_MSG(st == 0 && strstr(out, "(step 3)") && strstr(out, "generator"), "snapshot: exit %d: %s", st, out);
    free(out);
    fixture_free(&fx);
}

/* init_step: the run carried on from a snapshot at step 12 logs steps 13 ..
 * 40 (the original schedule's end), at the original schedule's rates times
 * the re-warm-up ramp, then at exactly the original run's rates; it stops
 * and resumes exactly; and it reads other batches than a run from the same
 * weights at step 0 would (another data order). */
TEST(pretrain_driver_init_step_continues_schedule) {
    Fixture fx;
    if (!CHECK(fixture_init(&fx))) return;
    char args[1024], cmd[1024], dir[256], *out;
    snprintf(args, sizeof args, SNAP_RUN " --stop-at 12 --out %s/a", fx.dir);
    CHECK(pretrain(&fx, args, NULL) == 0);
    snprintf(cmd, sizeof cmd, "%s pretrain snapshot %s/a %s/snap >/dev/null 2>&1", test_glue_bin(), fx.dir, fx.dir);
    CHECK(system(cmd) == 0);
    snprintf(args, sizeof args, SNAP_RUN " --out %s/a --resume", fx.dir);   /* the original, to its end */
    CHECK(pretrain(&fx, args, NULL) == 0);
    enum { K = 12, REWARM = 5, STEPS = 40 };
    const char *cont = SNAP_RUN " --set init=%s/snap --set init_step=12 --set rewarm=5 --out %s/%s %s";
    snprintf(args, sizeof args, cont, fx.dir, fx.dir, "b", "");
    int rc = pretrain(&fx, args, &out);
    CHECK_MSG(rc == 0, "exit %d: %s", rc, out);
    free(out);
    Log orig, lg, part;
    snprintf(dir, sizeof dir, "%s/a", fx.dir);
    CHECK_EQ_INT(read_log(dir, &orig), STEPS);
    snprintf(dir, sizeof dir, "%s/b", fx.dir);
    CHECK_EQ_INT(read_log_from(dir, K + 1, &lg), STEPS - K);   /* steps 13 .. 40 */
    Schedule sched = {.kind = SCHEDULE_LINEAR, .lr = 5e-3f, .warmup = 20, .total = STEPS};
    for (int i = 0; i < lg.n; i++) {
        long step = K + i;   /* 0-based, as the schedule counts */
        double ramp = i + 1 < REWARM ? (double)(i + 1) / REWARM : 1.0;
        CHECK_NEAR(lg.lr[i], schedule_lr(&sched, step) * ramp, 1e-9);
        if (i + 1 >= REWARM) CHECK_MSG(lg.lr[i] == orig.lr[step], "step %ld: lr %g, the original's %g", step + 1,
                                       lg.lr[i], orig.lr[step]);
    }
    CHECK_NEAR(lg.lr[0], 5e-3 * 13 / 20 / 5, 1e-9);   /* the first: warm-up 13/20, ramp 1/5 */
    /* Stopped at 20 and resumed: the same steps, bit for bit. */
    snprintf(args, sizeof args, cont, fx.dir, fx.dir, "c", "--stop-at 20");
    CHECK(pretrain(&fx, args, NULL) == 0);
    snprintf(args, sizeof args, cont, fx.dir, fx.dir, "c", "--resume");
    CHECK(pretrain(&fx, args, NULL) == 0);
    snprintf(dir, sizeof dir, "%s/c", fx.dir);
    int same = read_log_from(dir, K + 1, &part) == lg.n;
    for (int i = 0; i < lg.n && same; i++)
        same = part.loss[i] == lg.loss[i] && part.lr[i] == lg.lr[i] && part.norm[i] == lg.norm[i];
    CHECK_MSG(same, "the resumed continuation differs from the uninterrupted one");
    /* The data order: with lr 0 a step's loss depends on its batch alone
     * (weights, masking and dropout draws are the same), so the first step
     * from the snapshot at init_step 0 and at init_step 12 read other
     * batches, and at init_step 12 twice the same. */
    double first[3];
    static const char *const AT[] = {"0", "12", "12"};
    for (int k = 0; k < 3; k++) {
        char name[16];
        snprintf(name, sizeof name, "z%d", k);
        snprintf(args, sizeof args, SNAP_RUN " --set lr=0 --set init=%s/snap --set init_step=%s --out %s/%s --stop-at %d",
                 fx.dir, AT[k], fx.dir, name, atoi(AT[k]) + 1);
        CHECK(pretrain(&fx, args, NULL) == 0);
        snprintf(dir, sizeof dir, "%s/%s", fx.dir, name);
        first[k] = read_log_from(dir, atoi(AT[k]) + 1, &part) == 1 ? part.loss[0] : -k;
    }
    CHECK_MSG(first[1] == first[2] && first[0] != first[1], "first losses %.9g (init_step 0), %.9g, %.9g (12)",
              first[0], first[1], first[2]);
    fixture_free(&fx);
}

/* init_step without init, and at or past the schedule's end: one message, exit 2. */
TEST(pretrain_driver_init_step_errors) {
    Fixture fx;
    if (!CHECK(fixture_init(&fx))) return;
    char args[512], *out;
    snprintf(args, sizeof args, "--set steps=40 --set init_step=12 --out %s/a", fx.dir);
    int rc = pretrain(&fx, args, &out);
    CHECK_MSG(rc == 2 && strstr(out, "init_step 12 without init") && strstr(out, "--set init=DIR"), "exit %d: %s", rc,
              out);
    free(out);
    for (int at = 40; at <= 41; at++) {
        snprintf(args, sizeof args, "--set steps=40 --set init=%s/nothing --set init_step=%d --out %s/a", fx.dir, at,
                 fx.dir);
        rc = pretrain(&fx, args, &out);
        CHECK_MSG(rc == 2 && strstr(out, "is not below steps 40"), "exit %d: %s", rc, out);
        free(out);
    }
    fixture_free(&fx);
}

/* summary.json's "precision" of a finished run ("" when unreadable). */
static void summary_precision(const char *dir, char *out, size_t cap) {
    char path[300];
    snprintf(path, sizeof path, "%s/summary.json", dir);
    cJSON *j = json_file_read(path, 1);
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(j, "precision");
    snprintf(out, cap, "%s", cJSON_IsString(p) ? p->valuestring : "");
    cJSON_Delete(j);
}

/* precision=bf16: with a bf16 product (AMX tiles where the CPU has them, else
 * vdpbf16ps), the run trains with bf16 products (its losses are not fp32's,
 * stay within bf16 rounding of them at the start and fall as far), and
 * summary.json says bf16; a run resumed with
 * the other precision is accepted; without it (a level below avx512bf16)
 * the run says so once and gives exactly the fp32 run's losses. */
TEST(pretrain_driver_bf16_precision) {
    if (!gemm_bf16_available()) {
        test_skip("this CPU has no AVX512-BF16");
        return;
    }
    Fixture fx;
    if (!CHECK(fixture_init(&fx))) return;
    char args[512], dir[256], prec[16], *out;
    Log f32, b16, low;
    const char *runs[3] = {"fp32", "bf16", "low"};
    /* The bf16 run on the CPU's own bf16 product: AMX tiles where it has them. */
    const char *bf16_level = kernels_cpu_level() >= KERN_AMX ? "GLUE_KERNELS=amx" : "GLUE_KERNELS=avx512bf16";
    const char *launch[3] = {"GLUE_KERNELS=avx512bf16", bf16_level, "GLUE_KERNELS=avx512"};
    for (int i = 0; i < 3; i++) {
        snprintf(args, sizeof args, "--set steps=150 --set checkpoint_every=50 %s --out %s/%s",
                 i ? "--set precision=bf16" : "", fx.dir, runs[i]);
        int rc = pretrain_launched(&fx, launch[i], args, &out);
        CHECK_MSG(rc == 0, "%s: exit %d: %s", runs[i], rc, out);
        int said = strstr(out, "precision=bf16 trains with fp32 products") != NULL;
        CHECK_MSG(said == (i == 2), "%s: %s", runs[i], out);
        free(out);
        snprintf(dir, sizeof dir, "%s/%s", fx.dir, runs[i]);
        CHECK_EQ_INT(read_log(dir, i == 0 ? &f32 : i == 1 ? &b16 : &low), 150);
        summary_precision(dir, prec, sizeof prec);
        CHECK_MSG(strcmp(prec, i == 1 ? "bf16" : "fp32") == 0, "%s: summary precision \"%s\"", runs[i], prec);
    }
    int differ = 0, same_low = 1;
    for (int i = 0; i < 150; i++) {
        differ |= b16.loss[i] != f32.loss[i];
        same_low &= low.loss[i] == f32.loss[i] && low.norm[i] == f32.norm[i];
    }
    CHECK_MSG(differ, "the bf16 run's losses equal the fp32 run's: the bf16 products did not run");
    CHECK_MSG(same_low, "without the bf16 dot product the run is not the fp32 run");
    /* First step: the same weights and batch, the loss within bf16 rounding. */
    CHECK_MSG(fabs(b16.loss[0] - f32.loss[0]) < 1e-2 * f32.loss[0], "step 1: %.5f vs %.5f", b16.loss[0], f32.loss[0]);
    double a = mean(f32.loss, 140, 150), b = mean(b16.loss, 140, 150);
    CHECK_MSG(fabs(a - b) < 0.05 * a && b < mean(b16.loss, 0, 10) - 0.3, "last 10 steps: fp32 %.4f, bf16 %.4f", a, b);
    /* Resumed with the other precision: accepted (a free setting). */
    snprintf(args, sizeof args, "--set steps=160 --out %s/bf16 --resume", fx.dir);
    int rc = pretrain_launched(&fx, launch[1], args, &out);
    CHECK_MSG(rc == 0, "resume in fp32: exit %d: %s", rc, out);
    free(out);
    snprintf(dir, sizeof dir, "%s/bf16", fx.dir);
    summary_precision(dir, prec, sizeof prec);
    CHECK_MSG(strcmp(prec, "fp32") == 0, "resumed in fp32: summary precision \"%s\"", prec);
    fixture_free(&fx);
}

/* `glue pretrain`'s run directory is a transaction, as fine-tuning's
 * (train/run_txn.h, tests/run_txn_check.h): locked (a second run refused
 * naming the owner's pid, nothing written), a finished or interrupted run
 * refused before anything is written, a failing --overwrite keeps the old
 * run, an --overwrite killed after any of its writes leaves the old run or
 * the whole new one. */
static const char *const PRETRAIN_RUN_FILES[] = {"config.json", "model.ckpt", "summary.json", "log.jsonl"};

static TxnCase pretrain_txn_case(const Fixture *fx, char *a, char *b, char *fail, char *dir, size_t cap) {
    snprintf(a, cap, "%s pretrain %s --set steps=6 --set checkpoint_every=2 --set eval_every=0", test_glue_bin(),
             fx->common);
    snprintf(b, cap, "%.*s --set warmup=7", (int)cap - 200, a);
    snprintf(fail, cap, "%.*s --corpus %s/none.txt", (int)cap - 200, b, fx->dir);
    snprintf(dir, cap, "%s/txn", fx->dir);
    return (TxnCase){.name = "pretrain", .run_a = a, .run_b = b, .fail_b = fail, .dir = dir,
                     .files = PRETRAIN_RUN_FILES, .nfiles = 4, .b_marker = "\"warmup\":\t7,"};
}

TEST(pretrain_driver_run_dir_is_a_transaction) {
    Fixture fx;
    if (!CHECK(fixture_init(&fx))) return;
    char a[4096], b[4096], fail[4096], dir[256];
    TxnCase c = pretrain_txn_case(&fx, a, b, fail, dir, sizeof a);
    txn_check_lock(&c);
    txn_check_refusals(&c);
    txn_check_interrupted(&c);
    txn_check_overwrite_killed(&c, 6);
    fixture_free(&fx);
}
