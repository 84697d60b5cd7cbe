/* server.c — glue serve's HTTP endpoints on libmicrohttpd (see server.h). */
#include "serve/server.h"

#include "core/common.h"
#include "serve/batcher.h"
#include "serve/metrics.h"

#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct Server {
    struct MHD_Daemon *daemon;
    const ServeModel *models;
    int num_models;
    ServeConfig cfg;
    Batcher *batcher;
    ServeMetrics metrics;
    atomic_int in_flight, draining;
    atomic_int running;       /* started: libmicrohttpd's messages go to stderr from then on */
    char start_error[256];    /* its last message before that (why the start failed) */
};

/* One request's state across libmicrohttpd's calls (its body arrives in pieces). */
typedef struct Conn {
    char *body;
    size_t len, cap;
    int too_big;
    double start;
} Conn;

static enum MHD_Result server_send(Server *s, struct MHD_Connection *c, ServeEndpoint ep, const Conn *st, int code,
                                   char *body, const char *type) {
    struct MHD_Response *r = MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_FREE);
    MHD_add_response_header(r, "Content-Type", type);
    enum MHD_Result ok = MHD_queue_response(c, (unsigned)code, r);
    MHD_destroy_response(r);
    metrics_request(&s->metrics, ep, code, now_seconds() - st->start);
    return ok;
}

static enum MHD_Result server_json(Server *s, struct MHD_Connection *c, ServeEndpoint ep, const Conn *st, int code,
                                   cJSON *j) {
    char *text = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    size_t n = strlen(text);
    char *body = xmalloc(n + 2);   /* cJSON's allocation is not ours to hand to libmicrohttpd's free */
    memcpy(body, text, n);
    memcpy(body + n, "\n", 2);
    cJSON_free(text);
    return server_send(s, c, ep, st, code, body, "application/json");
}

static enum MHD_Result server_error(Server *s, struct MHD_Connection *c, ServeEndpoint ep, const Conn *st, int code,
                                    const char *what) {
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "error", what);
    cJSON_AddNumberToObject(j, "status", code);
    return server_json(s, c, ep, st, code, j);
}

static cJSON *server_model_json(const ServeModel *sm) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "model", sm->name);
    cJSON_AddStringToObject(o, "kind", glue_model_kind(sm->model));
    cJSON_AddStringToObject(o, "task", glue_task(sm->model));
    cJSON_AddStringToObject(o, "version", sm->version);
    return o;
}

static enum MHD_Result server_models(Server *s, struct MHD_Connection *c, const Conn *st) {
    cJSON *j = cJSON_CreateObject(), *arr = cJSON_AddArrayToObject(j, "models");
    for (int i = 0; i < s->num_models; i++) {
        const ServeModel *sm = &s->models[i];
        cJSON *o = server_model_json(sm), *labels = cJSON_AddArrayToObject(o, "labels");
        for (int k = 0; k < glue_num_labels(sm->model); k++)
            cJSON_AddItemToArray(labels, cJSON_CreateString(glue_label(sm->model, k)));
        cJSON_AddBoolToObject(o, "pair", glue_is_pair(sm->model));
        cJSON_AddBoolToObject(o, "regression", glue_is_regression(sm->model));
        cJSON_AddBoolToObject(o, "multi_label", glue_is_multi_label(sm->model));
        cJSON_AddItemToArray(arr, o);
    }
    return server_json(s, c, EP_MODELS, st, 200, j);
}

/* The model a request names (or the only one); NULL with the status and message. */
static const ServeModel *server_pick(const Server *s, const ServeRequest *r, int *code, char *err, size_t cap) {
    if (!r->model && s->num_models == 1) return &s->models[0];
    for (int i = 0; r->model && i < s->num_models; i++)
        if (strcmp(r->model, s->models[i].name) == 0) return &s->models[i];
    *code = r->model ? 404 : 400;
    snprintf(err, cap, r->model ? "no model named \"%.100s\" (GET /v1/models lists them)"
                                : "%.0sseveral models are served: name one with \"model\" (GET /v1/models)",
             r->model ? r->model : "");
    return NULL;
}

/* The answer of a predicted request: p and predicted as glue_predict gives them. */
static cJSON *server_predictions(const ServeModel *sm, const ServeRequest *r, const float *p,
                                 const unsigned char *predicted) {
    cJSON *j = server_model_json(sm), *arr = cJSON_AddArrayToObject(j, "predictions");
    int k = glue_num_labels(sm->model);
    for (int i = 0; i < r->n; i++) {
        const float *row = p + (size_t)i * (size_t)k;
        const unsigned char *set = predicted + (size_t)i * (size_t)k;
        cJSON *o = cJSON_CreateObject();
        if (glue_is_regression(sm->model)) {
            cJSON_AddNumberToObject(o, "score", row[0]);
        } else {
            /* a multi-label model's every predicted label (maybe none) under its run's rule, as glue predict */
            cJSON *labels = glue_is_multi_label(sm->model) ? cJSON_AddArrayToObject(o, "labels") : NULL;
            for (int l = 0; l < k; l++) {
                if (!set[l]) continue;
                if (labels) cJSON_AddItemToArray(labels, cJSON_CreateString(glue_label(sm->model, l)));
                else cJSON_AddStringToObject(o, "label", glue_label(sm->model, l));
            }
            cJSON *probs = cJSON_AddObjectToObject(o, "probabilities");
            for (int l = 0; l < k; l++) cJSON_AddNumberToObject(probs, glue_label(sm->model, l), row[l]);
        }
        cJSON_AddItemToArray(arr, o);
    }
    return j;
}

static enum MHD_Result server_predict(Server *s, struct MHD_Connection *c, const Conn *st) {
    char err[GLUE_ERROR_MAX];
    ServeRequest r;
    if (st->too_big) {
        snprintf(err, sizeof err, "body of more than %zu bytes", s->cfg.limits.max_body);
        return server_error(s, c, EP_PREDICT, st, 413, err);
    }
    int code = serve_request_parse(st->body ? st->body : "", st->len, &s->cfg.limits, &r, err, sizeof err);
    if (code) return server_error(s, c, EP_PREDICT, st, code, err);
    const ServeModel *sm = server_pick(s, &r, &code, err, sizeof err);
    if (sm && glue_is_pair(sm->model) != (r.b != NULL)) {
        code = 400;
        snprintf(err, sizeof err, "model \"%s\" takes %s", sm->name,
                 glue_is_pair(sm->model) ? "pairs: {\"pairs\": [[a, b], ...]}" : "single texts: {\"texts\": [...]}");
        sm = NULL;
    }
    enum MHD_Result ok;
    if (!sm) {
        ok = server_error(s, c, EP_PREDICT, st, code, err);
    } else {
        BatchJob job = {.model = sm->model, .n = r.n, .a = (const char *const *)r.a, .b = (const char *const *)r.b};
        job.probs = xmalloc(sizeof(float) * (size_t)r.n * (size_t)glue_num_labels(sm->model));
        job.predicted = xmalloc((size_t)r.n * (size_t)glue_num_labels(sm->model));
        if (batcher_run(s->batcher, &job) != 0)
            ok = server_error(s, c, EP_PREDICT, st, 503, atomic_load(&s->draining) ? "shutting down"
                                                                    : "too many texts waiting: try again shortly");
        else if (job.status != GLUE_OK)
            ok = server_error(s, c, EP_PREDICT, st, job.status == GLUE_ERR_DATA ? 400 : 500, job.error);
        else
            ok = server_json(s, c, EP_PREDICT, st, 200, server_predictions(sm, &r, job.probs, job.predicted));
        free(job.probs);
        free(job.predicted);
    }
    serve_request_free(&r);
    return ok;
}

/* Appends a piece of the body, or notes that it is too large (and drops it). */
static void server_body(Server *s, Conn *st, const char *data, size_t n) {
    if (st->too_big || st->len + n > s->cfg.limits.max_body) {
        st->too_big = 1;
        return;
    }
    if (st->len + n + 1 > st->cap) {
        st->cap = 2 * (st->len + n) + 1;
        st->body = xrealloc(st->body, st->cap);
    }
    memcpy(st->body + st->len, data, n);
    st->len += n;
}

static enum MHD_Result server_route(Server *s, struct MHD_Connection *c, const char *url, const char *method,
                                    const Conn *st) {
    static const struct { const char *path, *method; ServeEndpoint ep; } ROUTES[] = {
        {"/v1/predict", "POST", EP_PREDICT}, {"/v1/models", "GET", EP_MODELS},
        {"/healthz", "GET", EP_HEALTHZ},     {"/metrics", "GET", EP_METRICS}};
    for (size_t i = 0; i < sizeof ROUTES / sizeof ROUTES[0]; i++) {
        if (strcmp(url, ROUTES[i].path) != 0) continue;
        if (strcmp(method, ROUTES[i].method) != 0) {
            char what[128];
            snprintf(what, sizeof what, "%s takes %s", ROUTES[i].path, ROUTES[i].method);
            return server_error(s, c, ROUTES[i].ep, st, 405, what);
        }
        switch (ROUTES[i].ep) {
        case EP_PREDICT: return server_predict(s, c, st);
        case EP_MODELS: return server_models(s, c, st);
        case EP_METRICS:
            return server_send(s, c, EP_METRICS, st, 200,
                               metrics_text(&s->metrics, batcher_pending(s->batcher), atomic_load(&s->draining)),
                               "text/plain; version=0.0.4");
        default: {
            int draining = atomic_load(&s->draining);
            cJSON *j = cJSON_CreateObject();
            cJSON_AddStringToObject(j, "status", draining ? "draining" : "ok");
            return server_json(s, c, EP_HEALTHZ, st, draining ? 503 : 200, j);
        }
        }
    }
    return server_error(s, c, EP_OTHER, st, 404, "no such path (POST /v1/predict, GET /v1/models, /healthz, /metrics)");
}

static enum MHD_Result server_handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                     const char *version, const char *data, size_t *data_size, void **con_cls) {
    Server *s = cls;
    Conn *st = *con_cls;
    if (!st) {   /* the headers are in: the request starts */
        st = xcalloc(1, sizeof *st);
        st->start = now_seconds();
        *con_cls = st;
        atomic_fetch_add(&s->in_flight, 1);
        const char *length = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        if (length && strtoull(length, NULL, 10) > s->cfg.limits.max_body) st->too_big = 1;
        if (st->too_big && strcmp(url, "/v1/predict") == 0) return server_predict(s, c, st);   /* never read it */
        return MHD_YES;
    }
    if (*data_size) {
        server_body(s, st, data, *data_size);
        *data_size = 0;
        return MHD_YES;
    }
    return server_route(s, c, url, method, st);
}

static void server_completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode why) {
    Server *s = cls;
    Conn *st = *con_cls;
    if (!st) return;
    free(st->body);
    free(st);
    *con_cls = NULL;
    atomic_fetch_sub(&s->in_flight, 1);
}

/* libmicrohttpd's messages. Before the server runs, the last is kept for
 * glue's own refusal: printed as it came, it said "Failed to bind to port 0"
 * of the port it was given, beside glue's message. */
static void server_log(void *cls, const char *fmt, va_list ap) {
    Server *s = cls;
    char line[256];
    vsnprintf(line, sizeof line, fmt, ap);
    line[strcspn(line, "\n")] = '\0';
    if (atomic_load(&s->running)) {
        fprintf(stderr, "glue serve: %s\n", line);
        return;
    }
    const char *why = strrchr(line, ':');   /* "Failed to bind to port 0: Address already in use" */
    snprintf(s->start_error, sizeof s->start_error, "%s", why ? why + 2 : line);
}

Server *server_start(const ServeModel *models, int n, const ServeConfig *cfg, char *err, size_t cap) {
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)cfg->port)};
    if (inet_pton(AF_INET, cfg->host, &addr.sin_addr) != 1) {
        snprintf(err, cap, "--host %s: not an IPv4 address (e.g. 127.0.0.1, or 0.0.0.0 for every interface)", cfg->host);
        return NULL;
    }
    Server *s = xcalloc(1, sizeof *s);
    s->models = models;
    s->num_models = n;
    s->cfg = *cfg;
    s->batcher = batcher_start(cfg->workers, cfg->max_batch, cfg->max_wait_ms, cfg->max_pending, &s->metrics);
    s->daemon = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ITC |
                                     MHD_USE_ERROR_LOG,
                                 0, NULL, NULL, server_handle, s, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
                                 MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)cfg->timeout_s, MHD_OPTION_CONNECTION_LIMIT,
                                 (unsigned)cfg->max_connections, MHD_OPTION_NOTIFY_COMPLETED, server_completed, s,
                                 MHD_OPTION_EXTERNAL_LOGGER, server_log, s, MHD_OPTION_END);
    if (!s->daemon) {
        snprintf(err, cap, "cannot listen on %s:%d: %s", cfg->host, cfg->port,
                 s->start_error[0] ? s->start_error : "in use, or not an address of this machine?");
        batcher_stop(s->batcher);
        free(s);
        return NULL;
    }
    atomic_store(&s->running, 1);
    return s;
}

int server_port(const Server *s) {
    const union MHD_DaemonInfo *i = MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_BIND_PORT);
    return i ? i->port : 0;
}

int server_drain(Server *s, double timeout_s) {
    atomic_store(&s->draining, 1);
    MHD_socket fd = MHD_quiesce_daemon(s->daemon);   /* no new connections from here on */
    if (fd != MHD_INVALID_SOCKET) close(fd);
    double until = now_seconds() + timeout_s;
    while (atomic_load(&s->in_flight) > 0 && now_seconds() < until) usleep(10000);
    return atomic_load(&s->in_flight);
}

void server_stop(Server *s) {
    MHD_stop_daemon(s->daemon);
    batcher_stop(s->batcher);
    free(s);
}
