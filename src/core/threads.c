/* threads.c — OpenMP + OpenBLAS thread counts and FTZ/DAZ in every math
 * thread (see threads.h for the rule and the measurements). */
#include "core/threads.h"

#include <cblas.h>
#include <omp.h>
#include <pmmintrin.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xmmintrin.h>

#include "core/blas.h"
#include "core/common.h"
#include "core/kernels.h"

/* OpenBLAS exports these; cblas.h declares openblas_set_num_threads in Debian's
 * build but not in every one, so declare both here. Weak: a BLAS without the
 * shutdown hook (e.g. reference CBLAS) links and simply skips the restart. */
extern void openblas_set_num_threads(int n);
extern void blas_thread_shutdown_(void) __attribute__((weak));

/* MXCSR bits: FTZ = bit 15, DAZ = bit 6. */
enum { MXCSR_FTZ = 1 << 15, MXCSR_DAZ = 1 << 6 };

/* Side of the probe sgemm: large enough that OpenBLAS splits it over all its
 * threads (its cut-off is far below 256^3), small enough to cost ~1 ms. */
enum { THREADS_PROBE_N = 256 };

int threads_default(void) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int n = CPU_COUNT(&set);
        if (n > 0) return n;
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

void threads_set_ftz(void) {
    _MM_SET_FLUSH_ZERO_MODE(_MM_FLUSH_ZERO_ON);
    _MM_SET_DENORMALS_ZERO_MODE(_MM_DENORMALS_ZERO_ON);
}

int threads_ftz_enabled(void) {
    unsigned csr = _mm_getcsr();
    return (csr & MXCSR_FTZ) && (csr & MXCSR_DAZ);
}

/* The process that loaded the program. Written once, before main(), by the
 * constructor below and only read afterwards: getpid() differing from it means
 * this is a fork()ed child, where libgomp's pool bookkeeping survived but its
 * threads did not (threads.h). */
static pid_t threads_loader_pid;

__attribute__((constructor)) static void threads_record_loader_pid(void) { threads_loader_pid = getpid(); }

int threads_in_forked_child(void) { return getpid() != threads_loader_pid; }

/* How idle OpenMP workers wait. libgomp's default spins for up to ~300,000
 * iterations (milliseconds) before sleeping; on a shared machine every spin
 * takes CPU from the thread that has the work (the kernel shares CPU per
 * session, not per thread), and the main thread waits at each join for a
 * worker that is not running. Measured here (2 cores, load ~17): a BERT-tiny
 * training step 2.5x slower with the default than with OMP_WAIT_POLICY=PASSIVE
 * (workers sleep at once), single-sentence inference 100x slower. Sleeping at
 * once costs a futex wake-up at every parallel region instead: on a quiet
 * machine BERT-mini's single-sentence forward (B=1, T=32, ~100 regions) took
 * 1.5-1.7 ms with PASSIVE and 0.9 ms with a spin of 3,000 iterations (~0.1 ms,
 * a bound on what a spin can take from a loaded machine), training and batch
 * inference 2-4% faster (3 alternating rounds each; 1,000 iterations: 1.0-1.3
 * ms). libgomp reads the setting once, when it loads, before any code of ours
 * runs (and libc resets the environment after .preinit_array), so when the
 * user has set neither OMP_WAIT_POLICY nor GOMP_SPINCOUNT, this constructor
 * sets GOMP_SPINCOUNT and re-executes the program once with the same
 * arguments (same pid, same open files); if exec fails it carries on.
 * Not in the library (include/glue.h, built with GLUE_LIBRARY): re-executing
 * someone else's program is not a library's to do; it runs with whatever
 * spin its program chose. */
#define THREADS_SPINCOUNT "3000"

#ifndef GLUE_LIBRARY
__attribute__((constructor)) static void threads_short_spin(int argc, char **argv) {
    (void)argc;
    if (!argv || !argv[0] || getenv("OMP_WAIT_POLICY") || getenv("GOMP_SPINCOUNT")) return;
    if (setenv("GOMP_SPINCOUNT", THREADS_SPINCOUNT, 1) != 0) return;
    execv("/proc/self/exe", argv);
    unsetenv("GOMP_SPINCOUNT");
}
#endif

int threads_init(int n) {
    if (n <= 0) n = threads_default();
    /* A team of more than one thread in a forked child would wait forever for
     * the parent's workers; a team of one never touches them. */
    int omp_n = threads_in_forked_child() ? 1 : n;
    threads_set_ftz();
    kernels();   /* the kernel level (core/kernels.h) is chosen here, before any thread asks for it */
    omp_set_num_threads(omp_n);
    /* Every worker of the pool sets its own MXCSR. */
#pragma omp parallel num_threads(omp_n)
    threads_set_ftz();
    /* OpenBLAS gets ONE thread: core/blas.c splits each product over the
     * OpenMP pool, so there is a single pool (threads.h). Its workers, if it
     * started any, are stopped; should a later call start them again (a BLAS
     * without the one-thread setting), they copy this thread's MXCSR. */
    openblas_set_num_threads(1);
    if (blas_thread_shutdown_) blas_thread_shutdown_();
    return omp_n;
}

int threads_count(void) { return omp_get_max_threads(); }

int threads_blas_flushes_denormals(void) {
    const int n = THREADS_PROBE_N;
    float *a = xaligned_alloc((size_t)n * n * sizeof(float)); /* (n, n) denormals */
    float *b = xaligned_alloc((size_t)n * n * sizeof(float)); /* (n, n) ones */
    float *c = xaligned_alloc((size_t)n * n * sizeof(float)); /* (n, n) */
    for (long i = 0; i < (long)n * n; i++) {
        a[i] = 1e-40f;
        b[i] = 1.0f;
        c[i] = 1.0f;
    }
    /* With DAZ every product reads a as 0, so C must be all zeros; a worker
     * without DAZ leaves its block of C denormal (nonzero). */
    matmul(c, a, b, n, n, n, MAT_N, MAT_N, 1.0f, 0.0f);
    /* Compare bits: with DAZ on here, `c[i] != 0.0f` would read a denormal as 0. */
    int ok = 1;
    for (long i = 0; i < (long)n * n && ok; i++) {
        uint32_t bits;
        memcpy(&bits, &c[i], sizeof bits);
        ok = (bits & 0x7fffffffu) == 0;
    }
    free(a);
    free(b);
    free(c);
    return ok;
}
