/* request.h — the body of `POST /v1/predict` (glue serve), checked before any
 * model sees it:
 *   {"texts": ["a text", ...]}                  single texts
 *   {"pairs": [["text a", "text b"], ...]}      pairs
 * with an optional "model": NAME (which served model; needed when there are
 * several). Every text is a non-empty UTF-8 string without NUL; the body, each
 * text and the number of texts are bounded (ServeLimits). Untrusted bytes:
 * any input gives a request or one message and an HTTP status, never a crash
 * (tests/fuzz/fuzz_serve_request.c). */
#ifndef GLUE_SERVE_REQUEST_H
#define GLUE_SERVE_REQUEST_H

#include <stddef.h>

typedef struct ServeLimits {
    size_t max_body;   /* bytes of a request body */
    size_t max_text;   /* bytes of one text */
    int max_texts;     /* texts (or pairs) in one request */
} ServeLimits;

typedef struct ServeRequest {
    char *model;       /* "model", or NULL when not given */
    int n;             /* texts, >= 1 */
    char **a, **b;     /* (n) texts; b (n) second texts of pairs, NULL for single texts */
} ServeRequest;

/* Parses body (len bytes, not NUL-terminated) into *out. 0, or the HTTP status
 * (400 malformed: bad JSON or more after it, wrong types, an empty list, invalid
 * UTF-8, a NUL; 413 too
 * large) with what was wrong in err (cap bytes), *out then empty. */
int serve_request_parse(const char *body, size_t len, const ServeLimits *lim, ServeRequest *out, char *err,
                        size_t cap);
void serve_request_free(ServeRequest *r);

#endif
