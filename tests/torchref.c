/* torchref.c — tensors to and from a PyTorch reference script (see torchref.h). */
#include "tests/torchref.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/scratch.h"
#include "tests/test.h"

#define TORCHREF_PYTHON "/usr/bin/python3"
#define TORCHREF_SKIP 77

static int torchref_write(const char *dir, const RefTensor *t) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s.f32", dir, t->name);
    FILE *f = fopen(path, "wb");
    if (!f) return 0;
    size_t w = fwrite(t->data, sizeof(float), (size_t)t->n, f);
    return fclose(f) == 0 && w == (size_t)t->n;
}

static int torchref_read(const char *dir, RefTensor *t) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s.f32", dir, t->name);
    FILE *f = fopen(path, "rb");
    if (!f) return CHECK_MSG(0, "reference wrote no %s", path);
    size_t r = fread(t->data, sizeof(float), (size_t)t->n, f);
    int extra = fgetc(f) != EOF;
    fclose(f);
    return CHECK_MSG(r == (size_t)t->n && !extra, "%s: expected %ld floats", path, t->n);
}

static void torchref_cleanup(const char *dir) {
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "torchref: could not remove %s\n", dir);
}

int torchref_run(const char *script, const char *args, const RefTensor *in, int n_in,
                 RefTensor *out, int n_out) {
    if (access(TORCHREF_PYTHON, X_OK) != 0) { test_skip("no " TORCHREF_PYTHON); return 0; }
    char dir[SCRATCH_PATH_MAX];
    if (!scratch_dir("torchref", dir, sizeof dir)) { CHECK_MSG(0, "mkdtemp failed"); return -1; }
    int ok = 1;
    for (int i = 0; i < n_in && ok; i++) ok = CHECK_MSG(torchref_write(dir, &in[i]), "writing %s", in[i].name);
    char cmd[1024];
    /* No __pycache__ in the source tree. */
    snprintf(cmd, sizeof cmd, "PYTHONDONTWRITEBYTECODE=1 %s tests/ref/%s %s %s 2>&1", TORCHREF_PYTHON, script, dir, args);
    int status = -1;
    char *log = ok ? test_run(cmd, &status) : NULL;
    int result = -1;
    if (ok && status == TORCHREF_SKIP) {
        test_skip("python3-torch is not installed");
        result = 0;
    } else if (ok && CHECK_MSG(status == 0, "%s failed (%d):\n%s", cmd, status, log ? log : "")) {
        result = 1;
        for (int i = 0; i < n_out; i++) if (!torchref_read(dir, &out[i])) result = -1;
    }
    free(log);
    torchref_cleanup(dir);
    return result;
}

double torchref_max_diff(const float *a, const float *b, long n) {
    double worst = 0;
    for (long i = 0; i < n; i++) {
        double d = fabs((double)a[i] - b[i]);
        if (!(d <= worst)) worst = d;   /* NaN propagates as the worst */
    }
    return worst;
}
