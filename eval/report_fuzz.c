/* report_fuzz.c — the report's fuzzing figures: `make fuzz` (fuzz.json,
 * written by tests/fuzz/report.py: each harness for a fixed time) and `make
 * fuzz-campaign` (fuzz_campaign.json, by tests/fuzz/campaign.py: each harness
 * to a target, in segments). Both are a list of harnesses with counters;
 * the table has the columns the file's harnesses have, and the file's totals
 * under it. */
#include "eval/report_sections.h"

#include "core/common.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <string.h>

/* Counters a harness may have, in the order shown. */
static const struct {
    const char *key, *head;
} COUNTERS[] = {
    {"executions", "executions"}, {"seconds", "seconds"},   {"cpu_seconds", "CPU seconds"},
    {"exec_per_sec", "exec/s"},   {"cov", "cov (edges)"},  {"ft", "ft (features)"},
    {"corpus", "corpus"},         {"new_units", "new units"}, {"segments", "segments"},
    {"peak_rss_mb", "peak RSS (MB)"}, {"crashes", "crashes"}, {"crashes_found", "crashes found"},
};
#define NCOUNTERS ((int)(sizeof COUNTERS / sizeof COUNTERS[0]))

static const cJSON *field(const cJSON *o, const char *k) { return cJSON_GetObjectItemCaseSensitive(o, k); }

/* One row: counters, then target met, open crashes and CPUs where the first harness has them. */
static void fuzz_row(ReportPage *p, const cJSON *h, const cJSON *first) {
    FILE *f = p->f;
    const cJSON *name = field(h, "harness");
    fputs("<tr><th scope=\"row\">", f);
    report_page_text(p, cJSON_IsString(name) ? name->valuestring : "?");
    fputs("</th>", f);
    for (int k = 0; k < NCOUNTERS; k++) {
        if (!field(first, COUNTERS[k].key)) continue;
        report_page_num_cell(p, report_num(h, COUNTERS[k].key), 0, NULL);
    }
    if (field(first, "target_met"))
        fprintf(f, "<td class=\"text\">%s</td>", cJSON_IsTrue(field(h, "target_met")) ? "yes" : "no");
    if (cJSON_IsArray(field(first, "open_crashes")))
        report_page_num_cell(p, cJSON_GetArraySize(field(h, "open_crashes")), 0, NULL);
    if (cJSON_IsArray(field(first, "cpus"))) {
        fputs("<td class=\"text cpu\">", f);
        const cJSON *cpus = field(h, "cpus");
        for (const cJSON *c = cJSON_IsArray(cpus) ? cpus->child : NULL; c; c = c->next) {
            if (c != cpus->child) fputs("; ", f);
            report_page_text(p, cJSON_IsString(c) ? c->valuestring : "?");
        }
        if (!cJSON_GetArraySize(cpus)) fputs("CPU not recorded", f);
        fputs("</td>", f);
    }
    fputs("</tr>\n", f);
}

/* "Total: 1,540,238 executions; 0 crashes." from the file's totals. */
static void fuzz_totals(ReportPage *p, const cJSON *j) {
    FILE *f = p->f;
    fputs("<p class=\"note\">Total: ", f);
    report_page_num(p, report_num(j, "total_executions"), 0);
    fputs(" executions", f);
    if (isfinite(report_num(j, "total_cpu_seconds"))) {
        fputs(" in ", f);
        report_page_num(p, report_num(j, "total_cpu_seconds") / 3600, 1);
        fputs(" CPU hours", f);
    }
    fputs("; ", f);
    int campaign = isfinite(report_num(j, "total_crashes_found"));
    double crashes = report_num(j, campaign ? "total_crashes_found" : "total_crashes");
    report_page_num(p, crashes, 0);
    fprintf(f, " crash%s%s", crashes == 1 ? "" : "es", campaign ? " found, " : "");
    if (campaign) {
        report_page_num(p, report_num(j, "open_crashes"), 0);
        fputs(" open", f);
    }
    if (field(j, "complete"))
        fprintf(f, "; campaign %s", cJSON_IsTrue(field(j, "complete")) ? "complete" : "not complete");
    fputs(".</p>\n", f);
}

static void fuzz_table(ReportPage *p, const ReportInput *in) {
    const cJSON *j = in->json, *hs = field(j, "harnesses"), *first = cJSON_IsArray(hs) ? hs->child : NULL;
    const cJSON *what = field(j, "what"), *date = field(j, "date");
    char slug[256];
    report_page_slug(in->name, slug, sizeof slug);
    FILE *f = p->f;
    report_page_sourced(p, "<h3>", in->path, in->source);
    fputs("</h3>\n<p class=\"note\">", f);
    report_page_text(p, cJSON_IsString(what) ? what->valuestring : "fuzzing");
    if (cJSON_IsString(date)) report_page_printf(p, "; %s", date->valuestring);
    fprintf(f, ".</p>\n<div class=\"table-wrap\">\n<table id=\"fuzz-%s\" class=\"results\">\n<thead><tr>"
               "<th scope=\"col\" class=\"row-head\">harness</th>", slug);
    for (int k = 0; k < NCOUNTERS; k++)
        if (field(first, COUNTERS[k].key)) fprintf(f, "<th scope=\"col\">%s</th>", COUNTERS[k].head);
    if (field(first, "target_met")) fputs("<th scope=\"col\" class=\"text\">target met</th>", f);
    if (cJSON_IsArray(field(first, "open_crashes"))) fputs("<th scope=\"col\">open crashes</th>", f);
    if (cJSON_IsArray(field(first, "cpus"))) fputs("<th scope=\"col\" class=\"text\">CPU</th>", f);
    fputs("</tr></thead>\n<tbody>\n", f);
    for (const cJSON *h = first; h; h = h->next) fuzz_row(p, h, first);
    fputs("</tbody>\n</table>\n</div>\n", f);
    fuzz_totals(p, j);
}

void report_section_fuzz(ReportPage *p, const ReportInputs *in) {
    FILE *f = p->f;
    fputs("<section id=\"fuzz\">\n<h2>Fuzzing</h2>\n", f);
    if (!report_inputs_count(in, REPORT_IN_FUZZ)) {
        fputs("<p class=\"missing\">No fuzzing figures in the results directory: <code>make fuzz</code> writes "
              "fuzz.json, <code>make fuzz-campaign</code> fuzz_campaign.json (libFuzzer, built with clang).</p>\n"
              "</section>\n", f);
        report_page_missing(p, "no fuzzing figures (fuzz.json, fuzz_campaign.json): make fuzz or make "
                               "fuzz-campaign makes them");
        return;
    }
    fputs("<p class=\"note\">libFuzzer over glue's parsers of untrusted bytes, with AddressSanitizer and "
          "UndefinedBehaviorSanitizer. <code>cov</code>: edges covered, <code>ft</code>: libFuzzer's features, "
          "both from the last status line.</p>\n", f);
    for (int i = 0; i < in->n; i++)
        if (in->in[i].kind == REPORT_IN_FUZZ) fuzz_table(p, &in->in[i]);
    fputs("</section>\n", f);
}
