/* workers.h — a fixed pool of threads that sleep between jobs, for many short
 * parallel steps (fastText's Hogwild SGD, skip-gram vectors); workers.c says
 * why not an OpenMP region per step. */
#ifndef GLUE_WORKERS_H
#define GLUE_WORKERS_H

/* 64-byte cache lines, in floats and doubles: per-worker data starts on a line
 * of its own so workers never write to a shared line (false sharing). */
#define WORKER_FLOATS_PER_LINE 16
#define WORKER_DOUBLES_PER_LINE 8

typedef struct Workers Workers;
typedef void (*WorkerJob)(void *arg, int worker);

Workers *workers_create(int n);
int workers_count(const Workers *w);
/* Runs fn(arg, k) on every worker k (the caller is worker 0) and waits for all. */
void workers_run(Workers *w, WorkerJob fn, void *arg);
void workers_free(Workers *w);

#endif
