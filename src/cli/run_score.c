/* run_score.c — a trained run scored on a labelled split under its own rule
 * (see run_score.h). */
#include "cli/run_score.h"

#include "cli/cli_run.h"
#include "core/common.h"
#include "core/crc32.h"
#include "core/files.h"
#include "eval/label_table.h"
#include "models/run_config.h"
#include "train/evaluate.h"
#include "train/run_dir.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int run_score_batch(const char *dir) {
    char path[4096];
    file_join(dir, RUN_CONFIG, path, sizeof path);
    cJSON *c = json_file_read(path, 0);
    int b = (int)run_config_number(c, "eval_batch", EVALUATE_BATCH_DEFAULT);
    cJSON_Delete(c);
    return b > 0 ? b : EVALUATE_BATCH_DEFAULT;
}

int run_score_test_public(const Task *t) {
    const TaskSplit *ts = task_split(t, "test");
    return ts && ts->col_label >= 0 && (t->user || !ts->submit);
}

/* The split's per-label table and averages into out["details"][split], and
 * beside the run (dir, "" for none) as <split>_per_label.json / .md. 0 ok. */
static int run_score_details(const ModelOps *ops, const Task *t, const Dataset *d, const float *pred,
                             const Decision *rule, const char *dir, cJSON *out) {
    cJSON *details = evaluate_details(t, d, pred, rule);
    if (!details) return 0;   /* regression */
    int rc = 0;
    if (dir[0]) {
        char title[256];
        snprintf(title, sizeof title, "%s %s, %s", t->display, d->split->name, ops->name);
        rc = label_table_write(details, dir, d->split->name, title);
    }
    cJSON *all = cJSON_GetObjectItemCaseSensitive(out, "details");
    if (!all) all = cJSON_AddObjectToObject(out, "details");
    cJSON_AddItemToObject(all, d->split->name, details);
    return rc;
}

int run_score_dataset(const ModelOps *ops, Model *m, const Task *t, const Dataset *d, int batch,
                      const Decision *rule, const char *dir, cJSON *out, float **pred, double *seconds) {
    float *p = evaluate_predict_dataset(ops, m, d, batch, seconds);
    if (!p) return 1;
    cJSON_AddItemToObject(out, d->split->name, evaluate_metrics_rule(t, d, p, rule));
    int rc = run_score_details(ops, t, d, p, rule, dir, out);
    if (pred && rc == 0) *pred = p;
    else free(p);
    return rc ? 1 : 0;
}

/* The run's identity for the cache: CRCs of results.json and thresholds.json
 * (0 when absent), "%08x-%08x", into out. A retrained run changes both. */
static void run_score_fingerprint(const char *dir, char *out, size_t cap) {
    static const char *const FILES[2] = {RUN_RESULTS, DECISION_FILE};
    uint32_t crc[2] = {0, 0};
    for (int i = 0; i < 2; i++) {
        char path[4200];
        file_join(dir, FILES[i], path, sizeof path);
        if (file_exists(path) && crc32_file(path, 0, -1, &crc[i]) != 0) crc[i] = 0;
    }
    snprintf(out, cap, "%08x-%08x", (unsigned)crc[0], (unsigned)crc[1]);
}

cJSON *run_score_test(const ModelOps *ops, const Task *t, const char *dir) {
    char cache[4200], print[32];
    file_join(dir, RUN_SCORE_TEST_FILE, cache, sizeof cache);
    run_score_fingerprint(dir, print, sizeof print);
    cJSON *old = file_exists(cache) ? json_file_read(cache, 0) : NULL;
    if (old && strcmp(run_config_string(old, "run_fingerprint", ""), print) == 0 &&
        cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(old, "test")))
        return old;
    cJSON_Delete(old);   /* absent, unreadable, or of an earlier training of this directory */
    Decision rule;
    if (decision_of_run(&rule, t, dir) != 0) return NULL;
    Model *m = cli_load_run(ops, t, dir, 0);
    if (!m) return NULL;
    Dataset d;
    if (task_load(t, "test", task_data_root(), 0, &d) != 0) {
        ops->free(m);
        return NULL;
    }
    cJSON *out = cJSON_CreateObject();
    cJSON_AddStringToObject(out, "run_fingerprint", print);
    int rc = run_score_dataset(ops, m, t, &d, run_score_batch(dir), &rule, dir, out, NULL, NULL);
    ops->free(m);
    dataset_free(&d);
    if (rc == 0) rc = json_file_write(cache, out);
    if (rc) {
        cJSON_Delete(out);
        return NULL;
    }
    return out;
}
