/* predictions.c — reading, matching and writing leaderboard prediction files
 * (see predictions.h). */
#include "eval/predictions.h"

#include "core/common.h"
#include "core/files.h"
#include "core/lines.h"
#include "tasks/fields.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PRED_HEADER "index\tprediction"

/* "0 or 1", "entailment, neutral or contradiction": what a row may contain. */
static void labels_wanted(const Task *t, char *out, size_t cap) {
    size_t n = 0;
    out[0] = '\0';
    for (int k = 0; k < t->num_labels && n < cap; k++)
        n += (size_t)snprintf(out + n, cap - n, "%s'%s'", k == 0 ? "" : k == t->num_labels - 1 ? " or " : ", ",
                              t->labels[k]);
}

/* Parse one data row "index<TAB>prediction" into slot i, by the task loader's
 * rules (tasks/fields.h): no NUL byte, an index of digits only, a plain number. */
static int parse_row(Predictions *p, int i, char *line, size_t len, long line_no) {
    const Task *t = p->task;
    if (row_has_nul(line, len)) {
        user_error_data("write the file as text", "%s:%ld: NUL byte in the row", p->path, line_no);
        return -1;
    }
    char *f[3];
    int n = fields_split(line, f, 3);
    if (n != 2) {
        user_error_data("each row is 'index<TAB>prediction'", "%s:%ld: expected 2 tab-separated columns, got %d",
                   p->path, line_no, n);
        return -1;
    }
    const char *idx = f[0], *val = f[1];
    if (*idx == '\0') {
        user_error_data(NULL, "%s:%ld: missing index", p->path, line_no);
        return -1;
    }
    if (field_index(idx, &p->index[i]) != 0) {
        user_error_data(NULL, "%s:%ld: index '%.40s' is not a non-negative integer", p->path, line_no, idx);
        return -1;
    }
    p->line[i] = line_no;
    p->label[i] = -1;
    p->score[i] = 0;
    if (t->num_labels == 1) {
        if (field_score(val, &p->score[i]) != 0) {
            user_error_data(NULL, "%s:%ld: prediction '%.40s' is not a number (%s wants a similarity score)",
                       p->path, line_no, val, t->display);
            return -1;
        }
    } else {
        p->label[i] = task_label_index(t, val);
        if (p->label[i] < 0) {
            char want[128];
            labels_wanted(t, want, sizeof want);
            user_error_data(NULL, "%s:%ld: unknown label '%.40s' (%s wants %s)", p->path, line_no, val, t->display,
                       want);
            return -1;
        }
    }
    return 0;
}

static void predictions_grow(Predictions *p, int cap) {
    p->index = xrealloc(p->index, sizeof *p->index * (size_t)cap);
    p->label = xrealloc(p->label, sizeof *p->label * (size_t)cap);
    p->score = xrealloc(p->score, sizeof *p->score * (size_t)cap);
    p->line = xrealloc(p->line, sizeof *p->line * (size_t)cap);
}

int predictions_read(const char *path, const Task *t, Predictions *out) {
    memset(out, 0, sizeof *out);
    out->task = t;
    out->path = xstrdup(path);
    LineReader r;
    if (lines_open_or_report(&r, path)) {
        predictions_free(out);
        return -1;
    }
    char *line;
    size_t len;
    int got, cap = 0, status = 0;
    while (status == 0 && (got = lines_next(&r, &line, &len)) == 1) {
        if (r.line_no == 1) {
            /* A UTF-8 BOM (spreadsheet exports) is not part of the header. */
            const char *h = strncmp(line, "\xEF\xBB\xBF", 3) == 0 ? line + 3 : line;
            if (row_has_nul(line, len) || strcmp(h, PRED_HEADER) != 0) {
                user_error_data("the first line of a leaderboard file is 'index<TAB>prediction'",
                           "%s:1: expected the header 'index<TAB>prediction'", path);
                status = -1;
            }
            continue;
        }
        if (len == 0) continue;   /* blank lines (a trailing one, typically) carry nothing */
        if (out->n == cap) predictions_grow(out, cap = cap ? 2 * cap : 1024);
        status = parse_row(out, out->n, line, len, r.line_no);
        out->n += status == 0;
    }
    if (status == 0 && got < 0) { lines_report(&r); status = -1; }
    if (status == 0 && r.line_no == 0) {
        user_error_data(NULL, "%s: empty file (expected the header 'index<TAB>prediction')", path);
        status = -1;
    }
    lines_close(&r);
    if (status != 0) predictions_free(out);
    return status;
}

void predictions_free(Predictions *p) {
    free(p->path);
    free(p->index);
    free(p->label);
    free(p->score);
    free(p->line);
    memset(p, 0, sizeof *p);
}

typedef struct { long index; int row; } IndexRow;

static int index_row_cmp(const void *a, const void *b) {
    const IndexRow *x = a, *y = b;
    return (x->index > y->index) - (x->index < y->index);
}

/* Row of d whose index is `index`, or -1 (ix sorted by index). */
static int find_row(const IndexRow *ix, int n, long index) {
    int lo = 0, hi = n - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        if (ix[mid].index == index) return ix[mid].row;
        if (ix[mid].index < index) lo = mid + 1;
        else hi = mid - 1;
    }
    return -1;
}

int predictions_match(const Predictions *p, const Dataset *d, int *label_out, double *score_out) {
    const char *split = d->split ? d->split->name : "data";
    IndexRow *ix = xmalloc(sizeof *ix * (size_t)(d->n ? d->n : 1));
    long *filled_by = xmalloc(sizeof *filled_by * (size_t)(d->n ? d->n : 1));   /* line, or 0 */
    for (int i = 0; i < d->n; i++) { ix[i] = (IndexRow){d->ex[i].index, i}; filled_by[i] = 0; }
    qsort(ix, (size_t)d->n, sizeof *ix, index_row_cmp);
    int status = 0;
    for (int k = 0; k < p->n && status == 0; k++) {
        int row = find_row(ix, d->n, p->index[k]);
        if (row < 0) {
            user_error_data("predictions must use the index of the scored split",
                       "%s:%ld: index %ld is not in %s %s (%d rows)", p->path, p->line[k], p->index[k],
                       p->task->display, split, d->n);
            status = -1;
        } else if (filled_by[row]) {
            user_error_data(NULL, "%s:%ld: index %ld appears twice (first on line %ld)", p->path, p->line[k],
                       p->index[k], filled_by[row]);
            status = -1;
        } else {
            filled_by[row] = p->line[k];
            if (label_out) label_out[row] = p->label[k];
            if (score_out) score_out[row] = p->score[k];
        }
    }
    for (int i = 0; i < d->n && status == 0; i++)
        if (!filled_by[i]) {
            user_error_data("write one prediction per example",
                       "%s: %d predictions for the %d rows of %s %s; none for index %ld (%s line %ld)", p->path,
                       p->n, d->n, p->task->display, split, d->ex[i].index, d->split ? d->split->file : split,
                       d->ex[i].line);
            status = -1;
        }
    free(ix);
    free(filled_by);
    return status;
}

int predictions_write(const char *path, const Task *t, const long *index, const int *label,
                      const double *score, int n) {
    AtomicFile out;
    FILE *f = atomic_open(&out, path);
    if (!f) return -1;
    fprintf(f, "%s\n", PRED_HEADER);
    for (int i = 0; i < n; i++) {
        if (t->num_labels == 1) {
            fprintf(f, "%ld\t%.3f\n", index[i], score[i]);
            continue;
        }
        if (label[i] < 0 || label[i] >= t->num_labels) DIE("predictions_write: label %d out of range", label[i]);
        fprintf(f, "%ld\t%s\n", index[i], t->labels[label[i]]);
    }
    return atomic_commit(&out);
}
