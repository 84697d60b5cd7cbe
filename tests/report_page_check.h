/* report_page_check.h — reading a `glue report` page back in the tests:
 * the numbers it shows (<data value="EXACT">SHOWN</data>), its charts, and
 * the parts between an element's id and its end tag. */
#ifndef GLUE_TESTS_REPORT_PAGE_CHECK_H
#define GLUE_TESTS_REPORT_PAGE_CHECK_H

/* 1 when the page shows v: a <data> element whose value reads back as v
 * (within tol) and whose text is v with `decimals` decimals (thousands
 * commas aside). */
int page_shows(const char *html, double v, int decimals, double tol);
/* How many <svg> charts have nothing drawn in them (no polyline, bar or point). */
int page_blank_charts(const char *html);
/* How many times s occurs. */
int page_count(const char *html, const char *s);
/* The text from `id="ID"` to the next `end` (e.g. "</table>"), malloc'd; NULL
 * when there is no such element. */
char *page_element(const char *html, const char *id, const char *end);
/* The sum of the <data> values in s. */
double page_data_sum(const char *s);

#endif
