/* kernels.c — which instruction-set level runs the hot loops (see kernels.h):
 * the CPU's features from cpuid (__builtin_cpu_supports), lowered by
 * GLUE_KERNELS, decided once. */
#include "core/kernels.h"

#include <cpuid.h>
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "core/common.h"

extern const ElemKernels kernels_portable_ops, kernels_avx2_ops, kernels_avx512_ops;

static const char *const KERN_NAMES[KERN_LEVELS] = {"portable", "avx2", "avx512", "avx512bf16", "amx"};

static int g_level = -1;

const char *kernels_level_name(KernLevel level) {
    return level >= 0 && level < KERN_LEVELS ? KERN_NAMES[level] : "?";
}

/* AMX-BF16 and AMX-TILE (cpuid 7.0 EDX bits 22, 24), their state enabled by
 * the OS (XCR0 bits 17, 18), and the process granted the 8 KB of tile data
 * (Linux 5.16+ asks for it: arch_prctl ARCH_REQ_XCOMP_PERM, once, the answer
 * kept; a kernel that refuses leaves the CPU at avx512bf16). */
static int cpu_amx_granted(void) {
#if defined(__linux__) && defined(__x86_64__)
    unsigned a, b, c, d;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d) || !(d & (1u << 22)) || !(d & (1u << 24))) return 0;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 27))) return 0;   /* OSXSAVE: xgetbv works */
    unsigned xcr0_lo, xcr0_hi;
    __asm__ volatile("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
    if ((xcr0_lo & (3u << 17)) != (3u << 17)) return 0;
    enum { ARCH_REQ_XCOMP_PERM = 0x1023, XFEATURE_XTILEDATA = 18 };
    return syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) == 0;
#else
    return 0;
#endif
}

static int cpu_has_amx(void) {
    static int known = -1;   /* set once, whole: a second caller at worst asks again */
    if (known < 0) known = cpu_amx_granted();
    return known;
}

KernLevel kernels_cpu_level(void) {
    __builtin_cpu_init();
    /* AVX2 without FMA exists (VIA, some emulators); the AVX2 build uses both. */
    if (!(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))) return KERN_PORTABLE;
    if (!(__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
          __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl")))
        return KERN_AVX2;
    if (!__builtin_cpu_supports("avx512bf16")) return KERN_AVX512;
    return cpu_has_amx() ? KERN_AMX : KERN_AVX512BF16;
}

/* ---- is vdpbf16ps worth it here? ---- */

/* `it` rounds of 12 independent vdpbf16ps (32 multiply-adds each) or
 * vfmadd231ps (16 each): as many chains as the GEMM tiles keep, so that the
 * time is the instruction's throughput, not its latency. The operands come
 * through a volatile, so nothing is folded. */
#define KERN_12(OP) OP(0) OP(1) OP(2) OP(3) OP(4) OP(5) OP(6) OP(7) OP(8) OP(9) OP(10) OP(11)
#define KERN_DECL(i) __m512 a##i = _mm512_set1_ps((float)(i));
#define KERN_SUM(i) s = _mm512_add_ps(s, a##i);

__attribute__((target("avx512f,avx512bf16"), noinline)) static float kern_run_dpbf16(long it) {
    volatile int one = 0x3f803f80;
    __m512bh x = (__m512bh)_mm512_set1_epi32(one);
    KERN_12(KERN_DECL)
#define KERN_DP(i) a##i = _mm512_dpbf16_ps(a##i, x, x);
    for (long i = 0; i < it; i++) { KERN_12(KERN_DP) }
#undef KERN_DP
    __m512 s = _mm512_setzero_ps();
    KERN_12(KERN_SUM)
    return _mm512_reduce_add_ps(s);
}

__attribute__((target("avx512f,fma"), noinline)) static float kern_run_fma(long it) {
    volatile float one = 1.0f, tiny = 1e-9f;
    __m512 x = _mm512_set1_ps(one), y = _mm512_set1_ps(tiny);
    KERN_12(KERN_DECL)
#define KERN_FMA(i) a##i = _mm512_fmadd_ps(x, y, a##i);
    for (long i = 0; i < it; i++) { KERN_12(KERN_FMA) }
#undef KERN_FMA
    __m512 s = _mm512_setzero_ps();
    KERN_12(KERN_SUM)
    return _mm512_reduce_add_ps(s);
}

static int g_bf16_fast = -1;

int kernels_bf16_dot_fast(void) {
    if (g_bf16_fast >= 0) return g_bf16_fast;
    if (kernels_cpu_level() < KERN_AVX512BF16) return g_bf16_fast = 0;
    /* The fastest of 7 alternating runs of each (~0.1 ms each): a preempted
     * run only loses. Measured: Zen 5, vdpbf16ps about as fast as an FMA
     * (twice the multiply-adds); Intel Xeon family 6 model 207 (Emerald
     * Rapids), 4.2x slower (half the multiply-adds, and it holds both FMA
     * ports: an FMA beside it gains nothing). Either is far from the line. */
    double best_dp = 1e30, best_fma = 1e30;
    volatile float sink = 0.0f;
    for (int rep = 0; rep < 7; rep++) {
        double t0 = now_seconds();
        sink += kern_run_fma(2000);
        double t1 = now_seconds();
        sink += kern_run_dpbf16(2000);
        double t2 = now_seconds();
        best_fma = t1 - t0 < best_fma ? t1 - t0 : best_fma;
        best_dp = t2 - t1 < best_dp ? t2 - t1 : best_dp;
    }
    (void)sink;
    /* at least as many multiply-adds per second as the FMA */
    return g_bf16_fast = best_dp <= 2.0 * best_fma;
}

static KernLevel kernels_choose(void) {
    KernLevel cpu = kernels_cpu_level();
    const char *want = getenv("GLUE_KERNELS");
    /* The default skips the AVX512-BF16 level (only core/gemm_bf16 uses it)
     * where the bf16 dot product is slower than fp32 FMAs: --bf16 then runs
     * fp32 (cli/cli_run.c). GLUE_KERNELS=avx512bf16 still forces it. CPUs
     * with AMX run at the amx level (their vdpbf16ps is the slow kind). */
    if (!want || !*want) return cpu == KERN_AVX512BF16 && !kernels_bf16_dot_fast() ? KERN_AVX512 : cpu;
    for (int l = 0; l < KERN_LEVELS; l++)
        if (strcmp(want, KERN_NAMES[l]) == 0) {
            if (l <= (int)cpu) return (KernLevel)l;
            fprintf(stderr, "glue: warning: GLUE_KERNELS=%s, but this CPU runs at most %s; using %s\n", want,
                    KERN_NAMES[cpu], KERN_NAMES[cpu]);
            return cpu;
        }
    fprintf(stderr, "glue: error: GLUE_KERNELS=%s is not a kernel level\n"
                    "  hint: use one of portable, avx2, avx512, avx512bf16, amx (or unset it)\n", want);
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
    case KERN_AVX512BF16:
    case KERN_AMX: return &kernels_avx512_ops;
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
