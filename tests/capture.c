/* capture.c — stderr capture for tests (see capture.h). */
#include "tests/capture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Most a capture keeps: messages are a few lines. */
enum { CAPTURE_MAX = 1 << 16 };

void stderr_capture_begin(StderrCapture *c) {
    fflush(stdout);
    fflush(stderr);
    int fd = scratch_file("test_stderr", c->path, sizeof c->path);
    c->saved = dup(2);
    if (fd >= 0) {
        dup2(fd, 2);
        close(fd);
    }
}

char *stderr_capture_end(StderrCapture *c) {
    fflush(stderr);
    dup2(c->saved, 2);
    close(c->saved);
    char *s = calloc(1, CAPTURE_MAX);
    FILE *f = fopen(c->path, "rb");
    if (f && s) {
        size_t n = fread(s, 1, CAPTURE_MAX - 1, f);
        s[n] = '\0';
    }
    if (f) fclose(f);
    unlink(c->path);
    return s;
}
