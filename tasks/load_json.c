/* load_json.c — the glue-subsets JSON layout (TASK_FORMAT_ENTRIES): one object
 * {"0": {"text_a": ..., "text_b": ..., "label": ...}, "1": ...}, .json or .json.gz.
 *
 * Read with the rigour of the TSV reader (tasks/load.c): the file is read through
 * the same line reader (so a truncated gzip stream is one clear error), parsed
 * whole, then each entry is checked — an entry that is not an object, a missing
 * or non-string text, an unknown label, invalid UTF-8 or a NUL byte is reported
 * as "path: entry "KEY": what" and skipped with a count, or fatal with strict.
 * A file that is not one JSON object (cut short, corrupt) is one error naming
 * the line where parsing stopped.
 *
 * cJSON ends strings at a NUL byte, so before parsing every NUL — a raw byte or
 * the escape \u0000 — is replaced by the two bytes FF FE, which valid UTF-8 never
 * contains; a text holding them is then reported as having a NUL byte. */
#include "tasks/load_rows.h"

#include "core/common.h"
#include "core/lines.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#define NUL_MARK "\xFF\xFE"

/* Appends one line, its NULs marked (see the header comment). */
static void buf_put_marked(LoadBuf *b, const char *line, size_t len) {
    size_t from = 0;
    for (size_t i = 0; i < len; i++) {
        int raw = line[i] == '\0';
        int esc = line[i] == '\\' && i + 5 < len + 0 && strncmp(line + i + 1, "u0000", 5) == 0;
        if (!raw && !esc) {
            if (line[i] == '\\' && i + 1 < len) i++;   /* "\\u0000" is a backslash and text */
            continue;
        }
        load_buf_put(b, line + from, i - from);
        load_buf_put(b, NUL_MARK, 2);
        i += esc ? 5 : 0;
        from = i + 1;
    }
    load_buf_put(b, line + from, len - from);
    load_buf_put(b, "\n", 1);
}

cJSON *load_json_parse_marked(const char *text, size_t len) {
    LoadBuf b = {0};
    buf_put_marked(&b, text, len);
    cJSON *doc = cJSON_ParseWithLength(b.p, b.n);
    free(b.p);
    return doc;
}

/* The parsed file, or NULL with the error in err and *st (the reader's status:
 * truncated, missing...; LINES_CORRUPT when it is not one JSON object). */
static cJSON *json_read(const char *path, char *err, size_t cap, LinesStatus *st) {
    LineReader r;
    LoadBuf b = {0};
    char *line;
    size_t len;
    int k = -1;
    if (lines_open(&r, path) == LINES_OK)
        while ((k = lines_next(&r, &line, &len)) > 0) buf_put_marked(&b, line, len);
    *st = LINES_OK;
    if (k < 0) {
        *st = r.status;
        snprintf(err, cap, "%s", r.err);
        lines_close(&r);
        free(b.p);
        return NULL;
    }
    lines_close(&r);
    const char *end = NULL;
    cJSON *doc = b.p ? cJSON_ParseWithLengthOpts(b.p, b.n, &end, 0) : NULL;
    if (!doc || !cJSON_IsObject(doc)) {
        long at = 1;   /* the line where parsing stopped */
        const char *stop = doc ? b.p : (end ? end : cJSON_GetErrorPtr());
        for (const char *p = b.p; p && stop && p < stop && p < b.p + b.n; p++) at += *p == '\n';
        if (!b.p) snprintf(err, cap, "%s: empty file (expected one JSON object of entries)", path);
        else if (doc) snprintf(err, cap, "%s: not a JSON object of entries {\"0\": {...}, ...}", path);
        else snprintf(err, cap, "%s:%ld: not valid JSON here (a truncated or corrupt file?)", path, at);
        cJSON_Delete(doc);
        doc = NULL;
        *st = LINES_CORRUPT;
    }
    free(b.p);
    return doc;
}

int load_json_count(const char *path, long *n, char *err, size_t cap) {
    LinesStatus st;
    cJSON *doc = json_read(path, err, cap, &st);
    if (!doc) return (int)st;
    *n = cJSON_GetArraySize(doc);
    cJSON_Delete(doc);
    return 0;
}

int load_json_field(LoadCtx *c, const cJSON *e, const char *key, int label, char *num, size_t cap,
                    const char **out) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, key);
    if (!v) return load_row_bad(c, "no \"%s\"", key);
    const char *s = cJSON_IsString(v) ? v->valuestring : NULL;
    if (label && cJSON_IsNumber(v)) {   /* 1 or 4.25: the number as written */
        snprintf(num, cap, "%.17g", v->valuedouble);
        s = num;
    }
    if (!s) return load_row_bad(c, label ? "\"%s\" is neither a string nor a number" : "\"%s\" is not a string", key);
    if (strstr(s, NUL_MARK)) return load_row_bad(c, "NUL byte in %s", key);
    if (!label && load_check_text(c, s, strlen(s), key) != 0) return -1;
    *out = s;
    return 0;
}

int load_json_labels(LoadCtx *c, const cJSON *e, const char *key, char (*num)[32], const char **names, int max) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, key);
    if (!cJSON_IsArray(v)) return load_json_field(c, e, key, 1, num[0], sizeof num[0], &names[0]) == 0 ? 1 : -1;
    int n = 0;
    for (const cJSON *x = v->child; x; x = x->next, n++) {
        if (n == max) return load_row_bad(c, "more than %d labels in \"%s\"", max, key);
        if (cJSON_IsNumber(x)) snprintf(num[n], sizeof num[n], "%.17g", x->valuedouble);
        if (!cJSON_IsString(x) && !cJSON_IsNumber(x))
            return load_row_bad(c, "element %d of \"%s\" is neither a string nor a number", n + 1, key);
        names[n] = cJSON_IsString(x) ? x->valuestring : num[n];
        if (strstr(names[n], NUL_MARK)) return load_row_bad(c, "NUL byte in %s", key);
    }
    return n;
}

int load_json_example(LoadCtx *c, const cJSON *e, const char *key_a, const char *key_b, const char *key_label,
                      Example *ex) {
    const char *a = NULL, *b = NULL, *v = NULL;
    char num[64];
    memset(ex, 0, sizeof *ex);
    ex->label = -1;
    if (!cJSON_IsObject(e)) return load_row_bad(c, "not a JSON object");
    if (load_json_field(c, e, key_a, 0, NULL, 0, &a) != 0) return -1;
    if (key_b && load_json_field(c, e, key_b, 0, NULL, 0, &b) != 0) return -1;
    if (key_label && (load_json_field(c, e, key_label, 1, num, sizeof num, &v) != 0 || load_parse_label(c, v, ex) != 0))
        return -1;
    ex->a = xstrdup(a);
    ex->b = b ? xstrdup(b) : NULL;
    return 0;
}

int load_json_entries(LoadCtx *c, int strict, Dataset *d) {
    char err[4600];
    LinesStatus st;
    cJSON *doc = json_read(c->path, err, sizeof err, &st);
    if (!doc) {
        if (st == LINES_MISSING || st == LINES_IO) user_error_io("re-fetch it with 'glue data fetch'", "%s", err);
        else user_error_data("re-fetch it with 'glue data fetch'", "%s", err);
        return -1;
    }
    const TaskSplit *s = c->s;
    int cap = 0, ordinal = 0, rc = 0;
    for (const cJSON *e = doc->child; e && rc == 0; e = e->next, ordinal++) {
        Example ex;
        if (load_json_example(c, e, "text_a", s->col_b >= 0 ? "text_b" : NULL, s->col_label >= 0 ? "label" : NULL,
                              &ex) == 0) {
            char *end;
            long key = strtol(e->string, &end, 10);
            ex.index = *e->string && !*end ? key : ordinal;
            ex.line = ordinal + 1;   /* the entry's position: JSON has no row lines */
            load_push(d, &cap, &ex);
        } else {
            char where[4200];
            snprintf(where, sizeof where, "%s: entry \"%.40s\"", c->path, e->string);
            rc = load_report_bad(c, where, strict, d);
        }
    }
    cJSON_Delete(doc);
    return rc;
}
