/* editdist.c — Levenshtein distance with one rolling row (see editdist.h). */
#include "core/editdist.h"

#include "core/common.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int str_edit_distance(const char *a, const char *b) {
    size_t la = strlen(a), lb = strlen(b);
    int *row = xmalloc((lb + 1) * sizeof *row);   /* row[j]: distance a[0..i) -> b[0..j) */
    for (size_t j = 0; j <= lb; j++) row[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int diag = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int sub = diag + (tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]));
            int del = row[j] + 1, ins = row[j - 1] + 1;
            diag = row[j];
            row[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
        }
    }
    int d = row[lb];
    free(row);
    return d;
}

int str_is_near(const char *typed, int distance) {
    int len = (int)strlen(typed);
    return distance <= (len / 3 > 2 ? len / 3 : 2);
}

const char *str_did_you_mean(const char *guess, char *buf, size_t cap) {
    if (!guess) return "";
    snprintf(buf, cap, " (did you mean '%s'?)", guess);
    return buf;
}
