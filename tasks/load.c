/* load.c — turn a task's split file (official layout, .tsv or .tsv.gz) into a Dataset.
 *
 * Rows are plain tab-separated fields (no quoting: the GLUE files contain bare
 * quotes, so a CSV reader would merge rows). A multi-label task's label column
 * joins its labels with the task's separator (tasks/label_set.c). A malformed
 * row — wrong column count, unknown label, bad STS-B score, invalid UTF-8 — is
 * reported as "path:line: what (row skipped)" and skipped, with a count at the
 * end; strict makes the first one fatal. A wrong header means the wrong file
 * or layout and is always fatal, and so is a split without a single usable row. */
#include "tasks/task.h"
#include "tasks/load_rows.h"

#include "core/common.h"
#include "core/lines.h"
#include "tasks/fields.h"
#include "text/utf8.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

enum {
    LOAD_MAX_COLS = 32,        /* more than any GLUE layout (MNLI dev: 16) */
    LOAD_MAX_REPORTED = 20,    /* malformed rows printed one by one, then only counted */
};
#define STSB_MAX_SCORE 5.0

int load_row_bad(LoadCtx *c, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->why, sizeof c->why, fmt, ap);
    va_end(ap);
    return -1;
}

/* Name of column k for messages: the official header's name, else "column k+1". */
static void column_name(const TaskSplit *s, int k, char *out, size_t cap) {
    const char *h = s->header;
    for (int i = 0; h && i < k; i++) {
        h = strchr(h, '\t');
        if (h) h++;
    }
    if (!h) { snprintf(out, cap, "column %d", k + 1); return; }
    size_t n = strcspn(h, "\t");
    snprintf(out, cap, "%.*s", (int)(n < cap ? n : cap - 1), h);
}

int load_check_text(LoadCtx *c, const char *text, size_t len, const char *what) {
    if (memchr(text, '\0', len)) return load_row_bad(c, "NUL byte in %s", what);
    if (utf8_valid(text, len)) return 0;
    size_t at = 0, next = 0;   /* find the first bad byte, for the message */
    while (next < len && !(utf8_decode(text, len, &next) == UTF8_REPLACEMENT && next == at + 1)) at = next;
    return load_row_bad(c, "invalid UTF-8 in %s at byte %zu", what, at + 1);
}

static int check_text(LoadCtx *c, char **f, int k) {
    char col[64];
    column_name(c->s, k, col, sizeof col);
    return load_check_text(c, f[k], strlen(f[k]), col);
}

/* The message for a cell that lists several labels of a single-label task. */
static int label_list_bad(LoadCtx *c, const char *v) {
    c->fatal = 1;
    return load_row_bad(c, "label '%.60s' is a list of labels, but %s is single-label: give one label per row",
                        v, c->t->display);
}

int load_parse_label(LoadCtx *c, const char *v, Example *ex) {
    const Task *t = c->t;
    if (t->num_labels == 1) {
        double x;
        if (field_score(v, &x) != 0) return load_row_bad(c, "score '%.40s' is not a number", v);
        /* STS-B's scale; a user's regression target may be any finite number */
        if (!t->user && (x < 0 || x > STSB_MAX_SCORE))
            return load_row_bad(c, "score '%.40s' is not a number in [0, %g]", v, STSB_MAX_SCORE);
        ex->score = (float)x;
        ex->label = 0;
        return 0;
    }
    ex->label = task_label_index(t, v);
    if (ex->label >= 0) return 0;
    if (task_label_list_of(v, t->labels, t->num_labels)) return label_list_bad(c, v);
    char list[256] = "";
    for (int i = 0; i < t->num_labels && strlen(list) < 200; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", t->labels[i]);
    return load_row_bad(c, "label '%.40s' is not one of %s", v, list);
}

/* Fill ex from one data row (line already stripped of its newline). */
static int parse_row(LoadCtx *c, char *line, size_t len, long row, Example *ex) {
    const TaskSplit *s = c->s;
    char *f[LOAD_MAX_COLS];
    if (row_has_nul(line, len)) return load_row_bad(c, "NUL byte in the row");
    int n = fields_split(line, f, LOAD_MAX_COLS);
    if (n != s->num_cols)
        return load_row_bad(c, "expected %d tab-separated columns, found %d", s->num_cols, n);
    memset(ex, 0, sizeof *ex);
    ex->label = -1;
    ex->index = row;
    if (s->col_index >= 0 && field_index(f[s->col_index], &ex->index) != 0)
        return load_row_bad(c, "index '%.40s' is not a non-negative integer", f[s->col_index]);
    if (s->col_label >= 0 && (c->t->multi_label ? load_label_list(c, f[s->col_label], c->t->label_sep, ex)
                                                : load_parse_label(c, f[s->col_label], ex)) != 0)
        return -1;
    if (check_text(c, f, s->col_a) != 0 || (s->col_b >= 0 && check_text(c, f, s->col_b) != 0)) {
        free(ex->labels);
        return -1;
    }
    ex->a = xstrdup(f[s->col_a]);
    ex->b = s->col_b >= 0 ? xstrdup(f[s->col_b]) : NULL;
    return 0;
}

/* Show tabs as "\t" so a header mismatch is readable on one line. */
static void escape_tabs(const char *s, char *out, size_t cap) {
    size_t n = 0;
    for (; *s && n + 3 < cap; s++) {
        if (*s == '\t') { out[n++] = '\\'; out[n++] = 't'; }
        else out[n++] = *s;
    }
    out[n] = '\0';
}

static int check_header(LoadCtx *c, const char *line) {
    if (strcmp(line, c->s->header) == 0) return 0;
    char got[256], want[512], hint[256];
    escape_tabs(line, got, sizeof got);
    escape_tabs(c->s->header, want, sizeof want);
    snprintf(hint, sizeof hint, "is this the %s %s file? re-fetch it with 'glue data fetch %s'",
             c->t->display, c->s->name, c->t->name);
    user_error_data(hint, "%s:1: header '%s' is not the official layout '%s'", c->path, got, want);
    return -1;
}

void load_push(Dataset *d, int *cap, const Example *ex) {
    if (d->n == *cap) {
        *cap = *cap ? 2 * *cap : 1024;
        d->ex = xrealloc(d->ex, (size_t)*cap * sizeof *d->ex);
    }
    d->ex[d->n++] = *ex;
}

void load_buf_put(LoadBuf *b, const char *s, size_t n) {
    if (b->n + n + 1 > b->cap) {
        b->cap = (b->n + n + 1) * 2;
        b->p = xrealloc(b->p, b->cap);
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}

int load_report_bad(LoadCtx *c, const char *where, int strict, Dataset *d) {
    if (c->fatal) {
        user_error_data("one label a row; a list means multi-label data", "%s: %s", where, c->why);
        return -1;
    }
    if (strict) {
        user_error_data("fix or remove the row (non-strict loading skips it)", "%s: %s", where, c->why);
        return -1;
    }
    if (d->num_skipped < LOAD_MAX_REPORTED)
        user_warning("%s: %s (row skipped)", where, c->why);
    else if (d->num_skipped == LOAD_MAX_REPORTED)
        user_warning("%s: further malformed rows are counted but not shown", c->path);
    d->num_skipped++;
    return 0;
}

void load_report_skipped(const Dataset *d, const char *path) {
    if (d->num_skipped)
        user_warning("%d malformed row%s skipped in %s", d->num_skipped, d->num_skipped == 1 ? "" : "s", path);
}

static int load_rows(LoadCtx *c, LineReader *r, int strict, Dataset *d) {
    static const char BOM[] = "\xEF\xBB\xBF";
    char *line;
    size_t len;
    int k, cap = 0;
    long row = 0;
    while ((k = lines_next(r, &line, &len)) > 0) {
        if (r->line_no == 1 && strncmp(line, BOM, 3) == 0) { line += 3; len -= 3; }  /* MRPC */
        if (r->line_no == 1 && c->s->has_header) {
            if (check_header(c, line) != 0) return -1;
            continue;
        }
        Example ex;
        if (parse_row(c, line, len, row, &ex) == 0) {
            ex.line = r->line_no;
            load_push(d, &cap, &ex);
            row++;
        } else {
            char where[4200];
            snprintf(where, sizeof where, "%s:%ld", c->path, r->line_no);
            if (load_report_bad(c, where, strict, d) != 0) return -1;
        }
    }
    if (k < 0) { lines_report(r); return -1; }
    if (c->s->has_header && r->line_no == 0) {
        user_error_data("re-fetch it with 'glue data fetch'", "%s: empty file (expected the header line)", c->path);
        return -1;
    }
    return 0;
}

int task_load(const Task *t, const char *split_name, const char *root, int strict, Dataset *out) {
    memset(out, 0, sizeof *out);
    const TaskSplit *s = task_split(t, split_name);
    if (!s) {
        char hint[256] = "splits:";
        for (int i = 0; i < t->num_splits; i++)
            snprintf(hint + strlen(hint), sizeof hint - strlen(hint), " %s", t->splits[i].name);
        user_error_usage(hint, "task %s has no split '%s'", t->name, split_name ? split_name : "(none)");
        return EXIT_USAGE;
    }
    char path[4096], hint[256];
    if (task_split_path(t, s, root, path, sizeof path) != 0) {
        snprintf(hint, sizeof hint, "run 'glue data fetch %s' (or set $GLUE_DATA to the GLUE folder)", t->name);
        user_error_io(hint, "%s: no such file (%s %s split)", path, t->display, s->name);
        return 1;
    }
    LineReader r;
    LoadCtx c = {.t = t, .s = s, .path = path};
    out->task = t;
    out->split = s;
    int rc;
    if (t->user) {
        rc = user_data_read(&c, strict, out);
    } else if (s->format == TASK_FORMAT_ENTRIES) {
        rc = load_json_entries(&c, strict, out);
    } else {
        rc = lines_open(&r, path) == LINES_OK ? load_rows(&c, &r, strict, out) : (lines_report(&r), -1);
        lines_close(&r);
    }
    if (rc != 0) { dataset_free(out); return 1; }
    load_report_skipped(out, path);
    /* Nothing to train on or to score: every metric of it would be a made-up
     * number (accuracy 0.00), so it is an error, whichever command asked. */
    if (out->n == 0) {
        if (out->num_skipped)
            user_error_data("fix the rows (see the messages above)", "%s: no usable rows in the %s %s split (%d "
                            "malformed row%s skipped)", path, t->display, s->name, out->num_skipped,
                            out->num_skipped == 1 ? "" : "s");
        else
            user_error_data("give the file its rows", "%s: the %s %s split has no rows%s", path, t->display,
                            s->name, s->has_header ? " (only a header)" : "");
        dataset_free(out);
        return 1;
    }
    return 0;
}

int task_count_rows(const TaskSplit *s, const char *path, long *rows, char *err, size_t cap) {
    if (s->format == TASK_FORMAT_ENTRIES) return load_json_count(path, rows, err, cap);
    long lines = 0;
    LinesStatus st = lines_count(path, &lines, err, cap);
    *rows = lines > s->has_header ? lines - s->has_header : 0;
    return (int)st;
}

void dataset_free(Dataset *d) {
    for (int i = 0; i < d->n; i++) {
        free(d->ex[i].a);
        free(d->ex[i].b);
        free(d->ex[i].labels);
    }
    free(d->ex);
    d->ex = NULL;
    d->n = 0;
}

void dataset_report_truncated(const Dataset *d, long rows, int max_len, const char *unit, long longest) {
    if (rows <= 0) return;
    user_warning("%ld of %d rows of %s %s truncated to max_len %d %s (the longest had %ld)", rows, d->n,
                 d->task ? d->task->display : "the data", d->split ? d->split->name : "input", max_len, unit, longest);
}

double dataset_mean_score(const Dataset *d) {
    double sum = 0.0;
    for (int i = 0; i < d->n; i++) sum += d->ex[i].score;
    return d->n ? sum / d->n : 0.0;
}

int dataset_add_swapped_pairs(Dataset *d) {
    if (!d->task->symmetric) {
        user_error_usage("both orders only for MRPC, STS-B and QQP, whose labels do not depend on the order",
                   "%s: its pairs are not symmetric (pair_swap)", d->task->display);
        return -1;
    }
    int n = d->n;
    d->ex = xrealloc(d->ex, sizeof *d->ex * (size_t)(2 * n));
    for (int i = 0; i < n; i++) {
        Example *e = &d->ex[n + i];
        *e = d->ex[i];
        e->a = xstrdup(d->ex[i].b);
        e->b = xstrdup(d->ex[i].a);
        if (e->labels) {
            e->labels = xmalloc(sizeof *e->labels * (size_t)e->nlabels);
            memcpy(e->labels, d->ex[i].labels, sizeof *e->labels * (size_t)e->nlabels);
        }
    }
    d->n = 2 * n;
    return 0;
}
