/* load_rows.h — what every split reader shares (tasks/load.c: GLUE TSV,
 * tasks/load_json.c: glue-subsets JSON, tasks/user_data.c: a user's files):
 * the checks of one row's texts and label, and the "skip with a count, or fatal
 * with strict" reporting of a malformed row. Internal to tasks/. */
#ifndef GLUE_LOAD_ROWS_H
#define GLUE_LOAD_ROWS_H

#include "tasks/task.h"

#include <stddef.h>

typedef struct LoadCtx {
    const Task *t;
    const TaskSplit *s;
    const char *path;
    char why[512];             /* what is wrong with the current row */
    int fatal;                 /* the row is wrong in a way no skip can mend (a list of labels in a
                                * single-label task: the data are another kind): an error even when
                                * not strict */
} LoadCtx;

/* Records why the row is bad; returns -1 (so "return load_row_bad(...)"). */
int load_row_bad(LoadCtx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A text field: no NUL byte, valid UTF-8 (the first bad byte is named). what
 * names the field in the message ("sentence1", "text_a"). 0 or -1. */
int load_check_text(LoadCtx *c, const char *text, size_t len, const char *what);
/* The label (class name, or a score for a regression task; the cell trimmed)
 * into ex. 0 or -1; a list of the task's labels also sets c->fatal. */
int load_parse_label(LoadCtx *c, const char *v, Example *ex);
/* A multi-label row's labels (tasks/label_set.c) into ex->labels (ascending
 * ids) and ex->nlabels, ex->label -1: from the label strings names[0..n), or
 * from a cell joining them with sep (spaces around each trimmed). Malformed
 * (c->why): no label, an empty element, a repeat, an unknown label or id. 0 or -1. */
int load_label_set(LoadCtx *c, const char *const *names, int n, Example *ex);
int load_label_list(LoadCtx *c, const char *cell, const char *sep, Example *ex);
/* The names of such a cell, split in place (trimmed) into names[0..max): how
 * many (0 for an empty cell), or -1 (c->why: an empty element, more than max). */
int load_label_split(LoadCtx *c, char *cell, const char *sep, const char **names, int max);
/* Appends ex to d (cap: d's capacity, 0 at first). */
void load_push(Dataset *d, int *cap, const Example *ex);
/* A growing byte buffer, NUL-terminated after every append ({0}: empty). */
typedef struct { char *p; size_t n, cap; } LoadBuf;
void load_buf_put(LoadBuf *b, const char *s, size_t n);
/* One malformed row at where ("path:12", "path: entry \"7\""): fatal when strict
 * (returns -1 after the message), else a warning (the first few) and a count. */
int load_report_bad(LoadCtx *c, const char *where, int strict, Dataset *d);
/* The warning with the count of skipped rows, when there were any. */
void load_report_skipped(const Dataset *d, const char *path);

/* A user's own file (tasks/user_data.c): fills d from c->path. */
int user_data_read(LoadCtx *c, int strict, Dataset *d);

/* The glue-subsets JSON reader (tasks/load_json.c): fills d from path. */
int load_json_entries(LoadCtx *c, int strict, Dataset *d);
/* One JSON object's texts (key_b NULL: single text) and label (key_label NULL:
 * unlabelled; a string, or a number taken as written) into ex. 0 or -1. */
typedef struct cJSON cJSON;
int load_json_example(LoadCtx *c, const cJSON *e, const char *key_a, const char *key_b, const char *key_label,
                      Example *ex);
/* One field of a JSON object: a text (a string, no NUL, valid UTF-8) or, with
 * label, a string or a number (written into num). *out points into e or num.
 * 0, or -1 with the reason (no such key, wrong type, NUL, bad UTF-8). */
int load_json_field(LoadCtx *c, const cJSON *e, const char *key, int label, char *num, size_t cap,
                    const char **out);
/* The labels of e[key] into names[0..max): a string or a number (one label)
 * or a list of them (numbers as written, into num[i]). How many (0 for []), or
 * -1 (c->why: no such key, another type, a NUL byte, more than max). */
int load_json_labels(LoadCtx *c, const cJSON *e, const char *key, char (*num)[32], const char **names, int max);
/* cJSON_Parse of text[0..len) with its NUL bytes (raw or \u0000) marked, so that
 * load_json_field reports them. NULL when it is not JSON. */
cJSON *load_json_parse_marked(const char *text, size_t len);
/* Entries of such a file (for row counts): LINES_OK, or the LinesStatus of what
 * is wrong (LINES_CORRUPT: not one JSON object) with err. */
int load_json_count(const char *path, long *n, char *err, size_t cap);

#endif
