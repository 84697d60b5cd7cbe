/* run_dir.c — run directory layout and atomic JSON files (see run_dir.h). */
#include "models/run_dir.h"

#include "core/common.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *env_or(const char *name, const char *fallback) {
    const char *v = getenv(name);
    return v && *v ? v : fallback;
}

const char *run_root(void) { return env_or("GLUE_RUNS", "runs"); }
/* Not the repository's results/: those are the committed reference numbers,
 * written only when a command is told to (--results FILE or GLUE_RESULTS). */
const char *run_results_root(void) {
    static char def[4200];
    if (!def[0]) snprintf(def, sizeof def, "%s/results", run_root());
    return env_or("GLUE_RESULTS", def);
}

void run_dir_path(const char *task, const char *model, char *out, size_t cap) {
    int n = snprintf(out, cap, "%s/%s/%s", run_root(), task, model);
    if (n < 0 || (size_t)n >= cap) DIE("run directory path too long: %s/%s/%s", run_root(), task, model);
}

void run_file_path(const char *dir, const char *file, char *out, size_t cap) {
    int n = snprintf(out, cap, "%s/%s", dir, file);
    if (n < 0 || (size_t)n >= cap) DIE("path too long: %s/%s", dir, file);
}

int run_dir_make(const char *dir) {
    char path[4096];
    size_t n = strlen(dir);
    if (n == 0 || n >= sizeof path) { user_error(NULL, "bad directory name '%s'", dir); return -1; }
    memcpy(path, dir, n + 1);
    /* Create each prefix in turn; existing ones are fine. */
    for (size_t i = 1; i <= n; i++) {
        if (path[i] != '/' && path[i] != '\0') continue;
        char saved = path[i];
        path[i] = '\0';
        if (mkdir(path, 0777) != 0 && errno != EEXIST) {
            user_error("check the path and its permissions", "cannot create directory %s: %s", path,
                       strerror(errno));
            return -1;
        }
        path[i] = saved;
    }
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        user_error(NULL, "%s exists and is not a directory", dir);
        return -1;
    }
    return 0;
}

int run_file_exists(const char *path) { return access(path, F_OK) == 0; }

int run_json_write(const char *path, const cJSON *json) {
    char *text = cJSON_Print(json);
    if (!text) DIE("out of memory printing JSON");
    char tmp[4096];
    int n = snprintf(tmp, sizeof tmp, "%s.tmp", path);
    if (n < 0 || (size_t)n >= sizeof tmp) DIE("path too long: %s", path);
    FILE *f = fopen(tmp, "w");
    int ok = f != NULL;
    if (ok) {
        ok = fputs(text, f) >= 0 && fputc('\n', f) != EOF;
        ok = (fclose(f) == 0) && ok;
    }
    if (ok) ok = rename(tmp, path) == 0;
    if (!ok) {
        user_error("check free disk space and permissions", "cannot write %s: %s", path, strerror(errno));
        unlink(tmp);
    }
    free(text);
    return ok ? 0 : -1;
}

char *run_file_read(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, n = 0, k;
    char *buf = xmalloc(cap);
    while ((k = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += k;
        if (cap - n < 2) buf = xrealloc(buf, cap *= 2);
    }
    int err = ferror(f);
    fclose(f);
    if (err) { free(buf); errno = EIO; return NULL; }
    buf[n] = '\0';
    if (len) *len = n;
    return buf;
}

cJSON *run_json_read(const char *path, int report_missing) {
    size_t len;
    char *text = run_file_read(path, &len);
    if (!text) {
        if (errno != ENOENT || report_missing) user_error(NULL, "cannot read %s: %s", path, strerror(errno));
        return NULL;
    }
    const char *end = NULL;
    cJSON *json = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    if (!json) {
        long line = 1;
        for (const char *p = text; end && p < end; p++) line += *p == '\n';
        user_error("fix the file or delete it to start over", "%s:%ld: malformed JSON", path, line);
    }
    free(text);
    return json;
}

void run_json_add_exact(cJSON *object, const char *key, double value) {
    char hex[64];
    snprintf(hex, sizeof hex, "%a", value);
    cJSON_AddStringToObject(object, key, hex);
}

double run_json_exact(const cJSON *object, const char *key, double fallback) {
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(object, key);
    if (cJSON_IsNumber(j)) return j->valuedouble;
    if (!cJSON_IsString(j)) return fallback;
    char *end;
    double v = strtod(j->valuestring, &end);
    return *end == '\0' && end != j->valuestring ? v : fallback;
}
