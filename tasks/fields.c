/* fields.c — the rules for reading a tab-separated row's fields (see fields.h). */
#include "tasks/fields.h"

#include "tasks/task.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int row_has_nul(const char *line, size_t len) { return memchr(line, '\0', len) != NULL; }

int fields_split(char *line, char **f, int max) {
    int n = 0;
    for (char *p = line;; p++) {
        if (n < max) f[n] = p;
        n++;
        p = strchr(p, '\t');
        if (!p) break;
        *p = '\0';
    }
    return n;
}

int field_is_digits(const char *s) { return *s != '\0' && strspn(s, "0123456789") == strlen(s); }

int field_index(const char *s, long *out) {
    if (!field_is_digits(s)) return -1;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end != '\0') return -1;
    *out = v;
    return 0;
}

int field_number(const char *s, double *out) {
    /* strtod alone would take " 1", "0x1p3" and "infinity". */
    size_t n = strlen(s);
    if (n == 0 || strspn(s, "0123456789+-.eE") != n || !strpbrk(s, "0123456789")) return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (*end != '\0' || errno || !isfinite(v)) return -1;
    *out = v;
    return 0;
}

int field_score(const char *s, double *out) {
    const char *b;
    size_t n = task_label_trim(s, &b);
    char cell[128];
    if (n >= sizeof cell) return -1;   /* no number is that long */
    memcpy(cell, b, n);
    cell[n] = '\0';
    return field_number(cell, out);
}
