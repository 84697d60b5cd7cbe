/* batcher.c — the request queue and inference threads of glue serve (see
 * batcher.h). One mutex guards the queue; a worker holds it only to take
 * jobs and to mark them done, never while predicting. */
#include "serve/batcher.h"

#include "core/common.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { BATCHER_MAX_WORKERS = 64 };

struct Batcher {
    pthread_mutex_t lock;
    pthread_cond_t queued;   /* the queue was empty, a batch may be full, or stopping */
    BatchJob *head, *tail;
    long pending;            /* texts queued */
    int max_batch, max_wait_ms, stopping, workers;
    long max_pending;
    long wanted;             /* the texts a waiting worker waits for (the last to start waiting) */
    ServeMetrics *metrics;
    pthread_t threads[BATCHER_MAX_WORKERS];
};

static double batcher_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);   /* the clock pthread_cond_timedwait waits on */
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Texts queued for model, up to max_batch (at least the first job's). */
static long batcher_ready(const Batcher *b, const glue_model *model) {
    long n = 0;
    for (const BatchJob *j = b->head; j && n < b->max_batch; j = j->next)
        if (j->model == model) n += j->n;
    return n;
}

/* Under the lock: unlinks the oldest job's model's jobs, in order, as long
 * as they fit in max_batch texts (the first always). Returns the list. */
static BatchJob *batcher_take(Batcher *b, int *texts) {
    glue_model *model = b->head->model;
    BatchJob *out = NULL, **end = &out, **at = &b->head, *last = NULL;
    *texts = 0;
    while (*at) {
        BatchJob *j = *at;
        if (j->model == model && (*texts == 0 || *texts + j->n <= b->max_batch)) {
            *at = j->next;
            j->next = NULL;
            *end = j;
            end = &j->next;
            *texts += j->n;
        } else {
            last = j;
            at = &j->next;
        }
    }
    b->tail = last;
    b->pending -= *texts;
    return out;
}

/* Predicts the jobs of one model as one batch; each job gets its rows. */
static void batcher_predict(Batcher *b, BatchJob *jobs, int texts) {
    glue_model *m = jobs->model;
    int k = glue_num_labels(m), pair = jobs->b != NULL;
    const char **a = xmalloc(sizeof(char *) * (size_t)texts), **bb = pair ? xmalloc(sizeof(char *) * (size_t)texts) : NULL;
    float *p = xmalloc(sizeof(float) * (size_t)texts * (size_t)k);
    unsigned char *flags = xmalloc((size_t)texts * (size_t)k);
    int at = 0;
    for (BatchJob *j = jobs; j; j = j->next)
        for (int i = 0; i < j->n; i++, at++) {
            a[at] = j->a[i];
            if (pair) bb[at] = j->b[i];
        }
    char err[GLUE_ERROR_MAX];
    int st = glue_predict(m, a, bb, texts, p, flags, err, sizeof err);
    if (b->metrics) metrics_batch(b->metrics, texts);
    at = 0;
    for (BatchJob *j = jobs; j; at += j->n, j = j->next) {
        j->status = st;
        if (st == GLUE_OK) {
            memcpy(j->probs, p + (size_t)at * (size_t)k, sizeof(float) * (size_t)j->n * (size_t)k);
            memcpy(j->predicted, flags + (size_t)at * (size_t)k, (size_t)j->n * (size_t)k);
        } else {
            memcpy(j->error, err, sizeof err);
        }
    }
    free(flags);
    free(a);
    free(bb);
    free(p);
}

/* Under the lock, with a job queued: waits until target texts of the oldest
 * job's model are queued, or max_wait_ms have passed since that job arrived
 * or this thread became free (free_since), whichever is later. */
static void batcher_wait(Batcher *b, double free_since, long target) {
    double start = b->head->queued_at > free_since ? b->head->queued_at : free_since;
    double deadline = start + b->max_wait_ms * 1e-3;
    b->wanted = target;
    while (b->head && !b->stopping && batcher_ready(b, b->head->model) < target && batcher_now() < deadline) {
        struct timespec ts = {.tv_sec = (time_t)deadline, .tv_nsec = (long)((deadline - (double)(time_t)deadline) * 1e9)};
        if (pthread_cond_timedwait(&b->queued, &b->lock, &ts) == ETIMEDOUT) break;
    }
}

static void *batcher_worker(void *arg) {
    Batcher *b = arg;
    pthread_mutex_lock(&b->lock);
    double free_since = batcher_now();   /* when this thread last became free to predict */
    long expect = b->max_batch;          /* texts worth waiting for: a full batch until one is done */
    for (;;) {
        while (!b->head && !b->stopping) pthread_cond_wait(&b->queued, &b->lock);
        if (!b->head) break;   /* stopping, and nothing left */
        /* Idle for longer than max_wait_ms: no client is coming straight back;
         * gather a full batch again. */
        if (b->head->queued_at - free_since > b->max_wait_ms * 1e-3) expect = b->max_batch;
        batcher_wait(b, free_since, expect);
        if (!b->head) continue;   /* another worker took them */
        int texts;
        BatchJob *jobs = batcher_take(b, &texts);
        pthread_mutex_unlock(&b->lock);
        batcher_predict(b, jobs, texts);
        pthread_mutex_lock(&b->lock);
        for (BatchJob *j = jobs, *next; j; j = next) {
            next = j->next;   /* read before the waiting thread may return and free j */
            j->done = 1;
            pthread_cond_signal(&j->done_cond);
        }
        free_since = batcher_now();
        /* The clients just answered are likely to send again at once (a
         * closed loop): the next batch waits for them and what is queued. */
        expect = b->pending + texts < b->max_batch ? b->pending + texts : b->max_batch;
    }
    pthread_mutex_unlock(&b->lock);
    return NULL;
}

Batcher *batcher_start(int workers, int max_batch, int max_wait_ms, long max_pending, ServeMetrics *metrics) {
    Batcher *b = xcalloc(1, sizeof *b);
    pthread_mutex_init(&b->lock, NULL);
    pthread_cond_init(&b->queued, NULL);
    b->max_batch = max_batch > 0 ? max_batch : 1;
    b->max_wait_ms = max_wait_ms >= 0 ? max_wait_ms : 0;
    b->max_pending = max_pending;
    b->wanted = b->max_batch;
    b->metrics = metrics;
    b->workers = workers < 1 ? 1 : workers > BATCHER_MAX_WORKERS ? BATCHER_MAX_WORKERS : workers;
    for (int i = 0; i < b->workers; i++)
        if (pthread_create(&b->threads[i], NULL, batcher_worker, b) != 0) DIE("cannot start an inference thread");
    return b;
}

int batcher_run(Batcher *b, BatchJob *job) {
    pthread_mutex_lock(&b->lock);
    if (b->stopping || b->pending + job->n > b->max_pending) {
        pthread_mutex_unlock(&b->lock);
        return -1;
    }
    job->done = 0;
    job->next = NULL;
    job->queued_at = batcher_now();
    pthread_cond_init(&job->done_cond, NULL);
    int was_empty = !b->head;
    if (b->tail) b->tail->next = job;
    else b->head = job;
    b->tail = job;
    b->pending += job->n;
    /* Workers wait for a first job, or for the texts they want (else their
     * deadline): no wake-up for every request that leaves a batch short. */
    if (was_empty || b->pending >= b->wanted) pthread_cond_broadcast(&b->queued);
    while (!job->done) pthread_cond_wait(&job->done_cond, &b->lock);
    pthread_mutex_unlock(&b->lock);
    pthread_cond_destroy(&job->done_cond);
    return 0;
}

long batcher_pending(Batcher *b) {
    pthread_mutex_lock(&b->lock);
    long n = b->pending;
    pthread_mutex_unlock(&b->lock);
    return n;
}

void batcher_stop(Batcher *b) {
    pthread_mutex_lock(&b->lock);
    b->stopping = 1;
    pthread_cond_broadcast(&b->queued);
    pthread_mutex_unlock(&b->lock);
    for (int i = 0; i < b->workers; i++) pthread_join(b->threads[i], NULL);
    pthread_cond_destroy(&b->queued);
    pthread_mutex_destroy(&b->lock);
    free(b);
}
