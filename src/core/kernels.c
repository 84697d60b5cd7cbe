/* kernels.c — which instruction-set level runs the hot loops (see kernels.h):
 * the CPU's features from cpuid (__builtin_cpu_supports), lowered by
 * GLUE_KERNELS, decided once. */
#include "core/kernels.h"

#include <cpuid.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"

extern const ElemKernels kernels_portable_ops, kernels_avx2_ops, kernels_avx512_ops;

static const char *const KERN_NAMES[KERN_LEVELS] = {"portable", "avx2", "avx512", "avx512bf16"};

static int g_level = -1;

const char *kernels_level_name(KernLevel level) {
    return level >= 0 && level < KERN_LEVELS ? KERN_NAMES[level] : "?";
}

KernLevel kernels_cpu_level(void) {
    __builtin_cpu_init();
    /* AVX2 without FMA exists (VIA, some emulators); the AVX2 build uses both. */
    if (!(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))) return KERN_PORTABLE;
    if (!(__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
          __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl")))
        return KERN_AVX2;
    return __builtin_cpu_supports("avx512bf16") ? KERN_AVX512BF16 : KERN_AVX512;
}

static KernLevel kernels_choose(void) {
    KernLevel cpu = kernels_cpu_level();
    const char *want = getenv("GLUE_KERNELS");
    if (!want || !*want) return cpu;
    for (int l = 0; l < KERN_LEVELS; l++)
        if (strcmp(want, KERN_NAMES[l]) == 0) {
            if (l <= (int)cpu) return (KernLevel)l;
            fprintf(stderr, "glue: warning: GLUE_KERNELS=%s, but this CPU runs at most %s; using %s\n", want,
                    KERN_NAMES[cpu], KERN_NAMES[cpu]);
            return cpu;
        }
    fprintf(stderr, "glue: error: GLUE_KERNELS=%s is not a kernel level\n"
                    "  hint: use one of portable, avx2, avx512, avx512bf16 (or unset it)\n", want);
    exit(2);
}

KernLevel kernels_level(void) {
    if (g_level < 0) g_level = kernels_choose();
    return (KernLevel)g_level;
}

const ElemKernels *kernels_at(KernLevel level) {
    if (level > kernels_cpu_level()) return NULL;
    switch (level) {
    case KERN_PORTABLE: return &kernels_portable_ops;
    case KERN_AVX2: return &kernels_avx2_ops;
    case KERN_AVX512:
    case KERN_AVX512BF16: return &kernels_avx512_ops;
    default: return NULL;
    }
}

const ElemKernels *kernels(void) {
    static const ElemKernels *ops;
    static int ops_level = -1;
    KernLevel l = kernels_level();
    if (ops_level != (int)l) {   /* first call, or after kernels_force */
        ops = kernels_at(l);
        ops_level = (int)l;
    }
    return ops;
}

KernLevel kernels_force(KernLevel level) {
    KernLevel prev = kernels_level();
    if (level < 0 || level >= KERN_LEVELS || level > kernels_cpu_level())
        DIE("kernels_force(%s): this CPU runs at most %s", kernels_level_name(level),
            kernels_level_name(kernels_cpu_level()));
    g_level = (int)level;
    return prev;
}

const char *kernels_cpu_model(void) {
    static char model[192];
    if (model[0]) return model;
    char name[128] = "unknown CPU", line[512];
    FILE *f = fopen("/proc/cpuinfo", "r");
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "model name", 10) == 0) {
            char *p = strchr(line, ':');
            if (p) snprintf(name, sizeof name, "%s", p + 2);
            name[strcspn(name, "\n")] = 0;
            break;
        }
    if (f) fclose(f);
    /* cpuid leaf 1: family = base + extended (when base is 15), model with its extended bits. */
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (__get_cpuid(1, &a, &b, &c, &d)) {
        unsigned fam = (a >> 8) & 0xf, mod = (a >> 4) & 0xf;
        if (fam == 0xf) fam += (a >> 20) & 0xff;
        if (fam == 0x6 || fam >= 0xf) mod |= ((a >> 16) & 0xf) << 4;
        snprintf(model, sizeof model, "%s (family %u, model %u)", name, fam, mod);
    } else {
        snprintf(model, sizeof model, "%s", name);
    }
    return model;
}
