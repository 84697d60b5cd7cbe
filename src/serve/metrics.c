/* metrics.c — counters and histograms of glue serve (see metrics.h). */
#include "serve/metrics.h"

#include "core/common.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Upper bounds: latency in seconds, batch sizes in texts. */
static const double LATENCY_LE[METRICS_LATENCY_BUCKETS] = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                                           0.1,   0.25,   0.5,   1,    2.5,   10};
static const int BATCH_LE[METRICS_BATCH_BUCKETS] = {1, 2, 4, 8, 16, 32, 64, 128, 256};
static const char *const ENDPOINT[METRICS_ENDPOINTS] = {"/v1/predict", "/v1/models", "/healthz", "/metrics", "other"};
static const int CODE[METRICS_CODES] = {200, 400, 404, 405, 413, 503, 500};

static int code_index(int code) {
    for (int i = 0; i < METRICS_CODES - 1; i++)
        if (CODE[i] == code) return i;
    return METRICS_CODES - 1;   /* 500 and anything else */
}

void metrics_request(ServeMetrics *m, ServeEndpoint ep, int code, double seconds) {
    atomic_fetch_add(&m->requests[ep][code_index(code)], 1);
    int b = 0;
    while (b < METRICS_LATENCY_BUCKETS && seconds > LATENCY_LE[b]) b++;
    atomic_fetch_add(&m->latency[b], 1);
    atomic_fetch_add(&m->latency_us_sum, (long)(seconds * 1e6));
}

void metrics_batch(ServeMetrics *m, int texts) {
    int b = 0;
    while (b < METRICS_BATCH_BUCKETS && texts > BATCH_LE[b]) b++;
    atomic_fetch_add(&m->batch[b], 1);
    atomic_fetch_add(&m->batch_texts, texts);
    atomic_fetch_add(&m->batches, 1);
}

typedef struct { char *s; size_t len, cap; } Text;

static void text_add(Text *t, const char *fmt, ...) {
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int n = vsnprintf(t->s + t->len, t->cap - t->len, fmt, ap);
        va_end(ap);
        if (n >= 0 && (size_t)n < t->cap - t->len) { t->len += (size_t)n; return; }
        t->cap = 2 * t->cap + (size_t)(n > 0 ? n : 0);
        t->s = xrealloc(t->s, t->cap);
    }
}

char *metrics_text(ServeMetrics *m, long pending, int draining) {
    Text t = {.s = xmalloc(4096), .cap = 4096};
    long errors = 0;
    text_add(&t, "# HELP glue_requests_total HTTP requests answered, by endpoint and status code.\n"
                 "# TYPE glue_requests_total counter\n");
    for (int e = 0; e < METRICS_ENDPOINTS; e++)
        for (int c = 0; c < METRICS_CODES; c++) {
            long v = atomic_load(&m->requests[e][c]);
            errors += CODE[c] != 200 ? v : 0;
            if (v) text_add(&t, "glue_requests_total{endpoint=\"%s\",code=\"%d\"} %ld\n", ENDPOINT[e], CODE[c], v);
        }
    text_add(&t, "# HELP glue_request_errors_total Requests answered with a status other than 200.\n"
                 "# TYPE glue_request_errors_total counter\nglue_request_errors_total %ld\n", errors);
    text_add(&t, "# HELP glue_request_duration_seconds Time from a request's headers to its answer.\n"
                 "# TYPE glue_request_duration_seconds histogram\n");
    long cum = 0;
    for (int b = 0; b <= METRICS_LATENCY_BUCKETS; b++) {
        cum += atomic_load(&m->latency[b]);
        if (b < METRICS_LATENCY_BUCKETS) text_add(&t, "glue_request_duration_seconds_bucket{le=\"%g\"} %ld\n", LATENCY_LE[b], cum);
        else text_add(&t, "glue_request_duration_seconds_bucket{le=\"+Inf\"} %ld\n", cum);
    }
    text_add(&t, "glue_request_duration_seconds_sum %.6f\nglue_request_duration_seconds_count %ld\n",
             atomic_load(&m->latency_us_sum) * 1e-6, cum);
    text_add(&t, "# HELP glue_batch_size Texts per inference batch.\n# TYPE glue_batch_size histogram\n");
    cum = 0;
    for (int b = 0; b <= METRICS_BATCH_BUCKETS; b++) {
        cum += atomic_load(&m->batch[b]);
        if (b < METRICS_BATCH_BUCKETS) text_add(&t, "glue_batch_size_bucket{le=\"%d\"} %ld\n", BATCH_LE[b], cum);
        else text_add(&t, "glue_batch_size_bucket{le=\"+Inf\"} %ld\n", cum);
    }
    text_add(&t, "glue_batch_size_sum %ld\nglue_batch_size_count %ld\n", atomic_load(&m->batch_texts),
             atomic_load(&m->batches));
    text_add(&t, "# HELP glue_pending_texts Texts waiting for an inference thread.\n# TYPE glue_pending_texts gauge\n"
                 "glue_pending_texts %ld\n# HELP glue_draining 1 after SIGTERM, while in-flight requests finish.\n"
                 "# TYPE glue_draining gauge\nglue_draining %d\n", pending, draining);
    return t.s;
}
