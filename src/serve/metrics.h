/* metrics.h — what `GET /metrics` reports (Prometheus text format 0.0.4):
 * requests by endpoint and status code, errors, request latency and batch
 * sizes as histograms, pending texts. Updated from many threads at once
 * (atomics, no lock). */
#ifndef GLUE_SERVE_METRICS_H
#define GLUE_SERVE_METRICS_H

#include <stdatomic.h>

enum { METRICS_LATENCY_BUCKETS = 12, METRICS_BATCH_BUCKETS = 9, METRICS_ENDPOINTS = 5, METRICS_CODES = 7 };

typedef struct ServeMetrics {
    atomic_long requests[METRICS_ENDPOINTS][METRICS_CODES];
    atomic_long latency[METRICS_LATENCY_BUCKETS + 1];   /* counts per bucket (+Inf last) */
    atomic_long latency_us_sum;
    atomic_long batch[METRICS_BATCH_BUCKETS + 1];
    atomic_long batch_texts, batches;
} ServeMetrics;

/* The endpoints counted: predict, models, healthz, metrics, other. */
typedef enum { EP_PREDICT, EP_MODELS, EP_HEALTHZ, EP_METRICS, EP_OTHER } ServeEndpoint;

/* One request answered with HTTP status code after seconds. */
void metrics_request(ServeMetrics *m, ServeEndpoint ep, int code, double seconds);
/* One inference batch of texts. */
void metrics_batch(ServeMetrics *m, int texts);
/* The exposition text (caller frees); pending: texts waiting now. */
char *metrics_text(ServeMetrics *m, long pending, int draining);

#endif
