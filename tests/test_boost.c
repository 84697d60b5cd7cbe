/* test_boost.c — both forms of boosting:
 *   stacked boosting's SAMME weights (experiments/boost.h) round by round
 *   against scikit-learn's AdaBoostClassifier(algorithm="SAMME") with a
 *   decision stump as the fixed base learner (tests/ref/samme_ref.py): the
 *   sample weights each round is fit with, its error and alpha, and the
 *   alpha-weighted vote; the two-class case (AdaBoost.M1) and the stops by
 *   hand; `glue boost` end to end (its rounds' alphas from their errors, the
 *   first round's error from its predictions, eval of the boost run) and its
 *   refusals;
 *   brightmart's label-error reweighting (train/head.h boost=label_error):
 *   the class weights from dev accuracies by hand, and a run's recorded
 *   weights from its own dev confusion matrix;
 *   and the head's per-example weights against the rows' losses alone. */
#include "core/common.h"
#include "experiments/boost.h"
#include "models/ensemble/ensemble.h"
#include "tests/capture.h"
#include "tests/cli_fixture.h"
#include "tests/gradcheck.h"
#include "tests/kill_loop.h"
#include "tests/test.h"
#include "tests/torchref.h"
#include "train/head.h"
#include "train/run_dir.h"

#include <cjson/cJSON.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { SN = 48, SK = 3, SR = 6 };

/* A 3-class fixture no stump separates: class by the first feature's third,
 * every fifth row's label moved on by the second feature. */
static void samme_fixture(float *x, float *y) {
    for (int i = 0; i < SN; i++) {
        x[2 * i] = (float)((i * 37) % SN) / SN;
        x[2 * i + 1] = (float)((i * 11) % 17) / 17;
        int c = x[2 * i] < 1.0f / 3 ? 0 : x[2 * i] < 2.0f / 3 ? 1 : 2;
        if (i % 5 == 0) c = (c + 1 + (x[2 * i + 1] > 0.5f)) % SK;
        y[i] = (float)c;
    }
}

TEST(boost_samme_weights_match_scikit_learn) {
    float x[SN * 2], y[SN], preds[SR * SN], weights[SR * SN], errors[SR], alphas[SR], final[SN], rounds[1];
    samme_fixture(x, y);
    RefTensor in[2] = {{"x", x, SN * 2}, {"y", y, SN}};
    RefTensor out[6] = {{"preds", preds, SR * SN}, {"weights", weights, SR * SN}, {"errors", errors, SR},
                        {"alphas", alphas, SR},    {"final", final, SN},          {"rounds", rounds, 1}};
    char args[64];
    snprintf(args, sizeof args, "%d %d %d", SN, SK, SR);
    int rc = torchref_run("samme_ref.py", args, in, 2, out, 6);
    if (rc == 0) test_skip("scikit-learn is not installed");
    if (rc != 1) return;
    int R = (int)rounds[0];
    CHECK_MSG(R >= 3, "scikit-learn kept %d rounds: the fixture is too easy", R);
    double w[SN], alpha[SR];
    int gold[SN], pred[SN];
    static float onehot[SR][SN * SK];
    const float *outs[SR];
    for (int i = 0; i < SN; i++) w[i] = 1.0 / SN, gold[i] = (int)y[i];
    for (int k = 0; k < R; k++) {
        double worst = 0;
        for (int i = 0; i < SN; i++) worst = fmax(worst, fabs(w[i] - weights[k * SN + i]) / weights[k * SN + i]);
        CHECK_MSG(worst < 1e-5, "round %d: sample weights %.3g (relative) from scikit-learn's", k + 1, worst);
        for (int i = 0; i < SN; i++) {
            pred[i] = (int)preds[k * SN + i];
            for (int c = 0; c < SK; c++) onehot[k][i * SK + c] = c == pred[i];
        }
        outs[k] = onehot[k];
        double err;
        int st = boost_samme_step(w, pred, gold, SN, SK, &err, &alpha[k]);
        CHECK_MSG(st == BOOST_GO_ON, "round %d: status %d", k + 1, st);
        CHECK_MSG(fabs(err - errors[k]) < 1e-6 && fabs(alpha[k] - alphas[k]) < 1e-5 * fmax(1, fabs(alphas[k])),
                  "round %d: error %.7f alpha %.7f; scikit-learn %.7f %.7f", k + 1, err, alpha[k], errors[k], alphas[k]);
    }
    float vote[SN * SK];
    ensemble_combine(ENSEMBLE_VOTE, 0, outs, alpha, R, SN, SK, vote);
    int same = 0;
    for (int i = 0; i < SN; i++) {
        int best = 0;
        for (int c = 1; c < SK; c++)
            if (vote[i * SK + c] > vote[i * SK + best]) best = c;
        same += best == (int)final[i];
    }
    CHECK_MSG(same == SN, "the alpha-weighted vote agrees with scikit-learn's predict on %d of %d rows", same, SN);
}

/* Two classes (AdaBoost.M1): one wrong row of four, err 1/4, alpha log 3,
 * its weight x3 then all renormalised; a perfect round and a coin by hand. */
TEST(boost_samme_two_classes_by_hand) {
    double w[4] = {0.25, 0.25, 0.25, 0.25}, err, alpha;
    int gold[4] = {0, 1, 1, 0}, pred[4] = {0, 1, 0, 0};
    CHECK_EQ_INT(boost_samme_step(w, pred, gold, 4, 2, &err, &alpha), BOOST_GO_ON);
    CHECK_NEAR(err, 0.25, 1e-15);
    CHECK_NEAR(alpha, log(3.0), 1e-15);
    CHECK_NEAR(w[2], 0.5, 1e-15);
    CHECK_NEAR(w[0], 1.0 / 6, 1e-15);
    double v[4] = {0.25, 0.25, 0.25, 0.25};
    CHECK_EQ_INT(boost_samme_step(v, gold, gold, 4, 2, &err, &alpha), BOOST_PERFECT);
    CHECK(err == 0 && alpha == 1 && v[0] == 0.25);
    int coin[4] = {1, 0, 1, 0};
    CHECK_EQ_INT(boost_samme_step(v, coin, gold, 4, 2, &err, &alpha), BOOST_CHANCE);
    CHECK(err == 0.5 && alpha == 0 && v[1] == 0.25);
    int unlabelled[4] = {-1, 1, 1, 0};   /* a row without a label counts for nothing */
    CHECK_EQ_INT(boost_samme_step(v, pred, unlabelled, 4, 2, &err, &alpha), BOOST_GO_ON);
    CHECK_NEAR(err, 1.0 / 3, 1e-15);
}

/* Classes 0..3 of 9 dev rows: class 0 right 3 of 4, class 1 right 1 of 2,
 * class 2 right 3 of 3, class 3 absent: min(1.5, 1 / (acc + 0.001)), 1. */
TEST(boost_label_error_weights_by_hand) {
    static const int gold[9] = {0, 0, 0, 0, 1, 1, 2, 2, 2}, said[9] = {0, 0, 0, 2, 1, 3, 2, 2, 2};
    Example ex[9];
    float probs[9 * 4];
    for (int i = 0; i < 9; i++) {
        ex[i] = (Example){.label = gold[i]};
        for (int k = 0; k < 4; k++) probs[i * 4 + k] = k == said[i] ? 0.7f : 0.1f;
    }
    Dataset d = {.ex = ex, .n = 9};
    Head h;
    head_init(&h, 4, 0, 1.0f);
    head_label_error_update(&h, &d, probs);
    double want[4] = {1 / (0.75 + 0.001), 1.5, 1 / 1.001, 1};
    for (int k = 0; k < 4; k++) CHECK_MSG(fabs(h.class_weight[k] - want[k]) < 1e-6, "class %d: %.7f, by hand %.7f", k,
                                          h.class_weight[k], want[k]);
    head_free(&h);
}

/* Example weights e: the loss is sum e_i L_i over the labelled rows' count,
 * L_i a row's loss alone, and so is the gradient; weights of 1 change nothing. */
TEST(boost_head_example_weights_sum_rows) {
    enum { N = 6, K = 3 };
    Example ex[N];
    static const int labels[N] = {0, 2, -1, 1, 1, 0};
    float e[N] = {0.5f, 2, 7, 0, 3, 1.5f}, ones[N] = {1, 1, 1, 1, 1, 1};
    for (int i = 0; i < N; i++) ex[i] = (Example){.label = labels[i]};
    Dataset d = {.ex = ex, .n = N};
    float logits[N * K], dl[N * K], one[K];
    gradcheck_fill(logits, N * K, -2, 2, 7);
    int rows[N] = {3, 0, 5, 2, 1, 4};   /* the head reads d->ex[rows[i]] and e[rows[i]] */
    float perm[N * K];
    for (int i = 0; i < N; i++) memcpy(perm + i * K, logits + rows[i] * K, sizeof one);
    Head h, plain;
    head_init(&h, K, 0, 1.0f);
    head_init(&plain, K, 0, 1.0f);
    CHECK(head_example_weights(&h, e) == 0);
    float loss = head_loss(&h, &d, rows, N, perm, dl);
    double want = 0;
    int counted = 0;
    for (int i = 0; i < N; i++) {
        if (labels[rows[i]] < 0) continue;
        counted++;
        float li = head_loss(&plain, &d, &rows[i], 1, perm + i * K, one);
        want += e[rows[i]] * li;
        for (int k = 0; k < K; k++) {
            float g = e[rows[i]] * one[k] / 5;   /* 5 labelled rows */
            CHECK_MSG(fabs(dl[i * K + k] - g) < 1e-6, "row %d class %d: gradient %g, by hand %g", i, k, dl[i * K + k], g);
        }
    }
    CHECK_EQ_INT(counted, 5);
    CHECK_MSG(fabs(loss - want / counted) < 1e-5, "loss %.7f, by hand %.7f", loss, want / counted);
    head_example_weights(&h, ones);
    float a = head_loss(&h, &d, rows, N, perm, NULL), b = head_loss(&plain, &d, rows, N, perm, NULL);
    CHECK_MSG(a == b, "weights of 1: %.9g, without weights %.9g", a, b);
    Head sig;
    head_init(&sig, K, 1, 1.0f);
    StderrCapture cap;
    stderr_capture_begin(&cap);
    int refused = head_example_weights(&sig, e);
    char *said = stderr_capture_end(&cap);
    CHECK_MSG(refused == -1 && strstr(said, "softmax head"), "a sigmoid head took example weights: %s", said);
    free(said);
    head_free(&sig);
    head_free(&h);
    head_free(&plain);
}

/* ---- through the commands ---- */

/* `glue ARGS` in the fixture (stdout; stderr too with err); status. Caller frees. */
static char *boost_glue(const CliFixture *f, const char *args, int err, int *status) {
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "cd '%s' && GLUE_DATA=%s/glue GLUE_RUNS=%s/runs GLUE_RESULTS=%s/results OMP_NUM_THREADS=1 "
             "'%s' %s %s", f->dir, f->dir, f->dir, f->dir, cli_fixture_bin(), args, err ? "2>&1" : "2>/dev/null");
    return test_run(cmd, status);
}

static cJSON *boost_json_file(const CliFixture *f, const char *name) {
    char path[PATH_MAX];
    cli_fixture_path(f, name, path, sizeof path);
    FILE *fp = fopen(path, "r");
    if (!fp) return NULL;
    static char buf[1 << 18];
    size_t n = fread(buf, 1, sizeof buf - 1, fp);
    fclose(fp);
    buf[n] = 0;
    return cJSON_Parse(buf);
}

/* The error rate (wrong / all) in the dev confusion matrix `glue eval --run DIR --json` writes, and
 * the accuracy of each class into acc (2). NAN after a failed check. */
static double boost_eval_error(const CliFixture *f, const char *run, double *acc) {
    char args[512];
    snprintf(args, sizeof args, "eval --run %s --json", run);
    int st;
    char *out = boost_glue(f, args, 0, &st);
    cJSON *j = cJSON_Parse(out);
    const cJSON *tasks = cJSON_GetObjectItemCaseSensitive(j, "tasks");
    const cJSON *dp = tasks && tasks->child ? cJSON_GetObjectItemCaseSensitive(tasks->child, "dev_predictions") : NULL;
    const cJSON *cm = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(dp, "dev"), "confusion");
    double wrong = 0, all = 0;
    int g = 0;
    for (const cJSON *row = cm ? cm->child : NULL; row; row = row->next, g++) {
        double right = 0, n = 0;
        int c = 0;
        for (const cJSON *v = row->child; v; v = v->next, c++) n += v->valuedouble, right += c == g ? v->valuedouble : 0;
        if (acc && g < 2) acc[g] = n ? right / n : -1;
        all += n, wrong += n - right;
    }
    int ok = CHECK_MSG(st == 0 && g == 2 && all > 0, "eval --run %s: exit %d: %.300s", run, st, out);
    cJSON_Delete(j);
    free(out);
    return ok ? wrong / all : NAN;
}

/* One epoch with boost=label_error: the class weights the run recorded for
 * the next epoch are min(1.5, 1 / (acc + 0.001)) of its own dev accuracies. */
TEST(boost_label_error_run_records_weights_of_its_dev_accuracy) {
    CliFixture f;
    if (cli_fixture_open(&f) != 0) return;
    int st;
    char *out = NULL;
    if (cli_fixture_two_class(&f, "days.tsv", 40) != 0) goto done;
    out = boost_glue(&f, "finetune --train days.tsv --dev days.tsv --model textcnn --epochs 1 --threads 1 "
                         "--set boost=label_error --out le", 1, &st);
    if (!CHECK_MSG(st == 0, "exit %d: %s", st, out)) goto done;
    double acc[2];
    boost_eval_error(&f, "le", acc);
    cJSON *res = boost_json_file(&f, "le/results.json");
    const cJSON *ep = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(res, "epochs"), 0);
    const cJSON *cw = cJSON_GetObjectItemCaseSensitive(ep, "class_weights");
    for (int k = 0; k < 2; k++) {
        double want = acc[k] < 0 ? 1 : fmin(1.5, 1 / (acc[k] + 0.001));
        const cJSON *v = cJSON_GetArrayItem(cw, k);
        CHECK_MSG(v && fabs(v->valuedouble - want) < 1e-6, "class %d: recorded %g, dev accuracy %g gives %g", k,
                  v ? v->valuedouble : NAN, acc[k], want);
    }
    const cJSON *head = cJSON_GetObjectItemCaseSensitive(res, "head");
    CHECK(strcmp(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(head, "boost")) ?: "", "label_error") == 0);
    cJSON_Delete(res);
    free(out);
    out = boost_glue(&f, "finetune --train days.tsv --dev days.tsv --model textcnn --epochs 1 --threads 1 "
                         "--set boost=label_error --set class_weights=balanced --out le2", 1, &st);
    CHECK_MSG(st == 2 && strstr(out, "boost=label_error sets the class weights") && !cli_fixture_exists(&f, "le2"),
              "exit %d: %s", st, out);
done:
    free(out);
    cli_fixture_close(&f);
}

/* `glue boost` on a dataset whose dev split is its training split: each
 * round's alpha from its error, round 1's error that of its predictions
 * (equal weights), the members weighted by the alphas, eval of the run its
 * recorded dev score; fastText and a missing --model refused, nothing written. */
TEST(boost_command_rounds_and_refusals) {
    CliFixture f;
    if (cli_fixture_open(&f) != 0) return;
    int st;
    char *out = NULL;
    if (cli_fixture_two_class(&f, "days.tsv", 40) != 0) goto done;
    out = boost_glue(&f, "finetune --train days.tsv --dev days.tsv --model textcnn --epochs 1 --threads 1", 1, &st);
    free(out);
    out = boost_glue(&f, "boost days --model textcnn --rounds 2 --epochs 3 --threads 1 --out bo", 1, &st);
    if (!CHECK_MSG(st == 0, "glue boost: exit %d: %s", st, out)) goto done;
    cJSON *res = boost_json_file(&f, "bo/results.json");
    const cJSON *rounds = cJSON_GetObjectItemCaseSensitive(res, "rounds"), *members = cJSON_GetObjectItemCaseSensitive(res, "members");
    CHECK_MSG(cJSON_GetArraySize(rounds) >= 1 && cJSON_GetArraySize(members) == cJSON_GetArraySize(rounds),
              "%d rounds, %d members", cJSON_GetArraySize(rounds), cJSON_GetArraySize(members));
    int k = 0;
    for (const cJSON *r = rounds ? rounds->child : NULL; r; r = r->next, k++) {
        double err = cJSON_GetObjectItemCaseSensitive(r, "error")->valuedouble;
        double alpha = cJSON_GetObjectItemCaseSensitive(r, "alpha")->valuedouble;
        double want = err > 0 ? log((1 - err) / err) : 1;   /* + log(K - 1) = 0 */
        CHECK_MSG(fabs(alpha - want) < 1e-12, "round %d: alpha %.9f, error %.9f gives %.9f", k + 1, alpha, err, want);
        const cJSON *m = cJSON_GetArrayItem(members, k);
        CHECK(m && cJSON_GetObjectItemCaseSensitive(m, "weight")->valuedouble == alpha);
        if (k == 0) {
            double by_eval = boost_eval_error(&f, "bo-round1", NULL);
            CHECK_MSG(fabs(err - by_eval) < 1e-9, "round 1: error %.9f, its predictions %.9f", err, by_eval);
        }
    }
    double score = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(res, "best"), "score")->valuedouble;
    double eval_err = boost_eval_error(&f, "bo", NULL);
    CHECK_MSG(fabs(100 * (1 - eval_err) - score) < 1e-9, "eval --run bo: accuracy %.4f, recorded %.4f", 100 * (1 - eval_err), score);
    cJSON_Delete(res);
    free(out);
    out = boost_glue(&f, "boost days --model fasttext --rounds 2 --out bf", 1, &st);
    CHECK_MSG(st == 2 && strstr(out, "fasttext takes its own step") && !cli_fixture_exists(&f, "bf") &&
              !cli_fixture_exists(&f, "bf-round1"), "exit %d: %s", st, out);
    free(out);
    out = boost_glue(&f, "boost days --model textcnn --rounds 2 --epochs 3 --threads 1 --out bo", 1, &st);
    CHECK_MSG(st == 2 && strstr(out, "already holds a finished run"), "a second boost into bo: exit %d: %s", st, out);
    /* Run again with its rounds in place (an interrupted boost, or its OUT removed): the finished rounds are
     * reused, not trained again, and give the same alphas; --overwrite trains every round again. */
    cJSON *first = boost_json_file(&f, "bo/results.json");
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s/bo'", f.dir);
    CHECK(system(cmd) == 0);
    free(out);
    out = boost_glue(&f, "boost days --model textcnn --rounds 2 --epochs 3 --threads 1 --out bo", 1, &st);
    cJSON *again = boost_json_file(&f, "bo/results.json");
    const cJSON *r1 = cJSON_GetObjectItemCaseSensitive(first, "rounds"), *r2 = cJSON_GetObjectItemCaseSensitive(again, "rounds");
    int n_rounds = cJSON_GetArraySize(r1), same = n_rounds == cJSON_GetArraySize(r2) && n_rounds > 0;
    for (int i = 0; same && i < n_rounds; i++)
        same = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(r1, i), "alpha")->valuedouble ==
               cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(r2, i), "alpha")->valuedouble;
    CHECK_MSG(st == 0 && same && strstr(out, "round 1/2: reusing"), "boost again over its rounds: exit %d, same alphas %d: %s",
              st, same, out);
    cJSON_Delete(first);
    cJSON_Delete(again);
    free(out);
    out = boost_glue(&f, "boost days --model textcnn --rounds 2 --epochs 3 --threads 1 --out bo --overwrite", 1, &st);
    CHECK_MSG(st == 0 && !strstr(out, "reusing"), "boost --overwrite reused a round: exit %d: %s", st, out);
    free(out);
    out = NULL;
    /* Stopped (SIGTERM) in round 2 once it saved a resume point, then run again: round 1 is reused and round 2
     * continues from its resume point (it was trained again from the start), ending where an uninterrupted
     * boost ends. */
    /* A split no model fits (each text twice, once per label): round 1 is never perfect, so round 2 trains. */
    char noisy[2048];
    int len = snprintf(noisy, sizeof noisy, "text\tlabel\n");
    for (int i = 0; i < 40; i++)
        len += snprintf(noisy + len, sizeof noisy - (size_t)len, "the %s day %d\t%s\n", i % 3 ? "good" : "bad", i % 20,
                        i < 20 ? "pos" : "neg");
    CHECK(cli_fixture_write(&f, "noisy.tsv", noisy, len) == 0);
    out = boost_glue(&f, "finetune --train noisy.tsv --dev noisy.tsv --model textcnn --epochs 1 --threads 1", 1, &st);
    free(out);
    out = boost_glue(&f, "boost noisy --model textcnn --rounds 2 --epochs 30 --threads 1 --out bu", 1, &st);
    CHECK_MSG(st == 0 && strstr(out, "round 2/2"), "the uninterrupted boost: exit %d: %s", st, out);
    free(out);
    out = NULL;
    char watch[PATH_MAX], stop[PATH_MAX + 1024];
    cli_fixture_path(&f, "bi-round2/" RUN_RESUME_DIR "/" RUN_LAST_STATE, watch, sizeof watch);
    snprintf(stop, sizeof stop, "env GLUE_DATA=%s/glue GLUE_RUNS=%s/runs OMP_NUM_THREADS=1 '%s' boost noisy "
             "--model textcnn --rounds 2 --epochs 30 --threads 1 --out '%s/bi' >/dev/null 2>&1", f.dir, f.dir,
             cli_fixture_bin(), f.dir);
    int stopped = kill_loop_signal(stop, watch, SIGTERM);
    CHECK_MSG(stopped == 143, "boost was not stopped by SIGTERM in round 2 (exit %d): %s", stopped, stop);
    if (cli_fixture_exists(&f, "bi-round2/results.json")) {
        CHECK_MSG(0, "round 2 finished before SIGTERM reached it");
        goto done;
    }
    out = boost_glue(&f, "boost noisy --model textcnn --rounds 2 --epochs 30 --threads 1 --out bi", 1, &st);
    CHECK_MSG(st == 0 && strstr(out, "round 1/2: reusing") && strstr(out, "round 2/2: continuing") &&
              strstr(out, "resuming"), "boost again after an interrupted round: exit %d: %s", st, out);
    char ra[PATH_MAX], rb[PATH_MAX];
    cli_fixture_path(&f, "bu-round2", ra, sizeof ra);
    cli_fixture_path(&f, "bi-round2", rb, sizeof rb);
    CHECK_MSG(kill_loop_same_results(ra, rb), "the continued round 2 differs from the uninterrupted one");
done:
    free(out);
    cli_fixture_close(&f);
}
