/* fuzz_user_data.c — users' own dataset files (tasks/user_data.c, `glue
 * finetune --train/--dev/--test`): TSV, CSV (RFC 4180 quoting), JSONL and
 * fastText lines, plain or gzip, with or without a header, classification or
 * regression, default or named/numbered columns, single- or multi-label
 * (several __label__ tags, JSONL lists, TSV/CSV cells split by --label-sep);
 * then the run's dataset.json read back (user_data_load), and a fuzzed
 * dataset.json. Checked beyond "no crash": every class in range, a
 * multi-label row's set non-empty, ascending, without repeats.
 * Input: byte 0 picks the format (bits 0-1), gzip (bit 2), --no-header (bit 3),
 * --regression (bit 4), strict loading (bit 5), the format from the file name
 * (bit 6), --multi-label (bit 7); byte 1 the --columns option (byte 1 mod 9)
 * and the --label-sep (bits 4-5: none, "|", ";", ", "); the rest is train
 * FUZZ_SEP dev FUZZ_SEP dataset.json. */
#include "tasks/user_data.h"
#include "tests/fuzz/fuzz_util.h"

#include <stdio.h>
#include <string.h>

static void load_all(const Task *t, int strict) {
    for (int s = 0; s < t->num_splits; s++) {
        Dataset d;
        if (task_load(t, t->splits[s].name, fuzz_dir(), strict, &d) != 0) continue;
        for (int i = 0; i < d.n; i++) {
            const Example *e = &d.ex[i];
            if (!e->a) __builtin_trap();
            if (t->num_labels > 1 && e->label >= t->num_labels) __builtin_trap();
            if (!t->multi_label && (e->labels || e->nlabels)) __builtin_trap();
            if (t->multi_label && (e->label != -1 || e->nlabels < 1 || e->nlabels > t->num_labels)) __builtin_trap();
            for (int k = 0; t->multi_label && k < e->nlabels; k++)
                if (e->labels[k] < 0 || e->labels[k] >= t->num_labels || (k && e->labels[k] <= e->labels[k - 1]))
                    __builtin_trap();
        }
        dataset_free(&d);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2) return 0;
    static const char *const FORMATS[] = {"tsv", "csv", "jsonl", "fasttext"};
    static const char *const COLUMNS[] = {NULL, "text,label", "sentence1,sentence2,label", "2,1", "1,2,3",
                                          "a,b", "0,1", "label,label", "text,,label"};
    static const char *const SEPS[] = {NULL, "|", ";", ", "};
    int mode = data[0], gz = (mode >> 2) & 1;
    const char *format = FORMATS[mode & 3];
    const uint8_t *part[3];
    size_t len[3];
    int n = fuzz_split(data + 2, size - 2, part, len, 3);
    char train[600], dev[600], meta[600];
    snprintf(train, sizeof train, "%s/train.%s%s", fuzz_dir(), format, gz ? ".gz" : "");
    snprintf(dev, sizeof dev, "%s/dev.%s%s", fuzz_dir(), format, gz ? ".gz" : "");
    snprintf(meta, sizeof meta, "%s/%s", fuzz_dir(), USER_DATA_FILE);
    fuzz_write(train, part[0], len[0], gz);
    fuzz_write(dev, n > 1 ? part[1] : part[0], n > 1 ? len[1] : len[0], gz);
    UserDataOptions o = {.train = train, .dev = dev, .format = (mode & 64) ? NULL : format,
                         .columns = COLUMNS[data[1] % (sizeof COLUMNS / sizeof COLUMNS[0])],
                         .name = "fuzz", .no_header = (mode >> 3) & 1, .regression = (mode >> 4) & 1,
                         .multi_label = (mode >> 7) & 1, .label_sep = SEPS[(data[1] >> 4) & 3]};
    const Task *t = user_data_create(&o);
    if (t) {
        load_all(t, (mode >> 5) & 1);
        /* What a run records, read back: the same task. */
        if (user_data_save(t, meta) == 0) {
            const Task *back = user_data_load(meta);
            if (!back || back->num_labels != t->num_labels || back->multi_label != t->multi_label) __builtin_trap();
            user_data_free(back);
        }
        user_data_free(t);
    }
    if (n > 2) {   /* a dataset.json of its own */
        fuzz_write(meta, part[2], len[2], 0);
        const Task *f = user_data_load(meta);
        if (f) user_data_free(f);
    }
    return 0;
}
