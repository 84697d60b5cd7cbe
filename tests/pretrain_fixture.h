/* pretrain_fixture.h — a micro pretraining setup for tests of `glue pretrain`
 * through the binary (tests only): a 28-token vocabulary, a micro BERT (C 32,
 * one layer), a corpus where each word follows from its neighbours (so a model
 * using context beats ln 18), a held-out text, and the options every run
 * shares (seq_len 24, batch 32, log every step, one thread). */
#ifndef GLUE_TESTS_PRETRAIN_FIXTURE_H
#define GLUE_TESTS_PRETRAIN_FIXTURE_H

#include "tests/scratch.h"

typedef struct {
    char dir[SCRATCH_PATH_MAX];
    char common[2048];   /* the options every run shares */
} Fixture;

/* Writes the files into a fresh temp dir. 1 ok. */
int fixture_init(Fixture *fx);
/* Removes the dir. */
void fixture_free(Fixture *fx);

/* Runs `glue pretrain <common> <args>` (after `launcher`, e.g. "mpirun -np 2",
 * when not NULL); returns the exit code, stderr+stdout in *out (caller frees;
 * out may be NULL). */
int pretrain_launched(const Fixture *fx, const char *launcher, const char *args, char **out);
int pretrain(const Fixture *fx, const char *args, char **out);

/* The training lines of run_dir/log.jsonl: loss, accuracy, grad norm, lr per step. */
typedef struct {
    double loss[512], acc[512], norm[512], lr[512];
    int n;
    double eval_loss;   /* the last held-out line, or -1 */
} Log;

/* Reads dir/log.jsonl (checking the steps are 1, 2, ...); the number of steps. */
int read_log(const char *dir, Log *lg);
/* The same for a run whose first step is `first` (one carried on from a
 * snapshot at init_step = first - 1). */
int read_log_from(const char *dir, int first, Log *lg);

#endif
