/* common.c — error reporting and checked allocation (see common.h). */
#include "core/common.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

void die_at(const char *file, int line, const char *fmt, ...) {
    va_list ap;
    fflush(stdout);
    fprintf(stderr, "glue: fatal: %s:%d: ", file, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    abort();
}

/* This thread's capture (common.h): where its messages go instead of stderr. */
static _Thread_local ErrorCapture *capture;

void error_capture_begin(ErrorCapture *c) {
    c->message[0] = '\0';
    c->kind = 0;
    capture = c;
}

void error_capture_end(void) { capture = NULL; }

/* The first error of a capture (the cause; later ones are its consequences). */
static void error_capture_add(const char *hint, const char *fmt, va_list ap) {
    if (capture->message[0]) return;
    size_t cap = sizeof capture->message;
    int n = vsnprintf(capture->message, cap, fmt, ap);
    if (hint && n >= 0 && (size_t)n < cap) snprintf(capture->message + n, cap - (size_t)n, " (hint: %s)", hint);
}

static void user_error_v(const char *hint, const char *fmt, va_list ap) {
    if (capture) {
        error_capture_add(hint, fmt, ap);
        return;
    }
    fflush(stdout);
    fputs("glue: error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    if (hint) fprintf(stderr, "  hint: %s\n", hint);
}

void user_error(const char *hint, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    user_error_v(hint, fmt, ap);
    va_end(ap);
}

#define USER_ERROR_OF_KIND(name, code)                 \
    void name(const char *hint, const char *fmt, ...) { \
        va_list ap;                                     \
        if (!capture) exit_code_note(code);             \
        else if (!capture->kind) capture->kind = code;  \
        va_start(ap, fmt);                              \
        user_error_v(hint, fmt, ap);                    \
        va_end(ap);                                     \
    }
USER_ERROR_OF_KIND(user_error_data, EXIT_DATA)
USER_ERROR_OF_KIND(user_error_io, EXIT_IO)
USER_ERROR_OF_KIND(user_error_usage, EXIT_USAGE)
#undef USER_ERROR_OF_KIND

void user_warning(const char *fmt, ...) {
    va_list ap;
    if (capture) return;   /* a library call prints nothing; warnings are not failures */
    fflush(stdout);
    fputs("glue: warning: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/* Every allocation of ours passes here (or through xaligned_alloc); the
 * count lets a test show that a training step allocates nothing. */
static _Atomic unsigned long alloc_calls;

unsigned long xalloc_calls(void) { return alloc_calls; }

static void *check_alloc(void *p, size_t n) {
    alloc_calls++;
    if (!p && n) DIE("out of memory allocating %zu bytes", n);
    return p;
}

void *xmalloc(size_t n) { return check_alloc(malloc(n ? n : 1), n); }
void *xcalloc(size_t count, size_t size) { return check_alloc(calloc(count ? count : 1, size ? size : 1), count * size); }
void *xrealloc(void *p, size_t n) { return check_alloc(realloc(p, n ? n : 1), n); }
char *xstrdup(const char *s) { return xstrndup(s, strlen(s)); }

char *xstrndup(const char *s, size_t n) {
    char *d = xmalloc(n + 1);
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

void *xaligned_alloc(size_t n) {
    void *p = NULL;
    alloc_calls++;
    /* 64 bytes: one cache line, one AVX-512 register. */
    if (posix_memalign(&p, 64, n ? n : 64) != 0) DIE("out of memory allocating %zu aligned bytes", n);
    return p;
}

double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double cpu_seconds(void) {
    struct rusage u;
    if (getrusage(RUSAGE_SELF, &u) != 0) return 0;
    return (double)u.ru_utime.tv_sec + u.ru_utime.tv_usec * 1e-6 + (double)u.ru_stime.tv_sec + u.ru_stime.tv_usec * 1e-6;
}
