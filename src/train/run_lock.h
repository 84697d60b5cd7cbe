/* run_lock.h — one run at a time in a run directory: an flock(2) lock on
 * <dir>/run.lock, held for the whole run, the file naming its owner:
 *   pid=12345
 *   host=node7
 * A second run into the directory is refused, naming the owner. The kernel
 * drops the lock of a process that dies, so a lock file whose lock is free is
 * stale (its run was killed): that is said, and the lock taken over. The file
 * is removed when its run ends. */
#ifndef GLUE_TRAIN_RUN_LOCK_H
#define GLUE_TRAIN_RUN_LOCK_H

#include <stddef.h>

#define RUN_LOCK_FILE "run.lock"

typedef struct RunLock {
    int fd;              /* -1: not held */
    char path[4200];     /* <dir>/run.lock */
} RunLock;

typedef struct RunLockOwner {
    long pid;
    char host[256];
} RunLockOwner;

/* Takes dir's lock (dir must exist). 0; EXIT_USAGE after a message naming
 * the owner when another process holds it; 1 after a message when the file
 * cannot be made. */
int run_lock_take(RunLock *l, const char *dir);
/* Removes the lock file and drops the lock; nothing when not held. */
void run_lock_release(RunLock *l);
/* The owner written in a lock file's text (len bytes, not NUL-terminated):
 * 0, or -1 when it names none (empty, malformed). */
int run_lock_parse(const char *text, size_t len, RunLockOwner *owner);

#endif
