/* fetch.h — `glue data fetch`: fill the data folder (GLUE in the official layout,
 * GoEmotions, Multi30k, the pretraining text) from a local mirror or the
 * official URLs, and check every file's row count against the official size.
 *
 * Both ways go through one install step: a download is unpacked into a staging
 * folder laid out like a mirror, then installed from there exactly as a mirror
 * would be (decompress, count, rename into place). So the row checks, the
 * "up to date" no-op and the reports are the same code for both. */
#ifndef GLUE_FETCH_H
#define GLUE_FETCH_H

#include <stddef.h>

typedef struct FetchOptions {
    const char *mirror;    /* folder laid out like ../shared/data (glue/, mt/, pretrain/); NULL: download */
    const char *dest;      /* data root holding glue/, mt/, pretrain/; NULL: "data" */
    const char *glue_dest; /* GLUE root; NULL: <dest>/glue, or $GLUE_DATA / data/glue without --dest */
    int json;              /* print one JSON object instead of the table */
} FetchOptions;

/* Fetch what[0..n): task ids (any spelling task_find accepts: GLUE, subsets,
 * goemotions), "glue", "subsets", "mt", "pretrain" or "all" (n == 0 means "all"). Prints one line per file (or JSON).
 * Returns the exit code: 0 done; 1 a file is bad (short, truncated, download
 * failed) or something explicitly asked for is missing — with "all", files a
 * mirror lacks (MNLI offline) are reported but do not fail; 2 unknown name. */
int data_fetch(const char *const *what, int n, const FetchOptions *o);

/* Build MRPC's train.tsv, dev.tsv and test.tsv in dir from msr_paraphrase_train.txt,
 * msr_paraphrase_test.txt and dev_ids.tsv there (each may be .gz), the way
 * download_glue_data.py does. Returns 0, or -1 with a message in err. */
int data_mrpc_build(const char *dir, char *err, size_t err_cap);

#endif
