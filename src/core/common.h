/* common.h — the two tiers of errors, checked allocation and logging.
 *
 * Programmer errors and out-of-memory die at once with file:line (DIE, xmalloc).
 * Anything a user can cause (a bad row, a missing file, a wrong checkpoint) is
 * reported with user_error() — one clear message plus a hint saying what to do —
 * and travels back up as a non-zero status so the caller can exit cleanly; where
 * the kind of failure is known (data, I/O, usage), user_error_data/_io/_usage
 * also fix the process's exit code (core/exit_codes.h). */
#ifndef GLUE_COMMON_H
#define GLUE_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/exit_codes.h"

_Noreturn void die_at(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
#define DIE(...) die_at(__FILE__, __LINE__, __VA_ARGS__)
#define CHECK_OR_DIE(cond) \
    do { if (!(cond)) DIE("internal check failed: %s", #cond); } while (0)

/* "glue: error: <message>" and, when hint != NULL, "  hint: <hint>" on stderr. */
void user_error(const char *hint, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* user_error of a known kind (core/exit_codes.h): the command then exits
 * with EXIT_DATA (an input's contents), EXIT_IO (a file missing, unreadable,
 * unwritable) or EXIT_USAGE (an option or setting) whatever its callers return. */
void user_error_data(const char *hint, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void user_error_io(const char *hint, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void user_error_usage(const char *hint, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "glue: warning: ..." on stderr. */
void user_warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A library call (include/glue.h) prints nothing: between begin and end,
 * this thread's user_error messages go into c (the first one, its hint
 * appended; kind: the EXIT_* of a user_error_data/_io/_usage, else 0, and no
 * exit code is noted for the process) and its warnings are dropped. Other
 * threads are unaffected. */
typedef struct ErrorCapture {
    char message[1024];
    int kind;
} ErrorCapture;
void error_capture_begin(ErrorCapture *c);
void error_capture_end(void);

void *xmalloc(size_t n);
void *xcalloc(size_t count, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
/* 64-byte aligned allocation (for SIMD and the parameter arena); free with free(). */
void *xaligned_alloc(size_t n);
/* How many x*alloc calls this process has made (all threads): the model code
 * allocates only through them, so an unchanged count means no allocation. */
unsigned long xalloc_calls(void);

/* Monotonic wall clock in seconds (async-signal-safe: only clock_gettime;
 * core/interrupt.c's handler reads it). */
double now_seconds(void);
/* User + system CPU seconds of every thread of this process so far. */
double cpu_seconds(void);

#endif
