/* torchref.h — run a PyTorch reference script on float32 tensors (tests only).
 *
 * Inputs are written as raw little-endian float32 files <name>.f32 into a fresh
 * temporary directory; `/usr/bin/python3 tests/ref/<script> <dir> <args>` (Debian's
 * python3-torch, not the first python3 on PATH) reads them and writes the outputs
 * the same way; they are read back and the directory removed. A script exits with
 * status 77 when torch is not importable, which skips the test. */
#ifndef GLUE_TESTS_TORCHREF_H
#define GLUE_TESTS_TORCHREF_H

typedef struct {
    const char *name;
    float *data;   /* inputs: read; outputs: filled */
    long n;        /* element count (an output file of another size is an error) */
} RefTensor;

/* 1: outputs filled; 0: torch unavailable (test skipped); -1: failure (CHECK'd). */
int torchref_run(const char *script, const char *args, const RefTensor *in, int n_in,
                 RefTensor *out, int n_out);

/* Largest |a - b| over n elements. */
double torchref_max_diff(const float *a, const float *b, long n);

#endif
