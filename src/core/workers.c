/* workers.c — a fixed pool of threads that sleep between jobs (see workers.h):
 * what fastText's Hogwild steps and skip-gram vectors run on.
 *
 * Why not an OpenMP parallel region per step: a step is ~1 ms of work, and on a
 * shared machine libgomp's default spin-waiting (at the region's end and between
 * regions) burns a whole scheduler time slice whenever one of our threads is
 * descheduled — measured 1.2-3 s instead of 0.14 s for SST-2 with a busy core.
 * Here waiting is a condition variable, so a waiting thread yields its core at
 * once. The caller is worker 0; workers_run returns when every worker is done. */
#include "core/workers.h"

#include <pthread.h>
#include <stdlib.h>

#include "core/common.h"
#include "core/threads.h"

typedef struct { Workers *pool; int id; } WorkerSeat;

struct Workers {
    int n;                      /* workers, the caller included */
    pthread_t *tid;             /* (n - 1) helper threads */
    WorkerSeat *seat;           /* (n - 1) */
    pthread_mutex_t mu;
    pthread_cond_t wake, idle;
    unsigned long job;          /* bumped for every job */
    int running;                /* helpers still inside the current job */
    int quit;
    WorkerJob fn;
    void *arg;
};

static void *worker_main(void *p) {
    WorkerSeat *s = p;
    Workers *w = s->pool;
    unsigned long done = 0;
    threads_set_ftz();   /* denormals in decaying updates would cost ~100x (threads.h) */
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (w->job == done && !w->quit) pthread_cond_wait(&w->wake, &w->mu);
        if (w->quit) break;
        done = w->job;
        WorkerJob fn = w->fn;
        void *arg = w->arg;
        pthread_mutex_unlock(&w->mu);
        fn(arg, s->id);
        pthread_mutex_lock(&w->mu);
        if (--w->running == 0) pthread_cond_signal(&w->idle);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

Workers *workers_create(int n) {
    Workers *w = xcalloc(1, sizeof *w);
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

int workers_count(const Workers *w) { return w->n; }

void workers_run(Workers *w, WorkerJob fn, void *arg) {
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

void workers_free(Workers *w) {
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
