/* args.h — the one command-line parser every `glue` command uses.
 *
 * Options are `--name value`, `--name=value` or bare flags `--name`. Each getter
 * marks what it consumed; args_positional() returns the rest in order, and
 * args_finish() rejects any option no getter asked for (exit code 2), so a typo
 * like `--epoch 3` is an error instead of being silently ignored. */
#ifndef GLUE_ARGS_H
#define GLUE_ARGS_H

#define ARGS_MAX 256

typedef struct {
    int argc;
    char **argv;                 /* argv[0] is the command name */
    unsigned char used[ARGS_MAX];
    int bad;                     /* a value failed to parse */
    const char *asked[ARGS_MAX]; /* the options the command looked for: an unknown one's suggestions */
    int nasked;
} Args;

void args_init(Args *a, int argc, char **argv);
int args_flag(Args *a, const char *name);                               /* 1 if present */
const char *args_str(Args *a, const char *name, const char *fallback);
long args_int(Args *a, const char *name, long fallback);
double args_double(Args *a, const char *name, double fallback);
/* --threads: 0 (every core) to ARGS_MAX_THREADS; beyond, an error args_finish
 * reports (a pool of 100,000 threads crashed the OpenMP runtime). */
#define ARGS_MAX_THREADS 1024
long args_threads(Args *a, long fallback);
/* Every value of a repeatable option (`--set a=1 --set b=2`), in order; returns
 * how many (one more than max is an error that args_finish reports). */
int args_strs(Args *a, const char *name, const char **out, int max);
int args_positional(Args *a, const char **out, int max);                /* count */
/* 0 when every option was recognised and parsed; otherwise prints the error and
 * the usage and returns EXIT_USAGE. */
int args_finish(Args *a, const char *usage);
/* "usage: <usage>" on stderr, after a message about what was wrong: EXIT_USAGE. */
int args_usage(const char *usage);
/* What is wrong with the positionals `pos` (npos of them) of a command shaped
 * `glue vocab|vectors train --corpus FILE --out FILE [MORE CORPORA...]`, whose
 * corpora are the --corpus file and up to max - 1 more; NULL when nothing is. */
const char *args_train_corpora_problem(const char *const *pos, int npos, const char *corpus, const char *out, int max);
/* 0 when the file such a command writes (--out) may be written: there is
 * none yet (or an empty one), or --overwrite was given (the old one is
 * replaced when the new one is whole); else EXIT_USAGE after a message,
 * nothing done: a file that took hours to make is not replaced by a typo. */
int args_out_file_free(const char *cmd, const char *out, int overwrite);

#endif
