/* test_older_cpus.c — the binary built here on CPUs older than this one.
 *
 * glue is built for x86-64-v2 and chooses its hot loops from cpuid at run time
 * (core/kernels.c), so a binary built on an AVX-512 machine must run on an
 * AVX2-only CPU (AMD Zen 3) and on the x86-64-v2 floor (SSE4.2, no AVX) without
 * an illegal instruction anywhere, choosing the kernels that CPU has. Those
 * CPUs are emulated with qemu-user (`qemu-x86_64 -cpu NAME`, Debian's
 * qemu-user; its TCG runs AVX2 and FMA but no AVX-512, so a stray AVX-512
 * instruction is SIGILL there). Under each: `glue --version` names the level
 * chosen (and lowers a higher GLUE_KERNELS to it); then, in the emulated process, the element-wise kernels against the
 * portable ones, the whole BERT forward and backward against PyTorch, the
 * transformer blocks' finite-difference gradients and AdamW against PyTorch, the
 * recurrent cells' kernels and the BiLSTM's and BiGRU's finite-difference
 * gradients (not our GEMM's tests: emulated AVX2 runs them for minutes)
 * (OpenBLAS chooses its own kernels for the emulated CPU as well).
 *
 * Only correctness: emulated time says nothing about speed (the benchmarks in
 * results/bench/<cpu>/ do). The emulator must not be left by an exec: glue
 * re-executes itself once to set GOMP_SPINCOUNT (core/threads.c) and exec
 * leaves qemu-user, so the commands set it first. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/test.h"

typedef struct {
    const char *qemu_cpu;   /* qemu-x86_64 -cpu NAME */
    const char *what;       /* for messages */
    const char *level;      /* the kernel level glue must choose there */
} OlderCpu;

static const OlderCpu CPUS[] = {
    {"EPYC-Milan", "AMD Zen 3 (AVX2 + FMA, no AVX-512)", "avx2"},
    {"Nehalem", "the x86-64-v2 floor (SSE4.2, no AVX)", "portable"},
};
enum { NCPUS = sizeof CPUS / sizeof CPUS[0] };

/* The in-process tests run under each CPU: a filter each (tests/test_main.c). */
static const char *const SUITES[] = {
    "kernels_cpu_builds_match_portable",
    "bert_matches_torch_regression",
    "transformer_gradcheck",
    "optim_adamw_matches_torch",
    "gemm_int8_kernels_bit_identical",
    "kernels_sigmoid_tanh_accuracy",
    "kernels_rnn_cells_every_level",
    "nn_bilstm_gradcheck",
    "nn_bigru_gradcheck",
};
enum { NSUITES = sizeof SUITES / sizeof SUITES[0] };

static int have_qemu(void) {
#if defined(__SANITIZE_ADDRESS__)
    /* ASan's shadow memory does not fit in qemu-user's guest address space: the
     * emulated processes are killed. `make test` runs these tests. */
    test_skip("not under AddressSanitizer (qemu-user cannot host its shadow memory)");
    return 0;
#endif
    int st;
    char *out = test_run("command -v qemu-x86_64 2>/dev/null", &st);
    free(out);
    if (st != 0) test_skip("qemu-x86_64 is not installed (Debian: qemu-user)");
    return st == 0;
}

/* ARGS (a program and its arguments) under qemu-x86_64 -cpu NAME, with the
 * level and GEMM left to the CPU unless ENV ("NAME=value ...", or "") sets
 * them; glue's own stderr lines kept, TCG's list of the features of the CPU
 * it does not emulate dropped. */
static char *run_on(const OlderCpu *c, const char *env, const char *args, int *status) {
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "e=${TMPDIR:-/tmp}/glue_qemu_stderr.$$; env -u GLUE_KERNELS -u GLUE_GEMM "
             "GOMP_SPINCOUNT=3000 %s qemu-x86_64 -cpu %s %s 2>$e; st=$?; grep -v '^qemu-x86_64: warning: TCG' $e; "
             "rm -f $e; exit $st", env, c->qemu_cpu, args);
    return test_run(cmd, status);
}

TEST(older_cpus_choose_their_kernels) {
    if (!have_qemu()) return;
    for (int i = 0; i < NCPUS; i++) {
        const OlderCpu *c = &CPUS[i];
        char args[1024], want[64];
        int st;
        snprintf(args, sizeof args, "%s --version", test_glue_bin());
        char *out = run_on(c, "", args, &st);
        snprintf(want, sizeof want, "kernels: %s ", c->level);
        CHECK_MSG(st == 0 && strstr(out, want), "%s: exit %d%s, want '%s' in:\n%s", c->what, st,
                  st == 128 + 4 ? " (SIGILL)" : "", want, out);
        /* Our own GEMM is chosen only where it beats OpenBLAS (AVX-512). */
        CHECK_MSG(strstr(out, "gemm: openblas"), "%s: want 'gemm: openblas' in:\n%s", c->what, out);
        free(out);
        /* A level above the CPU's, asked for: lowered to the CPU's with one line, never run. */
        out = run_on(c, "GLUE_KERNELS=avx512bf16", args, &st);
        char lowered[96];
        snprintf(lowered, sizeof lowered, "runs at most %s; using %s", c->level, c->level);
        CHECK_MSG(st == 0 && strstr(out, lowered) && strstr(out, want), "%s, GLUE_KERNELS=avx512bf16: exit %d:\n%s",
                  c->what, st, out);
        free(out);
    }
}

TEST(older_cpus_compute_the_same) {
    if (!have_qemu()) return;
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (!CHECK(n > 0)) return;
    self[n] = '\0';
    for (int i = 0; i < NCPUS; i++) {
        const OlderCpu *c = &CPUS[i];
        for (int s = 0; s < NSUITES; s++) {
            char args[4200];
            int st;
            snprintf(args, sizeof args, "%s %s", self, SUITES[s]);
            char *out = run_on(c, "", args, &st);
            /* A suite that skips here (no PyTorch) skips this test too: it is not a pass. */
            if (st == 0 && strstr(out, " skipped\n")) {
                char why[160];
                snprintf(why, sizeof why, "%s skipped under %s (see its own line in make test)", SUITES[s], c->qemu_cpu);
                test_skip(why);
                free(out);
                continue;
            }
            /* At least one test ran and none failed. */
            CHECK_MSG(st == 0 && strstr(out, " passed, 0 failed") && !strstr(out, "\n0 passed"),
                      "%s, %s: exit %d%s:\n%s", c->what, SUITES[s], st,
                      st == 128 + 4 ? " (SIGILL: an instruction this CPU does not have)" : "", out);
            if (s == 0) {
                /* The kernels test names the CPU level it saw: proof that it ran emulated. */
                char want[96];
                snprintf(want, sizeof want, "(CPU up to %s)", c->level);
                CHECK_MSG(strstr(out, want), "%s: want '%s' in:\n%s", c->what, want, out);
            }
            free(out);
        }
    }
}
