/* report_analysis.c — the analyses section: results files that a script of
 * the repository writes rather than glue (eval/sst2_polarity.py), each
 * {"analysis": TITLE, "command": ..., "tables": [{"title", "columns": [...],
 * "rows": [[cell, ...], ...]}]}, drawn as its tables (numbers as numbers,
 * text as text): the report reads every results file, not only glue's. */
#include "eval/report_sections.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>

#define ANALYSIS_MAX_COLUMNS 64

static void analysis_table(ReportPage *p, const cJSON *t) {
    FILE *f = p->f;
    /* A column of whole numbers (counts) is printed without decimals, any other with two. */
    int fraction[ANALYSIS_MAX_COLUMNS] = {0}, k;
    const cJSON *r, *v;
    cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(t, "rows")) {
        k = 0;
        cJSON_ArrayForEach(v, r) {
            if (k < ANALYSIS_MAX_COLUMNS) fraction[k++] |= cJSON_IsNumber(v) && v->valuedouble != floor(v->valuedouble);
        }
    }
    const cJSON *title = cJSON_GetObjectItemCaseSensitive(t, "title"), *c, *row, *cell;
    fputs("<div class=\"table-wrap\">\n<table class=\"results\">\n", f);
    if (cJSON_IsString(title)) {
        fputs("<caption>", f);
        report_page_text(p, title->valuestring);
        fputs("</caption>\n", f);
    }
    fputs("<thead><tr>", f);
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(t, "columns")) {
        fputs("<th scope=\"col\">", f);
        report_page_text(p, cJSON_IsString(c) ? c->valuestring : "");
        fputs("</th>", f);
    }
    fputs("</tr></thead>\n<tbody>\n", f);
    cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(t, "rows")) {
        fputs("<tr>", f);
        k = 0;
        cJSON_ArrayForEach(cell, row) {
            int decimals = k < ANALYSIS_MAX_COLUMNS && fraction[k] ? 2 : 0;
            k++;
            if (cJSON_IsNumber(cell)) {
                report_page_num_cell(p, cell->valuedouble, decimals, NULL);
                continue;
            }
            fputs("<td>", f);
            report_page_text(p, cJSON_IsString(cell) ? cell->valuestring : "");
            fputs("</td>", f);
        }
        fputs("</tr>\n", f);
    }
    fputs("</tbody>\n</table>\n</div>\n", f);
}

void report_section_analyses(ReportPage *p, const ReportInputs *in) {
    FILE *f = p->f;
    int n = 0;
    fputs("<section id=\"analyses\">\n<h2>Analyses</h2>\n", f);
    for (int i = 0; i < in->n; i++) {
        const ReportInput *x = &in->in[i];
        if (x->kind != REPORT_IN_ANALYSIS) continue;
        n++;
        const cJSON *title = cJSON_GetObjectItemCaseSensitive(x->json, "analysis"), *t;
        report_page_sourced(p, "<h3>", cJSON_IsString(title) ? title->valuestring : x->path, x->source);
        fputs("</h3>\n", f);
        cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(x->json, "tables")) analysis_table(p, t);
    }
    if (!n) fputs("<p class=\"missing\">No analyses in the results directory: <code>python3 eval/sst2_polarity.py"
                  "</code> writes sst2_polarity.json.</p>\n", f);
    fputs("</section>\n", f);
}
