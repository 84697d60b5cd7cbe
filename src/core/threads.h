/* threads.h — the process's one pool of compute threads, and flush-to-zero.
 *
 * threads_init(n) gives OpenMP n threads and OpenBLAS ONE: core/blas.c
 * splits each product over the OpenMP pool itself, so there is a single pool
 * (two pools, 2n threads spinning and yielding on n cores, made BERT training
 * 2-3x slower on this shared machine). THE RULE: call BLAS (matmul) from the
 * main thread, outside any `#pragma omp parallel` region (inside one it runs
 * on the calling thread only); do elementwise work in OpenMP regions between
 * the BLAS calls.
 *
 * Idle workers spin briefly (GOMP_SPINCOUNT=3000, ~0.1 ms) and then sleep,
 * unless the user set OMP_WAIT_POLICY or GOMP_SPINCOUNT: libgomp reads that
 * when it loads, so a constructor in threads.c sets it and re-executes the
 * program once at start (same pid and arguments). libgomp's default spinning
 * (milliseconds) cost 2.5x on a BERT step and 100x on single-sentence
 * inference with the machine loaded; sleeping at once made single-sentence
 * inference 1.7x slower on a quiet one.
 *
 * Flush-to-zero (FTZ) and denormals-are-zero (DAZ): denormal floats (|x| <
 * 1.2e-38, common in decaying gradients, Adam's v, softmax tails) make x86 math
 * ~100x slower. The MXCSR register that controls this is per thread, so it is
 * set in every thread that does math:
 *   - the main thread and every OpenMP worker (one parallel region at init;
 *     libgomp keeps its workers, and threads it adds later copy the MXCSR of
 *     the thread that creates them);
 *   - OpenBLAS's own pthread workers (used only if a BLAS call is made
 *     before threads_init): they are created when the library loads,
 *     before main() runs, so they start without FTZ/DAZ (measured here with
 *     OpenBLAS 0.3.21 pthread: a 512^3 sgemm on denormal inputs took 168 ms
 *     instead of 1 ms, and half of C, the workers' half, stayed denormal).
 *     threads_init shuts that pool down (blas_thread_shutdown_, the hook
 *     OpenBLAS itself uses around fork) so the next BLAS call starts fresh
 *     workers from the main thread, and new threads inherit its MXCSR.
 *     threads_blas_flushes_denormals() checks that this worked.
 *   - With Debian's libopenblas0-openmp variant (`apt-get install
 *     libopenblas0-openmp`, or `update-alternatives --config
 *     libopenblas.so.0-x86_64-linux-gnu`) BLAS runs on the OpenMP workers, which
 *     already have FTZ/DAZ; the shutdown hook is then harmless.
 * Threads you create yourself (pthread_create) inherit the creator's MXCSR, so
 * create them from a thread that has it, or call threads_set_ftz() first.
 *
 * fork(): libgomp is not fork-safe. A child forked (without exec) from a
 * process that has run a multi-threaded parallel region hangs in its first
 * parallel region of more than one thread: it inherits the pool's bookkeeping
 * but not its threads. So threads_init in a forked child (e.g. a test running
 * a command in-process) gives OpenMP ONE thread, which never touches the
 * stale pool, and so BLAS (split over that pool) runs on one thread too.
 * To get all threads in a sub-process, start it with exec (popen, posix_spawn).
 *
 * `--threads N` defaults to threads_default(): the cores this process may use. */
#ifndef GLUE_THREADS_H
#define GLUE_THREADS_H

/* Cores available to this process (its CPU affinity mask), at least 1. */
int threads_default(void);
/* Sets the OpenMP and OpenBLAS thread counts to n (n <= 0: threads_default())
 * and FTZ/DAZ in every thread as described above. May be called again to
 * change n. Returns the OpenMP thread count in effect (1 in a forked child). */
int threads_init(int n);
/* 1 in a child fork()ed (without exec) from the process that loaded glue. */
int threads_in_forked_child(void);
/* The thread count last set (OpenMP's max threads). */
int threads_count(void);

/* FTZ and DAZ on in the calling thread. */
void threads_set_ftz(void);
/* 1 when both FTZ and DAZ are on in the calling thread. */
int threads_ftz_enabled(void);
/* 1 when an sgemm large enough to use every BLAS thread flushes denormal
 * inputs in all of them (i.e. every BLAS worker has DAZ). Costs ~1 ms. */
int threads_blas_flushes_denormals(void);

#endif
