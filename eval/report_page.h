/* report_page.h — the HTML report being written: its output file, the list of
 * inputs that are missing or unreadable (shown at the top of the page, so a
 * gap is never silent), and the sources every number came from (footnotes
 * with command, commit, date and machine, when the source records them).
 *
 * Numbers go out through report_page_num: the rounded text a reader sees,
 * wrapped in <data value="..."> holding the exact value of the JSON (17
 * significant digits, which read back to the same double), so a test can
 * check that the page says what the files say. */
#ifndef GLUE_REPORT_PAGE_H
#define GLUE_REPORT_PAGE_H

#include <stdio.h>

typedef struct cJSON cJSON;

typedef struct ReportSource {
    char *path;        /* the file, as given on the command line or found */
    char *provenance;  /* "command: ...; commit: ...; date: ...; machine: ..." or "" */
} ReportSource;

typedef struct ReportPage {
    FILE *f;
    char **missing;
    int num_missing, cap_missing;
    ReportSource *src;
    int num_src, cap_src;
} ReportPage;

void report_page_init(ReportPage *p, FILE *f);
void report_page_free(ReportPage *p);
/* Records that something is missing (plain text, escaped when written). */
void report_page_missing(ReportPage *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Registers a source file and what it says about its own making (json may be
 * NULL); returns its footnote number (1-based; the same number for the same path). */
int report_page_source(ReportPage *p, const char *path, const cJSON *json);
/* Escaped text. */
void report_page_text(ReportPage *p, const char *s);
/* Formatted text, escaped. */
void report_page_printf(ReportPage *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* <data value="EXACT">ROUNDED</data> (thousands separated by commas from
 * 10,000 up); "-" for a NaN. */
void report_page_num(ReportPage *p, double v, int decimals);
/* <td>, with title="..." when title is neither NULL nor "", holding report_page_num. */
void report_page_num_cell(ReportPage *p, double v, int decimals, const char *title);
/* <sup class="fn"><a href="#src-N">[N]</a></sup> */
void report_page_fnref(ReportPage *p, int n);
/* html as it is (the markup that opens a heading or caption), then text
 * escaped and the footnote mark of source n. */
void report_page_sourced(ReportPage *p, const char *html, const char *text, int n);
/* A title="..." attribute naming source n and its provenance (leading space). */
void report_page_title_attr(ReportPage *p, int n);
/* The same after a note saying what the number is ("mean of 5 seeds ...");
 * note NULL or "": report_page_title_attr. */
void report_page_title_note(ReportPage *p, int n, const char *note);
/* "a-b_c" from any text: lower-case letters, digits and '-' (for ids). */
void report_page_slug(const char *s, char *out, size_t cap);

#endif
