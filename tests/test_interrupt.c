/* test_interrupt.c — core/interrupt.h in a forked child each: a signal is
 * recorded, not fatal, from whichever thread it lands on; the same signal
 * twice back to back (timeout(1): the command, then its process group) is one
 * request; the same signal after INTERRUPT_REPEAT_MS, or the other signal,
 * acts at once; interrupt_wait returns the signal. */
#include "core/interrupt.h"
#include "tests/test.h"

#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void sleep_ms(long ms) {
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&t, &t) != 0) {
    }
}

/* Runs body in a child; returns its exit code, or 128 + the signal it died of. */
static int in_child(int (*body)(void)) {
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) _exit(body());
    int st;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int twice_back_to_back(void) {
    interrupt_begin();
    kill(getpid(), SIGTERM);
    kill(getpid(), SIGTERM);
    sleep_ms(50);
    return interrupt_pending() == SIGTERM ? 0 : 1;
}

static int again_after_the_window(void) {
    interrupt_begin();
    kill(getpid(), SIGINT);
    sleep_ms(INTERRUPT_REPEAT_MS + 200);
    kill(getpid(), SIGINT);   /* a second request: the default action */
    sleep_ms(200);
    return 3;
}

static int the_other_signal(void) {
    interrupt_begin();
    kill(getpid(), SIGTERM);
    kill(getpid(), SIGINT);
    sleep_ms(200);
    return 3;
}

static void *signal_soon(void *arg) {
    (void)arg;
    sleep_ms(100);
    kill(getpid(), SIGTERM);
    return NULL;
}

/* The waiter blocks nothing; another thread may take the signal. */
static int wait_returns_it(void) {
    interrupt_begin();
    pthread_t t;
    if (pthread_create(&t, NULL, signal_soon, NULL) != 0) return 4;
    int sig = interrupt_wait();
    pthread_join(t, NULL);
    interrupt_end();
    return sig == SIGTERM && interrupt_pending() == 0 ? 0 : 1;
}

TEST(interrupt_one_request_repeats_and_second_requests) {
    CHECK_EQ_INT(in_child(twice_back_to_back), 0);
    CHECK_EQ_INT(in_child(again_after_the_window), 128 + SIGINT);
    CHECK_EQ_INT(in_child(the_other_signal), 128 + SIGINT);
    CHECK_EQ_INT(in_child(wait_returns_it), 0);
}
