/* fuzz_run_lock.c — a run directory's lock file (train/run_lock.h): the
 * owner parser (run_lock_parse) on raw bytes, and taking the lock of a
 * directory whose run.lock holds them (a stale lock of a killed run: said,
 * taken over, rewritten with this process's pid and host, removed on
 * release). Checked beyond "no crash": a parsed owner has a pid in
 * [1, INT_MAX] and a host of printable characters; the lock is taken, its
 * file then names this process, and it is gone after release.
 * Input: the lock file's bytes. */
#include "core/files.h"
#include "train/run_lock.h"
#include "tests/fuzz/fuzz_util.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    RunLockOwner o;
    if (run_lock_parse((const char *)data, size, &o) == 0) {
        if (o.pid < 1 || o.pid > INT_MAX) __builtin_trap();
        for (const char *c = o.host; *c; c++)
            if ((unsigned char)*c <= ' ' || (unsigned char)*c >= 127) __builtin_trap();
    }
    fuzz_write(fuzz_path(RUN_LOCK_FILE), data, size, 0);
    RunLock l;
    if (run_lock_take(&l, fuzz_dir()) != 0) __builtin_trap();   /* nobody holds it */
    size_t n = 0;
    char *text = file_read(l.path, &n);
    if (!text || run_lock_parse(text, n, &o) != 0 || o.pid != (long)getpid()) __builtin_trap();
    free(text);
    run_lock_release(&l);
    if (access(fuzz_path(RUN_LOCK_FILE), F_OK) == 0) __builtin_trap();
    return 0;
}
