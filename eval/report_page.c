/* report_page.c — output, missing-input notes and sources of the HTML report
 * (see report_page.h). */
#include "eval/report_page.h"

#include "core/common.h"
#include "eval/svg_plot.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void report_page_init(ReportPage *p, FILE *f) { *p = (ReportPage){.f = f}; }

void report_page_free(ReportPage *p) {
    for (int i = 0; i < p->num_missing; i++) free(p->missing[i]);
    for (int i = 0; i < p->num_src; i++) {
        free(p->src[i].path);
        free(p->src[i].provenance);
    }
    free(p->missing);
    free(p->src);
    *p = (ReportPage){0};
}

static char *vformat(const char *fmt, va_list ap) {
    va_list copy;
    va_copy(copy, ap);
    int n = vsnprintf(NULL, 0, fmt, copy);
    va_end(copy);
    char *s = xmalloc((size_t)(n > 0 ? n : 0) + 1);
    vsnprintf(s, (size_t)(n > 0 ? n : 0) + 1, fmt, ap);
    return s;
}

void report_page_missing(ReportPage *p, const char *fmt, ...) {
    if (p->num_missing == p->cap_missing) {
        p->cap_missing = p->cap_missing ? 2 * p->cap_missing : 16;
        p->missing = xrealloc(p->missing, sizeof(char *) * (size_t)p->cap_missing);
    }
    va_list ap;
    va_start(ap, fmt);
    p->missing[p->num_missing++] = vformat(fmt, ap);
    va_end(ap);
}

/* Appends "key: value; " to buf for the string fields of o that say how a
 * number was made. Another tool may record them at the top level or in a
 * "provenance" object; both are read, and absent ones are simply left out. */
static void provenance_fields(const cJSON *o, char *buf, size_t cap) {
    static const char *const KEYS[] = {"command", "train_command", "commit", "git_commit", "version",
                                       "date", "created", "time", "host", "hostname", "cpu"};
    for (size_t k = 0; k < sizeof KEYS / sizeof KEYS[0]; k++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, KEYS[k]);
        size_t n = strlen(buf);
        if (cJSON_IsString(v) && *v->valuestring) snprintf(buf + n, cap - n, "%s: %s; ", KEYS[k], v->valuestring);
    }
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(o, "machine");
    size_t n = strlen(buf);
    if (cJSON_IsString(m)) snprintf(buf + n, cap - n, "machine: %s; ", m->valuestring);
    if (cJSON_IsObject(m)) {
        const cJSON *cpu = cJSON_GetObjectItemCaseSensitive(m, "cpu");
        const cJSON *cores = cJSON_GetObjectItemCaseSensitive(m, "cores");
        snprintf(buf + n, cap - n, "machine: %s", cJSON_IsString(cpu) ? cpu->valuestring : "CPU not recorded");
        n = strlen(buf);
        if (cJSON_IsNumber(cores)) snprintf(buf + n, cap - n, ", %d cores", cores->valueint);
        n = strlen(buf);
        snprintf(buf + n, cap - n, "; ");
    }
}

int report_page_source(ReportPage *p, const char *path, const cJSON *json) {
    for (int i = 0; i < p->num_src; i++)
        if (strcmp(p->src[i].path, path) == 0) return i + 1;
    if (p->num_src == p->cap_src) {
        p->cap_src = p->cap_src ? 2 * p->cap_src : 16;
        p->src = xrealloc(p->src, sizeof(ReportSource) * (size_t)p->cap_src);
    }
    char buf[4096] = "";
    if (json) {
        provenance_fields(json, buf, sizeof buf);
        const cJSON *prov = cJSON_GetObjectItemCaseSensitive(json, "provenance");
        if (cJSON_IsObject(prov)) provenance_fields(prov, buf, sizeof buf);
    }
    size_t n = strlen(buf);
    if (n >= 2) buf[n - 2] = '\0';   /* the last "; " */
    p->src[p->num_src] = (ReportSource){.path = xstrdup(path), .provenance = xstrdup(buf)};
    return ++p->num_src;
}

void report_page_text(ReportPage *p, const char *s) { svg_escape(p->f, s); }

void report_page_printf(ReportPage *p, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char *s = vformat(fmt, ap);
    va_end(ap);
    svg_escape(p->f, s);
    free(s);
}

void report_page_num(ReportPage *p, double v, int decimals) {
    if (!isfinite(v)) { fputs("-", p->f); return; }
    char text[64], grouped[96];
    snprintf(text, sizeof text, "%.*f", decimals, v);
    /* 478,344 rather than 478344: commas between thousands from 10,000 up. */
    size_t n = strcspn(text, "."), lead = text[0] == '-', j = 0;
    for (size_t i = 0; text[i]; i++) {
        if (fabs(v) >= 1e4 && i > lead && i < n && (n - i) % 3 == 0) grouped[j++] = ',';
        grouped[j++] = text[i];
    }
    grouped[j] = '\0';
    fprintf(p->f, "<data value=\"%.17g\">%s</data>", v, grouped);
}

void report_page_num_cell(ReportPage *p, double v, int decimals, const char *title) {
    fprintf(p->f, "<td");
    if (title && *title) {
        fprintf(p->f, " title=\"");
        report_page_text(p, title);
        fprintf(p->f, "\"");
    }
    fprintf(p->f, ">");
    report_page_num(p, v, decimals);
    fprintf(p->f, "</td>");
}

void report_page_fnref(ReportPage *p, int n) {
    if (n >= 1) fprintf(p->f, "<sup class=\"fn\"><a href=\"#src-%d\">[%d]</a></sup>", n, n);
}

void report_page_sourced(ReportPage *p, const char *html, const char *text, int n) {
    fputs(html, p->f);
    report_page_text(p, text);
    report_page_fnref(p, n);
}

void report_page_title_note(ReportPage *p, int n, const char *note) {
    int has_src = n >= 1 && n <= p->num_src, has_note = note && *note;
    if (!has_src && !has_note) return;
    fputs(" title=\"", p->f);
    if (has_note) svg_escape(p->f, note);
    if (has_src) {
        if (has_note) fputs(" — ", p->f);
        svg_escape(p->f, p->src[n - 1].path);
        if (*p->src[n - 1].provenance) {
            fputs(" — ", p->f);
            svg_escape(p->f, p->src[n - 1].provenance);
        }
    }
    fputs("\"", p->f);
}

void report_page_title_attr(ReportPage *p, int n) { report_page_title_note(p, n, NULL); }

void report_page_slug(const char *s, char *out, size_t cap) {
    size_t n = 0;
    int dash = 0;
    for (; s && *s && n + 2 < cap; s++) {
        unsigned char c = (unsigned char)*s;
        if (isalnum(c)) {
            if (dash && n) out[n++] = '-';
            out[n++] = (char)tolower(c);
            dash = 0;
        } else {
            dash = 1;
        }
    }
    out[n] = '\0';
}
