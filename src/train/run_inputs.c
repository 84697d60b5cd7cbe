/* run_inputs.c — the fingerprints of the files a run's settings name (see run_inputs.h). */
#include "train/run_inputs.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "core/crc32.h"
#include "core/files.h"
#include "train/run_dir.h"

static int regular_file(const char *path, long long *bytes) {
    struct stat s;
    if (stat(path, &s) != 0 || !S_ISREG(s.st_mode)) return 0;
    *bytes = (long long)s.st_size;
    return 1;
}

/* The file a setting's value names: itself, or DIR/model.ckpt, as named
 * (path) and where it is read (found: a shipped file may be the installed
 * copy, core/files.h file_shipped). 0: none. */
static int setting_file(const char *value, char *path, char *found, size_t cap, long long *bytes) {
    if (!*value || strlen(value) >= cap) return 0;
    snprintf(path, cap, "%s", value);
    if (regular_file(file_shipped(path, found, cap), bytes)) return 1;
    file_join(value, RUN_CKPT, path, cap);
    return regular_file(file_shipped(path, found, cap), bytes);
}

cJSON *run_inputs_json(const cJSON *config) {
    cJSON *j = cJSON_CreateObject();
    for (const cJSON *v = config ? config->child : NULL; v; v = v->next) {
        char path[4200], found[4200];
        long long bytes;
        uint32_t crc;
        if (!cJSON_IsString(v) || !v->string || !setting_file(v->valuestring, path, found, sizeof path, &bytes) ||
            crc32_file(found, 0, -1, &crc) != 0)
            continue;   /* an unreadable file: the run itself says so when it loads it */
        char hex[9];
        snprintf(hex, sizeof hex, "%08x", (unsigned)crc);
        cJSON *f = cJSON_AddObjectToObject(j, v->string);
        cJSON_AddStringToObject(f, "file", path);
        cJSON_AddNumberToObject(f, "bytes", (double)bytes);
        cJSON_AddStringToObject(f, "crc32", hex);
    }
    return j;
}

int run_inputs_same(const cJSON *recorded, const cJSON *config, char *why, size_t cap) {
    if (!cJSON_IsObject(recorded) || !recorded->child) return 1;
    cJSON *now = run_inputs_json(config);
    int same = 1;
    for (const cJSON *r = recorded->child; r && same; r = r->next) {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(now, r->string);
        same = n && cJSON_Compare(r, n, 1);
        if (!same && why) {
            const cJSON *file = cJSON_GetObjectItemCaseSensitive(r, "file");
            snprintf(why, cap, "%s (setting %s) %s since the run started",
                     cJSON_IsString(file) ? file->valuestring : "?", r->string, n ? "changed" : "is gone");
        }
    }
    cJSON_Delete(now);
    return same;
}
