/* capture.h — capture what the code under test writes to stderr (user_error
 * messages), so a test can check the message and keep the test log clean.
 * Tests only. */
#ifndef GLUE_TESTS_CAPTURE_H
#define GLUE_TESTS_CAPTURE_H

#include "tests/scratch.h"

typedef struct {
    int saved;      /* the real stderr */
    char path[SCRATCH_PATH_MAX];  /* temporary file receiving fd 2 */
} StderrCapture;

/* From now on fd 2 goes to a temporary file. */
void stderr_capture_begin(StderrCapture *c);
/* Restores stderr; returns what was written (malloc'd, NUL-terminated). */
char *stderr_capture_end(StderrCapture *c);

#endif
