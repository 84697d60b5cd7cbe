/* run_txn_check.h — the checks that a training command's run directory is a
 * transaction (train/run_txn.h), for any command that trains into --out
 * (tests only): a second run into a locked directory is refused naming the
 * owner's pid and writes nothing; a run into a folder of other files and no
 * run, or into a finished or interrupted run, is refused and writes nothing (the interrupted one's message names
 * --resume and --overwrite); an --overwrite that fails keeps the old run;
 * an --overwrite killed after any one of its writes leaves the old run or
 * the whole new one. Commands are shell command lines without --out, run
 * with GLUE_TEST_KILL_AFTER_WRITES for the kills (core/files.h). */
#ifndef GLUE_TESTS_RUN_TXN_CHECK_H
#define GLUE_TESTS_RUN_TXN_CHECK_H

typedef struct TxnCase {
    const char *name;           /* for messages: "translate train" */
    const char *run_a;          /* the old run */
    const char *run_b;          /* another run (other settings) */
    const char *fail_b;         /* a run that fails after its directory is opened (missing data) */
    const char *dir;            /* the run directory (its parent exists) */
    const char *const *files;   /* the files of a finished run; files[0] names its settings */
    int nfiles;
    const char *b_marker;       /* text in files[0] of run_b's run only */
} TxnCase;

/* Each check: 0 when it held (failures are reported through CHECK). */
int txn_check_lock(const TxnCase *c);
int txn_check_refusals(const TxnCase *c);
int txn_check_interrupted(const TxnCase *c);
/* Kills run_b --overwrite after its 1st, 2nd, ... write until it finishes;
 * the number of kills (at least min_kills wanted, one of them after the swap). */
int txn_check_overwrite_killed(const TxnCase *c, int min_kills);

#endif
