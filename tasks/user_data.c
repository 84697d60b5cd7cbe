/* user_data.c — a user's own dataset as a Task (see user_data.h).
 *
 * One row reader serves every format: it turns the next record of the file into
 * the texts and the label strings (RowText: one, or several for a multi-label
 * row), or says why the record is malformed. Two passes use it:
 * user_data_create reads the train file's label strings (no messages: the load
 * that follows reports every bad row once) and sees whether a row has several,
 * and task_load (through user_data_read) builds the Examples, reporting
 * malformed rows as "file:line: what" with the skip count or strict, like the
 * GLUE loader. */
#include "tasks/user_data.h"

#include "core/common.h"
#include "core/files.h"
#include "core/lines.h"
#include "tasks/fields.h"
#include "tasks/load_rows.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

typedef enum { USER_TSV, USER_CSV, USER_JSONL, USER_FASTTEXT, NUM_USER_FORMATS } UserFormat;
static const char *const FORMAT_NAMES[NUM_USER_FORMATS] = {"tsv", "csv", "jsonl", "fasttext"};

#define FASTTEXT_PREFIX "__label__"
#define USER_MAX_FIELDS 256
#define USER_LABEL_SEP ","   /* --label-sep's default */

enum { COL_A, COL_B, COL_LABEL, NUM_COLS };
enum { FILE_TRAIN, FILE_DEV, FILE_TEST, NUM_FILES };
static const char *const SPLIT_NAMES[NUM_FILES] = {"train", "dev", "test"};

struct UserData {
    UserFormat format;
    int header, regression;
    int multi_label;            /* rows hold label lists (said, or seen in train) */
    char *label_sep;            /* TSV/CSV multi-label: what joins the labels of a cell */
    char *col[NUM_COLS];        /* header names, JSON keys or 1-based numbers; col[COL_B] NULL: single text */
    char *file[NUM_FILES];      /* absolute paths; file[FILE_TEST] may be NULL */
    char *name;
    char *labels[TASK_MAX_LABELS];
    int num_labels;
    Task task;                  /* what the rest of the program sees */
};

/* ---- the row reader ---- */

typedef struct {
    const char *a, *b;          /* b NULL for a single text */
    size_t la, lb;              /* byte lengths (a NUL byte inside is reported) */
    const char *labels[TASK_MAX_LABELS];   /* the row's label strings, as written */
    int nlabels;
} RowText;

typedef struct {
    const UserData *u;
    LineReader r;
    LoadBuf rec;                /* the record's fields, each NUL-terminated */
    size_t off[USER_MAX_FIELDS], len[USER_MAX_FIELDS];
    int nf;                     /* fields of the current record (may exceed USER_MAX_FIELDS) */
    int ncols;                  /* fields per row (the header's or the first row's); 0 until known */
    int idx[NUM_COLS];          /* TSV/CSV: column indices, -1 none */
    cJSON *json;                /* JSONL: the current object */
    char num[TASK_MAX_LABELS][32];   /* JSONL: numeric labels as text */
    long line;                  /* first line of the current record */
} RowReader;

static void field_end(RowReader *rr, size_t start) {
    if (rr->nf < USER_MAX_FIELDS) {
        rr->off[rr->nf] = start;
        rr->len[rr->nf] = rr->rec.n - start;
    }
    rr->nf++;
    load_buf_put(&rr->rec, "", 1);   /* the field's NUL */
}

/* TSV: tab-separated fields of one line, no quoting. */
static void tsv_fields(RowReader *rr, const char *line, size_t len) {
    size_t start = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i < len && line[i] != '\t') continue;
        size_t at = rr->rec.n;
        load_buf_put(&rr->rec, line + start, i - start);
        field_end(rr, at);
        start = i + 1;
    }
}

/* CSV (RFC 4180): fields of one record starting with line; a quoted field may
 * run over several lines (read here). 0, -1 malformed (c->why), -2 read error. */
static int csv_fields(RowReader *rr, LoadCtx *c, char *line, size_t len) {
    size_t i = 0, start = rr->rec.n;
    int quoted = 0, closed = 0, fresh = 1;   /* in quotes / just after the closing quote / nothing yet */
    for (;;) {
        if (i == len) {
            if (!quoted) break;
            load_buf_put(&rr->rec, "\n", 1);     /* a line break inside quotes is part of the field */
            int k = lines_next(&rr->r, &line, &len);
            if (k < 0) return -2;
            if (k == 0) return load_row_bad(c, "a quoted field opened on this line is never closed");
            i = 0;
            continue;
        }
        char ch = line[i];
        if (quoted) {
            if (ch == '"' && i + 1 < len && line[i + 1] == '"') { load_buf_put(&rr->rec, "\"", 1); i += 2; }
            else if (ch == '"') { quoted = 0; closed = 1; i++; }
            else { load_buf_put(&rr->rec, &line[i], 1); i++; }
            continue;
        }
        if (ch == ',') {
            field_end(rr, start);
            start = rr->rec.n;
            quoted = closed = 0;
            fresh = 1;
            i++;
            continue;
        }
        if (closed) return load_row_bad(c, "text after a closing quote (column %d)", rr->nf + 1);
        if (ch == '"' && !fresh)
            return load_row_bad(c, "a quote inside an unquoted field (column %d): quote the field and double the quote",
                                rr->nf + 1);
        if (ch == '"') quoted = 1;
        else load_buf_put(&rr->rec, &line[i], 1);
        fresh = 0;
        i++;
    }
    field_end(rr, start);
    return 0;
}

/* Column indices of TSV/CSV from the header fields (or numbers). 0, or -1 with err. */
static int resolve_columns(RowReader *rr, char *err, size_t cap) {
    const UserData *u = rr->u;
    for (int k = 0; k < NUM_COLS; k++) {
        rr->idx[k] = -1;
        const char *want = u->col[k];
        if (!want) continue;
        if (field_is_digits(want)) {
            long v = strtol(want, NULL, 10);
            rr->idx[k] = v >= 1 && v <= USER_MAX_FIELDS ? (int)v - 1 : -2;
            if (rr->idx[k] == -2) {
                snprintf(err, cap, "column %s is out of range (1..%d)", want, USER_MAX_FIELDS);
                return -1;
            }
            continue;
        }
        if (!u->header) {
            snprintf(err, cap, "column '%s' is a name but the file has no header: give 1-based column numbers", want);
            return -1;
        }
        for (int f = 0; f < rr->nf && f < USER_MAX_FIELDS; f++)
            if (strcmp(rr->rec.p + rr->off[f], want) == 0) { rr->idx[k] = f; break; }
        if (rr->idx[k] < 0) {
            snprintf(err, cap, "no column '%s' in the header", want);
            return -1;
        }
    }
    return 0;
}

/* The next record as texts and label. 1 a row, 0 end of file, -1 malformed
 * (c->why), -2 read error (rr->r.err). */
static int row_next(RowReader *rr, LoadCtx *c, RowText *row) {
    const UserData *u = rr->u;
    char *line;
    size_t len;
    int k = lines_next(&rr->r, &line, &len);
    if (k <= 0) return k < 0 ? -2 : 0;
    rr->line = rr->r.line_no;
    memset(row, 0, sizeof *row);
    if (u->format == USER_JSONL) {
        cJSON_Delete(rr->json);
        rr->json = load_json_parse_marked(line, len);
        if (!rr->json) return load_row_bad(c, len ? "not valid JSON" : "empty line");
        if (!cJSON_IsObject(rr->json)) return load_row_bad(c, "not a JSON object");
        if (load_json_field(c, rr->json, u->col[COL_A], 0, NULL, 0, &row->a) != 0) return -1;
        if (u->col[COL_B] && load_json_field(c, rr->json, u->col[COL_B], 0, NULL, 0, &row->b) != 0) return -1;
        row->nlabels = load_json_labels(c, rr->json, u->col[COL_LABEL], rr->num, row->labels, TASK_MAX_LABELS);
        if (row->nlabels < 0) return -1;
        row->la = strlen(row->a);
        row->lb = row->b ? strlen(row->b) : 0;
        return 1;
    }
    if (u->format == USER_FASTTEXT) {
        if (memchr(line, '\0', len)) return load_row_bad(c, "NUL byte in the line");
        char *p = line;
        while (*p == ' ' || *p == '\t') p++;
        if (strncmp(p, FASTTEXT_PREFIX, strlen(FASTTEXT_PREFIX)) != 0)
            return load_row_bad(c, "the line does not start with " FASTTEXT_PREFIX "LABEL");
        while (strncmp(p, FASTTEXT_PREFIX, strlen(FASTTEXT_PREFIX)) == 0) {   /* one tag per label */
            char *name = p + strlen(FASTTEXT_PREFIX);
            p = name + strcspn(name, " \t");
            if (*p) *p++ = '\0';
            if (!*name) return load_row_bad(c, "empty label after " FASTTEXT_PREFIX);
            if (row->nlabels == TASK_MAX_LABELS) return load_row_bad(c, "more than %d labels", TASK_MAX_LABELS);
            row->labels[row->nlabels++] = name;
            while (*p == ' ' || *p == '\t') p++;
        }
        if (!*p) return load_row_bad(c, "no text after the label");
        row->a = p;
        row->la = strlen(p);
        return 1;
    }
    rr->rec.n = 0;
    rr->nf = 0;
    if (u->format == USER_TSV) tsv_fields(rr, line, len);
    else if ((k = csv_fields(rr, c, line, len)) != 0) return k;
    if (rr->nf > USER_MAX_FIELDS) return load_row_bad(c, "more than %d columns", USER_MAX_FIELDS);
    if (rr->ncols == 0) rr->ncols = rr->nf;
    const char *sep = u->format == USER_TSV ? "tab-separated" : "comma-separated";
    if (rr->nf != rr->ncols) return load_row_bad(c, "expected %d %s columns, found %d", rr->ncols, sep, rr->nf);
    for (int j = 0; j < NUM_COLS; j++)
        if (rr->idx[j] >= rr->nf) return load_row_bad(c, "no column %d (the row has %d)", rr->idx[j] + 1, rr->nf);
    row->a = rr->rec.p + rr->off[rr->idx[COL_A]];
    row->la = rr->len[rr->idx[COL_A]];
    if (rr->idx[COL_B] >= 0) {
        row->b = rr->rec.p + rr->off[rr->idx[COL_B]];
        row->lb = rr->len[rr->idx[COL_B]];
    }
    char *cell = rr->rec.p + rr->off[rr->idx[COL_LABEL]];
    if (strlen(cell) != rr->len[rr->idx[COL_LABEL]]) return load_row_bad(c, "NUL byte in the label");
    row->labels[0] = cell;
    row->nlabels = u->multi_label ? load_label_split(c, cell, u->label_sep, row->labels, TASK_MAX_LABELS) : 1;
    return row->nlabels < 0 ? -1 : 1;
}

/* Opens path and reads the header (TSV/CSV with one). 0, or -1 after a message. */
static int row_open(RowReader *rr, const UserData *u, LoadCtx *c) {
    memset(rr, 0, sizeof *rr);
    rr->u = u;
    for (int k = 0; k < NUM_COLS; k++) rr->idx[k] = -1;
    if (lines_open(&rr->r, c->path) != LINES_OK) { lines_report(&rr->r); return -1; }
    if (u->format != USER_TSV && u->format != USER_CSV) return 0;
    char err[600];
    if (u->header) {
        char *line;
        size_t len;
        int k = lines_next(&rr->r, &line, &len);
        if (k < 0) { lines_report(&rr->r); return -1; }
        if (k == 0) {
            user_error_data("give the header row, or --no-header", "%s: empty file (expected a header row)", c->path);
            return -1;
        }
        if (len >= 3 && memcmp(line, "\xEF\xBB\xBF", 3) == 0) { line += 3; len -= 3; }   /* a BOM */
        if (u->format == USER_TSV) tsv_fields(rr, line, len);
        else if ((k = csv_fields(rr, c, line, len)) != 0) {
            if (k == -2) lines_report(&rr->r);
            else user_error_data("fix the header row", "%s:1: header: %s", c->path, c->why);
            return -1;
        }
        rr->ncols = rr->nf;
    }
    if (resolve_columns(rr, err, sizeof err) != 0) {
        user_error_usage("--columns names the text and label columns (header names or 1-based numbers)", "%s: %s",
                   c->path, err);
        return -1;
    }
    return 0;
}

static void row_close(RowReader *rr) {
    lines_close(&rr->r);
    free(rr->rec.p);
    cJSON_Delete(rr->json);
}

/* Every row of c->path through fn (0 ok, -1 malformed with c->why). Malformed
 * rows are reported and counted in d (quiet: only counted). 0, or -1 after an
 * error (unreadable file, strict). */
typedef int (*RowFn)(LoadCtx *c, const RowText *row, long line, long index, void *arg);

static int user_scan(const UserData *u, LoadCtx *c, int strict, int quiet, Dataset *d, RowFn fn, void *arg) {
    RowReader rr;
    if (row_open(&rr, u, c) != 0) { row_close(&rr); return -1; }
    RowText row;
    int k, rc = 0;
    long index = 0;
    while (rc == 0 && (k = row_next(&rr, c, &row)) != 0) {
        if (k == -2) { lines_report(&rr.r); rc = -1; break; }
        if (k == 1 && load_check_text(c, row.a, row.la, u->col[COL_A] ? u->col[COL_A] : "the text") == 0 &&
            (!row.b || load_check_text(c, row.b, row.lb, u->col[COL_B]) == 0) &&
            fn(c, &row, rr.line, index, arg) == 0) {
            index++;
            continue;
        }
        if (quiet) { d->num_skipped++; continue; }
        char where[4200];
        snprintf(where, sizeof where, "%s:%ld", c->path, rr.line);
        rc = load_report_bad(c, where, strict, d);
    }
    row_close(&rr);
    return rc;
}

/* ---- loading (task_load) ---- */

static int row_to_example(LoadCtx *c, const RowText *row, long line, long index, void *arg) {
    Example ex = {.label = -1, .index = index, .line = line};
    if (c->t->multi_label) {
        if (load_label_set(c, row->labels, row->nlabels, &ex) != 0) return -1;
    } else if (row->nlabels != 1) {
        return row->nlabels ? load_row_bad(c, "%d labels, but the train file has one per row (a single-label dataset)",
                                           row->nlabels)
                            : load_row_bad(c, "no label");
    } else if (load_parse_label(c, row->labels[0], &ex) != 0) {
        return -1;
    }
    ex.a = xstrdup(row->a);
    ex.b = row->b ? xstrdup(row->b) : NULL;
    void **ctx = arg;
    load_push(ctx[0], ctx[1], &ex);
    return 0;
}

int user_data_read(LoadCtx *c, int strict, Dataset *d) {
    int cap = 0;
    void *ctx[2] = {d, &cap};
    return user_scan(c->t->user, c, strict, 0, d, row_to_example, ctx);
}

/* ---- building the Task ---- */

/* What the label pass of the train file sees. */
typedef struct {
    UserData *u;
    long several_line;          /* the first row with several labels (0: none) */
    int several;                /* its label count */
} LabelScan;

/* A label string of the train file, once, trimmed (" pos " is "pos"). */
static int label_add(LoadCtx *c, UserData *u, const char *name) {
    const char *b;
    size_t n = task_label_trim(name, &b);
    for (int i = 0; i < u->num_labels; i++)
        if (strlen(u->labels[i]) == n && memcmp(u->labels[i], b, n) == 0) return 0;
    if (n == 0) return load_row_bad(c, "empty label");
    if (u->num_labels == TASK_MAX_LABELS) return load_row_bad(c, "more than %d labels", TASK_MAX_LABELS);
    u->labels[u->num_labels++] = xstrndup(b, n);
    return 0;
}

static int label_collect(LoadCtx *c, const RowText *row, long line, long index, void *arg) {
    (void)index;
    LabelScan *scan = arg;
    if (row->nlabels == 0) return load_row_bad(c, "no label");
    if (row->nlabels > 1 && !scan->several_line) {
        scan->several_line = line;
        scan->several = row->nlabels;
    }
    for (int i = 0; i < row->nlabels; i++)
        if (label_add(c, scan->u, row->labels[i]) != 0) return -1;
    return 0;
}

/* The labels of the file without a comma: what a list of labels lists. */
typedef struct {
    const char *name;
    const char *plain[TASK_MAX_LABELS];
    int n;
} PlainLabels;

/* A row whose label lists other labels of the file ("pos,neg" beside rows
 * "pos" and "neg"): the first such row is reported as fatal (c->fatal). */
static int label_not_list(LoadCtx *c, const RowText *row, long line, long index, void *arg) {
    (void)line;
    (void)index;
    const PlainLabels *p = arg;
    if (row->nlabels != 1 || !task_label_list_of(row->labels[0], p->plain, p->n)) return 0;
    c->fatal = 1;
    return load_row_bad(c, "label '%.60s' is a list of labels, but %s is single-label: give one label per row, "
                        "or say --multi-label", row->labels[0], p->name);
}

/* A collected label that is a list of others means multi-label data: the
 * first row with one is named (an error). 0, or -1 after the message. */
static int labels_check_lists(UserData *u, LoadCtx *c) {
    PlainLabels p = {.name = u->name};
    for (int i = 0; i < u->num_labels; i++)
        if (!strchr(u->labels[i], ',')) p.plain[p.n++] = u->labels[i];
    int lists = 0;
    for (int i = 0; i < u->num_labels; i++) lists += task_label_list_of(u->labels[i], p.plain, p.n);
    if (!lists) return 0;
    Dataset quiet = {0};
    user_scan(u, c, 0, 0, &quiet, label_not_list, &p);   /* reports the first, fatal */
    return -1;
}

static int str_cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The Task fields from u's description (labels already there). */
static void user_task_build(UserData *u) {
    Task *t = &u->task;
    memset(t, 0, sizeof *t);
    t->name = u->name;
    t->display = u->name;
    t->dir = "";
    t->user = u;
    t->num_labels = u->regression ? 1 : u->num_labels;
    for (int i = 0; !u->regression && i < u->num_labels; i++) t->labels[i] = u->labels[i];
    t->multi_label = u->multi_label;
    t->label_sep = u->label_sep;
    t->metrics[0] = u->regression ? METRIC_PEARSON : u->multi_label ? METRIC_MACRO_F1 : METRIC_ACC;
    t->metrics[1] = u->regression ? METRIC_SPEARMAN : u->multi_label ? METRIC_MICRO_F1 : METRIC_NONE;
    for (int f = 0; f < NUM_FILES; f++) {
        if (!u->file[f]) continue;
        t->splits[t->num_splits++] = (TaskSplit){
            .name = SPLIT_NAMES[f], .file = u->file[f], .is_test = f == FILE_TEST, .has_header = u->header,
            .col_index = -1, .col_a = COL_A, .col_b = u->col[COL_B] ? COL_B : -1, .col_label = COL_LABEL};
    }
}

void user_data_free(const Task *t) {
    if (!t || !t->user) return;
    task_unregister_user(t);
    UserData *u = (UserData *)t->user;
    for (int k = 0; k < NUM_COLS; k++) free(u->col[k]);
    for (int f = 0; f < NUM_FILES; f++) free(u->file[f]);
    for (int i = 0; i < u->num_labels; i++) free(u->labels[i]);
    free(u->name);
    free(u->label_sep);
    free(u);
}

static int format_from(const char *name, UserFormat *out) {
    for (int f = 0; f < NUM_USER_FORMATS; f++)
        if (strcmp(name, FORMAT_NAMES[f]) == 0) { *out = (UserFormat)f; return 0; }
    return -1;
}

/* The format of a file name (.tsv, .csv, .jsonl, each maybe .gz). */
static int format_of_file(const char *path, UserFormat *out) {
    char base[4096];
    snprintf(base, sizeof base, "%s", path);
    size_t n = strlen(base);
    if (n > 3 && strcmp(base + n - 3, ".gz") == 0) base[n - 3] = '\0';
    const char *dot = strrchr(base, '.');
    if (!dot || strchr(dot, '/')) return -1;
    if (strcmp(dot, ".jsonl") == 0) { *out = USER_JSONL; return 0; }
    return format_from(dot + 1, out);
}

/* The first of names found among the header fields / JSON keys. */
static const char *first_present(const char *const *names, int n, const RowReader *rr, const cJSON *obj) {
    for (int i = 0; i < n; i++) {
        if (obj && cJSON_GetObjectItemCaseSensitive(obj, names[i])) return names[i];
        for (int f = 0; !obj && f < rr->nf && f < USER_MAX_FIELDS; f++)
            if (strcmp(rr->rec.p + rr->off[f], names[i]) == 0) return names[i];
    }
    return NULL;
}

/* Without --columns: the usual names, looked up in the header (TSV/CSV) or the
 * first object (JSONL). 0, or -1 after a message. */
static int default_columns(UserData *u) {
    static const char *const TEXT_A[] = {"text", "sentence", "text_a", "sentence1"};
    static const char *const TEXT_B[] = {"text_b", "sentence2"};
    static const char *const LABEL[] = {"label", "labels"};
    if (u->format == USER_FASTTEXT) return 0;
    if (!u->header && u->format != USER_JSONL) {
        user_error_usage("e.g. --columns 2,1 (text in column 2, label in column 1)",
                   "%s: without a header, --columns must give the column numbers", u->file[FILE_TRAIN]);
        return -1;
    }
    RowReader rr;
    LoadCtx c = {.path = u->file[FILE_TRAIN]};
    UserData probe = *u;
    probe.col[COL_A] = probe.col[COL_LABEL] = NULL;   /* read the header only */
    cJSON *obj = NULL;
    int rc = row_open(&rr, &probe, &c);
    if (rc == 0 && u->format == USER_JSONL) {
        char *line;
        size_t len;
        if (lines_next(&rr.r, &line, &len) > 0) obj = load_json_parse_marked(line, len);
    }
    const char *a = rc ? NULL : first_present(TEXT_A, 4, &rr, obj);
    const char *b = rc ? NULL : first_present(TEXT_B, 2, &rr, obj);
    const char *l = rc ? NULL : first_present(LABEL, 2, &rr, obj);
    if (rc == 0 && (!a || !l)) {
        user_error_usage("name them: --columns TEXT,LABEL or TEXT_A,TEXT_B,LABEL",
                   "%s: no %s column (looked for %s)", c.path, a ? "label" : "text",
                   a ? "label, labels" : "text, sentence, text_a, sentence1");
        rc = -1;
    }
    if (rc == 0) {
        u->col[COL_A] = xstrdup(a);
        u->col[COL_B] = b ? xstrdup(b) : NULL;
        u->col[COL_LABEL] = xstrdup(l);
    }
    cJSON_Delete(obj);
    row_close(&rr);
    return rc;
}

/* --columns "a,label" or "a,b,label". 0, or -1 after a message. */
static int parse_columns(UserData *u, const char *spec) {
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", spec);
    char *part[4];
    int n = 0;
    for (char *p = buf; n < 4;) {
        part[n++] = p;
        p = strchr(p, ',');
        if (!p) break;
        *p++ = '\0';
    }
    int bad = n < 2 || n > 3 || strchr(spec, ',') == NULL;
    for (int i = 0; i < n && !bad; i++) bad = !*part[i];
    if (bad || u->format == USER_FASTTEXT) {
        user_error_usage(u->format == USER_FASTTEXT ? "drop --columns: a fastText line is __label__X text"
                                              : "e.g. --columns text,label or --columns premise,hypothesis,label",
                   "--columns %s: expected TEXT,LABEL or TEXT_A,TEXT_B,LABEL", spec);
        return -1;
    }
    u->col[COL_A] = xstrdup(part[0]);
    u->col[COL_B] = n == 3 ? xstrdup(part[1]) : NULL;
    u->col[COL_LABEL] = xstrdup(part[n - 1]);
    return 0;
}

/* The task id: [A-Za-z0-9_-], not a registry task's. 0, or -1 after a message. */
static int check_name(const char *name) {
    int ok = *name != '\0' && strlen(name) < 64;
    for (const char *p = name; *p && ok; p++) ok = isalnum((unsigned char)*p) || *p == '-' || *p == '_';
    if (!ok) {
        user_error_usage("give --name NAME (letters, digits, '-', '_')", "'%s' cannot name a dataset", name);
        return -1;
    }
    if (task_find(name)) {
        user_error_usage("give your dataset another --name", "'%s' is a GLUE task", name);
        return -1;
    }
    return 0;
}

/* The absolute path of an existing file into *out (malloc'd). 0, or -1 after a message. */
static int absolute_file(const char *path, const char *what, char **out) {
    char found[4096], abs[PATH_MAX];
    if (lines_find(path, found, sizeof found) != 0 || !realpath(found, abs)) {
        user_error_io("check the path", "%s %s: no such file", what, path);
        return -1;
    }
    *out = xstrdup(abs);
    return 0;
}

/* --multi-label and --label-sep. 0, or -1 after a message. */
static int label_options(UserData *u, const UserDataOptions *o) {
    int table = u->format == USER_TSV || u->format == USER_CSV;
    const char *bad = o->multi_label && o->regression ? "--multi-label and --regression exclude each other"
                      : o->label_sep && !o->multi_label ? "--label-sep splits a list of labels: add --multi-label"
                      : o->label_sep && !table ? "--label-sep is for a TSV/CSV label column"
                      : o->label_sep && !*o->label_sep ? "--label-sep must not be empty"
                                                       : NULL;
    if (bad) {
        user_error(table ? "e.g. --multi-label --label-sep '|'"
                         : "fastText lines carry one __label__ tag per label, JSONL rows a list [\"a\", \"b\"]",
                   "%s", bad);
        return -1;
    }
    u->multi_label = o->multi_label;
    u->label_sep = xstrdup(o->label_sep ? o->label_sep : USER_LABEL_SEP);
    return 0;
}

/* u's files, name, format and columns from the options. 0, or -1 after a message. */
static int user_options(UserData *u, const UserDataOptions *o) {
    const char *given[NUM_FILES] = {o->train, o->dev, o->test};
    const char *opt[NUM_FILES] = {"--train", "--dev", "--test"};
    if (!o->train || !o->dev) {
        user_error_usage("glue finetune --train FILE --dev FILE [--test FILE]", "your own dataset needs %s",
                   o->train ? "--dev FILE (to select the model on)" : "--train FILE");
        return -1;
    }
    for (int f = 0; f < NUM_FILES; f++)
        if (given[f] && absolute_file(given[f], opt[f], &u->file[f]) != 0) return -1;
    if (o->format ? format_from(o->format, &u->format) != 0 : format_of_file(o->train, &u->format) != 0) {
        user_error_usage("--format tsv, csv, jsonl or fasttext", o->format ? "unknown format '%s'" :
                   "cannot tell the format of %s from its name", o->format ? o->format : o->train);
        return -1;
    }
    u->header = !o->no_header && (u->format == USER_TSV || u->format == USER_CSV);
    u->regression = o->regression;
    if (label_options(u, o) != 0) return -1;
    if (o->name) {
        u->name = xstrdup(o->name);
    } else {
        const char *base = strrchr(o->train, '/');
        u->name = xstrdup(base ? base + 1 : o->train);
        u->name[strcspn(u->name, ".")] = '\0';
    }
    if (check_name(u->name) != 0) return -1;
    return o->columns ? parse_columns(u, o->columns) : default_columns(u);
}

/* The first label holding the separator of a list, NULL when none. */
static const char *label_with_sep(const UserData *u) {
    for (int i = 0; i < u->num_labels; i++)
        if (strstr(u->labels[i], USER_LABEL_SEP)) return u->labels[i];
    return NULL;
}

/* The classes: the train file's label strings, sorted; multi-label when said,
 * or when a fastText/JSONL row lists several (said in one line). 0, or -1
 * after a message. */
static int labels_from_train(UserData *u) {
    LoadCtx c = {.t = &u->task, .s = &u->task.splits[0], .path = u->file[FILE_TRAIN]};
    Dataset quiet = {0};
    LabelScan scan = {.u = u};
    if (user_scan(u, &c, 0, 1, &quiet, label_collect, &scan) != 0) return -1;
    if (!u->multi_label && !scan.several_line && labels_check_lists(u, &c) != 0) return -1;
    if (u->num_labels < 2) {
        if (quiet.num_skipped)   /* say why: the malformed rows, as loading reports them */
            user_scan(u, &c, 0, 0, &quiet, label_collect, &scan);
        user_error_data("a classifier needs two labels or more; for a numeric target use --regression",
                   "%s: %d distinct label%s in column '%s'", u->file[FILE_TRAIN], u->num_labels,
                   u->num_labels == 1 ? "" : "s", u->format == USER_FASTTEXT ? FASTTEXT_PREFIX : u->col[COL_LABEL]);
        return -1;
    }
    if (scan.several_line && !u->multi_label) {
        fprintf(stderr, "glue: %s:%ld: %d labels on one row: the dataset is multi-label (--multi-label says so)\n",
                u->file[FILE_TRAIN], scan.several_line, scan.several);
        u->multi_label = 1;
    } else if (u->multi_label && !scan.several_line) {
        user_warning("%s: --multi-label, but every row has one label (a single-label dataset without it)",
                     u->file[FILE_TRAIN]);
    } else if (!u->multi_label && (u->format == USER_TSV || u->format == USER_CSV) && label_with_sep(u)) {
        user_warning("%s: label '%.40s' holds '" USER_LABEL_SEP "': if a cell lists several labels, say --multi-label",
                     u->file[FILE_TRAIN], label_with_sep(u));
    }
    qsort(u->labels, (size_t)u->num_labels, sizeof u->labels[0], str_cmp);
    return 0;
}

const Task *user_data_create(const UserDataOptions *o) {
    UserData *u = xcalloc(1, sizeof *u);
    user_task_build(u);
    if (user_options(u, o) != 0) { user_data_free(&u->task); return NULL; }
    user_task_build(u);
    if (!u->regression && labels_from_train(u) != 0) {
        user_data_free(&u->task);
        return NULL;
    }
    user_task_build(u);
    task_register_user(&u->task);
    return &u->task;
}

/* ---- dataset.json ---- */

int user_data_save(const Task *t, const char *path) {
    const UserData *u = t->user;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", u->name);
    cJSON_AddStringToObject(o, "format", FORMAT_NAMES[u->format]);
    cJSON_AddBoolToObject(o, "header", u->header);
    cJSON_AddBoolToObject(o, "regression", u->regression);
    cJSON_AddBoolToObject(o, "multi_label", u->multi_label);
    cJSON_AddStringToObject(o, "label_sep", u->label_sep);
    cJSON *cols = cJSON_AddObjectToObject(o, "columns");
    static const char *const COL_KEYS[NUM_COLS] = {"text_a", "text_b", "label"};
    for (int k = 0; k < NUM_COLS; k++)
        cJSON_AddItemToObject(cols, COL_KEYS[k], u->col[k] ? cJSON_CreateString(u->col[k]) : cJSON_CreateNull());
    cJSON *labels = cJSON_AddArrayToObject(o, "labels");   /* class i is labels[i] */
    for (int i = 0; i < u->num_labels; i++) cJSON_AddItemToArray(labels, cJSON_CreateString(u->labels[i]));
    cJSON *files = cJSON_AddObjectToObject(o, "files");
    for (int f = 0; f < NUM_FILES; f++)
        if (u->file[f]) cJSON_AddStringToObject(files, SPLIT_NAMES[f], u->file[f]);
    int rc = json_file_write(path, o);
    cJSON_Delete(o);
    return rc;
}

/* A string member (NULL when absent or not a string). */
static const char *json_string(const cJSON *o, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

const Task *user_data_load(const char *path) {
    FILE *f = fopen(path, "rb");
    char *text = NULL;
    size_t n = 0;
    if (f) {
        LoadBuf b = {0};
        char chunk[4096];
        size_t k;
        while ((k = fread(chunk, 1, sizeof chunk, f)) > 0) load_buf_put(&b, chunk, k);
        fclose(f);
        text = b.p;
        n = b.n;
    }
    cJSON *o = text ? cJSON_ParseWithLength(text, n) : NULL;
    free(text);
    UserData *u = xcalloc(1, sizeof *u);
    const cJSON *cols = cJSON_GetObjectItemCaseSensitive(o, "columns");
    const cJSON *files = cJSON_GetObjectItemCaseSensitive(o, "files");
    const cJSON *labels = cJSON_GetObjectItemCaseSensitive(o, "labels");
    const char *name = json_string(o, "name"), *format = json_string(o, "format");
    int ok = name && format && format_from(format, &u->format) == 0 && cJSON_IsArray(labels) &&
             json_string(files, "train") && json_string(files, "dev") &&
             cJSON_GetArraySize(labels) <= TASK_MAX_LABELS;
    if (ok) {
        u->name = xstrdup(name);
        u->header = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "header"));
        u->regression = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "regression"));
        u->multi_label = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "multi_label"));   /* absent: older runs */
        const char *sep = json_string(o, "label_sep");
        u->label_sep = xstrdup(sep && *sep ? sep : USER_LABEL_SEP);
        static const char *const COL_KEYS[NUM_COLS] = {"text_a", "text_b", "label"};
        for (int k = 0; k < NUM_COLS; k++)
            u->col[k] = json_string(cols, COL_KEYS[k]) ? xstrdup(json_string(cols, COL_KEYS[k])) : NULL;
        for (int fi = 0; fi < NUM_FILES; fi++)
            u->file[fi] = json_string(files, SPLIT_NAMES[fi]) ? xstrdup(json_string(files, SPLIT_NAMES[fi])) : NULL;
        const cJSON *l;
        cJSON_ArrayForEach(l, labels) ok &= cJSON_IsString(l) && (u->labels[u->num_labels++] = xstrdup(l->valuestring));
        /* A label twice (or empty) would make one class unreachable: every cell maps to the first. */
        for (int i = 0; ok && i < u->num_labels; i++) {
            ok &= u->labels[i][0] != '\0';
            for (int k = 0; k < i; k++) ok &= strcmp(u->labels[i], u->labels[k]) != 0;
        }
        ok &= u->format == USER_FASTTEXT || (u->col[COL_A] && u->col[COL_LABEL]);
        ok &= u->regression || u->num_labels >= 2;
        ok &= !(u->regression && u->multi_label);
    }
    cJSON_Delete(o);
    user_task_build(u);
    if (!ok) {
        if (f) user_error_data("retrain the run: glue finetune --train FILE --dev FILE",
                               "%s: not a dataset description written by glue finetune", path);
        else user_error_io("retrain the run: glue finetune --train FILE --dev FILE", "%s: cannot be read", path);
        user_data_free(&u->task);
        return NULL;
    }
    task_register_user(&u->task);
    return &u->task;
}
