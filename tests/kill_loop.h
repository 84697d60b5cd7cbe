/* kill_loop.h — crashes at random moments, for the interruption tests (tests
 * only). A training command is started, killed with SIGKILL after a random
 * delay, started again with --resume, killed again, ... until a start ends by
 * itself; the caller then checks that the run's results are bit-identical to
 * those of an uninterrupted run. The number of kills per command is
 * KILL_LOOP_KILLS, or $GLUE_KILL_TEST_KILLS for the long version. */
#ifndef GLUE_TESTS_KILL_LOOP_H
#define GLUE_TESTS_KILL_LOOP_H

#include <stdint.h>

enum { KILL_LOOP_KILLS = 3 };

/* Kills wanted per command: $GLUE_KILL_TEST_KILLS when set, else KILL_LOOP_KILLS. */
int kill_loop_kills_wanted(void);

typedef struct KillLoop {
    int kills;          /* SIGKILLs delivered */
    int starts;         /* processes started */
    int status;         /* exit status of the start that finished (-1: none did) */
    double seconds;     /* wall time of the whole loop */
} KillLoop;

/* Runs `first` once, then `resume` (shell commands, run with exec so that the
 * kill reaches the command itself), killing each start once it has saved a
 * resume point (the file `watch` changed: so every kill loses work and every
 * resume really resumes) and then run on for a delay drawn uniformly from
 * [0, max_delay) seconds, until `kills` kills are done; the start after the
 * last kill runs to its end. A start that ends before its kill ends the loop. */
KillLoop kill_loop(const char *first, const char *resume, const char *watch, double max_delay, int kills,
                   uint64_t seed);

/* Starts cmd, sends it signal sig (twice back to back, as timeout(1) does)
 * once it has saved a resume point (`watch` changed), and returns its exit
 * status (a clean stop on SIGTERM: 143). */
int kill_loop_signal(const char *cmd, const char *watch, int sig);

/* Wall time of running cmd to its end (for max_delay); its exit status in *status. */
double kill_loop_time(const char *cmd, int *status);


/* 1 when the two files have the same bytes. */
int kill_loop_same_file(const char *a, const char *b);
/* 1 when DIR_A/results.json and DIR_B/results.json have the same "epochs"
 * and "best" records, leaving out the timing keys (seconds, cpu_seconds,
 * train_seconds, ...): the numbers a resumed run must reproduce exactly. */
int kill_loop_same_results(const char *dir_a, const char *dir_b);

/* The whole interruption check of one training command. */
typedef struct KillTest {
    const char *name;       /* for the printed figures: "finetune" */
    const char *command;    /* the full command line without --out, --resume or output redirection */
    const char *killed;     /* options added to the killed runs only, e.g. "--checkpoint-every 1" */
    const char *dir;        /* runs go to DIR/ref (uninterrupted) and DIR/cut (killed) */
    const char *watch;      /* the file, in a run directory, that a save replaces */
    int sigterm;            /* first stop the run with SIGTERM: exit 143, a message naming --resume */
    uint64_t seed;          /* for the kill delays */
} KillTest;

/* Runs DIR/ref uninterrupted, then DIR/cut killed kill_loop_kills_wanted()
 * times at random moments after saves (delays up to the reference's time
 * divided by kills + 1), prints one line of figures and checks that the
 * killed run finished and ended with the same model.ckpt (bit for bit).
 * Returns what the loop did; the caller compares what else its command
 * writes (results.json: kill_loop_same_results; a log). */
KillLoop kill_test(const KillTest *t);

#endif
