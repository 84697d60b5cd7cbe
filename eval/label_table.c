/* label_table.c — per-label tables as JSON and Markdown (see label_table.h). */
#include "eval/label_table.h"

#include "core/common.h"
#include "core/files.h"

#include <cjson/cJSON.h>
#include <stdio.h>

/* The averages a details object may hold, in the order the Markdown lists them. */
static const char *const LABEL_TABLE_AVERAGES[] = {
    "micro_precision", "micro_recall", "micro_f1", "macro_precision", "macro_recall", "macro_f1",
    "samples_precision", "samples_recall", "samples_f1", "accuracy", "subset_accuracy", "hamming_loss",
    "empty_predictions", NULL};

static int label_table_markdown(const cJSON *details, const char *path, const char *title) {
    AtomicFile a;
    FILE *f = atomic_open(&a, path);   /* says why when it cannot */
    if (!f) return 1;
    fprintf(f, "# %s\n\n", title);
    for (int i = 0; LABEL_TABLE_AVERAGES[i]; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(details, LABEL_TABLE_AVERAGES[i]);
        if (cJSON_IsNumber(v)) fprintf(f, "- %s: %.4g\n", LABEL_TABLE_AVERAGES[i], v->valuedouble);
    }
    fprintf(f, "\n| Label | Precision | Recall | F1 | Support | Predicted |\n|---|---:|---:|---:|---:|---:|\n");
    const cJSON *rows = cJSON_GetObjectItemCaseSensitive(details, "per_label");
    for (const cJSON *r = rows ? rows->child : NULL; r; r = r->next) {
        const cJSON *label = cJSON_GetObjectItemCaseSensitive(r, "label");
        fprintf(f, "| %s | %.2f | %.2f | %.2f | %.0f | %.0f |\n", cJSON_IsString(label) ? label->valuestring : "?",
                cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(r, "precision")),
                cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(r, "recall")),
                cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(r, "f1")),
                cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(r, "support")),
                cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(r, "predicted")));
    }
    return atomic_commit(&a) != 0;
}

int label_table_write(const cJSON *details, const char *dir, const char *split, const char *title) {
    char name[256], path[4400];
    snprintf(name, sizeof name, "%s_per_label.json", split);
    file_join(dir, name, path, sizeof path);
    if (json_file_write(path, details) != 0) return 1;
    snprintf(name, sizeof name, "%s_per_label.md", split);
    file_join(dir, name, path, sizeof path);
    return label_table_markdown(details, path, title);
}
