/* fasttext_workers.c — the threads fastText's Hogwild steps run on: a fixed pool
 * that sleeps between jobs.
 *
 * Why not an OpenMP parallel region per step: a step is ~1 ms of work, and on a
 * shared machine libgomp's default spin-waiting (at the region's end and between
 * regions) burns a whole scheduler time slice whenever one of our threads is
 * descheduled — measured 1.2-3 s instead of 0.14 s for SST-2 with a busy core.
 * Here waiting is a condition variable, so a waiting thread yields its core at
 * once. The caller is worker 0; ft_workers_run returns when every worker is done. */
#include "models/baselines/fasttext.h"

#include <pthread.h>
#include <stdlib.h>

#include "core/common.h"
#include "core/threads.h"

typedef struct { FtWorkers *pool; int id; } WorkerSeat;

struct FtWorkers {
    int n;                      /* workers, the caller included */
    pthread_t *tid;             /* (n - 1) helper threads */
    WorkerSeat *seat;           /* (n - 1) */
    pthread_mutex_t mu;
    pthread_cond_t wake, idle;
    unsigned long job;          /* bumped for every job */
    int running;                /* helpers still inside the current job */
    int quit;
    FtJobFn fn;
    void *arg;
};

static void *worker_main(void *p) {
    WorkerSeat *s = p;
    FtWorkers *w = s->pool;
    unsigned long done = 0;
    threads_set_ftz();   /* denormals in decaying updates would cost ~100x (threads.h) */
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (w->job == done && !w->quit) pthread_cond_wait(&w->wake, &w->mu);
        if (w->quit) break;
        done = w->job;
        FtJobFn fn = w->fn;
        void *arg = w->arg;
        pthread_mutex_unlock(&w->mu);
        fn(arg, s->id);
        pthread_mutex_lock(&w->mu);
        if (--w->running == 0) pthread_cond_signal(&w->idle);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

FtWorkers *ft_workers_create(int n) {
    FtWorkers *w = xcalloc(1, sizeof *w);
    w->n = n < 1 ? 1 : n;
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->wake, NULL);
    pthread_cond_init(&w->idle, NULL);
    w->tid = xcalloc((size_t)w->n, sizeof *w->tid);
    w->seat = xcalloc((size_t)w->n, sizeof *w->seat);
    for (int i = 1; i < w->n; i++) {
        w->seat[i - 1] = (WorkerSeat){w, i};
        if (pthread_create(&w->tid[i - 1], NULL, worker_main, &w->seat[i - 1]) != 0) {
            user_warning("fasttext: could only start %d of %d threads", i, w->n);
            w->n = i;
            break;
        }
    }
    return w;
}

int ft_workers_count(const FtWorkers *w) { return w->n; }

void ft_workers_run(FtWorkers *w, FtJobFn fn, void *arg) {
    if (w->n > 1) {
        pthread_mutex_lock(&w->mu);
        w->fn = fn;
        w->arg = arg;
        w->running = w->n - 1;
        w->job++;
        pthread_cond_broadcast(&w->wake);
        pthread_mutex_unlock(&w->mu);
    }
    fn(arg, 0);
    if (w->n > 1) {
        pthread_mutex_lock(&w->mu);
        while (w->running > 0) pthread_cond_wait(&w->idle, &w->mu);
        pthread_mutex_unlock(&w->mu);
    }
}

void ft_workers_free(FtWorkers *w) {
    if (!w) return;
    pthread_mutex_lock(&w->mu);
    w->quit = 1;
    pthread_cond_broadcast(&w->wake);
    pthread_mutex_unlock(&w->mu);
    for (int i = 1; i < w->n; i++) pthread_join(w->tid[i - 1], NULL);
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->wake);
    pthread_cond_destroy(&w->idle);
    free(w->tid);
    free(w->seat);
    free(w);
}
