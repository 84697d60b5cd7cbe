/* fuzz_task_load.c — task files (tasks/load.c): every split layout of the GLUE
 * tasks, then of the other benchmarks (GoEmotions: multi-label cells), strict
 * or not, as .tsv, as a valid .tsv.gz, and as raw bytes under a .gz name.
 * Input: byte 0 picks the task and split, byte 1 the mode (bit 0 strict, bits
 * 1-2: plain, gzip, raw bytes named .gz); the rest is the file. A multi-label
 * row's set must be non-empty, ascending and in range. */
#include "tasks/task.h"
#include "tests/fuzz/fuzz_util.h"

#include <stdio.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2) return 0;
    int nsplits = 0;
    for (int t = 0; t < NUM_TASKS + NUM_EXTRA_TASKS; t++)
        nsplits += (t < NUM_TASKS ? TASKS[t] : EXTRA_TASKS[t - NUM_TASKS]).num_splits;
    int pick = data[0] % nsplits, mode = data[1], ti = 0;
    const Task *t = TASKS;
    while (pick >= t->num_splits) {
        pick -= t->num_splits;
        ti++;
        t = ti < NUM_TASKS ? &TASKS[ti] : &EXTRA_TASKS[ti - NUM_TASKS];
    }
    const TaskSplit *s = &t->splits[pick];
    char path[512];
    snprintf(path, sizeof path, "%s/%s", fuzz_dir(), t->dir);
    mkdir(path, 0700);
    snprintf(path, sizeof path, "%s/%s/%s", fuzz_dir(), t->dir, s->file);
    fuzz_remove(path);   /* the plain name wins over .gz */
    char gz[600];
    snprintf(gz, sizeof gz, "%s.gz", path);
    fuzz_remove(gz);
    int kind = (mode >> 1) % 3;
    fuzz_write(kind == 0 ? path : gz, data + 2, size - 2, kind == 1);
    Dataset d;
    if (task_load(t, s->name, fuzz_dir(), mode & 1, &d) == 0) {
        for (int i = 0; i < d.n; i++) {
            const Example *e = &d.ex[i];
            if (!e->a || (s->col_b >= 0) != (e->b != NULL)) __builtin_trap();
            if (t->multi_label && s->col_label >= 0 && e->nlabels < 1) __builtin_trap();
            for (int k = 0; k < e->nlabels; k++)
                if (e->labels[k] < 0 || e->labels[k] >= t->num_labels || (k && e->labels[k] <= e->labels[k - 1]))
                    __builtin_trap();
        }
        dataset_free(&d);
    }
    return 0;
}
