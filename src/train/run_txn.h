/* run_txn.h — a run directory as a transaction: every refusal comes before
 * anything is written; one run at a time holds the directory (run_lock.h); a
 * run that replaces another (--overwrite) trains in the stage <dir>.next and
 * is swapped in (renameat2 RENAME_EXCHANGE) only when it finished, the old run
 * kept until then, so the directory always holds the old run or the new one,
 * never a mix; an interrupted run is never started over unless asked; the
 * label order a run was trained with is recorded ("labels" in results.json
 * and the resume point) and checked against the task that claims it. */
#ifndef GLUE_TRAIN_RUN_TXN_H
#define GLUE_TRAIN_RUN_TXN_H

#include <stddef.h>

#include "models/model.h"
#include "train/run_lock.h"

#define RUN_STAGE_SUFFIX ".next"

/* What kind of run a directory holds: the commands whose runs are
 * transactions (fine-tuning, translation, pretraining) differ only in these. */
typedef struct RunKind {
    const char *results;    /* the file only a finished run holds */
    const char *finished;   /* what else to do with a finished run (the refusal's advice) */
    int keeps_resume;       /* a finished run keeps its resume point (--resume carries it further):
                             * interrupted means a resume point without `results` */
    const char *early;      /* a file the run writes before its first save besides config.json (NULL: none) */
} RunKind;
/* Fine-tuning's (results.json; the others are their commands'). */
extern const RunKind RUN_KIND_FINETUNE;

typedef struct RunDirTxn {
    char dir[4200];      /* the run directory (no trailing '/') */
    char work[4200];     /* where this run writes: dir, or its stage <dir>.next */
    RunLock lock, stage_lock;
    int made;            /* dir did not exist before the run */
    const RunKind *kind; /* NULL: RUN_KIND_FINETUNE */
} RunDirTxn;

/* What a directory holds (bits). */
enum { RUN_HOLDS_RESULTS = 1, RUN_HOLDS_RESUME = 2, RUN_HOLDS_CKPT = 4 };
int run_dir_holds(const char *dir, const RunKind *kind);
/* Where a run into dir works, the same on every rank (no writes): dir, or
 * with resume its stage when that holds the resume point of an interrupted
 * --overwrite (and dir none of its own). */
void run_dir_work(const char *dir, const RunKind *kind, int resume, char *work, size_t cap);
/* Makes dir, takes its lock (and the stage's, when x->work is the stage);
 * x->kind is kept (set it before). 0, or the exit code after a message
 * (EXIT_USAGE: in use, naming the owner). */
int run_dir_open(RunDirTxn *x, const char *dir, int resume);
/* The refusals, before anything is written: a directory holding files but no
 * run (always: a run would write over them, and a later --overwrite would
 * delete them with it), a finished run (unless resume or overwrite), an
 * interrupted one (unless resume or overwrite: the message names both),
 * resume with nothing to resume in a finished run. say: print
 * the message (one rank of several speaks). 0, or EXIT_USAGE. */
int run_dir_check(const RunKind *kind, const char *dir, const char *work, int resume, int overwrite, int say);
/* The first of those refusals alone (for the commands that write a run's
 * files without the rest of the transaction): 0, or EXIT_USAGE. */
int run_dir_refuse_foreign(const RunKind *kind, const char *dir, const char *work, int say);
/* With overwrite (and not resuming) over a directory that holds a run: the
 * run goes to a fresh stage (x->work), locked. 0, or 1 after a message. */
int run_dir_stage(RunDirTxn *x, int overwrite, int resume);
/* The three above for one process (x->kind set before): dir opened and
 * locked, the refusals said, the stage made with overwrite; x->work is where
 * the run writes. 0, or the exit code after a message (run_dir_close then). */
int run_dir_enter(RunDirTxn *x, const char *dir, int resume, int overwrite);
/* The run in x->work finished: a stage is swapped in for dir, the old run
 * removed. 0, or 1 after a message. */
int run_dir_commit(RunDirTxn *x);
/* Ends the transaction: the locks released; after a failure (ok 0) a stage
 * without a resume point is removed, and dir when the run made it and left
 * it empty. */
void run_dir_close(RunDirTxn *x, int ok);
/* 0 when the labels the run in dir was trained with (results.json, else its
 * resume point: "labels") are t's, in order, or when it records none; else
 * -1 after a data error naming both orders. */
int run_dir_check_labels(const char *dir, const Task *t);
/* t's labels as a JSON array (what run_dir_check_labels compares). */
cJSON *run_labels_json(const Task *t);

#endif
