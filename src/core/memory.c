/* memory.c — the memory a run may still allocate (see memory.h). */
#include "core/memory.h"

#include <stdio.h>
#include <stdlib.h>

double memory_available_bytes(void) {
    const char *env = getenv(MEMORY_LIMIT_ENV);
    if (env && *env) {
        char *end;
        double v = strtod(env, &end);
        if (end != env && *end == '\0' && v > 0) return v;
    }
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f) return 0;
    char line[256];
    double kb = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %lf kB", &kb) == 1) break;
    fclose(f);
    return kb * 1024.0;
}
