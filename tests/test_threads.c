/* test_threads.c — threads_init: thread counts, FTZ and DAZ set in every
 * OpenMP worker and the main thread (denormal results flush to zero, denormal
 * inputs read as zero) and in OpenBLAS's own workers (a multi-threaded sgemm
 * on denormal inputs gives exact zeros), starting as a program does, with both
 * pools' workers created before FTZ was set; a control with FTZ/DAZ off shows
 * the checks can fail; and a forked child's threads_init does not hang.
 *
 * Each test re-runs itself in a fresh process (exec of this test binary, with
 * GLUE_TEST_THREADS_FRESH set): an OpenMP pool left in the test runner would
 * make later tests that fork and use OpenMP single-threaded (threads.h), and
 * a pool created by earlier tests would hide what threads_init must fix. */
#include <limits.h>
#include <omp.h>
#include <pmmintrin.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xmmintrin.h>

#include "core/threads.h"
#include "tests/test.h"

enum { MAX_T = 64, FORK_TIMEOUT_S = 20 };

/* 1 inside the fresh process; otherwise runs test `name` in one, checks it
 * passed and returns 0. */
static int in_fresh_process(const char *name) {
    const char *fresh = getenv("GLUE_TEST_THREADS_FRESH");
    if (fresh && *fresh) return 1;
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (!CHECK(n > 0)) return 0;
    exe[n] = '\0';
    char cmd[PATH_MAX + 128];
    snprintf(cmd, sizeof cmd, "GLUE_TEST_THREADS_FRESH=1 '%s' %s 2>&1", exe, name);
    int status = -1;
    char *out = test_run(cmd, &status);
    CHECK_MSG(status == 0 && out && strstr(out, "1 passed, 0 failed"), "fresh process for %s:\n%s", name,
              out ? out : "");
    free(out);
    return 0;
}

static uint32_t float_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* In the calling thread: 1e-30 * 1e-10 (a denormal result) and a denormal
 * input times 1; 1 when both come out as exact zeros. Compared as bits: with
 * DAZ on, a comparison with 0.0f would read a denormal as zero itself. */
static int thread_flushes(void) {
    volatile float a = 1e-30f, b = 1e-10f, one = 1.0f;
    uint32_t db = 0x00000100u; /* a denormal, ~3.6e-43 */
    float d;
    memcpy(&d, &db, sizeof d);
    volatile float vd = d;
    float prod = a * b, through = vd * one;
    return (float_bits(prod) & 0x7fffffffu) == 0 && (float_bits(through) & 0x7fffffffu) == 0;
}

/* 1 when every thread of a parallel region of n threads reports FTZ+DAZ and
 * flushes; *team = the team size it got. */
static int all_threads_flush(int n, int *team) {
    int ftz[MAX_T] = {0}, flush[MAX_T] = {0}, size = 0;
#pragma omp parallel num_threads(n)
    {
        int t = omp_get_thread_num();
        if (t < MAX_T) {
            ftz[t] = threads_ftz_enabled();
            flush[t] = thread_flushes();
        }
#pragma omp single
        size = omp_get_num_threads();
    }
    *team = size;
    int ok = 1;
    for (int t = 0; t < size && t < MAX_T; t++) ok &= ftz[t] && flush[t];
    return ok;
}

/* As at program start: FTZ/DAZ off and both pools' workers created without
 * them (libgomp keeps its workers; OpenBLAS starts its own at load). Checks
 * that they indeed do not flush, else the test could not tell whether
 * threads_init fixed them. */
static void start_without_ftz(int n) {
    int team = 0;
    _mm_setcsr(_mm_getcsr() & ~(unsigned)(_MM_FLUSH_ZERO_ON | _MM_DENORMALS_ZERO_ON));
    CHECK_MSG(!all_threads_flush(n, &team), "control: OpenMP workers flush before threads_init");
    CHECK_MSG(!threads_blas_flushes_denormals(), "control: BLAS workers flush before threads_init");
}

TEST(threads_init_sets_counts_and_ftz_everywhere) {
    if (!in_fresh_process("threads_init_sets_counts_and_ftz_everywhere")) return;
    int team = 0, n = threads_default();
    CHECK(n >= 1);
    CHECK(!threads_in_forked_child());
    start_without_ftz(2);
    CHECK_EQ_INT(threads_init(2), 2);
    CHECK_EQ_INT(threads_count(), 2);
    CHECK(threads_ftz_enabled() && thread_flushes());
    CHECK_MSG(all_threads_flush(2, &team), "an OpenMP worker lacks FTZ/DAZ");
    CHECK_EQ_INT(team, 2);
    CHECK_MSG(threads_blas_flushes_denormals(), "an OpenBLAS worker does not flush denormals");
    CHECK_EQ_INT(threads_init(0), n);
}

TEST(threads_checks_can_fail_without_ftz) {
    if (!in_fresh_process("threads_checks_can_fail_without_ftz")) return;
    threads_init(2);
    unsigned csr = _mm_getcsr();
    _MM_SET_FLUSH_ZERO_MODE(_MM_FLUSH_ZERO_OFF);
    _MM_SET_DENORMALS_ZERO_MODE(_MM_DENORMALS_ZERO_OFF);
    CHECK(!threads_ftz_enabled());
    CHECK(!thread_flushes());
    _mm_setcsr(csr);
    CHECK(threads_ftz_enabled() && thread_flushes());
}

TEST(threads_reinit_keeps_ftz) {
    if (!in_fresh_process("threads_reinit_keeps_ftz")) return;
    int team = 0;
    start_without_ftz(2);
    /* Shrinking and growing the pools: every worker, old or new, gets FTZ/DAZ. */
    threads_init(1);
    CHECK_EQ_INT(threads_count(), 1);
    CHECK(threads_blas_flushes_denormals());
    threads_init(3);
    CHECK(all_threads_flush(3, &team) && team == 3);
    CHECK(threads_blas_flushes_denormals());
}

TEST(threads_init_in_forked_child_does_not_hang) {
    if (!in_fresh_process("threads_init_in_forked_child_does_not_hang")) return;
    int team = 0;
    threads_init(2);
    CHECK(all_threads_flush(2, &team) && team == 2); /* the parent has a pool now */
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        alarm(FORK_TIMEOUT_S); /* a hang becomes SIGALRM */
        int ok = threads_in_forked_child() && threads_init(2) == 1 && threads_count() == 1 &&
                 all_threads_flush(threads_count(), &team) && team == 1 && threads_blas_flushes_denormals();
        _exit(ok ? 0 : 1);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "forked child: %s %d",
              WIFSIGNALED(st) ? "signal" : "exit", WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
}
