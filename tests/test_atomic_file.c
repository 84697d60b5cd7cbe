/* test_atomic_file.c — core/files.h's atomic writer when the disk fills up:
 * the message names the reason (stdio keeps only an error flag, and the
 * reason was lost: "Input/output error" for a full disk), the file keeps its
 * old contents and no temporary file is left. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/files.h"
#include "tests/capture.h"
#include "tests/scratch.h"
#include "tests/test.h"

/* The temporary file atomic_open writes for path (core/files.c). */
static void atomic_tmp_name(const char *path, char *out, size_t cap) {
    snprintf(out, cap, "%s.tmp.%ld", path, (long)getpid());
}

TEST(atomic_file_full_disk_says_why) {
    if (access("/dev/full", W_OK) != 0) {
        test_skip("no /dev/full");
        return;
    }
    char dir[SCRATCH_PATH_MAX], path[SCRATCH_PATH_MAX + 32], tmp[SCRATCH_PATH_MAX + 64];
    if (!CHECK(scratch_dir("atomic", dir, sizeof dir))) return;
    file_join(dir, "table.md", path, sizeof path);
    CHECK(atomic_write(path, "old\n", 4) == 0);
    atomic_tmp_name(path, tmp, sizeof tmp);
    /* Written by fprintf through atomic_open (as tables and pages are), and at once by atomic_write. */
    for (int whole = 0; whole < 2; whole++) {
        if (!CHECK(symlink("/dev/full", tmp) == 0)) break;
        StderrCapture cap;
        stderr_capture_begin(&cap);
        int rc = -1;
        if (whole) {
            static char big[1 << 16];
            rc = atomic_write(path, big, sizeof big);
        } else {
            AtomicFile a;
            FILE *f = atomic_open(&a, path);
            for (int i = 0; f && i < 10000; i++) fprintf(f, "| row %d | 0.00 |\n", i);
            rc = f ? atomic_commit(&a) : -2;
        }
        char *msg = stderr_capture_end(&cap);
        CHECK_MSG(rc == -1 && msg && strstr(msg, "No space left on device"), "%s: rc %d: %s",
                  whole ? "atomic_write" : "fprintf", rc, msg ? msg : "(nothing said)");
        free(msg);
        CHECK_MSG(access(tmp, F_OK) != 0 && errno == ENOENT, "the temporary file was left");
        size_t n = 0;
        char *now = file_read(path, &n);
        CHECK_MSG(now && n == 4 && !memcmp(now, "old\n", 4), "the file changed");
        free(now);
    }
    unlink(path);
    rmdir(dir);
}
