/* provenance.c — see provenance.h. GLUE_COMMIT comes from the Makefile, which
 * rebuilds this file on every build so that the commit is never stale. */
#include "core/provenance.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <time.h>

#include "core/kernels.h"
#include "core/sgemm.h"

#ifndef GLUE_COMMIT
#define GLUE_COMMIT "unknown"
#endif

const char *provenance_commit(void) { return GLUE_COMMIT; }

void provenance_cpu(char *out, size_t cap) {
    snprintf(out, cap, "%s, kernels %s, gemm %s", kernels_cpu_model(), kernels_level_name(kernels_level()),
             gemm_backend_describe());
}

cJSON *provenance_json(int threads, long long seed) {
    cJSON *j = cJSON_CreateObject();
    char date[32], cpu[256];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
    cJSON_AddStringToObject(j, "glue_version", GLUE_VERSION);
    cJSON_AddStringToObject(j, "commit", GLUE_COMMIT);
    cJSON_AddStringToObject(j, "date", date);
    provenance_cpu(cpu, sizeof cpu);
    cJSON_AddStringToObject(j, "cpu", cpu);
    cJSON_AddStringToObject(j, "kernels", kernels_level_name(kernels_level()));
    cJSON_AddStringToObject(j, "gemm", gemm_backend_describe());
    if (threads >= 0) cJSON_AddNumberToObject(j, "threads", threads);
    if (seed >= 0) cJSON_AddNumberToObject(j, "seed", (double)seed);
    return j;
}
