/* quantize_table.h — the fp32-against-quantized table `glue quantize --results`
 * writes (see quantize_table.c). */
#ifndef GLUE_QUANTIZE_TABLE_H
#define GLUE_QUANTIZE_TABLE_H

typedef struct cJSON cJSON;

/* lines: the per-run objects of `glue quantize --json` ({"run", "task",
 * "model", "format", "fp32", <format>, "fp32_bytes", "<format>_bytes"},
 * format "int8" or "pq"), merged by run into
 * path (JSON) and its .md twin. 0, or 1 after a message. */
int quantize_table_write(const char *path, const cJSON *lines, const char *command);

#endif
