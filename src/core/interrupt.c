/* interrupt.c — SIGINT/SIGTERM recorded for the training loops (see interrupt.h). */
#include "core/interrupt.h"

#include <errno.h>
#include <semaphore.h>
#include <signal.h>
#include <string.h>

/* The one piece of global state: a signal handler can reach nothing else.
 * The semaphore wakes interrupt_wait: sem_post is async-signal-safe, and it
 * wakes the waiter whichever thread ran the handler (a sigwait in one thread
 * misses a signal the kernel gives to a thread that did not block it). */
static volatile sig_atomic_t pending;
static sem_t arrived;
static struct sigaction old_int, old_term;

static void on_signal(int sig) {
    pending = sig;
    sem_post(&arrived);
}

void interrupt_begin(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESETHAND;   /* a second signal: the default action */
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
