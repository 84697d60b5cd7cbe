/* dist.h — data-parallel processes: everything glue asks of MPI, in one place.
 *
 * `mpirun -np N glue pretrain ...` starts N ranks of the same program; they
 * cooperate through these calls only, so the training code has no #ifdefs:
 * in a build without MPI (or a process not started by mpirun) the same calls
 * act for one process (rank 0 of size 1: sums are copies, checks pass).
 *
 * MPI is initialised only when the process was launched by mpirun (its
 * environment says so), so a plain `glue pretrain` never pays for it and
 * behaves exactly as in a build without MPI.
 *
 * Failure: every collective here is entered by all ranks at the same point of
 * the program. A check that fails on one rank (dist_check_same) is reported on
 * every rank, so all of them leave together; a rank that exits with a non-zero
 * status makes dist_finalize abort the job (MPI_Abort), and mpirun ends the
 * others rather than leaving them waiting in a sum. A rank that hangs
 * without dying is caught by a watchdog thread: a rank that has waited in one
 * of a step's collectives (barrier, sums, max) for more than
 * $GLUE_DIST_TIMEOUT seconds (default 1800; 0 = no limit) says so and exits
 * 1, and mpirun ends the job. Rank 0's held-out evaluations and checkpoints
 * happen while the others wait at the next step: the limit must exceed them.
 * (dist_bcast_int, used while rank 0 builds a token cache, is not watched.)
 *
 * Gradient sums overlapping the backward (DistBuckets): a backward finishes
 * a parameter arena from its end (the top layers and heads, declared last)
 * to its start (the embeddings), so the sum goes in buckets of about a
 * setting's size cut from the end of the array, each started
 * (MPI_Iallreduce) as soon as the backward says the floats it covers are
 * final, and all waited for before the optimizer step. OpenMPI moves a
 * non-blocking sum on only inside MPI calls: each notification also tests
 * the buckets in flight, which lets them progress between layers.
 *
 * ZeRO-1 (Rajbhandari et al. 2020): an array is cut into one slice per rank
 * (dist_slice); gradients are summed into their owner's slice
 * (dist_reduce_scatter_floats), each rank updates its slice, and the slices
 * are shared again (dist_allgather_floats); dist_gather_floats collects them
 * on one rank (a complete checkpoint).
 *
 * Counters (dist_stats) add up the time spent in, and the bytes passed to,
 * the gradient sums (the buckets, the reduce-scatter and all-gather of
 * ZeRO-1), and the time in dist_barrier, for `glue bench scaling`. */
#ifndef GLUE_DIST_H
#define GLUE_DIST_H

#include <stddef.h>
#include <stdint.h>

/* 1 when the environment says mpirun started this process (OpenMPI's
 * OMPI_COMM_WORLD_SIZE, or PMI_SIZE / PMIX_RANK of other launchers). */
int dist_launched(void);
/* 1 when this binary was built with MPI. */
int dist_available(void);

/* Starts MPI when launched by mpirun. 0 ok; non-zero after a message when
 * launched by mpirun but built without MPI (running N independent copies
 * that overwrite each other's files would be worse than refusing). */
int dist_init(int *argc, char ***argv);
/* Ends MPI (if started): MPI_Finalize when rc == 0 everywhere is expected,
 * MPI_Abort(rc) when this rank fails (so the others do not wait forever).
 * Returns rc. */
int dist_finalize(int rc);

int dist_rank(void);
int dist_size(void);

/* Waits until every rank is here. Before a sum, it separates the time spent
 * waiting for the slowest rank (counted as wait_seconds) from the sum's own. */
void dist_barrier(void);
/* In-place sum over ranks of n doubles (small statistics). */
void dist_allreduce_doubles(double *buf, int n);
/* The largest of v over ranks (e.g. "did any rank get a signal"). */
int dist_max_int(int v);
/* Rank root's value of v, on every rank. */
int dist_bcast_int(int v, int root);

/* 0 when every rank passes the same hash; otherwise every rank prints one
 * message naming `what` and the ranks that differ from rank 0, and returns -1.
 * Use at start with a hash of the settings and data every rank must share. */
int dist_check_same(uint64_t hash, const char *what);

/* FNV-1a of n bytes, continuing from h (start with DIST_HASH_INIT). */
#define DIST_HASH_INIT 0xcbf29ce484222325ULL
uint64_t dist_hash(uint64_t h, const void *data, size_t n);

/* Sums buf (n floats) over the ranks in buckets of bucket_floats (cut from
 * the end of buf; >= n: one sum of all of it), overlapping the caller's work.
 * Use per step:
 *   dist_buckets_begin(b);           before the backward that ends the step
 *   dist_buckets_ready(b, lo) ...;   floats [lo, n) are final (lo decreasing):
 *                                    the buckets wholly inside start
 *   dist_buckets_finish(b);          starts the rest, waits for all
 * ready outside begin..finish does nothing (the earlier micro-batches of an
 * accumulated step). One process: every call does nothing. */
typedef struct DistBuckets DistBuckets;
DistBuckets *dist_buckets_create(float *buf, long n, long bucket_floats);
void dist_buckets_free(DistBuckets *b);
void dist_buckets_begin(DistBuckets *b);
void dist_buckets_ready(DistBuckets *b, long lo);
void dist_buckets_finish(DistBuckets *b);

/* ZeRO-1's cut of an n-float array: rank r owns [*lo, *hi), ceil(n / N)
 * floats rounded up to 16 (64-byte aligned starts), the last slices shorter
 * or empty. One process: all of it. */
void dist_slice(long n, int rank, long *lo, long *hi);
/* Sums buf (n floats) over the ranks into this rank's slice of buf; the rest
 * of buf is left undefined. */
void dist_reduce_scatter_floats(float *buf, long n);
/* Every rank's slice of buf (n floats) to every rank, in place. */
void dist_allgather_floats(float *buf, long n);
/* This rank's slice (`mine`, hi - lo floats) into root's `all` (n floats; NULL
 * on the other ranks). */
void dist_gather_floats(const float *mine, float *all, long n, int root);

/* What the gradient sums have done since the last reset. */
typedef struct DistStats {
    long calls;       /* steps' sums (a bucketed sum counts once) */
    double seconds;   /* wall time inside the sums (with buckets: in the MPI calls that start, test and wait
                       * for them, the time the overlap did not hide) */
    double wait_seconds;  /* wall time inside dist_barrier */
    double bytes;     /* bytes of the buffers summed (each rank's payload) */
    long buckets;         /* DistBuckets: buckets summed (every one, at the latest by finish) */
    long buckets_early;   /* of them, started before the whole array was final (a ready with lo > 0:
                           * while the backward still had layers to do) */
} DistStats;
DistStats dist_stats(void);
void dist_stats_reset(void);

#endif
