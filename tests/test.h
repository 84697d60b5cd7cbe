/* test.h — a minimal test framework. TEST(name) registers a function at load time
 * (no central list to edit); CHECK* record failures with file:line and keep going.
 * The runner (tests/test_main.c) prints every failure and ends with
 * "N passed, N failed". */
#ifndef GLUE_TEST_H
#define GLUE_TEST_H

#include <math.h>
#include <stdio.h>

typedef void (*TestFn)(void);
void test_register(const char *name, const char *file, TestFn fn);
/* Returns cond; on failure prints "file:line: check failed: what" and marks the test failed. */
int test_check(int cond, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Skip the current test with a reason (counted apart, printed). Use only for an
 * optional external reference that this machine lacks. */
void test_skip(const char *reason);
/* Path of the glue binary under test ($GLUE_BIN, default ./glue). */
const char *test_glue_bin(void);
/* Path of ../shared (or $GLUE_SHARED). */
const char *test_shared_dir(void);
/* Damage a file the way a disk error would: XOR byte `at` with `mask`. 0 ok. */
int test_flip_byte(const char *path, long at, int mask);
/* Run a shell command, capture stdout (malloc'd, NUL-terminated) and exit status. */
char *test_run(const char *cmd, int *status);

#define TEST(name)                                                        \
    static void name(void);                                               \
    __attribute__((constructor)) static void register_##name(void) {      \
        test_register(#name, __FILE__, name);                             \
    }                                                                     \
    static void name(void)

#define CHECK(cond) test_check(!!(cond), __FILE__, __LINE__, "%s", #cond)
#define CHECK_MSG(cond, ...) test_check(!!(cond), __FILE__, __LINE__, __VA_ARGS__)
#define CHECK_EQ_INT(a, b)                                                           \
    do { long long a_ = (long long)(a), b_ = (long long)(b);                          \
         test_check(a_ == b_, __FILE__, __LINE__, "%s == %s (%lld vs %lld)", #a, #b, a_, b_); } while (0)
#define CHECK_NEAR(a, b, tol)                                                         \
    do { double a_ = (double)(a), b_ = (double)(b);                                   \
         test_check(fabs(a_ - b_) <= (tol), __FILE__, __LINE__,                       \
                    "%s ~ %s (%.9g vs %.9g, tol %g)", #a, #b, a_, b_, (double)(tol)); } while (0)

#endif
