/* decision.c — multi-label prediction rules (see decision.h). */
#include "train/decision.h"

#include "core/common.h"
#include "core/files.h"
#include "metrics/thresholds.h"
#include "models/run_config.h"
#include "train/run_dir.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DECISION_HINT "glue finetune --help-settings lists the settings"
/* The candidate thresholds of tuning: a grid, not every dev probability, so a
 * label with few dev positives is not fitted to one row's score. */
#define DECISION_GRID_LO 0.01
#define DECISION_GRID_HI 0.99
#define DECISION_GRID_STEP 0.01

void decision_default(Decision *d, int K) { *d = (Decision){.rule = DECISION_THRESHOLD, .K = K, .threshold = THRESHOLD_DEFAULT}; }

int decision_read(Decision *d, const cJSON *config, const Task *t) {
    decision_default(d, t->num_labels);
    SettingsReader s = settings_reader(config, "decision", DECISION_HINT);
    const char *th = settings_string(&s, "threshold", "0.5");
    int k = (int)settings_int(&s, "top_k", 0, 0, RUN_MAX_TOP_K);
    if (s.failed) return -1;
    int threshold_set = strcmp(th, "0.5") != 0;
    if ((threshold_set || k > 0) && !t->multi_label) {
        user_error_usage("drop the setting: a single-label task predicts its most probable class",
                         "%s applies to multi-label tasks; %s is not one", k > 0 ? "top_k" : "threshold", t->display);
        return -1;
    }
    if (threshold_set && k > 0) {
        user_error_usage("give one of them", "threshold=%s and top_k=%d are two prediction rules", th, k);
        return -1;
    }
    if (k > 0) {
        if (k > t->num_labels) {
            user_error_usage(DECISION_HINT, "top_k must be a whole number in [1, %d] for %s, got %d", t->num_labels,
                             t->display, k);
            return -1;
        }
        d->rule = DECISION_TOP_K, d->top_k = k;
        return 0;
    }
    if (strcmp(th, "tuned") == 0) {
        d->rule = DECISION_TUNED;
        return 0;
    }
    char *end;
    double v = strtod(th, &end);
    if (end == th || *end || !(v > 0 && v < 1)) {
        user_error_usage(DECISION_HINT, "threshold must be a probability in (0, 1) or 'tuned', got '%s'", th);
        return -1;
    }
    d->threshold = (float)v;
    return 0;
}

void decision_tune(Decision *d, const float *prob, const uint8_t *gold, int n) {
    if (d->rule != DECISION_TUNED) return;
    float grid[128];
    int ng = thresholds_grid(DECISION_GRID_LO, DECISION_GRID_HI, DECISION_GRID_STEP, grid, 128);
    thresholds_tune(prob, gold, n, d->K, grid, ng, THRESHOLD_DEFAULT, d->tuned, NULL);
    d->have_tuned = 1;
}

void decision_apply(const Decision *d, const float *prob, int n, uint8_t *pred) {
    switch (d->rule) {
    case DECISION_TOP_K: thresholds_top_k(prob, n, d->K, d->top_k, pred); return;
    case DECISION_TUNED:
        if (d->have_tuned) { thresholds_apply_per_label(prob, n, d->K, d->tuned, pred); return; }
        thresholds_apply(prob, n, d->K, THRESHOLD_DEFAULT, pred);
        return;
    case DECISION_THRESHOLD: thresholds_apply(prob, n, d->K, d->threshold, pred); return;
    }
}

uint8_t *decision_gold(const Dataset *data, int K) {
    uint8_t *g = xcalloc((size_t)(data->n ? data->n : 1) * (size_t)K, 1);
    for (int i = 0; i < data->n; i++)
        for (int j = 0; j < data->ex[i].nlabels; j++) {
            int k = data->ex[i].labels[j];
            if (k >= 0 && k < K) g[(size_t)i * (size_t)K + (size_t)k] = 1;
        }
    return g;
}

cJSON *decision_json(const Decision *d, const Task *t) {
    static const char *const RULES[] = {"threshold", "top_k", "tuned"};
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "rule", RULES[d->rule]);
    if (d->rule == DECISION_THRESHOLD) cJSON_AddNumberToObject(j, "threshold", d->threshold);
    if (d->rule == DECISION_TOP_K) cJSON_AddNumberToObject(j, "top_k", d->top_k);
    if (d->rule == DECISION_TUNED && d->have_tuned) {
        cJSON *o = cJSON_AddObjectToObject(j, "thresholds");
        for (int k = 0; k < d->K; k++)   /* grid points: 0.21, not the float's 0.2099999934 */
            cJSON_AddNumberToObject(o, task_label_name(t, k), round((double)d->tuned[k] * 1e6) / 1e6);
    }
    return j;
}

int decision_save(const Decision *d, const Task *t, const char *dir) {
    if (d->rule != DECISION_TUNED || !d->have_tuned) return 0;
    char path[4200];
    file_join(dir, DECISION_FILE, path, sizeof path);
    cJSON *j = decision_json(d, t);
    int rc = json_file_write(path, j);
    cJSON_Delete(j);
    return rc;
}

int decision_load(Decision *d, const Task *t, const char *dir) {
    if (d->rule != DECISION_TUNED) return 0;
    char path[4200];
    file_join(dir, DECISION_FILE, path, sizeof path);
    cJSON *j = json_file_read(path, 1);
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(j, "thresholds");
    int rc = 0;
    for (int k = 0; k < d->K && rc == 0; k++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, task_label_name(t, k));
        if (cJSON_IsNumber(v) && v->valuedouble > 0 && v->valuedouble < 1) d->tuned[k] = (float)v->valuedouble;
        else rc = -1;
    }
    if (rc || !j) {
        user_error_data("train the run again (glue finetune ... --set threshold=tuned)",
                        "%s: no tuned threshold for every label of %s", path, t->display);
        rc = -1;
    }
    d->have_tuned = rc == 0;
    cJSON_Delete(j);
    return rc;
}

int decision_of_run(Decision *d, const Task *t, const char *dir) {
    decision_default(d, t->num_labels);
    if (!t->multi_label || !dir || !dir[0]) return 0;
    char path[4200];
    file_join(dir, RUN_CONFIG, path, sizeof path);
    cJSON *config = json_file_read(path, 0);
    int rc = config ? decision_read(d, config, t) : 0;   /* no config.json: a run of before the rule */
    cJSON_Delete(config);
    return rc ? rc : decision_load(d, t, dir);
}
