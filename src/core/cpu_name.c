/* cpu_name.c — the CPU a measurement was made on, as one line for result
 * files (see cpu_name.h). */
#include "core/cpu_name.h"

#include <stdio.h>
#include <string.h>

void cpu_describe(char *out, size_t cap) {
    char name[128] = "unknown CPU", line[4096];
    int family = -1, model = -1, avx2 = 0, avx512 = 0, bf16 = 0;
    FILE *f = fopen("/proc/cpuinfo", "r");
    while (f && fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (!colon) continue;
        char *v = colon + 1 + (colon[1] == ' ');
        v[strcspn(v, "\n")] = '\0';
        if (strncmp(line, "model name", 10) == 0) snprintf(name, sizeof name, "%s", v);
        else if (strncmp(line, "cpu family", 10) == 0) sscanf(v, "%d", &family);
        else if (strncmp(line, "model\t", 6) == 0) sscanf(v, "%d", &model);
        else if (strncmp(line, "flags", 5) == 0) {
            avx2 = strstr(v, " avx2") != NULL;
            avx512 = strstr(v, " avx512f") != NULL;
            bf16 = strstr(v, " avx512_bf16") != NULL;
            break;   /* the first processor says it all */
        }
    }
    if (f) fclose(f);
    snprintf(out, cap, "%s (family %d model %d, %s)", name, family, model,
             bf16 ? "AVX-512 + AVX512-BF16" : avx512 ? "AVX-512" : avx2 ? "AVX2" : "no AVX2");
}
