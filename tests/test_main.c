/* test_main.c — runs every registered test (or those whose name or file contains
 * argv[1]), prints each failing check and ends with "N passed, N failed". */
#include "tests/test.h"

#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#define MAX_TESTS 1024

typedef struct { const char *name, *file; TestFn fn; } TestCase;

static TestCase tests[MAX_TESTS];
static int num_tests;
static int current_failed, current_skipped;

void test_register(const char *name, const char *file, TestFn fn) {
    if (num_tests == MAX_TESTS) { fprintf(stderr, "too many tests\n"); exit(1); }
    tests[num_tests++] = (TestCase){name, file, fn};
}

int test_check(int cond, const char *file, int line, const char *fmt, ...) {
    if (cond) return 1;
    va_list ap;
    fprintf(stdout, "  %s:%d: check failed: ", file, line);
    va_start(ap, fmt);
    vfprintf(stdout, fmt, ap);
    va_end(ap);
    fputc('\n', stdout);
    fflush(stdout);
    current_failed++;
    return 0;
}

void test_skip(const char *reason) {
    printf("  skipped: %s\n", reason);
    current_skipped = 1;
}

const char *test_glue_bin(void) {
    const char *b = getenv("GLUE_BIN");
    return b && *b ? b : "./glue";
}

/* Absolute, so that a command a test runs inside a scratch folder still finds
 * it (the default ../shared is relative to the repository). */
const char *test_shared_dir(void) {
    static char abs[PATH_MAX];
    const char *s = getenv("GLUE_SHARED");
    if (!s || !*s) s = "../shared";
    if (!abs[0] && !realpath(s, abs)) snprintf(abs, sizeof abs, "%s", s);
    return abs;
}

int test_flip_byte(const char *path, long at, int mask) {
    FILE *f = fopen(path, "r+b");
    if (!f) return -1;
    int ch = fseek(f, at, SEEK_SET) == 0 ? fgetc(f) : EOF;
    int rc = ch == EOF || fseek(f, at, SEEK_SET) != 0 || fputc(ch ^ mask, f) == EOF ? -1 : 0;
    return fclose(f) != 0 ? -1 : rc;
}

char *test_run(const char *cmd, int *status) {
    FILE *p = popen(cmd, "r");
    size_t cap = 4096, n = 0;
    char *out = malloc(cap);
    if (!p || !out) { if (status) *status = -1; if (out) out[0] = 0; return out; }
    size_t k;
    while ((k = fread(out + n, 1, cap - n - 1, p)) > 0) {
        n += k;
        if (cap - n < 2) { cap *= 2; out = realloc(out, cap); }
    }
    out[n] = '\0';
    int st = pclose(p);
    if (status) *status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return out;
}

static int by_file_then_order(const void *a, const void *b) {
    const TestCase *x = a, *y = b;
    int c = strcmp(x->file, y->file);
    return c ? c : (x < y ? -1 : x > y);
}

int main(int argc, char **argv) {
    const char *filter = argc > 1 ? argv[1] : NULL;
    int passed = 0, failed = 0, skipped = 0;
    /* A quarter of the tests read the datasets, vocab and golden files there: say
     * so once instead of failing each of them with a missing file. */
    char probe[4096];
    struct stat st;
    snprintf(probe, sizeof probe, "%s/data", test_shared_dir());
    if (stat(probe, &st) != 0 || !S_ISDIR(st.st_mode)) {
        printf("tests: %s not found (datasets, vocab, golden files): put the shared folder beside\n"
               "  this repository or set GLUE_SHARED=/path/to/shared\n", probe);
        printf("0 passed, 1 failed\n");
        return 1;
    }
    qsort(tests, (size_t)num_tests, sizeof tests[0], by_file_then_order);
    for (int i = 0; i < num_tests; i++) {
        TestCase *t = &tests[i];
        if (filter && !strstr(t->name, filter) && !strstr(t->file, filter)) continue;
        current_failed = current_skipped = 0;
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        t->fn();
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
        const char *verdict = current_failed ? "FAIL" : current_skipped ? "skip" : "ok";
        printf("%-4s %-40s %s (%.2fs)\n", verdict, t->name, t->file, secs);
        fflush(stdout);
        if (current_failed) failed++;
        else if (current_skipped) skipped++;
        else passed++;
    }
    if (skipped) printf("%d skipped\n", skipped);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
