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
    pthread_cond_t queued;   /* a job arrived, or stopping */
    pthread_cond_t done;     /* some jobs are done */
    BatchJob *head, *tail;
    long pending;            /* texts queued */
    int max_batch, max_wait_ms, stopping, workers;
    long max_pending;
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
    int at = 0;
    for (BatchJob *j = jobs; j; j = j->next)
        for (int i = 0; i < j->n; i++, at++) {
            a[at] = j->a[i];
            if (pair) bb[at] = j->b[i];
        }
    char err[GLUE_ERROR_MAX];
    int st = glue_predict(m, a, bb, texts, p, NULL, err, sizeof err);
    if (b->metrics) metrics_batch(b->metrics, texts);
    at = 0;
    for (BatchJob *j = jobs; j; at += j->n, j = j->next) {
        j->status = st;
        if (st == GLUE_OK) memcpy(j->probs, p + (size_t)at * (size_t)k, sizeof(float) * (size_t)j->n * (size_t)k);
        else memcpy(j->error, err, sizeof err);
    }
    free(a);
    free(bb);
    free(p);
}

static void *batcher_worker(void *arg) {
    Batcher *b = arg;
    pthread_mutex_lock(&b->lock);
    for (;;) {
        while (!b->head && !b->stopping) pthread_cond_wait(&b->queued, &b->lock);
        if (!b->head) break;   /* stopping, and nothing left */
        /* Not a full batch yet: wait for more until the oldest job has waited max_wait_ms. */
        double deadline = b->head->queued_at + b->max_wait_ms * 1e-3;
        while (b->head && !b->stopping && batcher_ready(b, b->head->model) < b->max_batch && batcher_now() < deadline) {
            struct timespec ts = {.tv_sec = (time_t)deadline, .tv_nsec = (long)((deadline - (double)(time_t)deadline) * 1e9)};
            if (pthread_cond_timedwait(&b->queued, &b->lock, &ts) == ETIMEDOUT) break;
        }
        if (!b->head) continue;   /* another worker took them */
        int texts;
        BatchJob *jobs = batcher_take(b, &texts);
        pthread_mutex_unlock(&b->lock);
        batcher_predict(b, jobs, texts);
        pthread_mutex_lock(&b->lock);
        for (BatchJob *j = jobs, *next; j; j = next) {
            next = j->next;
            j->done = 1;
        }
        pthread_cond_broadcast(&b->done);
    }
    pthread_mutex_unlock(&b->lock);
    return NULL;
}

Batcher *batcher_start(int workers, int max_batch, int max_wait_ms, long max_pending, ServeMetrics *metrics) {
    Batcher *b = xcalloc(1, sizeof *b);
    pthread_mutex_init(&b->lock, NULL);
    pthread_cond_init(&b->queued, NULL);
    pthread_cond_init(&b->done, NULL);
    b->max_batch = max_batch > 0 ? max_batch : 1;
    b->max_wait_ms = max_wait_ms >= 0 ? max_wait_ms : 0;
    b->max_pending = max_pending;
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
    if (b->tail) b->tail->next = job;
    else b->head = job;
    b->tail = job;
    b->pending += job->n;
    pthread_cond_broadcast(&b->queued);
    while (!job->done) pthread_cond_wait(&b->done, &b->lock);
    pthread_mutex_unlock(&b->lock);
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
    pthread_cond_destroy(&b->done);
    pthread_mutex_destroy(&b->lock);
    free(b);
}
