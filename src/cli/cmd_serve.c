/* cmd_serve.c — `glue serve --run DIR | --run NAME=DIR ... [--host H] [--port P]`:
 * trained runs behind HTTP (serve/server.h: the endpoints, limits and
 * errors; serve/batcher.h: dynamic batching on fixed inference threads).
 * Each model is opened through libglue (include/glue.h), as any program
 * would. SIGTERM or SIGINT: stop accepting, answer what is in flight, exit 0. */
#include "cli/commands.h"
#include "core/args.h"
#include "core/common.h"
#include "core/crc32.h"
#include "core/files.h"
#include "core/interrupt.h"
#include "serve/server.h"

#include <limits.h>
#include <pthread.h>
#include <signal.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define SERVE_USAGE                                                                                          \
    "glue serve --run DIR | --run NAME=DIR ... [--host 127.0.0.1] [--port 8080] [--threads N] [--workers N]\n" \
    "       [--max-batch 64] [--max-wait-ms 5] [--max-pending 4096] [--max-body BYTES] [--max-text BYTES]\n"  \
    "       [--max-texts 1024] [--timeout S] [--max-connections 256] [--drain-seconds 30]"

enum { SERVE_MAX_MODELS = 16 };
/* --max-body's largest value (1 GiB): each connection may hold a body this
 * large, and the warm-up builds a text of up to this size. */
#define SERVE_MAX_BODY (1L << 30)

/* "crc32:xxxxxxxx" of the model's checkpoint into sm->version. */
static void serve_version(const char *dir, ServeModel *sm) {
    char ckpt[4200];
    struct stat st;
    uint32_t crc = 0;
    if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode)) file_join(dir, "model.ckpt", ckpt, sizeof ckpt);
    else snprintf(ckpt, sizeof ckpt, "%s", dir);
    if (crc32_file(ckpt, 0, -1, &crc) != 0) crc = 0;
    snprintf(sm->version, sizeof sm->version, "crc32:%08x", crc);
}

/* Opens every --run (NAME=DIR; a bare DIR is named after its last component). */
static int serve_open(const char *const *runs, int n, int threads, ServeModel *models) {
    for (int i = 0; i < n; i++) {
        const char *eq = strchr(runs[i], '='), *dir = eq ? eq + 1 : runs[i];
        char err[GLUE_ERROR_MAX], *name = eq ? xstrndup(runs[i], (size_t)(eq - runs[i])) : NULL;
        if (!name) {   /* runs/sst2/bert -> "bert"; trailing slashes ignored */
            char *copy = xstrdup(dir), *end = copy + strlen(copy);
            while (end > copy + 1 && end[-1] == '/') *--end = '\0';
            char *slash = strrchr(copy, '/');
            name = xstrdup(slash ? slash + 1 : copy);
            free(copy);
        }
        models[i].name = name;
        if (!name[0]) {   /* no request could name it */
            user_error_usage("--run NAME=DIR", "--run %s: the model's name is empty", runs[i]);
            return -1;
        }
        for (int j = 0; j < i; j++)
            if (strcmp(models[j].name, name) == 0) {
                user_error_usage("name them: --run NAME=DIR", "two models named '%s'", name);
                return -1;
            }
        int st = glue_open(dir, threads, &models[i].model, err, sizeof err);
        if (st != GLUE_OK) {
            if (st == GLUE_ERR_IO) user_error_io(NULL, "%s", err);
            else user_error_data(NULL, "%s", err);
            return -1;
        }
        serve_version(dir, &models[i]);
    }
    return 0;
}

/* One prediction per model of the largest batch the server runs, every text
 * as long as a request may send, before the first request: each model's
 * working memory grows to its largest size here, not under load (resident
 * memory then stays flat while serving, and the first requests do not pay
 * for the allocations). 0, or -1 after a message. */
static int serve_warm(ServeModel *models, int n, int max_batch, size_t max_text) {
    size_t len = max_text - max_text % 5;
    char *text = xmalloc(len + 1);
    for (size_t i = 0; i < len; i++) text[i] = "warm "[i % 5];
    text[len] = '\0';
    const char **texts = xmalloc(sizeof *texts * (size_t)max_batch);
    for (int i = 0; i < max_batch; i++) texts[i] = text;
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        glue_model *m = models[i].model;
        float *probs = xmalloc(sizeof *probs * (size_t)max_batch * (size_t)glue_num_labels(m));
        char err[GLUE_ERROR_MAX];
        if (glue_predict(m, texts, glue_is_pair(m) ? texts : NULL, max_batch, probs, NULL, err, sizeof err) != GLUE_OK) {
            user_error_data(NULL, "model '%s' fails on a batch of %d texts of %zu bytes (--max-batch, --max-text): %s",
                            models[i].name, max_batch, len, err);
            rc = -1;
        }
        free(probs);
    }
    free(texts);
    free(text);
#ifdef __GLIBC__
    malloc_trim(0);   /* what the warm-up freed goes back to the system, not kept as resident */
#endif
    return rc;
}

/* serve_open and serve_warm, on a thread of their own that ends with them.
 * libgomp keeps a pool of OpenMP workers for every thread that has run a
 * parallel region, and once it manages more threads than there are cores it
 * cuts how long idle workers spin before sleeping: a warm-up on this (the
 * main) thread left a pool here beside the inference thread's, and a batch of
 * 64 SST-2 sentences then took 60 ms instead of 45 (2 cores, BERT-mini: the
 * workers slept and were woken at every parallel region). The pool of a
 * thread that ends goes with it. */
typedef struct {
    const char *const *runs;
    int n, threads, max_batch, rc;
    size_t max_text;
    ServeModel *models;
} ServeReady;

static void *serve_ready_thread(void *arg) {
    ServeReady *r = arg;
    r->rc = serve_open(r->runs, r->n, r->threads, r->models) != 0 ||
            serve_warm(r->models, r->n, r->max_batch, r->max_text) != 0;
    return NULL;
}

static int serve_ready(ServeReady *r) {
    pthread_t t;
    if (pthread_create(&t, NULL, serve_ready_thread, r) != 0) DIE("cannot start a thread");
    pthread_join(t, NULL);
    return r->rc;
}

static void serve_close(ServeModel *models, int n) {
    for (int i = 0; i < n; i++) {
        glue_close(models[i].model);
        free((char *)models[i].name);
    }
}

/* The options into cfg; 0, or EXIT_USAGE after a message. */
static int serve_parse(int argc, char **argv, ServeConfig *cfg, const char **runs, int *nruns, int *threads,
                       double *drain) {
    Args a;
    args_init(&a, argc, argv);
    *nruns = args_strs(&a, "--run", runs, SERVE_MAX_MODELS);
    cfg->host = args_str(&a, "--host", "127.0.0.1");
    long port = args_int(&a, "--port", 8080);
    *threads = (int)args_threads(&a, 0);
    /* Read as longs and checked before they are narrowed: --max-body -5 had
     * become a limit of 2^64 bytes and --max-texts 5000000000 705032704. */
    long workers = args_int(&a, "--workers", 1), max_batch = args_int(&a, "--max-batch", 64);
    long max_wait = args_int(&a, "--max-wait-ms", 5), max_pending = args_int(&a, "--max-pending", 4096);
    long max_body = args_int(&a, "--max-body", 1 << 20), max_text = args_int(&a, "--max-text", 20000);
    long max_texts = args_int(&a, "--max-texts", 1024), timeout = args_int(&a, "--timeout", 10);
    long max_conns = args_int(&a, "--max-connections", 256);
    *drain = args_double(&a, "--drain-seconds", 30);
    const char *pos[1];
    int npos = args_positional(&a, pos, 1);
    int rc = args_finish(&a, SERVE_USAGE);
    if (rc) return rc;
    const char *bad = npos ? "serve takes no positional arguments (--run DIR)"
                    : *nruns == 0 ? "give the model to serve: --run DIR"
                    : port < 0 || port > 65535 ? "--port: 0..65535 (0: any free port)"
                    : workers < 1 || workers > 64 ? "--workers 1..64"
                    : max_batch < 1 || max_batch > INT_MAX || max_wait < 0 || max_wait > 10000
                        ? "--max-batch 1..2147483647, --max-wait-ms 0..10000"
                    : max_pending < 1 || max_body < 16 || max_body > SERVE_MAX_BODY || max_text < 1 || max_texts < 1 ||
                            max_texts > INT_MAX
                        ? "--max-pending >= 1, --max-texts 1..2147483647, --max-body 16..1073741824, --max-text >= 1"
                    : timeout < 1 || timeout > INT_MAX || max_conns < 1 || max_conns > INT_MAX || !(*drain >= 0)
                        ? "--timeout, --max-connections 1..2147483647, --drain-seconds >= 0"
                        : NULL;
    if (bad) {
        user_error_usage(SERVE_USAGE, "%s", bad);
        return EXIT_USAGE;
    }
    cfg->port = (int)port;
    cfg->workers = (int)workers;
    cfg->max_batch = (int)max_batch;
    cfg->max_wait_ms = (int)max_wait;
    cfg->max_pending = max_pending;
    cfg->limits = (ServeLimits){.max_body = (size_t)max_body, .max_text = (size_t)max_text, .max_texts = (int)max_texts};
    cfg->timeout_s = (int)timeout;
    cfg->max_connections = (int)max_conns;
    return 0;
}

int cmd_serve(int argc, char **argv) {
    ServeConfig cfg = {0};
    const char *runs[SERVE_MAX_MODELS];
    int nruns, threads;
    double drain;
    int rc = serve_parse(argc, argv, &cfg, runs, &nruns, &threads, &drain);
    if (rc) return rc;
    /* Recorded from here on, whichever thread the signal lands on. A sigwait
     * behind a signal mask did not do: OpenBLAS and OpenMP start threads
     * before any mask can reach them, and timeout(1)'s second SIGTERM (it
     * signals the command, then its process group) went to one of them and
     * killed the server, exit 143, instead of draining. A signal during the
     * warm-up is answered once the server is up: it starts, drains nothing
     * and stops, exit 0. */
    interrupt_begin();
    ServeModel models[SERVE_MAX_MODELS] = {0};
    /* No text is longer than the body that carries it: --max-text 99999999999
     * had the warm-up allocate 100 GB, and abort. */
    size_t longest = cfg.limits.max_text < cfg.limits.max_body ? cfg.limits.max_text : cfg.limits.max_body;
    ServeReady ready = {.runs = runs, .n = nruns, .threads = threads, .max_batch = cfg.max_batch,
                        .max_text = longest, .models = models};
    if (serve_ready(&ready) != 0) {
        interrupt_end();
        serve_close(models, nruns);
        return EXIT_FAILED;
    }
    char err[512];
    Server *s = server_start(models, nruns, &cfg, err, sizeof err);
    if (!s) {
        user_error_usage(NULL, "%s", err);
        interrupt_end();
        serve_close(models, nruns);
        return EXIT_FAILED;
    }
    fprintf(stderr, "glue serve: http://%s:%d/v1/predict (", cfg.host, server_port(s));
    for (int i = 0; i < nruns; i++)
        fprintf(stderr, "%s%s: %s on %s", i ? ", " : "", models[i].name, glue_model_kind(models[i].model),
                glue_task(models[i].model));
    fprintf(stderr, ")\n");
    int sig = interrupt_wait();
    fprintf(stderr, "glue serve: %s: answering the requests in flight, then stopping\n", sig == SIGTERM ? "SIGTERM" : "SIGINT");
    int left = server_drain(s, drain);
    server_stop(s);
    serve_close(models, nruns);
    if (left) user_warning("%d requests were still unanswered after --drain-seconds %g", left, drain);
    interrupt_end();
    fprintf(stderr, "glue serve: stopped\n");
    return 0;
}
