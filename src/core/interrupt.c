/* interrupt.c — SIGINT/SIGTERM recorded for the training loops and glue serve
 * (see interrupt.h). */
#include "core/interrupt.h"

#include "core/common.h"

#include <errno.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>

/* The one piece of global state: a signal handler can reach nothing else.
 * The semaphore wakes interrupt_wait: sem_post is async-signal-safe, and it
 * wakes the waiter whichever thread ran the handler (a sigwait in one thread
 * misses a signal the kernel gives to a thread that did not block it). */
static volatile sig_atomic_t pending;
static atomic_llong first_ms;   /* when the recorded signal came (lock-free: safe in a handler) */
static sem_t arrived;
static struct sigaction old_int, old_term;

static void on_signal(int sig) {
    long long now = (long long)(now_seconds() * 1000);
    if (!pending) {
        atomic_store(&first_ms, now);
        pending = sig;
        sem_post(&arrived);
        return;
    }
    /* The same request twice: timeout(1) signals the command and then its
     * process group, back to back, and the second killed runs (and servers)
     * in the middle of saving (draining). */
    if (sig == pending && now - atomic_load(&first_ms) < INTERRUPT_REPEAT_MS) return;
    signal(sig, SIG_DFL);   /* a second request acts at once */
    raise(sig);
}

void interrupt_begin(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    pending = 0;
    sem_init(&arrived, 0, 0);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
}

int interrupt_pending(void) { return pending; }

int interrupt_wait(void) {
    while (sem_wait(&arrived) != 0 && errno == EINTR) {
    }
    return pending;
}

const char *interrupt_name(int sig) { return sig == SIGINT ? "interrupted (SIGINT)" : "terminated (SIGTERM)"; }

void interrupt_end(void) {
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    sem_destroy(&arrived);
    pending = 0;
}
