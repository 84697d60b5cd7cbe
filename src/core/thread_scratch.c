/* thread_scratch.c — per-thread scratch buffers (see thread_scratch.h). */
#include "core/thread_scratch.h"

#include <pthread.h>
#include <stdlib.h>

#include "core/common.h"

typedef struct {
    void *buf[THREAD_SCRATCH_SLOTS];
    size_t cap[THREAD_SCRATCH_SLOTS];
} Scratch;

static pthread_key_t g_key;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void scratch_free(void *p) {
    Scratch *s = p;
    for (int i = 0; i < THREAD_SCRATCH_SLOTS; i++) free(s->buf[i]);
    free(s);
}

static void scratch_key(void) {
    if (pthread_key_create(&g_key, scratch_free) != 0) DIE("cannot create a thread-specific key");
}

void *thread_scratch(ThreadScratchSlot slot, size_t bytes) {
    if ((unsigned)slot >= THREAD_SCRATCH_SLOTS) DIE("thread_scratch: slot %d", (int)slot);
    pthread_once(&g_once, scratch_key);
    Scratch *s = pthread_getspecific(g_key);
    if (!s) {
        s = xcalloc(1, sizeof *s);
        if (pthread_setspecific(g_key, s) != 0) DIE("cannot keep a thread's scratch");
    }
    if (bytes > s->cap[slot] || !s->buf[slot]) {
        free(s->buf[slot]);
        s->buf[slot] = xaligned_alloc(bytes ? bytes : 1);
        s->cap[slot] = bytes;
    }
    return s->buf[slot];
}
