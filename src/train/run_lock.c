/* run_lock.c — a run directory's lock (see run_lock.h). */
#include "train/run_lock.h"

#include "core/common.h"
#include "core/files.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

int run_lock_parse(const char *text, size_t len, RunLockOwner *owner) {
    owner->pid = 0;
    owner->host[0] = '\0';
    size_t i = 0;
    while (i < len) {
        size_t end = i;
        while (end < len && text[end] != '\n') end++;
        const char *line = text + i;
        size_t n = end - i;
        if (n > 4 && memcmp(line, "pid=", 4) == 0) {
            long v = 0;
            size_t k = 4;
            for (; k < n && text[i + k] >= '0' && text[i + k] <= '9' && v <= INT_MAX; k++) v = v * 10 + (line[k] - '0');
            if (k == n && v > 0 && v <= INT_MAX) owner->pid = v;
        } else if (n > 5 && memcmp(line, "host=", 5) == 0 && n - 5 < sizeof owner->host) {
            size_t k = 5;
            while (k < n && (unsigned char)line[k] > ' ' && (unsigned char)line[k] < 127) k++;
            if (k == n) memcpy(owner->host, line + 5, n - 5), owner->host[n - 5] = '\0';
        }
        i = end + 1;
    }
    return owner->pid > 0 ? 0 : -1;
}

/* The owner named in the open lock file fd. */
static int run_lock_read(int fd, RunLockOwner *owner) {
    char buf[512];
    ssize_t n = pread(fd, buf, sizeof buf, 0);
    return n > 0 ? run_lock_parse(buf, (size_t)n, owner) : -1;
}

/* Opens and locks path; 0 held, 1 held by another (fd open, for its owner), -1 error. A file
 * unlinked by its releasing owner between our open and flock is not the
 * lock any more: then again. */
static int run_lock_open(RunLock *l) {
    for (int tries = 0; tries < 100; tries++) {
        l->fd = open(l->path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
        if (l->fd < 0) return -1;
        if (flock(l->fd, LOCK_EX | LOCK_NB) != 0) return errno == EWOULDBLOCK ? 1 : -1;
        struct stat a, b;
        if (fstat(l->fd, &a) == 0 && stat(l->path, &b) == 0 && a.st_ino == b.st_ino && a.st_dev == b.st_dev) return 0;
        close(l->fd);
    }
    errno = EAGAIN;
    return -1;
}

int run_lock_take(RunLock *l, const char *dir) {
    file_join(dir, RUN_LOCK_FILE, l->path, sizeof l->path);
    int got = run_lock_open(l);
    RunLockOwner owner;
    if (got < 0) {
        user_error_io("check the folder's permissions", "%s: cannot lock: %s", l->path, strerror(errno));
        if (l->fd >= 0) close(l->fd);
        l->fd = -1;
        return 1;
    }
    if (got == 1) {
        int known = run_lock_read(l->fd, &owner) == 0;
        close(l->fd);
        l->fd = -1;
        if (known)
            user_error("wait for it to end, stop it, or train elsewhere with --out DIR",
                       "%s is in use by another run: glue pid %ld on %s (lock %s)", dir, owner.pid,
                       owner.host[0] ? owner.host : "an unknown host", l->path);
        else
            user_error("wait for it to end, stop it, or train elsewhere with --out DIR",
                       "%s is in use by another run (lock %s)", dir, l->path);
        return EXIT_USAGE;
    }
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    if (run_lock_read(l->fd, &owner) == 0 && owner.pid != (long)getpid())
        user_warning("%s: a stale lock of glue pid %ld on %s, whose run ended without releasing it (killed): "
                     "taken over", dir, owner.pid, owner.host[0] ? owner.host : "an unknown host");
    char text[400];
    int n = snprintf(text, sizeof text, "pid=%ld\nhost=%s\n", (long)getpid(), host[0] ? host : "unknown");
    if (ftruncate(l->fd, 0) != 0 || pwrite(l->fd, text, (size_t)n, 0) != n) {
        user_error_io("check free disk space", "%s: cannot write: %s", l->path, strerror(errno));
        run_lock_release(l);
        return 1;
    }
    return 0;
}

void run_lock_release(RunLock *l) {
    if (l->fd < 0) return;
    unlink(l->path);   /* while held: a later run finds no stale file */
    close(l->fd);
    l->fd = -1;
}
