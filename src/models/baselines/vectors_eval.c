/* vectors_eval.c — the .vec table, nearest neighbours and the analogy test
 * (see vectors_eval.h). Brute force over all rows: a few hundred questions
 * against tens of thousands of words is a few seconds. */
#include "models/baselines/vectors_eval.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "core/lines.h"
#include "models/baselines/word_features.h"

#define VE_HINT "a .vec file is a line \"N D\", then \"word v1 ... vD\" per line (glue vectors train writes one)"

static void ve_lower(char *s) {
    for (; *s; s++) *s = (char)tolower((unsigned char)*s);
}

/* A row: word then D numbers, stored scaled to length 1. 0 ok, -1 bad. */
static int ve_row(VecTable *t, char *line, long line_no, const char *path, long *cap) {
    char *save = NULL, *w = strtok_r(line, " \t", &save);
    if (!w) return 0;
    ve_lower(w);
    int added = 0, row = strmap_add(&t->words, w, strlen(w), &added);
    if (!added) return 0;   /* a repeated word: the first vector wins */
    if (row >= *cap) {
        *cap = 2 * *cap + 1024;
        t->unit = xrealloc(t->unit, (size_t)*cap * t->D * sizeof *t->unit);
    }
    float *v = t->unit + (size_t)row * t->D;
    double ss = 0;
    int d = 0;
    for (char *x; d < t->D && (x = strtok_r(NULL, " \t", &save)) != NULL; d++) {
        char *end;
        v[d] = strtof(x, &end);
        if (*end || !isfinite(v[d])) break;
        ss += (double)v[d] * v[d];
    }
    if (d != t->D || strtok_r(NULL, " \t", &save) != NULL) {
        user_error_data(VE_HINT, "%s:%ld: expected a word and %d numbers", path, line_no, t->D);
        return -1;
    }
    for (d = 0; ss > 0 && d < t->D; d++) v[d] = (float)(v[d] / sqrt(ss));
    t->n = row + 1;
    return 0;
}

int vec_table_load(VecTable *t, const char *path) {
    memset(t, 0, sizeof *t);
    strmap_init(&t->words);
    LineReader r;
    if (lines_open_or_report(&r, path)) return -1;
    char *line;
    size_t len;
    int got, rc = 0;
    long cap = 0, declared;
    while (rc == 0 && (got = lines_next(&r, &line, &len)) == 1) {
        if (len == 0) continue;
        if (t->D == 0) {   /* the header "N D", or a first row that tells D */
            char tail;
            if (sscanf(line, "%ld %d %c", &declared, &t->D, &tail) == 2) {
                if (t->D < 1 || t->D > 100000) {
                    user_error_data(VE_HINT, "%s:%ld: a header \"N D\" with D in 1..100000", path, r.line_no);
                    rc = -1;
                }
                continue;
            }
            t->D = word_vec_fields(line) - 1;
            if (t->D < 1) {
                user_error_data(VE_HINT, "%s:%ld: expected the header \"N D\" or a word and its numbers", path, r.line_no);
                rc = -1;
                continue;
            }
        }
        rc = ve_row(t, line, r.line_no, path, &cap);
    }
    if (rc == 0 && got < 0) {
        lines_report(&r);
        rc = -1;
    }
    lines_close(&r);
    if (rc == 0 && t->n == 0) {
        user_error_data(VE_HINT, "%s: no word vectors in the file", path);
        rc = -1;
    }
    if (rc) vec_table_free(t);
    return rc;
}

void vec_table_free(VecTable *t) {
    strmap_free(&t->words);
    free(t->unit);
    memset(t, 0, sizeof *t);
}

int vec_table_find(const VecTable *t, const char *word) {
    char buf[256];
    size_t n = strlen(word);
    if (n >= sizeof buf) return -1;
    memcpy(buf, word, n + 1);
    ve_lower(buf);
    return strmap_find(&t->words, NULL, 0, buf, n);
}

static float ve_dot(const float *a, const float *b, int D) {
    float s = 0;
    for (int d = 0; d < D; d++) s += a[d] * b[d];
    return s;
}

/* The k rows closest to q (unit or not: the order is the cosine's), skipping
 * rows in skip[0..ns). */
static int ve_closest(const VecTable *t, const float *q, const int *skip, int ns, int k, int *out, float *sim) {
    int got = 0;
    for (int i = 0; i < t->n; i++) {
        int skipped = 0;
        for (int s = 0; s < ns; s++) skipped |= skip[s] == i;
        if (skipped) continue;
        float c = ve_dot(q, t->unit + (size_t)i * t->D, t->D);
        if (got == k && c <= sim[k - 1]) continue;
        int p = got < k ? got++ : k - 1;   /* insertion into the sorted top k */
        while (p > 0 && sim[p - 1] < c) {
            sim[p] = sim[p - 1];
            out[p] = out[p - 1];
            p--;
        }
        sim[p] = c;
        out[p] = i;
    }
    return got;
}

int vec_neighbours(const VecTable *t, int row, int k, int *out, float *sim) {
    return ve_closest(t, t->unit + (size_t)row * t->D, &row, 1, k, out, sim);
}

/* One question line "a b c d": 1 answered right, 0 wrong, 2 a word missing,
 * -1 not four words. */
static int ve_question(const VecTable *t, char *line, float *q) {
    char *save = NULL, *w[5];
    int n = 0;
    for (char *x = strtok_r(line, " \t", &save); x; x = strtok_r(NULL, " \t", &save)) {
        if (n == 4) return -1;
        w[n++] = x;
    }
    if (n != 4) return -1;
    int id[4];
    for (int i = 0; i < 4; i++)
        if ((id[i] = vec_table_find(t, w[i])) < 0) return 2;
    const float *a = t->unit + (size_t)id[0] * t->D, *b = t->unit + (size_t)id[1] * t->D,
                *c = t->unit + (size_t)id[2] * t->D;
    for (int d = 0; d < t->D; d++) q[d] = b[d] - a[d] + c[d];
    int best;
    float sim;
    return ve_closest(t, q, id, 3, 1, &best, &sim) == 1 && best == id[3];
}

int vec_analogies(const VecTable *t, const char *path, VecAnalogyResult *r) {
    memset(r, 0, sizeof *r);
    LineReader lr;
    if (lines_open_or_report(&lr, path)) return -1;
    float *q = xmalloc((size_t)t->D * sizeof *q);
    char *line;
    size_t len;
    int got, rc = 0, cat = -1;
    while (rc == 0 && (got = lines_next(&lr, &line, &len)) == 1) {
        if (len == 0) continue;
        if (line[0] == ':') {
            if (r->categories == VEC_MAX_CATEGORIES) {
                user_error_data("merge categories", "%s:%ld: more than %d categories", path, lr.line_no, VEC_MAX_CATEGORIES);
                rc = -1;
                break;
            }
            cat = r->categories++;
            const char *name = line + 1 + strspn(line + 1, " ");
            snprintf(r->name[cat], sizeof r->name[cat], "%s", name);
            continue;
        }
        int a = cat < 0 ? -1 : ve_question(t, line, q);
        if (a < 0) {
            user_error_data("an analogy file has \": category\" lines, then lines of four words \"a b c d\"",
                       "%s:%ld: %s", path, lr.line_no, cat < 0 ? "a question before any \": category\" line" : "not four words");
            rc = -1;
            break;
        }
        r->questions[cat]++;
        r->answered[cat] += a != 2;
        r->correct[cat] += a == 1;
    }
    if (rc == 0 && got < 0) {
        lines_report(&lr);
        rc = -1;
    }
    lines_close(&lr);
    free(q);
    return rc;
}
