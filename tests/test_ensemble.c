/* test_ensemble.c — `glue ensemble` (experiments/ensemble_build.h,
 * models/ensemble/ensemble.h) on tiny runs of a user's dataset: an ensemble
 * of two identical runs is the run (probabilities and metrics exactly, with
 * probabilities or logits combined); an ensemble's dev metrics and its
 * predictions are the weighted mean of its members' probabilities computed
 * here (combine=probs), or the normalised weighted geometric mean
 * (combine=logits: softmax of the mean log-probabilities); members of
 * another task or label order are refused with nothing written; weights fit
 * on dev beat or tie every single member and equal weights; compare shows
 * the ensemble as its own row; a multi-label ensemble averages sigmoid
 * probabilities. */
#include "core/common.h"
#include "tests/cli_fixture.h"
#include "tests/test.h"

#include <cjson/cJSON.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Quick runs: textcnn (logits) and fastText (its own probabilities). */
#define ENS_TEXTCNN "--model textcnn --epochs 2 --threads 1"
#define ENS_FASTTEXT "--model fasttext --set bucket=10000 --set dim=16 --epochs 2 --threads 1"
enum { ENS_ROWS = 60, ENS_TEXTS = 6 };
static const char *const ENS_PROBE[ENS_TEXTS] = {"the sunny day was warm", "a gloomy rain",  "sunny and rainy",
                                                 "warm cold warm",          "the day was it", "bright sad dark"};

/* `glue ARGS` in the fixture with stdout alone (stdin: input, or nothing); status. Caller frees. */
static char *ens_glue(const CliFixture *f, const char *args, const char *input, int *status) {
    char cmd[8192];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && printf '%s' | GLUE_DATA=%s/glue GLUE_RUNS=%s/runs GLUE_RESULTS=%s/results OMP_NUM_THREADS=1 "
             "'%s' %s 2>/dev/null", f->dir, input ? input : "", f->dir, f->dir, f->dir, cli_fixture_bin(), args);
    return test_run(cmd, status);
}

/* Runs glue (stdout and stderr) and checks its exit status; 0 when as expected. */
static int ens_run(const CliFixture *f, const char *args, int want) {
    int st;
    char *out = cli_fixture_glue(f, args, &st);
    int ok = CHECK_MSG(st == want, "glue %s: exit %d (want %d): %.600s", args, st, want, out);
    free(out);
    return ok ? 0 : -1;
}

/* The probabilities (n x 2, neg then pos) of `glue predict --run DIR --json` over the probe texts. 0 ok. */
static int ens_predict(const CliFixture *f, const char *run, double *p) {
    char args[512], input[1024] = "";
    for (int i = 0; i < ENS_TEXTS; i++) snprintf(input + strlen(input), sizeof input - strlen(input), "%s\\n", ENS_PROBE[i]);
    snprintf(args, sizeof args, "predict --run %s --json", run);
    int st, n = 0;
    char *out = ens_glue(f, args, input, &st);
    cJSON *j = cJSON_Parse(out);
    const cJSON *preds = cJSON_GetObjectItemCaseSensitive(j, "predictions");
    for (const cJSON *it = preds ? preds->child : NULL; it && n < ENS_TEXTS; it = it->next, n++) {
        const cJSON *pr = cJSON_GetObjectItemCaseSensitive(it, "probabilities");
        p[2 * n] = cJSON_GetObjectItemCaseSensitive(pr, "neg")->valuedouble;
        p[2 * n + 1] = cJSON_GetObjectItemCaseSensitive(pr, "pos")->valuedouble;
    }
    int ok = CHECK_MSG(st == 0 && n == ENS_TEXTS, "predict --run %s: exit %d: %.400s", run, st, out);
    cJSON_Delete(j);
    free(out);
    return ok ? 0 : -1;
}

/* `glue eval --run DIR --json`'s task entry (dev metrics, details, confusion). NULL after a failed check. */
static cJSON *ens_eval(const CliFixture *f, const char *run) {
    char args[512];
    snprintf(args, sizeof args, "eval --run %s --json", run);
    int st;
    char *out = ens_glue(f, args, NULL, &st);
    cJSON *j = cJSON_Parse(out);
    const cJSON *tasks = cJSON_GetObjectItemCaseSensitive(j, "tasks");
    cJSON *entry = tasks && tasks->child ? cJSON_Duplicate(tasks->child, 1) : NULL;
    CHECK_MSG(st == 0 && entry, "eval --run %s: exit %d: %.400s", run, st, out);
    cJSON_Delete(j);
    free(out);
    return entry;
}

static double ens_dev_accuracy(const cJSON *entry) {
    const cJSON *dev = cJSON_GetObjectItemCaseSensitive(entry, "dev");
    const cJSON *acc = cJSON_GetObjectItemCaseSensitive(dev, "accuracy");
    return cJSON_IsNumber(acc) ? acc->valuedouble : NAN;
}

/* A fixture with days.tsv and two runs a (textcnn) and b (fastText) of it. 0 ok. */
static int ens_fixture(CliFixture *f) {
    if (cli_fixture_open(f) != 0) return -1;
    if (cli_fixture_two_class(f, "days.tsv", ENS_ROWS) != 0 ||
        ens_run(f, "finetune --train days.tsv --dev days.tsv --out a " ENS_TEXTCNN, 0) != 0 ||
        ens_run(f, "finetune --train days.tsv --dev days.tsv --out b " ENS_FASTTEXT, 0) != 0) {
        cli_fixture_close(f);
        return -1;
    }
    return 0;
}

/* A copy of run `from` as `to` (an identical run in another directory: the
 * same run twice is refused). 0 ok. */
static int ens_copy(const CliFixture *f, const char *from, const char *to) {
    char a[PATH_MAX], b[PATH_MAX], cmd[2 * PATH_MAX + 32];
    cli_fixture_path(f, from, a, sizeof a);
    cli_fixture_path(f, to, b, sizeof b);
    snprintf(cmd, sizeof cmd, "cp -r '%s' '%s'", a, b);
    return CHECK_MSG(system(cmd) == 0, "%s", cmd) ? 0 : -1;
}

TEST(ensemble_of_identical_runs_is_the_run) {
    CliFixture f;
    if (ens_fixture(&f) != 0) return;
    static const char *const MODES[2] = {"probs", "logits"};
    double pa[2 * ENS_TEXTS], pe[2 * ENS_TEXTS];
    cJSON *ea = ens_eval(&f, "a");
    if (ens_copy(&f, "a", "a2") == 0 && ens_predict(&f, "a", pa) == 0 && ea)
        for (int m = 0; m < 2; m++) {
            char args[256], out[32];
            snprintf(out, sizeof out, "e-%s", MODES[m]);
            snprintf(args, sizeof args, "ensemble --runs a,a2 --set combine=%s --out %s", MODES[m], out);
            if (ens_run(&f, args, 0) != 0 || ens_predict(&f, out, pe) != 0) continue;
            for (int i = 0; i < 2 * ENS_TEXTS; i++)
                CHECK_MSG(pe[i] == pa[i], "%s: probability %d: ensemble %.17g, run %.17g", MODES[m], i, pe[i], pa[i]);
            cJSON *ee = ens_eval(&f, out);
            /* the whole dev entry (metrics, per-label details, confusion) but for the run's name */
            cJSON_DeleteItemFromObjectCaseSensitive(ee, "run");
            cJSON *a = cJSON_Duplicate(ea, 1);
            cJSON_DeleteItemFromObjectCaseSensitive(a, "run");
            cJSON_DeleteItemFromObjectCaseSensitive(ee, "examples_per_sec");
            cJSON_DeleteItemFromObjectCaseSensitive(a, "examples_per_sec");
            cJSON_DeleteItemFromObjectCaseSensitive(ee, "dev_predictions");
            cJSON_DeleteItemFromObjectCaseSensitive(a, "dev_predictions");
            CHECK_MSG(ee && cJSON_Compare(ee, a, 1), "%s: eval of the ensemble differs from the run's", MODES[m]);
            cJSON_Delete(a);
            cJSON_Delete(ee);
        }
    cJSON_Delete(ea);
    cli_fixture_close(&f);
}

/* The gold labels of days.tsv (0 neg, 1 pos) and its texts' probabilities
 * under each of a and b, read through predict (stdin: the file's texts). */
static int ens_members_on_dev(const CliFixture *f, const char *run, double *p, int *gold) {
    char path[PATH_MAX], line[512], input[ENS_ROWS * 64] = "";
    cli_fixture_path(f, "days.tsv", path, sizeof path);
    FILE *fp = fopen(path, "r");
    int n = 0;
    if (!fp) return -1;
    if (!fgets(line, sizeof line, fp)) line[0] = 0;   /* the header */
    while (fgets(line, sizeof line, fp) && n < ENS_ROWS) {
        char *tab = strchr(line, '\t');
        if (!tab) continue;
        *tab = 0;
        gold[n++] = strncmp(tab + 1, "pos", 3) == 0;
        snprintf(input + strlen(input), sizeof input - strlen(input), "%s\\n", line);
    }
    fclose(fp);
    char args[256];
    snprintf(args, sizeof args, "predict --run %s --json", run);
    int st, k = 0;
    char *out = ens_glue(f, args, input, &st);
    cJSON *j = cJSON_Parse(out);
    const cJSON *preds = cJSON_GetObjectItemCaseSensitive(j, "predictions");
    for (const cJSON *it = preds ? preds->child : NULL; it && k < n; it = it->next, k++) {
        const cJSON *pr = cJSON_GetObjectItemCaseSensitive(it, "probabilities");
        p[2 * k] = cJSON_GetObjectItemCaseSensitive(pr, "neg")->valuedouble;
        p[2 * k + 1] = cJSON_GetObjectItemCaseSensitive(pr, "pos")->valuedouble;
    }
    int ok = CHECK_MSG(st == 0 && k == n && n == ENS_ROWS, "predict %s over days.tsv: exit %d, %d of %d rows", run, st, k, n);
    cJSON_Delete(j);
    free(out);
    return ok ? 0 : -1;
}

TEST(ensemble_eval_is_the_mean_of_its_members) {
    CliFixture f;
    if (ens_fixture(&f) != 0) return;
    double pa[2 * ENS_ROWS], pb[2 * ENS_ROWS], pe[2 * ENS_ROWS];
    int gold[ENS_ROWS];
    const double wa = 0.25, wb = 0.75;   /* --weights 1,3 */
    if (ens_members_on_dev(&f, "a", pa, gold) == 0 && ens_members_on_dev(&f, "b", pb, gold) == 0)
        for (int logits = 0; logits < 2; logits++) {
            const char *out = logits ? "e-logits" : "e-probs";
            char args[256];
            snprintf(args, sizeof args, "ensemble --runs a,b --weights 1,3 --set combine=%s --out %s",
                     logits ? "logits" : "probs", out);
            if (ens_run(&f, args, 0) != 0 || ens_members_on_dev(&f, out, pe, gold) != 0) continue;
            int right = 0;
            double worst = 0;
            for (int i = 0; i < ENS_ROWS; i++) {
                double h[2];
                for (int c = 0; c < 2; c++)   /* by hand */
                    h[c] = logits ? exp(wa * log(pa[2 * i + c]) + wb * log(pb[2 * i + c]))
                                  : wa * pa[2 * i + c] + wb * pb[2 * i + c];
                double s = h[0] + h[1];
                for (int c = 0; c < 2; c++) worst = fmax(worst, fabs(h[c] / s - pe[2 * i + c]));
                right += (h[1] / s > h[0] / s) == gold[i];
            }
            CHECK_MSG(worst < 2e-6, "combine=%s: the ensemble's probabilities are %.3g from the mean by hand",
                      logits ? "logits" : "probs", worst);
            cJSON *ee = ens_eval(&f, out);
            CHECK_MSG(fabs(ens_dev_accuracy(ee) - 100.0 * right / ENS_ROWS) < 1e-9,
                      "combine=%s: eval's accuracy %.4f, by hand %.4f", logits ? "logits" : "probs",
                      ens_dev_accuracy(ee), 100.0 * right / ENS_ROWS);
            cJSON_Delete(ee);
        }
    cli_fixture_close(&f);
}

/* A member of another task, and one whose recorded label order is not the
 * task's: refused, one message, exit 2 / 65, and no output directory. */
TEST(ensemble_refuses_mismatched_members_writing_nothing) {
    CliFixture f;
    if (ens_fixture(&f) != 0) return;
    int st;
    char *out = NULL;
    if (cli_fixture_two_class(&f, "other.tsv", 20) == 0 &&
        ens_run(&f, "finetune --train other.tsv --dev other.tsv --out c " ENS_FASTTEXT, 0) == 0) {
        out = cli_fixture_glue(&f, "ensemble --runs a,c --out x", &st);
        CHECK_MSG(st == 2 && strstr(out, "c is a run of other, not of") && strstr(out, "the first member"), "exit %d: %s",
                  st, out);
        CHECK_MSG(!cli_fixture_exists(&f, "x"), "a refused ensemble wrote its --out");
        free(out);
    }
    /* b's copy, recorded as trained with the labels the other way round */
    char bdir[PATH_MAX], cmd[5 * PATH_MAX];
    cli_fixture_path(&f, "b", bdir, sizeof bdir);
    snprintf(cmd, sizeof cmd, "cp -r '%s' '%s2' && sed -i 's/\"neg\", \"pos\"/\"pos\", \"neg\"/; "
             "s/\"neg\",\"pos\"/\"pos\",\"neg\"/' '%s2/results.json' && grep -q '\"pos\",[ \t]*\"neg\"' '%s2/results.json'",
             bdir, bdir, bdir, bdir);
    CHECK_MSG(system(cmd) == 0, "%s", cmd);
    out = cli_fixture_glue(&f, "ensemble --runs a,b2 --out y", &st);
    CHECK_MSG(st == 65 && strstr(out, "labels") && strstr(out, "b2"), "exit %d: %s", st, out);
    CHECK_MSG(!cli_fixture_exists(&f, "y"), "a refused ensemble wrote its --out");
    free(out);
    /* a member that is not there is missing (74, as eval and predict say it); one there but unfinished is a usage error */
    out = cli_fixture_glue(&f, "ensemble --runs a,nothing --out z", &st);
    CHECK_MSG(st == 74 && strstr(out, "nothing: no such run") && !cli_fixture_exists(&f, "z"), "exit %d: %s", st, out);
    free(out);
    out = cli_fixture_glue(&f, "ensemble --runs nothing,a --out z", &st);
    CHECK_MSG(st == 74 && strstr(out, "nothing: no such run") && !cli_fixture_exists(&f, "z"), "exit %d: %s", st, out);
    free(out);
    /* one run twice (by another spelling): one member weighted twice without a word, before */
    out = cli_fixture_glue(&f, "ensemble --runs a,b,./a --out z", &st);
    CHECK_MSG(st == 2 && strstr(out, "is member 1 and member 3") && !cli_fixture_exists(&f, "z"), "exit %d: %s", st, out);
    free(out);
    CHECK(cli_fixture_write(&f, "unfinished/config.json", "{}", -1) == 0);
    out = cli_fixture_glue(&f, "ensemble --runs a,unfinished --out z", &st);
    CHECK_MSG(st == 2 && strstr(out, "unfinished is not a finished run") && !cli_fixture_exists(&f, "z"), "exit %d: %s", st, out);
    free(out);
    /* a count that is not the runs', all zero (nothing to divide by), infinite: usage errors before anything is read */
    static const char *const BAD_WEIGHTS[] = {"1", "0,0", "inf,1", "1e400,1"};
    for (int i = 0; i < 4; i++) {
        char args[128];
        snprintf(args, sizeof args, "ensemble --runs a,b --weights %s --out z", BAD_WEIGHTS[i]);
        out = cli_fixture_glue(&f, args, &st);
        CHECK_MSG(st == 2 && strstr(out, "--weights") && !cli_fixture_exists(&f, "z"), "%s: exit %d: %s", args, st, out);
        free(out);
    }
    cli_fixture_close(&f);
}

/* The score of results.json's best on dev, and its members' weights (2). */
static double ens_results(const CliFixture *f, const char *run, double *w, double *alone) {
    char path[PATH_MAX], name[256];
    snprintf(name, sizeof name, "%s/results.json", run);
    cli_fixture_path(f, name, path, sizeof path);
    FILE *fp = fopen(path, "r");
    char buf[1 << 16];
    size_t len = fp ? fread(buf, 1, sizeof buf - 1, fp) : 0;
    if (fp) fclose(fp);
    buf[len] = 0;
    cJSON *j = cJSON_Parse(buf);
    const cJSON *members = cJSON_GetObjectItemCaseSensitive(j, "members");
    int i = 0;
    for (const cJSON *m = members ? members->child : NULL; m && i < 2; m = m->next, i++) {
        w[i] = cJSON_GetObjectItemCaseSensitive(m, "weight")->valuedouble;
        alone[i] = cJSON_GetObjectItemCaseSensitive(m, "score")->valuedouble;
    }
    const cJSON *best = cJSON_GetObjectItemCaseSensitive(j, "best");
    const cJSON *score = cJSON_GetObjectItemCaseSensitive(best, "score");
    double s = i == 2 && cJSON_IsNumber(score) ? score->valuedouble : NAN;
    cJSON_Delete(j);
    return s;
}

TEST(ensemble_weights_fit_on_dev_beat_members_and_equal_weights) {
    CliFixture f;
    if (ens_fixture(&f) != 0) return;
    if (ens_run(&f, "ensemble --runs a,b --out eq", 0) == 0 && ens_run(&f, "ensemble --runs a,b --weights dev --out fit", 0) == 0) {
        double w[2], alone[2], weq[2];
        double eq = ens_results(&f, "eq", weq, alone), fit = ens_results(&f, "fit", w, alone);
        CHECK_MSG(fit >= eq && fit >= alone[0] && fit >= alone[1], "fit %.2f, equal %.2f, members %.2f %.2f", fit, eq,
                  alone[0], alone[1]);
        CHECK_MSG(fabs(w[0] + w[1] - 1) < 1e-12 && fabs(w[0] * 10 - round(w[0] * 10)) < 1e-9,
                  "fit weights %g %g: not on the grid of tenths", w[0], w[1]);
    }
    cli_fixture_close(&f);
}

/* textcnn on days for seeds 42 (runs/days/textcnn) and 7 (compare's own
 * run), the ensemble of both by --models/--seeds, and compare's table with
 * the ensemble's row, its dev score the ensemble's. */
TEST(ensemble_is_a_row_of_compare) {
    CliFixture f;
    if (cli_fixture_open(&f) != 0) return;
    if (cli_fixture_two_class(&f, "days.tsv", 40) == 0 &&
        ens_run(&f, "finetune --train days.tsv --dev days.tsv --model textcnn --threads 1", 0) == 0 &&
        ens_run(&f, "compare days --models textcnn --seeds 42,7 --threads 1", 0) == 0 &&
        ens_run(&f, "ensemble days --models textcnn --seeds 42,7", 0) == 0) {
        int st;
        char *out = ens_glue(&f, "compare days --models textcnn,ensemble --threads 1 --json", NULL, &st);
        cJSON *j = cJSON_Parse(out);
        const cJSON *models = cJSON_GetObjectItemCaseSensitive(j, "models");
        double w[2], alone[2], want = ens_results(&f, "runs/days/ensemble", w, alone), got = NAN;
        for (const cJSON *m = models ? models->child : NULL; m; m = m->next) {
            const cJSON *name = cJSON_GetObjectItemCaseSensitive(m, "model");
            if (!cJSON_IsString(name) || strcmp(name->valuestring, "ensemble") != 0) continue;
            const cJSON *tasks = cJSON_GetObjectItemCaseSensitive(m, "tasks");
            got = ens_dev_accuracy(cJSON_GetObjectItemCaseSensitive(tasks, "days"));
        }
        CHECK_MSG(st == 0 && got == want, "compare: exit %d, ensemble row %.2f, its run %.2f: %.300s", st, got, want, out);
        cJSON_Delete(j);
        free(out);
        /* no ensemble built: compare says how to build one */
        out = cli_fixture_glue(&f, "compare days --models boost --threads 1", &st);
        CHECK_MSG(st != 0 && strstr(out, "glue boost"), "exit %d: %s", st, out);
        free(out);
        /* Over seeds, each seed's own ensemble (--out compare's runs/compare/<task>/ensemble-seed<S>): an ensemble
         * of one member is that member, so the row equals textcnn's over the same seeds; a seed without its
         * ensemble is refused, naming the command that builds it (one run read for every seed was a spread of 0). */
        if (ens_run(&f, "ensemble days --models textcnn --seeds 42 --out runs/compare/days/ensemble-seed42", 0) == 0 &&
            ens_run(&f, "ensemble days --models textcnn --seeds 7 --out runs/compare/days/ensemble-seed7", 0) == 0) {
            out = ens_glue(&f, "compare days --models textcnn,ensemble --seeds 42,7 --threads 1 --json", NULL, &st);
            cJSON *k = cJSON_Parse(out);
            double acc[2] = {NAN, NAN};
            const cJSON *ms = cJSON_GetObjectItemCaseSensitive(k, "models");
            for (const cJSON *m = ms ? ms->child : NULL; m; m = m->next) {
                const cJSON *name = cJSON_GetObjectItemCaseSensitive(m, "model");
                int which = !cJSON_IsString(name) ? -1 : strcmp(name->valuestring, "textcnn") == 0 ? 0
                                                     : strcmp(name->valuestring, "ensemble") == 0 ? 1 : -1;
                if (which >= 0)
                    acc[which] = ens_dev_accuracy(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(m, "tasks"), "days"));
            }
            CHECK_MSG(st == 0 && acc[0] == acc[1] && !isnan(acc[0]), "textcnn %.2f, ensemble %.2f over seeds 42,7: %.300s",
                      acc[0], acc[1], out);
            cJSON_Delete(k);
            free(out);
            out = cli_fixture_glue(&f, "compare days --models ensemble --seeds 42,8 --threads 1", &st);
            CHECK_MSG(st == 2 && strstr(out, "for seed 8") && strstr(out, "--seeds 8 --out"), "exit %d: %s", st, out);
            free(out);
        }
    }
    cli_fixture_close(&f);
}

/* A multi-label dataset (fastText lines, labels sun/rain/wind, one or two a row). */
static int ens_multi_label_file(const CliFixture *f, const char *name, int rows, int salt) {
    static const char *const WORDS[3][2] = {{"sunny", "warm"}, {"rainy", "wet"}, {"windy", "gusty"}};
    static const char *const NAMES[3] = {"sun", "rain", "wind"};
    char text[16384] = "";
    for (int i = 0; i < rows; i++) {
        int a = (i * 7 + salt) % 3, b = (i * 5 + 1 + salt) % 3, two = i % 3 == 0 && a != b;
        int lo = two && b < a ? b : a, hi = two && b > a ? b : a;
        snprintf(text + strlen(text), sizeof text - strlen(text), "__label__%s%s%s the %s day was %s%s%s\n",
                 NAMES[lo], two ? " __label__" : "", two ? NAMES[hi] : "", WORDS[lo][i % 2], WORDS[lo][(i + 1) % 2],
                 two ? " and " : "", two ? WORDS[hi][i % 2] : "");
    }
    return cli_fixture_write(f, name, text, -1);
}

/* Two identical multi-label runs (thresholds tuned on dev) ensembled: the
 * sigmoid probabilities averaged, the rule tuned again on them, so dev and
 * the public test split score as the run does. */
TEST(ensemble_multi_label_of_identical_runs_is_the_run) {
    CliFixture f;
    if (cli_fixture_open(&f) != 0) return;
    if (ens_multi_label_file(&f, "ml.train.txt", 60, 0) == 0 && ens_multi_label_file(&f, "ml.dev.txt", 24, 1) == 0 &&
        ens_multi_label_file(&f, "ml.test.txt", 24, 2) == 0 &&
        ens_run(&f, "finetune --train ml.train.txt --dev ml.dev.txt --test ml.test.txt --format fasttext --out a "
                    "--set threshold=tuned " ENS_TEXTCNN, 0) == 0 &&
        ens_copy(&f, "a", "a2") == 0 && ens_run(&f, "ensemble --runs a,a2 --out e", 0) == 0) {
        CHECK(cli_fixture_exists(&f, "e/thresholds.json"));
        for (int test = 0; test < 2; test++) {
            char args[128];
            snprintf(args, sizeof args, "eval --run %s --json%s", "a", test ? " --split test" : "");
            int st;
            char *oa = ens_glue(&f, args, NULL, &st);
            snprintf(args, sizeof args, "eval --run %s --json%s", "e", test ? " --split test" : "");
            char *oe = ens_glue(&f, args, NULL, &st);
            cJSON *ja = cJSON_Parse(oa), *je = cJSON_Parse(oe);
            const cJSON *ta = cJSON_GetObjectItemCaseSensitive(ja, "tasks"), *te = cJSON_GetObjectItemCaseSensitive(je, "tasks");
            const char *split = test ? "test" : "dev";
            const cJSON *ma = ta && ta->child ? cJSON_GetObjectItemCaseSensitive(ta->child, split) : NULL;
            const cJSON *me = te && te->child ? cJSON_GetObjectItemCaseSensitive(te->child, split) : NULL;
            CHECK_MSG(ma && me && cJSON_Compare(ma, me, 1), "%s: the run %.300s, the ensemble %.300s", split, oa, oe);
            cJSON_Delete(ja);
            cJSON_Delete(je);
            free(oa);
            free(oe);
        }
    }
    cli_fixture_close(&f);
}
