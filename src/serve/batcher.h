/* batcher.h — dynamic batching for glue serve: requests from many connection
 * threads are queued, and a fixed number of inference threads each take the
 * oldest request's model and as many queued requests of that model as fit in
 * max_batch texts, waiting up to max_wait_ms for more when the batch is not
 * full, then predict them in one glue_predict call. The wait counts from when
 * the thread is free to predict (or from the oldest request's arrival, if
 * later), and ends as soon as the texts it expects are queued: what is queued
 * plus the texts of the batch it just answered (their clients are likely to
 * send again at once), at most max_batch; after an idle spell longer than
 * max_wait_ms, a full batch. So a closed loop of clients gets
 * one batch of all of them (at 64 connections and --max-batch 64, batches had
 * alternated between halves of ~32 texts, each costing more per text than a
 * batch of 64: train/length_batches.h), and a lone client no wait at all.
 * The queue is bounded (max_pending texts): beyond it a request is refused at
 * once (HTTP 503), so memory stays bounded however many clients send. */
#ifndef GLUE_SERVE_BATCHER_H
#define GLUE_SERVE_BATCHER_H

#include "include/glue.h"
#include "serve/metrics.h"

#include <pthread.h>

typedef struct Batcher Batcher;

typedef struct BatchJob {
    glue_model *model;
    int n;
    const char *const *a, *const *b;   /* (n) texts; b NULL for single texts */
    float *probs;                      /* (n * glue_num_labels) out */
    unsigned char *predicted;          /* (n * glue_num_labels) out: glue_predict's predicted flags */
    int status;                        /* out: GLUE_OK or the glue_status */
    char error[GLUE_ERROR_MAX];        /* out, when status != GLUE_OK */
    /* the batcher's */
    double queued_at;
    int done;
    pthread_cond_t done_cond;   /* signalled when done: only this job's thread wakes */
    struct BatchJob *next;
} BatchJob;

/* Starts workers inference threads. metrics (may be NULL) gets each batch's size. */
Batcher *batcher_start(int workers, int max_batch, int max_wait_ms, long max_pending, ServeMetrics *metrics);
/* Queues job and waits until it is predicted: 0 (job->status says how it
 * went), or -1 at once when the queue is full or stopping (nothing done). */
int batcher_run(Batcher *b, BatchJob *job);
/* Texts queued now. */
long batcher_pending(Batcher *b);
/* Predicts what is queued, then stops the threads and frees b. */
void batcher_stop(Batcher *b);

#endif
