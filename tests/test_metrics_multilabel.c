/* test_metrics_multilabel.c — multi-label scores (metrics/multilabel.h),
 * per-label tables and macro/micro F1 of single-label predictions
 * (metrics/per_label.h) and the threshold helpers (metrics/thresholds.h)
 * against scikit-learn on random fixtures (several seeds, K from 2 to 28, rows
 * with no gold label, labels never predicted, ties among scores), through
 * tests/ref/multilabel_ref.py run by /usr/bin/python3, exact to 1e-6. Plus
 * hand-computed values, so a broken reference cannot hide a broken metric. */
#include "core/common.h"
#include "core/rng.h"
#include "metrics/multilabel.h"
#include "metrics/per_label.h"
#include "metrics/thresholds.h"
#include "tests/scratch.h"
#include "tests/test.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define REF_TOL 1e-6
#define ML_MAX_CASES 24
#define ML_GRID 19

typedef struct {
    int multi, K, n;
    uint8_t *pred, *gold;   /* multi: (n, K) */
    float *score;           /* multi: (n, K) */
    int *cpred, *cgold;     /* single: n classes */
} MlCase;

/* Scores near the gold (so thresholds matter) rounded to 1/16, so there are
 * ties; predictions from the scores at a case's own threshold, or noisy. */
static void ml_case_multi(MlCase *c, Rng *r, int K, int n, float density, float noise) {
    *c = (MlCase){.multi = 1, .K = K, .n = n};
    c->pred = xcalloc((size_t)n * K, 1);
    c->gold = xcalloc((size_t)n * K, 1);
    c->score = xcalloc((size_t)n * K, sizeof *c->score);
    for (int i = 0; i < n * K; i++) {
        c->gold[i] = rng_uniform(r) < density * (1 + (float)(i % K) / K);   /* skewed label frequencies */
        float s = (c->gold[i] ? 0.65f : 0.35f) + 0.3f * (float)rng_normal(r);
        s = s < 0 ? 0 : s > 1 ? 1 : s;
        c->score[i] = (float)(int)(s * 16) / 16;
        c->pred[i] = rng_uniform(r) < noise ? (uint8_t)(rng_uniform(r) < 0.5f) : c->score[i] >= 0.5f;
    }
}

static void ml_case_single(MlCase *c, Rng *r, int K, int n, float agree) {
    *c = (MlCase){.multi = 0, .K = K, .n = n};
    c->cpred = xcalloc((size_t)n, sizeof *c->cpred);
    c->cgold = xcalloc((size_t)n, sizeof *c->cgold);
    for (int i = 0; i < n; i++) {
        c->cgold[i] = (int)rng_below(r, (uint32_t)K);
        c->cpred[i] = rng_uniform(r) < agree ? c->cgold[i] : (int)rng_below(r, (uint32_t)K);
    }
}

static void ml_case_free(MlCase *c) {
    free(c->pred);
    free(c->gold);
    free(c->score);
    free(c->cpred);
    free(c->cgold);
}

/* Random cases for several seeds, then the edge cases. Returns the count. */
static int ml_build_cases(MlCase *cs) {
    int m = 0;
    for (uint64_t seed = 1; seed <= 4; seed++) {
        Rng r;
        rng_seed(&r, seed);
        ml_case_multi(&cs[m++], &r, 28, 100 + (int)rng_below(&r, 200), 0.05f, 0.1f);   /* GoEmotions-like */
        ml_case_multi(&cs[m++], &r, 5, 20 + (int)rng_below(&r, 40), 0.3f, 0.3f);
        ml_case_single(&cs[m++], &r, 6, 50 + (int)rng_below(&r, 300), 0.5f);
        ml_case_single(&cs[m++], &r, 2, 5 + (int)seed, 0.4f);
    }
    Rng r;
    rng_seed(&r, 77);
    MlCase *c = &cs[m++];                       /* nothing predicted anywhere */
    ml_case_multi(c, &r, 4, 30, 0.3f, 0.0f);
    memset(c->pred, 0, (size_t)c->n * c->K);
    c = &cs[m++];                               /* label 2 never gold nor predicted; empty gold rows */
    ml_case_multi(c, &r, 3, 40, 0.2f, 0.2f);
    for (int i = 0; i < c->n; i++) c->gold[i * 3 + 2] = c->pred[i * 3 + 2] = 0;
    c = &cs[m++];                               /* every cell 1 */
    ml_case_multi(c, &r, 3, 10, 0.5f, 0.0f);
    memset(c->pred, 1, 30);
    memset(c->gold, 1, 30);
    c = &cs[m++];                               /* one row */
    ml_case_multi(c, &r, 7, 1, 0.5f, 0.5f);
    c = &cs[m++];                               /* a class never gold and never predicted */
    ml_case_single(c, &r, 5, 60, 0.6f);
    for (int i = 0; i < c->n; i++) c->cgold[i] %= 4, c->cpred[i] %= 4;
    c = &cs[m++];                               /* constant prediction */
    ml_case_single(c, &r, 3, 40, 0.5f);
    for (int i = 0; i < c->n; i++) c->cpred[i] = 1;
    return m;
}

static void ml_write_cases(FILE *f, const MlCase *cs, int m, const float *grid, int ngrid) {
    for (int k = 0; k < m; k++) {
        const MlCase *c = &cs[k];
        fprintf(f, "%s %d %d\n", c->multi ? "ml" : "sl", c->K, c->n);
        if (!c->multi) {
            for (int i = 0; i < c->n; i++) fprintf(f, "%d ", c->cpred[i]);
            fprintf(f, "\n");
            for (int i = 0; i < c->n; i++) fprintf(f, "%d ", c->cgold[i]);
            fprintf(f, "\n");
            continue;
        }
        for (int i = 0; i < c->n * c->K; i++) fprintf(f, "%d ", c->pred[i]);
        fprintf(f, "\n");
        for (int i = 0; i < c->n * c->K; i++) fprintf(f, "%d ", c->gold[i]);
        fprintf(f, "\n");
        for (int i = 0; i < c->n * c->K; i++) fprintf(f, "%.9g ", c->score[i]);
        fprintf(f, "\n");
        for (int j = 0; j < ngrid; j++) fprintf(f, "%.9g ", grid[j]);
        fprintf(f, "\n");
    }
}

/* |got - ref[i]| within tolerance for a JSON array ref; counts failures. */
static int ml_near(const char *what, int k, double got, const cJSON *ref, int i) {
    const cJSON *v = cJSON_GetArrayItem(ref, i);
    double want = cJSON_IsNumber(v) ? v->valuedouble : NAN;
    return !CHECK_MSG(fabs(got - want) < REF_TOL, "case %d %s[%d]: %.9f vs sklearn %.9f", k, what, i, got, want);
}

static int ml_prf(const char *what, int k, PrfAverage a, const cJSON *ref) {
    const cJSON *arr = cJSON_GetObjectItem(ref, what);
    return ml_near(what, k, a.precision, arr, 0) + ml_near(what, k, a.recall, arr, 1) + ml_near(what, k, a.f1, arr, 2);
}

static int ml_table(int k, const LabelScore *t, int K, const cJSON *ref) {
    const cJSON *tab = cJSON_GetObjectItem(ref, "table");
    int bad = 0;
    for (int l = 0; l < K; l++) {
        bad += ml_near("precision", k, t[l].precision, cJSON_GetArrayItem(tab, 0), l);
        bad += ml_near("recall", k, t[l].recall, cJSON_GetArrayItem(tab, 1), l);
        bad += ml_near("f1", k, t[l].f1, cJSON_GetArrayItem(tab, 2), l);
        bad += ml_near("support", k, (double)t[l].support, cJSON_GetArrayItem(tab, 3), l);
    }
    return bad;
}

static int ml_check_multi(int k, const MlCase *c, const cJSON *ref, const float *grid, int ngrid) {
    MultiLabelScores s;
    LabelScore *tab = xcalloc((size_t)c->K, sizeof *tab);
    multilabel_score(c->pred, c->gold, c->n, c->K, &s, tab);
    int bad = ml_prf("micro", k, s.micro, ref) + ml_prf("macro", k, s.macro, ref) +
              ml_prf("samples", k, s.samples, ref) + ml_table(k, tab, c->K, ref);
    bad += !CHECK_MSG(fabs(s.hamming_loss - cJSON_GetObjectItem(ref, "hamming")->valuedouble) < REF_TOL, "case %d hamming", k);
    bad += !CHECK_MSG(fabs(s.subset_accuracy - cJSON_GetObjectItem(ref, "subset")->valuedouble) < REF_TOL, "case %d subset", k);
    for (int kk = 1; kk <= c->K && kk <= 3; kk++)
        bad += ml_near("p_at_k", k, multilabel_precision_at_k(c->score, c->gold, c->n, c->K, kk),
                       cJSON_GetObjectItem(ref, "p_at_k"), kk - 1);
    double curve[ML_GRID];
    thresholds_micro_f1_curve(c->score, c->gold, c->n, c->K, grid, ngrid, curve);
    for (int j = 0; j < ngrid; j++) bad += ml_near("curve", k, curve[j], cJSON_GetObjectItem(ref, "curve"), j);
    float *t = xcalloc((size_t)c->K, sizeof *t);
    thresholds_tune(c->score, c->gold, c->n, c->K, NULL, 0, THRESHOLD_DEFAULT, t, NULL);
    for (int l = 0; l < c->K; l++) bad += ml_near("tuned", k, t[l], cJSON_GetObjectItem(ref, "tuned"), l);
    thresholds_tune(c->score, c->gold, c->n, c->K, grid, ngrid, THRESHOLD_DEFAULT, t, NULL);
    for (int l = 0; l < c->K; l++) bad += ml_near("tuned_grid", k, t[l], cJSON_GetObjectItem(ref, "tuned_grid"), l);
    free(t);
    free(tab);
    return bad;
}

static int ml_check_single(int k, const MlCase *c, const cJSON *ref) {
    LabelCounts *cnt = xcalloc((size_t)c->K, sizeof *cnt);
    LabelScore *tab = xcalloc((size_t)c->K, sizeof *tab);
    label_counts_single(c->cpred, c->cgold, c->n, c->K, cnt);
    label_scores(cnt, c->K, tab);
    int bad = ml_prf("macro", k, label_macro_average(cnt, c->K, 1), ref) +
              ml_prf("micro", k, label_micro_average(cnt, c->K), ref) + ml_table(k, tab, c->K, ref);
    double mf1 = metric_compute(METRIC_MACRO_F1, c->n, c->K, c->cpred, c->cgold, NULL, NULL);
    bad += !CHECK_MSG(fabs(mf1 - cJSON_GetObjectItem(ref, "macro_f1")->valuedouble) < REF_TOL, "case %d macro_f1", k);
    double acc = metric_accuracy(c->cpred, c->cgold, c->n);
    double micro = metric_micro_f1(c->cpred, c->cgold, c->n, c->K);
    bad += !CHECK_MSG(fabs(micro - acc) < 1e-12, "case %d: single-label micro F1 %.9f, accuracy %.9f", k, micro, acc);
    free(cnt);
    free(tab);
    return bad;
}

TEST(metrics_multilabel_match_sklearn) {
    static MlCase cs[ML_MAX_CASES];
    int m = ml_build_cases(cs);
    float grid[ML_GRID];
    int ngrid = thresholds_grid(0.05, 0.95, 0.05, grid, ML_GRID);
    CHECK_EQ_INT(ngrid, 19);
    char path[SCRATCH_PATH_MAX];
    int fd = scratch_file("multilabel", path, sizeof path);
    if (!CHECK_MSG(fd >= 0, "cannot create a temporary file")) return;
    FILE *f = fdopen(fd, "w");
    ml_write_cases(f, cs, m, grid, ngrid);
    fclose(f);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 tests/ref/multilabel_ref.py %s 2>&1", path);
    int status;
    char *out = test_run(cmd, &status);
    unlink(path);
    if (CHECK_MSG(status == 0, "reference run failed (install python3-sklearn): %s", out)) {
        char *line = out;
        int k = 0;
        for (; k < m && line && *line; k++) {
            char *nl = strchr(line, '\n');
            if (nl) *nl = '\0';
            cJSON *ref = cJSON_Parse(line);
            if (!CHECK_MSG(ref != NULL, "case %d: bad reference line '%.80s'", k, line)) break;
            int bad = cs[k].multi ? ml_check_multi(k, &cs[k], ref, grid, ngrid) : ml_check_single(k, &cs[k], ref);
            cJSON_Delete(ref);
            if (bad > 5) break;   /* enough said */
            line = nl ? nl + 1 : NULL;
        }
        CHECK_MSG(k == m, "reference gave %d of %d cases", k, m);
    }
    free(out);
    for (int k = 0; k < m; k++) ml_case_free(&cs[k]);
}

TEST(metrics_multilabel_hand_computed) {
    /* gold {0,2} {1}; predicted {0,1} {1}. Labels: 0 tp1 -> 1/1/1; 1 tp1 fp1 ->
     * 1/2, 1, 2/3; 2 fn1 -> 0. Micro: tp2 fp1 fn1 -> 2/3. Rows: 1/2 and 1. */
    uint8_t gold[] = {1, 0, 1, 0, 1, 0}, pred[] = {1, 1, 0, 0, 1, 0};
    MultiLabelScores s;
    LabelScore t[3];
    multilabel_score(pred, gold, 2, 3, &s, t);
    CHECK_NEAR(s.micro.precision, 2.0 / 3, 1e-12);
    CHECK_NEAR(s.micro.f1, 2.0 / 3, 1e-12);
    CHECK_NEAR(s.macro.f1, (1 + 2.0 / 3 + 0) / 3, 1e-12);
    CHECK_NEAR(s.macro.precision, (1 + 0.5 + 0) / 3, 1e-12);
    CHECK_NEAR(s.samples.f1, 0.75, 1e-12);
    CHECK_NEAR(s.hamming_loss, 2.0 / 6, 1e-12);
    CHECK_NEAR(s.subset_accuracy, 0.5, 1e-12);
    CHECK(t[1].support == 1 && t[1].predicted == 2 && t[2].support == 1 && t[2].f1 == 0);
    CHECK_EQ_INT(s.empty_predictions, 0);
    CHECK_NEAR(multilabel_metric(METRIC_MACRO_F1, pred, gold, 2, 3), s.macro.f1, 0);
    CHECK_NEAR(multilabel_metric(METRIC_MICRO_F1, pred, gold, 2, 3), s.micro.f1, 0);
    CHECK_NEAR(multilabel_metric(METRIC_ACC, pred, gold, 2, 3), 0.5, 0);
    /* Ranking: row 1 ties labels 1 and 2 at 0.7 -> label 1 (the lower id) first. */
    float score[] = {0.9f, 0.8f, 0.1f, 0.2f, 0.7f, 0.7f};
    CHECK_NEAR(multilabel_precision_at_k(score, gold, 2, 3, 1), 1.0, 1e-12);
    CHECK_NEAR(multilabel_precision_at_k(score, gold, 2, 3, 2), 0.5, 1e-12);
    uint8_t top[6], want_top[] = {1, 1, 0, 0, 1, 1};
    thresholds_top_k(score, 2, 3, 2, top);
    CHECK(memcmp(top, want_top, 6) == 0);
    /* p >= t: 0.7 is taken at 0.7 */
    uint8_t at[6], want_at[] = {1, 1, 0, 0, 1, 1};
    thresholds_apply(score, 2, 3, 0.7f, at);
    CHECK(memcmp(at, want_at, 6) == 0);
    /* Empty predictions are counted; no metric is NaN on nothing. */
    uint8_t none[6] = {0};
    multilabel_score(none, gold, 2, 3, &s, NULL);
    CHECK(s.empty_predictions == 2 && s.micro.f1 == 0 && s.samples.precision == 0 && s.macro.recall == 0);
    multilabel_score(none, none, 0, 3, &s, NULL);
    CHECK(s.micro.f1 == 0 && s.hamming_loss == 0 && s.subset_accuracy == 0);
    /* Single-label macro F1 over present classes: pred 0 1 0, gold 0 1 1 ->
     * class 0: 2*1/(2+1) = 2/3, class 1: 2/3; class 2 absent: not averaged. */
    int cp[] = {0, 1, 0}, cg[] = {0, 1, 1};
    CHECK_NEAR(metric_macro_f1(cp, cg, 3, 3), 2.0 / 3, 1e-12);
    CHECK(metric_from_name("macro_f1") == METRIC_MACRO_F1 && strcmp(metric_name(METRIC_MICRO_F1), "micro_f1") == 0);
}

TEST(metrics_thresholds_tuning) {
    /* One label: probabilities .9 .8 .8 .3, gold 1 0 1 0. Candidates .9 (F1
     * 2/3), .8 (tp 2 fp 1: 4/5), .3 (4/6): .8 wins. */
    float p1[] = {0.9f, 0.8f, 0.8f, 0.3f};
    uint8_t g1[] = {1, 0, 1, 0};
    float t;
    double f1;
    thresholds_tune(p1, g1, 4, 1, NULL, 0, 0.5f, &t, &f1);
    CHECK(t == 0.8f);
    CHECK_NEAR(f1, 0.8, 1e-12);
    /* A tie (2/3 at .9 and at .6): the highest threshold. */
    float p2[] = {0.9f, 0.8f, 0.7f, 0.6f};
    uint8_t g2[] = {1, 0, 0, 1};
    thresholds_tune(p2, g2, 4, 1, NULL, 0, 0.5f, &t, &f1);
    CHECK(t == 0.9f);
    CHECK_NEAR(f1, 2.0 / 3, 1e-12);
    /* No gold positive: the fallback, F1 0; the same with any row order. */
    uint8_t g0[] = {0, 0, 0, 0};
    thresholds_tune(p2, g0, 4, 1, NULL, 0, 0.5f, &t, &f1);
    CHECK(t == 0.5f && f1 == 0);
    float p3[] = {0.6f, 0.9f, 0.7f, 0.8f};
    uint8_t g3[] = {1, 1, 0, 0};
    thresholds_tune(p3, g3, 4, 1, NULL, 0, 0.5f, &t, &f1);
    CHECK(t == 0.9f);
    /* A grid: the best grid value (.55 takes .9 and .8 -> 4/5 over .3's 4/6). */
    float grid[] = {0.25f, 0.55f, 0.95f};
    thresholds_tune(p1, g1, 4, 1, grid, 3, 0.5f, &t, &f1);
    CHECK(t == 0.55f);
    CHECK_NEAR(f1, 0.8, 1e-12);
    /* Two labels in one matrix (row-major), per-label thresholds applied back. */
    float p[] = {0.9f, 0.1f, 0.8f, 0.7f, 0.8f, 0.2f, 0.3f, 0.6f};
    uint8_t g[] = {1, 0, 0, 1, 1, 0, 0, 1}, pred[8], want[] = {1, 0, 1, 1, 1, 0, 0, 1};
    float tt[2];
    thresholds_tune(p, g, 4, 2, NULL, 0, 0.5f, tt, NULL);
    CHECK(tt[0] == 0.8f && tt[1] == 0.6f);
    thresholds_apply_per_label(p, 4, 2, tt, pred);
    CHECK(memcmp(pred, want, 8) == 0);
    /* The grid helper: no drift, both ends. */
    float gr[200];
    int n = thresholds_grid(0.01, 0.99, 0.01, gr, 200);
    CHECK_EQ_INT(n, 99);
    CHECK(gr[0] == 0.01f && gr[98] == 0.99f && gr[49] == 0.5f);
}
