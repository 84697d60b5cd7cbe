/* fuzz_dataset_json.c — a run's dataset.json (tasks/user_data.h
 * user_data_load: what eval, predict and compare read a user's dataset
 * from) and the check of its label order against the order the run was
 * trained with (train/run_txn.h run_dir_check_labels, over a results.json
 * recording "labels"). Checked beyond "no crash": a loaded dataset has 1 to
 * TASK_MAX_LABELS labels, each a non-empty string, none twice; saved and
 * read back it is the same task, and its own label order passes the check.
 * The splits it names are not read (a fuzzed path may name any file).
 * Input: byte 0 picks the recorded order (bit 0: the loaded labels, else
 * ["neg", "pos"]); the rest is dataset.json. */
#include "core/files.h"
#include "tasks/user_data.h"
#include "train/run_dir.h"
#include "train/run_txn.h"
#include "tests/fuzz/fuzz_util.h"

#include <cjson/cJSON.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    const char *meta = fuzz_path(USER_DATA_FILE);
    fuzz_write(meta, data + 1, size - 1, 0);
    const Task *t = user_data_load(meta);
    if (!t) return 0;
    if (t->num_labels < 1 || t->num_labels > TASK_MAX_LABELS) __builtin_trap();
    for (int i = 0; t->num_labels > 1 && i < t->num_labels; i++) {
        if (!t->labels[i] || !t->labels[i][0]) __builtin_trap();
        for (int k = 0; k < i; k++)
            if (strcmp(t->labels[i], t->labels[k]) == 0) __builtin_trap();
    }
    cJSON *res = cJSON_CreateObject();
    if (data[0] & 1) {
        cJSON_AddItemToObject(res, "labels", run_labels_json(t));
    } else {
        const char *two[] = {"neg", "pos"};
        cJSON_AddItemToObject(res, "labels", cJSON_CreateStringArray(two, 2));
    }
    char path[700];
    file_join(fuzz_dir(), RUN_RESULTS, path, sizeof path);
    if (json_file_write(path, res) != 0) __builtin_trap();
    cJSON_Delete(res);
    int rc = run_dir_check_labels(fuzz_dir(), t);
    if ((data[0] & 1) && rc != 0) __builtin_trap();   /* its own order */
    const char *back_path = fuzz_path("back.json");
    if (user_data_save(t, back_path) == 0) {
        const Task *back = user_data_load(back_path);
        if (!back || back->num_labels != t->num_labels) __builtin_trap();
        for (int i = 0; t->num_labels > 1 && i < t->num_labels; i++)
            if (strcmp(back->labels[i], t->labels[i]) != 0) __builtin_trap();
        user_data_free(back);
    }
    user_data_free(t);
    return 0;
}
