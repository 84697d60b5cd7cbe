/* request.c — parsing and checking a predict request (see request.h). */
#include "serve/request.h"

#include "core/common.h"
#include "core/files.h"
#include "text/utf8.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One text: a non-empty UTF-8 string within the limit. 0, or a status + err. */
static int request_text(const cJSON *v, const char *where, const ServeLimits *lim, char *err, size_t cap) {
    if (!cJSON_IsString(v) || !v->valuestring) return snprintf(err, cap, "%s: expected a string", where), 400;
    size_t len = strlen(v->valuestring);
    if (len == 0) return snprintf(err, cap, "%s: empty text", where), 400;
    if (len > lim->max_text) return snprintf(err, cap, "%s: %zu bytes, more than the limit of %zu", where, len, lim->max_text), 413;
    if (!utf8_valid(v->valuestring, len)) return snprintf(err, cap, "%s: invalid UTF-8", where), 400;
    return 0;
}

/* The list under "texts" or "pairs" into out. 0, or a status + err. */
static int request_list(const cJSON *list, int pairs, const ServeLimits *lim, ServeRequest *out, char *err, size_t cap) {
    const char *key = pairs ? "pairs" : "texts";
    if (!cJSON_IsArray(list)) return snprintf(err, cap, "\"%s\": expected an array", key), 400;
    int n = cJSON_GetArraySize(list);
    if (n == 0) return snprintf(err, cap, "\"%s\": empty list", key), 400;
    if (n > lim->max_texts) return snprintf(err, cap, "\"%s\": %d items, more than the limit of %d", key, n, lim->max_texts), 413;
    out->a = xcalloc((size_t)n, sizeof(char *));
    if (pairs) out->b = xcalloc((size_t)n, sizeof(char *));
    int i = 0, rc = 0;
    char where[64];
    for (const cJSON *it = list->child; it && rc == 0; it = it->next, i++) {
        const cJSON *x = it, *y = NULL;
        if (pairs) {
            if (!cJSON_IsArray(it) || cJSON_GetArraySize(it) != 2) {
                snprintf(err, cap, "pairs[%d]: expected [text_a, text_b]", i);
                rc = 400;
                break;
            }
            x = it->child, y = it->child->next;
        }
        snprintf(where, sizeof where, pairs ? "pairs[%d][0]" : "texts[%d]", i);
        rc = request_text(x, where, lim, err, cap);
        snprintf(where, sizeof where, "pairs[%d][1]", i);
        if (rc == 0 && y) rc = request_text(y, where, lim, err, cap);
        if (rc) break;
        out->a[i] = xstrdup(x->valuestring);
        if (y) out->b[i] = xstrdup(y->valuestring);
        out->n = i + 1;
    }
    return rc;
}

/* Whether body holds a NUL: a raw byte, or a \u0000 escape, which cJSON
 * decodes into its string, where the text would then end silently (as
 * `glue predict` refuses a NUL on stdin: cli_check_text). Outside a string
 * either is malformed JSON anyway. */
static int request_has_nul(const char *body, size_t len) {
    if (memchr(body, '\0', len)) return 1;
    for (size_t i = 0; i + 5 < len; i++)
        if (body[i] == '\\') {
            if (body[i + 1] == 'u' && memcmp(body + i + 2, "0000", 4) == 0) return 1;
            i++;   /* the escaped character: in "\\u0000" the second backslash is not an escape */
        }
    return 0;
}

int serve_request_parse(const char *body, size_t len, const ServeLimits *lim, ServeRequest *out, char *err,
                        size_t cap) {
    memset(out, 0, sizeof *out);
    if (len > lim->max_body) return snprintf(err, cap, "body of %zu bytes, more than the limit of %zu", len, lim->max_body), 413;
    if (request_has_nul(body, len)) return snprintf(err, cap, "a NUL character (\\u0000): texts cannot hold one"), 400;
    const char *end;
    int trailing;
    cJSON *j = json_parse_whole(body, len, &end, &trailing);   /* '{...}{...}' is not one request */
    if (trailing)
        return snprintf(err, cap, "malformed JSON: more after the object (at byte %zu)", (size_t)(end - body) + 1), 400;
    if (!j) return snprintf(err, cap, "malformed JSON"), 400;
    int rc = 0;
    const cJSON *texts = NULL, *pairs = NULL, *model = NULL;
    if (!cJSON_IsObject(j)) rc = 400, snprintf(err, cap, "expected a JSON object {\"texts\": [...]} or {\"pairs\": [...]}");
    for (const cJSON *it = rc ? NULL : j->child; it && rc == 0; it = it->next) {
        if (strcmp(it->string, "texts") == 0 && !texts) texts = it;
        else if (strcmp(it->string, "pairs") == 0 && !pairs) pairs = it;
        else if (strcmp(it->string, "model") == 0 && !model) model = it;
        else rc = 400, snprintf(err, cap, "unknown or repeated key \"%.64s\" (known: texts, pairs, model)", it->string);
    }
    if (rc == 0 && !texts == !pairs) rc = 400, snprintf(err, cap, "give one of \"texts\" and \"pairs\"");
    if (rc == 0 && model && !(cJSON_IsString(model) && model->valuestring[0]))
        rc = 400, snprintf(err, cap, "\"model\": expected a model's name");
    if (rc == 0) rc = request_list(texts ? texts : pairs, pairs != NULL, lim, out, err, cap);
    if (rc == 0 && model) out->model = xstrdup(model->valuestring);
    cJSON_Delete(j);
    if (rc) serve_request_free(out);
    return rc;
}

void serve_request_free(ServeRequest *r) {
    for (int i = 0; r->a && i < r->n; i++) free(r->a[i]);
    for (int i = 0; r->b && i < r->n; i++) free(r->b[i]);
    free(r->a);
    free(r->b);
    free(r->model);
    memset(r, 0, sizeof *r);
}
