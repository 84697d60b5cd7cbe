/* fuzz_serve_request.c — the body of `POST /v1/predict` as glue serve reads
 * it (serve/request.c): untrusted bytes from the network. Byte 0 picks the
 * limits (so the 413 paths are reached with small inputs); the rest is the
 * body. Contract: a request of 1..max_texts non-empty valid UTF-8 texts
 * within max_text bytes (pairs: two each), or 400/413 with a message and
 * nothing allocated; never a crash or a leak. */
#include "serve/request.h"
#include "text/utf8.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void check_text(const char *s, size_t max) {
    size_t n = s ? strlen(s) : 0;
    if (!s || n == 0 || n > max || !utf8_valid(s, n)) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    ServeLimits lim = {.max_body = data[0] & 1 ? 64 : 1 << 20, .max_text = data[0] & 2 ? 4 : 20000,
                       .max_texts = data[0] & 4 ? 2 : 1024};
    ServeRequest r;
    char err[256];
    err[0] = '\0';
    int rc = serve_request_parse((const char *)data + 1, size - 1, &lim, &r, err, sizeof err);
    if (rc == 0) {
        if (r.n < 1 || r.n > lim.max_texts || !r.a || (r.model && !r.model[0])) abort();
        for (int i = 0; i < r.n; i++) {
            check_text(r.a[i], lim.max_text);
            if (r.b) check_text(r.b[i], lim.max_text);
        }
        serve_request_free(&r);
    } else if ((rc != 400 && rc != 413) || !err[0] || r.a || r.b || r.model || r.n) {
        abort();
    }
    return 0;
}
