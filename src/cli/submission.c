/* submission.c — the GLUE leaderboard zip (see submission.h). */
#include "cli/submission.h"

#include "cli/cli_run.h"
#include "core/common.h"
#include "core/files.h"
#include "eval/predictions.h"
#include "eval/zip.h"
#include "train/evaluate.h"
#include "train/run_dir.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Where majority-class files are written before they go into the archive. */
#define SUBMISSION_MAJORITY_DIR "majority"

/* The labelled split the majority class is counted on: train, else the first
 * labelled dev split (QNLI here has no train split), of the task that trains
 * for t (MNLI for AX). 0 ok, -1 when there is none (nothing loaded). */
static int submission_label_source(const Task *t, Dataset *out, const char **split) {
    const Task *base = cli_run_task(t);
    char path[4096];
    const TaskSplit *train = task_split(base, "train");
    if (train && task_split_path(base, train, task_data_root(), path, sizeof path) == 0 &&
        task_load(base, "train", task_data_root(), 0, out) == 0) {
        *split = "train";
        return 0;
    }
    const TaskSplit *dev = task_dev_split(base);
    if (dev && dev->col_label >= 0 && task_split_path(base, dev, task_data_root(), path, sizeof path) == 0 &&
        task_load(base, dev->name, task_data_root(), 0, out) == 0) {
        *split = dev->name;
        return 0;
    }
    return -1;
}

/* Majority-class predictions for test split sp of t into dir/<submit name>.
 * Returns the rows written, or -1 (after a message) when the test data or any
 * labelled split is missing. */
static int submission_majority(const Task *t, const TaskSplit *sp, const char *dir, char *path, size_t cap) {
    char test_path[4096];
    if (task_split_path(t, sp, task_data_root(), test_path, sizeof test_path) != 0) return -1;
    Dataset test, labelled;
    const char *source = NULL;
    if (submission_label_source(t, &labelled, &source) != 0) {
        user_warning("%s: no labelled split to take the majority class from (glue data fetch gets it)",
                     t->display);
        return -1;
    }
    if (task_load(t, sp->name, task_data_root(), 0, &test) != 0) { dataset_free(&labelled); return -1; }
    int k = evaluate_num_outputs(t);
    float *out = xmalloc(sizeof(float) * (size_t)(test.n ? test.n : 1) * (size_t)k);
    evaluate_majority_predict(t, &labelled, test.n, out);
    long *index = xmalloc(sizeof(long) * (size_t)(test.n ? test.n : 1));
    int *label = xmalloc(sizeof(int) * (size_t)(test.n ? test.n : 1));
    double *score = xmalloc(sizeof(double) * (size_t)(test.n ? test.n : 1));
    for (int i = 0; i < test.n; i++) {
        index[i] = test.ex[i].index;
        label[i] = k == 1 ? -1 : evaluate_argmax(out + (size_t)i * (size_t)k, k);
        score[i] = k == 1 ? out[i] : 0;
    }
    file_join(dir, sp->submit, path, cap);
    int rows = file_make_dir(dir) == 0 && predictions_write(path, t, index, label, score, test.n) == 0 ? test.n : -1;
    if (rows >= 0)
        fprintf(stderr, "%s: no trained model, majority class of %s written (flagged)\n", sp->submit, source);
    free(index); free(label); free(score); free(out);
    dataset_free(&test);
    dataset_free(&labelled);
    return rows;
}

/* The file a model wrote for (task, test split), or NULL. */
static const cJSON *submission_written(const cJSON *written, const Task *t, const TaskSplit *sp) {
    const cJSON *task = cJSON_GetObjectItemCaseSensitive(written, t->name);
    return task ? cJSON_GetObjectItemCaseSensitive(task, sp->name) : NULL;
}

int submission_write(const char *zip_path, const cJSON *written, const char *model, cJSON *report) {
    char majority_dir[4096];
    snprintf(majority_dir, sizeof majority_dir, "%s/%s", run_root(), SUBMISSION_MAJORITY_DIR);
    ZipWriter *z = zip_open(zip_path);
    if (!z) return 1;
    cJSON *files = cJSON_AddArrayToObject(report, "files");
    cJSON *missing = cJSON_AddArrayToObject(report, "missing");
    int rc = 0;
    for (int i = 0; i < NUM_TASKS && rc == 0; i++) {
        const Task *t = &TASKS[i];
        for (int s = 0; s < t->num_splits && rc == 0; s++) {
            const TaskSplit *sp = &t->splits[s];
            if (!sp->is_test || !sp->submit) continue;
            const cJSON *w = submission_written(written, t, sp);
            char path[4096];
            int rows;
            const char *source = model;
            if (w) {
                snprintf(path, sizeof path, "%s", cJSON_GetObjectItemCaseSensitive(w, "file")->valuestring);
                rows = cJSON_GetObjectItemCaseSensitive(w, "rows")->valueint;
            } else {
                rows = submission_majority(t, sp, majority_dir, path, sizeof path);
                source = "majority";
            }
            if (rows < 0) {
                cJSON_AddItemToArray(missing, cJSON_CreateString(sp->submit));
                continue;
            }
            if (zip_add_file(z, sp->submit, path) != 0) { rc = 1; break; }
            cJSON *f = cJSON_CreateObject();
            cJSON_AddStringToObject(f, "file", sp->submit);
            cJSON_AddStringToObject(f, "source", source);
            cJSON_AddNumberToObject(f, "rows", rows);
            cJSON_AddItemToArray(files, f);
        }
    }
    if (rc) { zip_close(z); return 1; }   /* removes the partial PATH.tmp */
    if (zip_close(z) != 0) return 1;
    cJSON_AddStringToObject(report, "zip", zip_path);
    if (cJSON_GetArraySize(missing) > 0) {   /* written for inspection, but not a submission */
        user_error_io("fetch the missing test data (glue data fetch all) and write the archive again",
                   "%s lacks %d of the leaderboard's files (no test data here): the leaderboard accepts only a "
                   "complete archive",
                   zip_path, cJSON_GetArraySize(missing));
        return 1;
    }
    return 0;
}
