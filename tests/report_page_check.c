/* report_page_check.c — reading a report page back (see report_page_check.h). */
#include "tests/report_page_check.h"

#include "core/common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DATA_OPEN "<data value=\""

int page_shows(const char *html, double v, int decimals, double tol) {
    char want[64];
    snprintf(want, sizeof want, "%.*f", decimals, v);
    for (const char *s = html ? strstr(html, DATA_OPEN) : NULL; s; s = strstr(s + 1, DATA_OPEN)) {
        char *end, shown[64];
        double x = strtod(s + strlen(DATA_OPEN), &end);
        if (fabs(x - v) > tol || strncmp(end, "\">", 2) != 0) continue;
        /* The text without its thousands commas. */
        size_t n = 0;
        for (const char *c = end + 2; *c && *c != '<' && n + 1 < sizeof shown; c++)
            if (*c != ',') shown[n++] = *c;
        shown[n] = '\0';
        if (strcmp(shown, want) == 0) return 1;
    }
    return 0;
}

int page_blank_charts(const char *html) {
    int blank = 0;
    for (const char *s = html ? strstr(html, "<svg") : NULL; s; s = strstr(s + 1, "<svg")) {
        const char *end = strstr(s, "</svg>");
        if (!end) return blank + 1;
        char *chart = xstrndup(s, (size_t)(end - s));
        blank += !strstr(chart, "<polyline") && !strstr(chart, "class=\"bar ") && !strstr(chart, "<circle");
        free(chart);
    }
    return blank;
}

int page_count(const char *html, const char *s) {
    int n = 0;
    for (const char *p = html ? strstr(html, s) : NULL; p; p = strstr(p + 1, s)) n++;
    return n;
}

char *page_element(const char *html, const char *id, const char *end) {
    char key[512];
    snprintf(key, sizeof key, "id=\"%s\"", id);
    const char *s = html ? strstr(html, key) : NULL;
    const char *e = s ? strstr(s, end) : NULL;
    return e ? xstrndup(s, (size_t)(e - s)) : NULL;
}

double page_data_sum(const char *s) {
    double sum = 0;
    for (const char *p = s ? strstr(s, DATA_OPEN) : NULL; p; p = strstr(p + 1, DATA_OPEN))
        sum += strtod(p + strlen(DATA_OPEN), NULL);
    return sum;
}
