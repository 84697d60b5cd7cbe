/* fuzz_subsets_json.c — the glue-subsets JSON reader (tasks/load_json.c) that
 * loads mnli-9k, snli-9k, qqp-9k and qnli-9k: an object of numbered entries with
 * text_a, text_b and label (MANIFEST section 4), strict or not, plain or gzip.
 * Input: byte 0 picks the subset task (bits 0-1), its split (bit 2), strict
 * (bit 3), gzip (bit 4); the rest is the file ({"0": {"text_a", "text_b",
 * "label"}, "1": ...}). */
#include "tasks/task.h"
#include "tests/fuzz/fuzz_util.h"

#include <stdio.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    int mode = data[0];
    const Task *t = &SUBSET_TASKS[(mode & 3) % NUM_SUBSET_TASKS];
    const TaskSplit *s = &t->splits[((mode >> 2) & 1) % t->num_splits];
    if (s->format != TASK_FORMAT_ENTRIES) return 0;   /* qnli-9k's official dev is a TSV: fuzz_task_load */
    char path[600], gz[620];
    snprintf(path, sizeof path, "%s/subsets", fuzz_dir());
    mkdir(path, 0700);
    snprintf(path, sizeof path, "%s/%s", fuzz_dir(), t->dir);
    mkdir(path, 0700);
    snprintf(path, sizeof path, "%s/%s/%s", fuzz_dir(), t->dir, s->file);
    snprintf(gz, sizeof gz, "%s.gz", path);
    fuzz_remove(path);
    fuzz_remove(gz);
    int zip = (mode >> 4) & 1;
    fuzz_write(zip ? gz : path, data + 1, size - 1, zip);
    Dataset d;
    if (task_load(t, s->name, fuzz_dir(), (mode >> 3) & 1, &d) == 0) {
        for (int i = 0; i < d.n; i++)
            if (!d.ex[i].a || !d.ex[i].b || d.ex[i].label < 0 || d.ex[i].label >= t->num_labels) __builtin_trap();
        dataset_free(&d);
    }
    return 0;
}
