/* server.h — the HTTP side of `glue serve`, on libmicrohttpd (one thread per
 * connection, so a slow client holds only its own connection thread, never
 * an inference thread; it is dropped after timeout_s of silence):
 *   POST /v1/predict   {"texts": [...]} or {"pairs": [[a, b], ...]} [, "model": NAME]
 *                      -> {"model", "kind", "task", "version", "predictions": [
 *                          {"label", "probabilities": {label: p}} | {"score"}
 *                          | multi-label: {"labels": [...], "probabilities"}]}
 *   GET  /v1/models    every served model: name, kind, task, labels, pair,
 *                      regression, multi_label, version
 *   GET  /healthz      {"status": "ok"} (503 "draining" after SIGTERM)
 *   GET  /metrics      Prometheus text (serve/metrics.h)
 * Errors are {"error": what, "status": code}: 400 malformed request, 404
 * unknown path or model, 405 wrong method, 413 too large, 503 queue full or
 * draining, 500 a model failed. */
#ifndef GLUE_SERVE_SERVER_H
#define GLUE_SERVE_SERVER_H

#include "include/glue.h"
#include "serve/request.h"

#include <stddef.h>

typedef struct ServeModel {
    const char *name;      /* what requests call it ("model") */
    glue_model *model;
    char version[32];      /* "crc32:xxxxxxxx" of its checkpoint: which weights answered */
} ServeModel;

typedef struct ServeConfig {
    const char *host;      /* an IPv4 address to listen on */
    int port;              /* 0: any free port (server_port says which) */
    ServeLimits limits;
    int timeout_s;         /* an idle or slow connection is closed after this */
    int max_connections;
    int workers, max_batch, max_wait_ms;   /* serve/batcher.h */
    long max_pending;
} ServeConfig;

typedef struct Server Server;

/* Starts listening. NULL with the reason in err (cap bytes). */
Server *server_start(const ServeModel *models, int n, const ServeConfig *cfg, char *err, size_t cap);
int server_port(const Server *s);
/* Stops accepting connections and waits (up to timeout_s) until every
 * request being answered has been. Returns how many were still unanswered. */
int server_drain(Server *s, double timeout_s);
/* Closes every connection, stops the inference threads and frees s. */
void server_stop(Server *s);

#endif
