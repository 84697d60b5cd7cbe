/* quantize_table.c — `glue quantize RUN... --results FILE.json`: the fp32 run
 * and its quantized copy (int8 BERT, product-quantized fastText) side by
 * side, one row per (run, metric).
 *
 * Each quantized run contributes the line `glue quantize --json` prints (its
 * task, model, fp32 and quantized best, both checkpoint sizes). The table
 * merges by run: rows of runs not quantized this time are kept, so a table
 * can be built one run at a time. FILE.json holds the rows and the machine;
 * FILE.md the same as a Markdown table, with Δ = quantized − fp32. */
#include "cli/quantize_table.h"

#include "core/common.h"
#include "core/files.h"
#include "core/provenance.h"
#include "eval/report.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const cJSON *get(const cJSON *o, const char *k) { return cJSON_GetObjectItemCaseSensitive(o, k); }

/* Rows of an existing table whose run is not among `lines`, then `lines`. */
static cJSON *quantize_table_merge(const char *path, const cJSON *lines) {
    cJSON *rows = cJSON_CreateArray(), *old = file_exists(path) ? json_file_read(path, 0) : NULL, *r;
    cJSON_ArrayForEach(r, get(old, "rows")) {
        const char *run = cJSON_GetStringValue(get(r, "run"));
        int replaced = 0;
        const cJSON *l;
        cJSON_ArrayForEach(l, lines) replaced |= run && strcmp(run, cJSON_GetStringValue(get(l, "run"))) == 0;
        if (!replaced) cJSON_AddItemToArray(rows, cJSON_Duplicate(r, 1));
    }
    cJSON_ArrayForEach(r, lines) cJSON_AddItemToArray(rows, cJSON_Duplicate(r, 1));
    cJSON_Delete(old);
    return rows;
}

/* One table row per metric of each dev split the row's fp32 best holds. */
static void quantize_table_rows(ReportTable *t, const cJSON *rows) {
    const cJSON *r;
    cJSON_ArrayForEach(r, rows) {
        const char *format = cJSON_GetStringValue(get(r, "format"));
        char bytes[64];
        snprintf(bytes, sizeof bytes, "%s_bytes", format ? format : "int8");
        const cJSON *f = get(r, "fp32"), *q = get(r, format ? format : "int8"), *split;
        cJSON_ArrayForEach(split, f) {
            if (!cJSON_IsObject(split)) continue;
            const cJSON *m;
            cJSON_ArrayForEach(m, split) {
                const cJSON *qm = get(get(q, split->string), m->string);
                if (!cJSON_IsNumber(m) || !cJSON_IsNumber(qm)) continue;
                report_table_add(t, "%s", cJSON_GetStringValue(get(r, "task")));
                double cal = cJSON_GetNumberValue(get(r, "calibrate"));   /* NaN in rows made before it was kept */
                if (cal > 0) report_table_add(t, "%s (int8, SmoothQuant %.0f)", cJSON_GetStringValue(get(r, "model")), cal);
                else report_table_add(t, "%s (%s)", cJSON_GetStringValue(get(r, "model")), format ? format : "int8");
                report_table_add(t, "%s %s", split->string, m->string);
                report_table_add(t, "%.2f", m->valuedouble);
                report_table_add(t, "%.2f", qm->valuedouble);
                report_table_add(t, "%+.2f", qm->valuedouble - m->valuedouble);
                report_table_add(t, "%.1f", cJSON_GetNumberValue(get(r, "fp32_bytes")) / 1e6);
                report_table_add(t, "%.2f", cJSON_GetNumberValue(get(r, bytes)) / 1e6);
                report_table_add(t, "%s", cJSON_GetStringValue(get(r, "run")));
            }
        }
    }
}

int quantize_table_write(const char *path, const cJSON *lines, const char *command) {
    cJSON *out = cJSON_CreateObject();
    cJSON_AddStringToObject(out, "command", command);
    cJSON_AddItemToObject(out, "provenance", provenance_json(0, -1));
    cJSON *rows = quantize_table_merge(path, lines);
    cJSON_AddItemToObject(out, "rows", rows);
    ReportTable *t = report_table_create(9);
    const char *head[] = {"Task", "Model (format)", "Metric", "fp32", "quantized", "Δ", "fp32 MB", "quantized MB", "Run"};
    for (int i = 0; i < 9; i++) report_table_add(t, "%s", head[i]);
    quantize_table_rows(t, rows);
    char md[4200], *text = NULL;
    size_t len = 0;
    file_md_twin(path, md, sizeof md);
    FILE *f = open_memstream(&text, &len);
    fprintf(f, "# fp32 against quantized: dev metrics of each run and its quantized copy\n\n"
               "Made by `%s` (rows of earlier runs kept). Δ = quantized − fp32; sizes are the checkpoint files.\n\n",
            command);
    report_table_print_markdown(t, f);
    fclose(f);
    report_table_free(t);
    int rc = json_file_write(path, out) == 0 && atomic_write(md, text, len) == 0 ? 0 : 1;
    if (rc == 0) fprintf(stderr, "glue: wrote %s and %s\n", path, md);
    free(text);
    cJSON_Delete(out);
    return rc;
}
