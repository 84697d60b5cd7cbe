/* test_metrics.c — accuracy, F1, MCC (binary and 3-class), Pearson and Spearman
 * against scikit-learn / scipy on random inputs with several seeds and edge
 * cases (one class only, constant predictions, ties), through
 * tests/ref/metrics_ref.py run by /usr/bin/python3. Plus exact hand-computed
 * values, so a broken reference cannot hide a broken metric. */
#include "core/rng.h"
#include "metrics/metrics.h"
#include "tests/scratch.h"
#include "tests/test.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define REF_TOL 1e-6
#define MAX_CASES 64
#define MAX_N 600

typedef struct {
    int reg, K, n;
    int pred[MAX_N], gold[MAX_N];
    double x[MAX_N], y[MAX_N];
} Case;

/* Classes with a chosen agreement rate, so metrics are far from 0 and 1. */
static void case_classes(Case *c, Rng *r, int K, int n, float agree) {
    c->reg = 0; c->K = K; c->n = n;
    for (int i = 0; i < n; i++) {
        c->gold[i] = (int)rng_below(r, (uint32_t)K);
        c->pred[i] = rng_uniform(r) < agree ? c->gold[i] : (int)rng_below(r, (uint32_t)K);
    }
}

/* Correlated scores; `step` > 0 rounds them to a grid so there are many ties. */
static void case_scores(Case *c, Rng *r, int n, double step) {
    c->reg = 1; c->n = n;
    for (int i = 0; i < n; i++) {
        c->y[i] = 2.5 + rng_normal(r);
        c->x[i] = 0.7 * c->y[i] + 0.5 * rng_normal(r);
        if (step > 0) { c->x[i] = step * floor(c->x[i] / step); c->y[i] = step * floor(c->y[i] / step); }
    }
}

/* Random cases for several seeds, then the edge cases. Returns the count. */
static int build_cases(Case *cs) {
    int m = 0;
    for (uint64_t seed = 1; seed <= 5; seed++) {
        Rng r;
        rng_seed(&r, seed);
        int n = 50 + (int)rng_below(&r, 500);
        case_classes(&cs[m++], &r, 2, n, 0.6f);
        case_classes(&cs[m++], &r, 3, n, 0.5f);
        case_classes(&cs[m++], &r, 2, 7 + (int)seed, 0.3f);
        case_scores(&cs[m++], &r, n, 0.0);
        case_scores(&cs[m++], &r, n, 0.5);   /* ties in both */
    }
    Rng r;
    rng_seed(&r, 99);
    Case *c = &cs[m++];                       /* all gold one class, predictions mixed */
    case_classes(c, &r, 2, 40, 0.5f);
    for (int i = 0; i < c->n; i++) c->gold[i] = 1;
    c = &cs[m++];                             /* constant predictions (majority class) */
    case_classes(c, &r, 3, 60, 0.5f);
    for (int i = 0; i < c->n; i++) c->pred[i] = 0;
    c = &cs[m++];                             /* no positive anywhere: F1 undefined -> 0 */
    case_classes(c, &r, 2, 30, 0.5f);
    for (int i = 0; i < c->n; i++) c->pred[i] = c->gold[i] = 0;
    c = &cs[m++];                             /* perfectly wrong binary */
    case_classes(c, &r, 2, 25, 1.0f);
    for (int i = 0; i < c->n; i++) c->pred[i] = 1 - c->gold[i];
    c = &cs[m++];                             /* constant scores: scipy's nan, ours too */
    case_scores(c, &r, 30, 0.0);
    for (int i = 0; i < c->n; i++) c->x[i] = 3.0;
    case_scores(&cs[m++], &r, 2, 0.0);        /* smallest defined case */
    return m;
}

static void write_cases(FILE *f, const Case *cs, int m) {
    for (int k = 0; k < m; k++) {
        const Case *c = &cs[k];
        if (c->reg) {
            fprintf(f, "reg %d\n", c->n);
            for (int i = 0; i < c->n; i++) fprintf(f, "%.17g ", c->x[i]);
            fprintf(f, "\n");
            for (int i = 0; i < c->n; i++) fprintf(f, "%.17g ", c->y[i]);
        } else {
            fprintf(f, "cls %d %d\n", c->K, c->n);
            for (int i = 0; i < c->n; i++) fprintf(f, "%d ", c->pred[i]);
            fprintf(f, "\n");
            for (int i = 0; i < c->n; i++) fprintf(f, "%d ", c->gold[i]);
        }
        fprintf(f, "\n");
    }
}

/* Reference value of MCC, with sklearn's nan of old versions standing for the
 * 0 it gives now (and we give) on a constant input. */
static double ref_value(double v) { return isnan(v) ? 0.0 : v; }

/* Ours against scipy's: both NaN (no value), or the same number. */
static int same_correlation(double ours, double ref) {
    return isnan(ref) ? isnan(ours) : fabs(ours - ref) < REF_TOL;
}

TEST(metrics_match_sklearn_scipy) {
    static Case cs[MAX_CASES];
    int m = build_cases(cs);
    char path[SCRATCH_PATH_MAX];
    int fd = scratch_file("metrics", path, sizeof path);
    if (!CHECK_MSG(fd >= 0, "cannot create a temporary file")) return;
    FILE *f = fdopen(fd, "w");
    write_cases(f, cs, m);
    fclose(f);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 tests/ref/metrics_ref.py %s 2>&1", path);
    int status;
    char *out = test_run(cmd, &status);
    unlink(path);
    if (!CHECK_MSG(status == 0, "reference run failed (install python3-sklearn python3-scipy): %s", out)) {
        free(out);
        return;
    }
    char *line = out;
    for (int k = 0; k < m; k++) {
        const Case *c = &cs[k];
        double v[3] = {NAN, NAN, NAN};
        char *nl = strchr(line, '\n');
        if (nl) *nl = '\0';
        int got = sscanf(line, "%lf %lf %lf", &v[0], &v[1], &v[2]);
        if (!CHECK_MSG(got == (c->reg ? 2 : 3), "case %d: bad reference line '%.60s'", k, line)) break;
        if (c->reg) {
            CHECK_MSG(same_correlation(metric_pearson(c->x, c->y, c->n), v[0]),
                      "case %d pearson %.9f vs scipy %.9f", k, metric_pearson(c->x, c->y, c->n), v[0]);
            CHECK_MSG(same_correlation(metric_spearman(c->x, c->y, c->n), v[1]),
                      "case %d spearman %.9f vs scipy %.9f", k, metric_spearman(c->x, c->y, c->n), v[1]);
        } else {
            double acc = metric_accuracy(c->pred, c->gold, c->n), f1 = metric_f1(c->pred, c->gold, c->n);
            double mcc = metric_mcc(c->pred, c->gold, c->n, c->K);
            CHECK_MSG(fabs(acc - v[0]) < REF_TOL, "case %d accuracy %.9f vs sklearn %.9f", k, acc, v[0]);
            CHECK_MSG(fabs(f1 - v[1]) < REF_TOL, "case %d f1 %.9f vs sklearn %.9f", k, f1, v[1]);
            CHECK_MSG(fabs(mcc - ref_value(v[2])) < REF_TOL, "case %d mcc %.9f vs sklearn %.9f", k, mcc, v[2]);
        }
        if (!nl) { CHECK_MSG(k == m - 1, "reference gave %d of %d lines", k + 1, m); break; }
        line = nl + 1;
    }
    free(out);
}

TEST(metrics_hand_computed) {
    /* tp=2 fp=1 fn=1 tn=2: acc 4/6, F1 = 4/6, MCC = (2*2-1*1)/sqrt(3*3*3*3) = 1/3. */
    int pred[] = {1, 1, 1, 0, 0, 0}, gold[] = {1, 1, 0, 1, 0, 0};
    CHECK_NEAR(metric_accuracy(pred, gold, 6), 4.0 / 6, 1e-12);
    CHECK_NEAR(metric_f1(pred, gold, 6), 4.0 / 6, 1e-12);
    CHECK_NEAR(metric_mcc(pred, gold, 6, 2), 1.0 / 3, 1e-12);
    /* y = 2x exactly: both correlations 1; reversed order: Spearman -1. */
    double x[] = {1, 2, 3, 4}, y[] = {2, 4, 6, 8}, rev[] = {8, 6, 4, 2};
    CHECK_NEAR(metric_pearson(x, y, 4), 1.0, 1e-12);
    CHECK_NEAR(metric_spearman(x, rev, 4), -1.0, 1e-12);
    /* Ties: ranks of {1,1,2} are {1.5,1.5,3}; of {1,2,3} {1,2,3}: r = sqrt(3)/2. */
    double t[] = {1, 1, 2}, u[] = {1, 2, 3};
    CHECK_NEAR(metric_spearman(t, u, 3), sqrt(3.0) / 2, 1e-12);
    /* Large offset: a one-pass formula loses everything here, two passes do not. */
    double big_x[] = {1e9 + 1, 1e9 + 2, 1e9 + 3}, big_y[] = {1, 2, 3};
    CHECK_NEAR(metric_pearson(big_x, big_y, 3), 1.0, 1e-9);
    /* Dispatch and names. */
    CHECK_NEAR(metric_compute(METRIC_MCC, 6, 2, pred, gold, NULL, NULL), 1.0 / 3, 1e-12);
    CHECK_NEAR(metric_compute(METRIC_PEARSON, 4, 1, NULL, NULL, x, y), 1.0, 1e-12);
    CHECK(strcmp(metric_name(METRIC_SPEARMAN), "spearman") == 0);
    CHECK(metric_from_name("Accuracy") == METRIC_ACC);
    CHECK(metric_from_name("bogus") == METRIC_NONE);
}

/* Finite scores, however extreme, give a number: a prediction of 1e308 used to
 * overflow Pearson's sums and print 'pearson -nan' (issue 22). Scores that are
 * not finite give NaN, not a made-up 0 (issue 42). */
TEST(metrics_extreme_scores) {
    double huge[] = {1e308, -1e308, 1e308, -1e308}, lin[] = {1, 0, 1, 0};
    CHECK_NEAR(metric_pearson(huge, lin, 4), 1.0, 1e-12);
    CHECK_NEAR(metric_pearson(lin, huge, 4), 1.0, 1e-12);
    CHECK_NEAR(metric_spearman(huge, lin, 4), 1.0, 1e-12);
    /* One huge outlier among ordinary scores: finite, and as scipy computes it
     * on the exactly scaled values (x / 2^1024 leaves the others subnormal). */
    double out[] = {1e308, 1.5, 2.5, 3.5}, gold[] = {5, 1, 2, 3};
    double r = metric_pearson(out, gold, 4), rho = metric_spearman(out, gold, 4);
    CHECK_MSG(isfinite(r) && r > 0.7 && r <= 1, "r %g", r);
    CHECK_NEAR(rho, 1.0, 1e-12);
    /* Tiny but normal (a subnormal would read as 0 once a test has turned on
     * denormals-are-zero, as every thread that does math runs): products of
     * such values underflow without the scaling. */
    double tiny[] = {1e-300, 0, 1e-300, 0};
    CHECK_NEAR(metric_pearson(tiny, lin, 4), 1.0, 1e-12);
    double nan3[] = {1, NAN, 3}, inf3[] = {1, INFINITY, 3}, u[] = {1, 2, 3};
    for (int m = METRIC_PEARSON; m <= METRIC_SPEARMAN; m++) {
        CHECK(isnan(metric_compute((MetricId)m, 3, 1, NULL, NULL, nan3, u)));
        CHECK(isnan(metric_compute((MetricId)m, 3, 1, NULL, NULL, u, inf3)));
        /* a gold score of 1e308 read into a float is inf */
        double gold_f[] = {1, (double)(float)1e308, 3};
        CHECK(isnan(metric_compute((MetricId)m, 3, 1, NULL, NULL, u, gold_f)));
    }
    /* The class metrics count, so no input makes them overflow; spot-check the
     * extremes (all one class, all wrong). */
    int ones[4] = {1, 1, 1, 1}, zeros[4] = {0};
    for (int m = METRIC_ACC; m <= METRIC_MCC; m++) {
        double v = metric_compute((MetricId)m, 4, 2, ones, zeros, NULL, NULL);
        CHECK_MSG(isfinite(v) && v >= -1 && v <= 1, "metric %d: %g", m, v);
    }
}

/* A metric without a value is NaN, shown "nan": no rows at all, constant or
 * too few scores for a correlation. Where sklearn defines one (F1 without a
 * positive, MCC on a constant input), that value. */
TEST(metrics_without_value_are_nan) {
    int p[1] = {0}, g[1] = {0};
    for (int m = METRIC_ACC; m <= METRIC_MCC; m++)
        CHECK_MSG(isnan(metric_compute((MetricId)m, 0, 2, p, g, NULL, NULL)), "metric %d of no rows", m);
    double c[] = {2.5, 2.5, 2.5, 2.5}, y[] = {1, 2, 3, 4}, one[] = {1};
    for (int m = METRIC_PEARSON; m <= METRIC_SPEARMAN; m++) {
        CHECK(isnan(metric_compute((MetricId)m, 4, 1, NULL, NULL, c, y)));
        CHECK(isnan(metric_compute((MetricId)m, 4, 1, NULL, NULL, y, c)));
        CHECK(isnan(metric_compute((MetricId)m, 1, 1, NULL, NULL, one, one)));
        CHECK(isnan(metric_compute((MetricId)m, 0, 1, NULL, NULL, one, one)));
    }
    int zeros[4] = {0}, mixed[4] = {0, 1, 0, 1};
    CHECK_NEAR(metric_f1(zeros, zeros, 4), 0.0, 0);
    CHECK_NEAR(metric_mcc(zeros, mixed, 4, 2), 0.0, 0);
    char text[32];
    metric_text(NAN, text, sizeof text);
    CHECK(strcmp(text, "nan") == 0);
    metric_text(-NAN, text, sizeof text);
    CHECK(strcmp(text, "nan") == 0);
    metric_text(100.0 * 0.12345, text, sizeof text);
    CHECK(strcmp(text, "12.35") == 0 || strcmp(text, "12.34") == 0);
}
