/* dist.c — the MPI wrapper of dist.h, and its one-process stand-in when glue
 * is built without MPI (GLUE_MPI undefined). */
#include "core/dist.h"

#include "core/common.h"

#include <stdlib.h>
#include <string.h>

#ifdef GLUE_MPI
#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>
#endif

/* The process's place in the job: MPI's own state is process-global, so is
 * this mirror of it (set once by dist_init). */
static int dist_rank_, dist_size_ = 1;
static DistStats dist_stats_;

int dist_launched(void) {
    return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMI_SIZE") || getenv("PMIX_RANK");
}

int dist_available(void) {
#ifdef GLUE_MPI
    return 1;
#else
    return 0;
#endif
}

int dist_rank(void) { return dist_rank_; }
int dist_size(void) { return dist_size_; }

uint64_t dist_hash(uint64_t h, const void *data, size_t n) {
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ULL;
    return h;
}

DistStats dist_stats(void) { return dist_stats_; }
void dist_stats_reset(void) { memset(&dist_stats_, 0, sizeof dist_stats_); }

/* MPI counts are ints: a bucket, and an array cut into slices, stay below this. */
#define DIST_MAX_COUNT (1L << 28)

struct DistBuckets {
    float *buf;
    long n, size;    /* floats in buf, in a bucket */
    int count;       /* buckets; bucket k is [max(0, n - (k + 1) size), n - k size) */
    int started;     /* buckets started this step (from the end of buf) */
    int armed;       /* between begin and finish */
    void *req;       /* (count) MPI_Request, in MPI builds */
};

DistBuckets *dist_buckets_create(float *buf, long n, long bucket_floats) {
    DistBuckets *b = xcalloc(1, sizeof *b);
    b->buf = buf;
    b->n = n;
    b->size = bucket_floats < 1 || bucket_floats > n ? n : bucket_floats;
    if (b->size > DIST_MAX_COUNT) b->size = DIST_MAX_COUNT;
    if (b->size < 1) b->size = 1;
    b->count = (int)((n + b->size - 1) / b->size);
#ifdef GLUE_MPI
    b->req = xcalloc((size_t)(b->count ? b->count : 1), sizeof(MPI_Request));
#endif
    return b;
}

void dist_buckets_free(DistBuckets *b) {
    if (!b) return;
    free(b->req);
    free(b);
}

void dist_buckets_begin(DistBuckets *b) {
    b->started = 0;
    b->armed = dist_size_ > 1;
}

void dist_slice(long n, int rank, long *lo, long *hi) {
    long per = (n + dist_size_ - 1) / dist_size_;
    per = (per + 15) / 16 * 16;
    long a = (long)rank * per;
    *lo = a < n ? a : n;
    *hi = a + per < n ? a + per : n;
}

#ifdef GLUE_MPI

static int dist_started_;   /* MPI_Init was called */

/* The watchdog: a rank that hangs without dying (stopped, deadlocked, a
 * stalled network) would leave the others in a sum forever, and MPI notices
 * only deaths. A thread checks every second how long this rank has been in a
 * step's collective; past the timeout it says so and exits, and mpirun then
 * ends the whole job. The start time (ms, 0 = not in a collective) is the
 * only state the two threads share. */
static _Atomic long dist_watch_since_ms;
static const char *_Atomic dist_watch_what;
static double dist_timeout_s;

static long dist_now_ms(void) { return (long)(now_seconds() * 1000.0); }

static void *dist_watchdog(void *arg) {
    (void)arg;
    for (;;) {
        sleep(1);
        long since = atomic_load(&dist_watch_since_ms);
        if (since && (double)(dist_now_ms() - since) > 1000.0 * dist_timeout_s) {
            fprintf(stderr,
                    "glue: error: rank %d waited over %.0f s in %s: another rank hangs or is far behind; ending "
                    "the job\n  hint: GLUE_DIST_TIMEOUT=SECONDS sets the limit (longer than the slowest held-out "
                    "evaluation or checkpoint; 0 = none)\n",
                    dist_rank_, dist_timeout_s, atomic_load(&dist_watch_what));
            fflush(stderr);
            _exit(1);
        }
    }
    return NULL;
}

static void dist_watch_begin(const char *what) {
    atomic_store(&dist_watch_what, what);
    atomic_store(&dist_watch_since_ms, dist_now_ms());
}
static void dist_watch_end(void) { atomic_store(&dist_watch_since_ms, 0); }

/* The watchdog thread, unless GLUE_DIST_TIMEOUT is 0 (default 1800 s). */
static void dist_watch_start(void) {
    const char *env = getenv("GLUE_DIST_TIMEOUT");
    dist_timeout_s = env && *env ? atof(env) : 1800.0;
    if (dist_timeout_s <= 0 || dist_size_ == 1) return;
    pthread_t t;
    if (pthread_create(&t, NULL, dist_watchdog, NULL) == 0) pthread_detach(t);
}

int dist_init(int *argc, char ***argv) {
    if (dist_started_ || !dist_launched()) return 0;
    MPI_Init(argc, argv);
    /* Errors return codes (checked below) instead of aborting silently. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &dist_rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &dist_size_);
    dist_started_ = 1;
    dist_watch_start();
    return 0;
}

/* How long a failed rank other than 0 waits for rank 0's abort (dist_finalize). */
enum { DIST_ABORT_GRACE_SECONDS = 2 };

int dist_finalize(int rc) {
    if (!dist_started_) return rc;
    dist_started_ = 0;
    if (rc != 0 && dist_size_ > 1) {
        fflush(stdout);
        fflush(stderr);
        /* A failure every rank meets (a setting checked by all) is reported
         * by rank 0 alone; when all ranks abort at once, Open MPI's abort
         * messages can race and lose rank 0's stderr (seen: the message of
         * a batch that N ranks cannot split went missing). So the others
         * wait for rank 0's abort to end them, and abort themselves only if
         * it does not come (a failure of theirs alone). */
        if (dist_rank_ != 0) sleep(DIST_ABORT_GRACE_SECONDS);
        MPI_Abort(MPI_COMM_WORLD, rc);
    }
    MPI_Finalize();
    return rc;
}

/* A failed collective means the job is broken (a rank died, the network
 * failed): nothing sensible remains but to end every rank. */
static void dist_check(int err, const char *what) {
    if (err == MPI_SUCCESS) return;
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(err, msg, &len);
    fprintf(stderr, "glue: error: rank %d: %s failed: %s (a rank died or the network failed); ending the job\n",
            dist_rank_, what, msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

void dist_barrier(void) {
    if (dist_size_ == 1) return;
    double t0 = now_seconds();
    dist_watch_begin("MPI_Barrier (before a step's gradient sum)");
    dist_check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
    dist_watch_end();
    dist_stats_.wait_seconds += now_seconds() - t0;
}

/* Where bucket k starts (bucket 0 ends the array). */
static long dist_bucket_lo(const DistBuckets *b, int k) {
    long lo = b->n - (long)(k + 1) * b->size;
    return lo > 0 ? lo : 0;
}

void dist_buckets_ready(DistBuckets *b, long lo) {
    if (!b->armed) return;
    double t0 = now_seconds();
    MPI_Request *req = b->req;
    for (; b->started < b->count && dist_bucket_lo(b, b->started) >= lo; b->started++) {
        int k = b->started;
        long a = dist_bucket_lo(b, k), z = b->n - (long)k * b->size;
        dist_check(MPI_Iallreduce(MPI_IN_PLACE, b->buf + a, (int)(z - a), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &req[k]),
                   "MPI_Iallreduce");
        dist_stats_.bytes += (double)(z - a) * sizeof(float);
        if (lo > 0) dist_stats_.buckets_early++;   /* before the whole array was final */
    }
    int done;   /* lets the sums in flight progress (see dist.h) */
    if (b->started) dist_check(MPI_Testall(b->started, req, &done, MPI_STATUSES_IGNORE), "MPI_Testall");
    dist_stats_.seconds += now_seconds() - t0;
}

void dist_buckets_finish(DistBuckets *b) {
    if (!b->armed) return;
    dist_stats_.buckets += b->count;
    dist_buckets_ready(b, 0);
    double t0 = now_seconds();
    dist_watch_begin("MPI_Waitall (a step's gradient sum, in buckets)");
    dist_check(MPI_Waitall(b->count, b->req, MPI_STATUSES_IGNORE), "MPI_Waitall");
    dist_watch_end();
    b->armed = 0;
    dist_stats_.calls++;
    dist_stats_.seconds += now_seconds() - t0;
}

/* Every rank's slice of an n-float array: counts and displacements (caller frees both). */
static void dist_slices(long n, int **counts, int **displs) {
    if (n > DIST_MAX_COUNT * 4L) DIE("dist: %ld floats is too many to cut into slices", n);
    *counts = xmalloc(sizeof(int) * (size_t)dist_size_);
    *displs = xmalloc(sizeof(int) * (size_t)dist_size_);
    for (int r = 0; r < dist_size_; r++) {
        long lo, hi;
        dist_slice(n, r, &lo, &hi);
        (*counts)[r] = (int)(hi - lo);
        (*displs)[r] = (int)lo;
    }
}

void dist_reduce_scatter_floats(float *buf, long n) {
    if (dist_size_ == 1) return;
    double t0 = now_seconds();
    int *counts, *displs;
    dist_slices(n, &counts, &displs);
    dist_watch_begin("MPI_Reduce_scatter (a step's gradient sum, ZeRO-1)");
    /* In place, the sum of this rank's slice lands at the start of buf. */
    dist_check(MPI_Reduce_scatter(MPI_IN_PLACE, buf, counts, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD),
               "MPI_Reduce_scatter");
    dist_watch_end();
    memmove(buf + displs[dist_rank_], buf, sizeof(float) * (size_t)counts[dist_rank_]);
    free(counts);
    free(displs);
    dist_stats_.calls++;
    dist_stats_.seconds += now_seconds() - t0;
    dist_stats_.bytes += (double)n * sizeof(float);
}

void dist_allgather_floats(float *buf, long n) {
    if (dist_size_ == 1) return;
    double t0 = now_seconds();
    int *counts, *displs;
    dist_slices(n, &counts, &displs);
    dist_watch_begin("MPI_Allgatherv (the parameters after a step, ZeRO-1)");
    dist_check(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf, counts, displs, MPI_FLOAT, MPI_COMM_WORLD),
               "MPI_Allgatherv");
    dist_watch_end();
    free(counts);
    free(displs);
    dist_stats_.seconds += now_seconds() - t0;
    dist_stats_.bytes += (double)n * sizeof(float);
}

void dist_gather_floats(const float *mine, float *all, long n, int root) {
    int *counts, *displs;
    dist_slices(n, &counts, &displs);
    int me = dist_rank_;
    if (me == root && all + displs[me] != mine) memcpy(all + displs[me], mine, sizeof(float) * (size_t)counts[me]);
    if (dist_size_ > 1)
        dist_check(me == root ? MPI_Gatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, counts, displs, MPI_FLOAT, root,
                                            MPI_COMM_WORLD)
                              : MPI_Gatherv(mine, counts[me], MPI_FLOAT, NULL, NULL, NULL, MPI_FLOAT, root,
                                            MPI_COMM_WORLD),
                   "MPI_Gatherv");
    free(counts);
    free(displs);
}

void dist_allreduce_doubles(double *buf, int n) {
    if (dist_size_ == 1) return;
    dist_watch_begin("MPI_Allreduce (a step's statistics)");
    dist_check(MPI_Allreduce(MPI_IN_PLACE, buf, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce");
    dist_watch_end();
}

int dist_max_int(int v) {
    if (dist_size_ == 1) return v;
    int out = v;
    dist_watch_begin("MPI_Allreduce (the ranks' step boundary)");
    dist_check(MPI_Allreduce(&v, &out, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD), "MPI_Allreduce");
    dist_watch_end();
    return out;
}

int dist_bcast_int(int v, int root) {
    if (dist_size_ == 1) return v;
    dist_check(MPI_Bcast(&v, 1, MPI_INT, root, MPI_COMM_WORLD), "MPI_Bcast");
    return v;
}

int dist_check_same(uint64_t hash, const char *what) {
    if (dist_size_ == 1) return 0;
    uint64_t *all = xmalloc(sizeof(uint64_t) * (size_t)dist_size_);
    dist_check(MPI_Allgather(&hash, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, MPI_COMM_WORLD), "MPI_Allgather");
    char ranks[256] = "";
    size_t len = 0;
    int bad = 0;
    for (int r = 1; r < dist_size_; r++)
        if (all[r] != all[0]) {
            bad++;
            if (len < sizeof ranks - 16) len += (size_t)snprintf(ranks + len, sizeof ranks - len, "%s%d", bad > 1 ? ", " : "", r);
        }
    free(all);
    if (!bad) return 0;
    /* Every rank knows; rank 0 speaks for the job, the others name themselves. */
    if (dist_rank_ == 0)
        user_error("start every rank with the same command line, config file and data (mpirun ... glue pretrain "
                   "ARGS runs the same ARGS on each rank)",
                   "ranks disagree on %s: rank(s) %s differ from rank 0; ending the job", what, ranks);
    return -1;
}

#else /* one process */

int dist_init(int *argc, char ***argv) {
    (void)argc, (void)argv;
    if (!dist_launched()) return 0;
    user_error("install libopenmpi-dev openmpi-bin and rebuild (make clean && make: the build then says 'MPI "
               "found'), or run glue without mpirun",
               "launched by mpirun, but this glue was built without MPI: the ranks would train alone and "
               "overwrite each other's files");
    return EXIT_USAGE;
}

int dist_finalize(int rc) { return rc; }
void dist_barrier(void) {}
void dist_allreduce_doubles(double *buf, int n) { (void)buf, (void)n; }
void dist_buckets_ready(DistBuckets *b, long lo) { (void)b, (void)lo; }
void dist_buckets_finish(DistBuckets *b) { (void)b; }
void dist_reduce_scatter_floats(float *buf, long n) { (void)buf, (void)n; }
void dist_allgather_floats(float *buf, long n) { (void)buf, (void)n; }
void dist_gather_floats(const float *mine, float *all, long n, int root) {
    (void)root;
    if (mine != all) memcpy(all, mine, sizeof(float) * (size_t)n);
}
int dist_max_int(int v) { return v; }
int dist_bcast_int(int v, int root) { (void)root; return v; }
int dist_check_same(uint64_t hash, const char *what) { (void)hash, (void)what; return 0; }

#endif
