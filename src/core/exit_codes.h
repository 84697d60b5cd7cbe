/* exit_codes.h — the process exit codes, one per kind of failure, and the
 * kind of the first failure a command reported.
 *
 *   0    success
 *   1    the work failed for another reason (a model diverged, a metric is not
 *        a number, a save failed halfway, ...)
 *   2    usage: the command line, an option's value or a setting (unknown, of
 *        the wrong kind, out of its range) is wrong
 *   65   data: an input's contents are wrong (a malformed or empty split, a
 *        bad label, invalid UTF-8, a damaged checkpoint or JSON file)
 *   74   I/O: a file is missing, cannot be read, or cannot be written
 *   130  interrupted: 128 + the signal (SIGINT 130, SIGTERM 143), after
 *        saving what --resume needs
 *
 * 65 and 74 are sysexits.h's EX_DATAERR and EX_IOERR, so scripts that know
 * that convention read them right.
 *
 * Why a recorded kind: an error is found deep down (a loader, the settings
 * reader, the checkpoint reader) and travels up as a plain failure through
 * layers that only pass 0 / 1 / 2 on. The place that finds it knows its kind
 * and says so (user_error_data, user_error_io, user_error_usage in
 * core/common.h); main() turns the command's plain failure into that kind
 * (exit_code_resolve). The first error reported is the cause, later ones its
 * consequences ("could not load the run"), so the first kind is kept. */
#ifndef GLUE_EXIT_CODES_H
#define GLUE_EXIT_CODES_H

enum {
    EXIT_FAILED = 1,
    EXIT_USAGE = 2,
    EXIT_DATA = 65,
    EXIT_IO = 74,
    EXIT_SIGNAL_BASE = 128,   /* + the signal number */
};

/* Records the kind of a failure just reported (the first one is kept). */
void exit_code_note(int code);
/* The exit code of a command that returned rc: a plain failure (1, or 2 from
 * a caller that could not tell) becomes the recorded kind, when there is
 * one; success and signals stay as they are. */
int exit_code_resolve(int rc);

#endif
