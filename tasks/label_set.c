/* label_set.c — the labels of one row of a multi-label task (see load_rows.h):
 * from a list of label strings (fastText tags, a JSON list) or from one cell
 * that joins them with a separator (GoEmotions' "3,27"), to Example.labels,
 * ascending ids without repeats.
 *
 * Each way a set can be wrong is its own message, so "file:line: what" says
 * what to fix: no label at all, an empty element ("3,,27"), the same label
 * twice, an id out of range (a task whose labels are ids), and a label the
 * train file never had (a user's dataset takes its labels from train). */
#include "tasks/load_rows.h"

#include "core/common.h"
#include "tasks/fields.h"

#include <stdlib.h>
#include <string.h>

/* 1 when the task's labels are their own ids ("0", "1", ... as GoEmotions'). */
static int labels_are_ids(const Task *t) {
    char want[16];
    for (int k = 0; k < t->num_labels; k++) {
        snprintf(want, sizeof want, "%d", k);
        if (!t->labels[k] || strcmp(t->labels[k], want) != 0) return 0;
    }
    return 1;
}

static int label_unknown(LoadCtx *c, const char *v) {
    const Task *t = c->t;
    if (t->user) return load_row_bad(c, "label '%.40s' does not occur in the train file", v);
    if (labels_are_ids(t))
        return field_is_digits(v) ? load_row_bad(c, "label id %.40s is out of range (0-%d)", v, t->num_labels - 1)
                             : load_row_bad(c, "label '%.40s' is not a label id (0-%d)", v, t->num_labels - 1);
    return load_row_bad(c, "label '%.40s' is not a label of %s", v, t->display);
}

int load_label_set(LoadCtx *c, const char *const *names, int n, Example *ex) {
    int ids[TASK_MAX_LABELS];
    if (n == 0) return load_row_bad(c, "no label");
    if (n > TASK_MAX_LABELS) return load_row_bad(c, "more than %d labels", TASK_MAX_LABELS);
    for (int i = 0; i < n; i++) {
        if (!*names[i]) return load_row_bad(c, "an empty label in the row's list");
        int id = task_label_index(c->t, names[i]);
        if (id < 0) return label_unknown(c, names[i]);
        int at = i;   /* insertion keeps ids ascending; a repeat shows up on the way */
        for (; at > 0 && ids[at - 1] >= id; at--) {
            if (ids[at - 1] == id) return load_row_bad(c, "label '%.40s' twice in the row", names[i]);
            ids[at] = ids[at - 1];
        }
        ids[at] = id;
    }
    ex->labels = xmalloc(sizeof *ex->labels * (size_t)n);
    memcpy(ex->labels, ids, sizeof *ex->labels * (size_t)n);
    ex->nlabels = n;
    ex->label = -1;
    return 0;
}

/* s without the spaces and tabs around it (in place). */
static char *trim(char *s) {
    while (*s == ' ' || *s == '\t') s++;
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t')) s[--n] = '\0';
    return s;
}

int load_label_split(LoadCtx *c, char *cell, const char *sep, const char **names, int max) {
    char shown[64];
    snprintf(shown, sizeof shown, "%.60s", cell);   /* before the cell is cut up */
    char *p = trim(cell);
    size_t k = strlen(sep);
    int n = 0;
    if (!*p) return 0;   /* an empty cell: no names (load_label_set says "no label") */
    while (p) {
        char *end = k ? strstr(p, sep) : NULL;
        if (end) *end = '\0';
        char *name = trim(p);
        if (!*name) return load_row_bad(c, "an empty label in the list '%s'", shown);
        if (n == max) return load_row_bad(c, "more than %d labels", max);
        names[n++] = name;
        p = end ? end + k : NULL;
    }
    return n;
}

int load_label_list(LoadCtx *c, const char *cell, const char *sep, Example *ex) {
    char *copy = xstrdup(cell);
    const char *names[TASK_MAX_LABELS];
    int n = load_label_split(c, copy, sep, names, TASK_MAX_LABELS);
    int rc = n < 0 ? -1 : load_label_set(c, names, n, ex);
    free(copy);
    return rc;
}
