/* run_dir.c — where runs and result tables live (see run_dir.h). */
#include "train/run_dir.h"

#include "core/common.h"
#include "core/files.h"
#include "core/provenance.h"
#include "train/resume.h"

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

cJSON *run_results_head(const char *command, uint64_t seed, int threads, const cJSON *config) {
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "command", command ? command : "");
    cJSON_AddNumberToObject(j, "seed", (double)seed);
    cJSON_AddNumberToObject(j, "threads", threads);
    cJSON_AddItemToObject(j, "provenance", provenance_json(threads, (long long)seed));
    if (config) cJSON_AddItemToObject(j, "config", cJSON_Duplicate(config, 1));
    return j;
}

int run_dir_begin(const char *out_dir, const char *results, const cJSON *config) {
    char path[4200];
    if (file_make_dir(out_dir)) return 1;
    file_join(out_dir, results, path, sizeof path);
    unlink(path);
    file_join(out_dir, RUN_CONFIG, path, sizeof path);
    return json_file_write(path, config) ? 1 : 0;
}

int run_dir_finish(const char *out_dir, const char *results_file, const cJSON *results, int keep_resume) {
    char path[4200];
    file_join(out_dir, results_file, path, sizeof path);
    if (json_file_write(path, results) != 0) return 1;
    if (!keep_resume) resume_remove(out_dir);
    return 0;
}
