/* threads.c — libglue from many threads (tests only; `make lib-test`, and
 * under ThreadSanitizer `make tsan`): `threads RUN_DIR...`. For each run, one
 * handle predicts each slice [at, NTEXTS) of a fixed set of texts alone (the
 * references: a batch's answers may depend on what else is in it, BERT pads
 * to its longest text), then from THREADS threads at once, each several
 * times over rotating slices: every answer must equal its slice's reference
 * bit for bit. Meanwhile other threads open
 * and close handles of the same runs (no state shared between handles), and
 * the error paths are taken from several threads (each its own message).
 * Exit 0 when all agree. */
#include <glue.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { THREADS = 4, ROUNDS = 3, NTEXTS = 12 };

/* OpenMP threads per call ($GLUE_TEST_OMP_THREADS, default 1). */
static int omp_threads(void) {
    const char *s = getenv("GLUE_TEST_OMP_THREADS");
    return s && atoi(s) > 0 ? atoi(s) : 1;
}

static const char *TEXTS[NTEXTS] = {
    "the day was sunny and warm", "a cold wet morning", "ok", "stormy", "the warm sun came out at noon",
    "rain and wind all day long", "icy", "a bright clear sky over the hills", "grey", "snow", "fine weather",
    "thunder at night"};

typedef struct {
    glue_model *m;
    const char *dir;
    const float *ref;   /* (NTEXTS slices, NTEXTS texts, k) */
    int k, id, failures;
} Job;

static void *predict_job(void *arg) {
    Job *j = arg;
    float p[NTEXTS * GLUE_MAX_LABELS];
    const char *b[NTEXTS];
    char err[GLUE_ERROR_MAX];
    for (int i = 0; i < NTEXTS; i++) b[i] = TEXTS[(i + 1) % NTEXTS];
    for (int r = 0; r < ROUNDS; r++) {
        int at = (j->id + r) % NTEXTS, n = NTEXTS - at;   /* texts [at, NTEXTS) */
        if (glue_predict(j->m, TEXTS + at, glue_is_pair(j->m) ? b + at : NULL, n, p, NULL, err, sizeof err) != GLUE_OK) {
            fprintf(stderr, "thread %d: %s\n", j->id, err);
            j->failures++;
        } else if (memcmp(p, j->ref + (at * NTEXTS + at) * j->k, sizeof(float) * (size_t)(n * j->k)) != 0) {
            fprintf(stderr, "thread %d: %s: predictions differ from the single-threaded ones\n", j->id, j->dir);
            j->failures++;
        }
    }
    return NULL;
}

/* Opens and closes handles, and fails on purpose: messages stay per call. */
static void *open_job(void *arg) {
    Job *j = arg;
    char err[GLUE_ERROR_MAX];
    for (int r = 0; r < ROUNDS; r++) {
        glue_model *m;
        if (glue_open(j->dir, omp_threads(), &m, err, sizeof err) != GLUE_OK) {
            fprintf(stderr, "open %s: %s\n", j->dir, err);
            j->failures++;
            continue;
        }
        const char *bad[1] = {"\xff\xfe"}, *b[1] = {"x"};
        float p[GLUE_MAX_LABELS];
        int st = glue_predict(m, bad, glue_is_pair(m) ? b : NULL, 1, p, NULL, err, sizeof err);
        if (st != GLUE_ERR_DATA || !strstr(err, "invalid UTF-8")) {
            fprintf(stderr, "invalid UTF-8: status %d, %s\n", st, err);
            j->failures++;
        }
        glue_close(m);
        if (glue_open("/nonexistent/run", 1, &m, err, sizeof err) != GLUE_ERR_IO || m || !strstr(err, "/nonexistent/run"))
            j->failures++;
    }
    return NULL;
}

static int check_run(const char *dir) {
    char err[GLUE_ERROR_MAX];
    glue_model *m;
    if (glue_open(dir, omp_threads(), &m, err, sizeof err) != GLUE_OK) return fprintf(stderr, "%s\n", err), 1;
    int k = glue_num_labels(m);
    static float ref[NTEXTS * NTEXTS * GLUE_MAX_LABELS];
    const char *b[NTEXTS];
    for (int i = 0; i < NTEXTS; i++) b[i] = TEXTS[(i + 1) % NTEXTS];
    for (int at = 0; at < NTEXTS; at++)
        if (glue_predict(m, TEXTS + at, glue_is_pair(m) ? b + at : NULL, NTEXTS - at, ref + (at * NTEXTS + at) * k, NULL,
                         err, sizeof err) != GLUE_OK)
            return fprintf(stderr, "%s\n", err), glue_close(m), 1;
    pthread_t th[2 * THREADS];
    Job jobs[2 * THREADS];
    for (int t = 0; t < 2 * THREADS; t++) {
        jobs[t] = (Job){.m = m, .dir = dir, .ref = ref, .k = k, .id = t};
        pthread_create(&th[t], NULL, t < THREADS ? predict_job : open_job, &jobs[t]);
    }
    int failures = 0;
    for (int t = 0; t < 2 * THREADS; t++) {
        pthread_join(th[t], NULL);
        failures += jobs[t].failures;
    }
    glue_close(m);
    printf("%s: %d threads x %d rounds on one handle, %d opening and closing others: %s\n", dir, THREADS, ROUNDS, THREADS,
           failures ? "FAILED (above)" : "answers identical to one thread's");
    return failures != 0;
}

int main(int argc, char **argv) {
    int rc = argc < 2 || glue_api_version() != GLUE_API_VERSION;
    for (int i = 1; i < argc; i++) rc |= check_run(argv[i]);
    return rc;
}
