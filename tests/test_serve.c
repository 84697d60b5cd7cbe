/* test_serve.c — `glue serve` end to end: trains a fastText run on single
 * texts and a TextCNN run on pairs with the glue binary under test, then
 * tests/serve/test_serve.py (with /usr/bin/python3) drives the server: the
 * endpoints, every bad-request class, batching, a full queue, a stalled
 * client and the SIGTERM drain (see that file). And the options' ranges, and
 * a request body's parse (serve/request.h). */
#include "serve/request.h"
#include "serve/server.h"
#include "tests/capture.h"
#include "tests/cli_fixture.h"
#include "tests/test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TEST(serve_endpoints_limits_and_drain) {
    CliFixture f;
    if (cli_fixture_open(&f) != 0) return;
    CHECK(cli_fixture_two_class(&f, "days.tsv", 60) == 0);
    const char *pairs = "text_a\ttext_b\tlabel\nit was sunny\tthe sky was clear\tsame\nit was icy\tthe sun was out\tother\n"
                        "a warm day\ta mild day\tsame\na cold day\ta bright day\tother\n";
    CHECK(cli_fixture_write(&f, "pairs.tsv", pairs, -1) == 0);
    int st;
    char *out = cli_fixture_glue(&f, "finetune --train days.tsv --dev days.tsv --model fasttext --set bucket=10000 "
                                     "--set dim=16 --epochs 2 --out days --threads 1", &st);
    CHECK_MSG(st == 0, "%s", out);
    free(out);
    out = cli_fixture_glue(&f, "finetune --train pairs.tsv --dev pairs.tsv --model textcnn --epochs 1 --out pairs --threads 1",
                           &st);
    CHECK_MSG(st == 0, "%s", out);
    free(out);
    char cmd[4096], days[512], pair[512];
    cli_fixture_path(&f, "days", days, sizeof days);
    cli_fixture_path(&f, "pairs", pair, sizeof pair);
    snprintf(cmd, sizeof cmd, "timeout 300 /usr/bin/python3 tests/serve/test_serve.py '%s' '%s' '%s' 2>&1", cli_fixture_bin(),
             days, pair);
    out = test_run(cmd, &st);
    CHECK_MSG(st == 0 && strstr(out, "serve: all checks passed"), "exit %d:\n%s", st, out);
    free(out);
    cli_fixture_close(&f);
}

/* Option values out of their range are refused before any model is opened
 * (exit 2): they used to be narrowed first, so --max-body -5 became a limit of
 * 2^64 bytes, --max-texts 5000000000 705032704, --drain-seconds nan a drain
 * that never waited, and --run =DIR served a model no request could name. A
 * --max-text beyond what any body can carry served (the warm-up allocated
 * 100 GB and aborted). */
TEST(serve_options_out_of_range_refused) {
    CliFixture f;
    if (cli_fixture_open(&f) != 0) return;
    static const struct { const char *opt, *says; } BAD[] = {
        {"--max-body -5", "--max-body 16..1073741824"}, {"--max-body 2000000000", "--max-body 16..1073741824"},
        {"--max-text -1", "--max-text >= 1"},           {"--max-texts 5000000000", "--max-texts 1..2147483647"},
        {"--drain-seconds nan", "--drain-seconds >= 0"}, {"--timeout 99999999999", "--timeout"},
        {"--workers 4294967297", "--workers 1..64"},    {"--max-batch 4294967297", "--max-batch 1..2147483647"},
        {"--max-connections -4294967295", "--max-connections"},
    };
    char args[256];
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        snprintf(args, sizeof args, "serve --run nowhere --port 0 %s", BAD[i].opt);
        cli_fixture_says(&f, args, 2, BAD[i].says);
    }
    CHECK(cli_fixture_two_class(&f, "days.tsv", 20) == 0);
    cli_fixture_says(&f, "finetune --train days.tsv --dev days.tsv --model fasttext --set bucket=1000 --set dim=8 "
                         "--epochs 1 --out days --threads 1", 0, NULL);
    /* Each under a timeout: a server that starts stops on SIGTERM, exit 0,
     * also when the signal comes during the warm-up (about a second with a
     * 1 MiB text): it used to die of it, exit 143, and so did a server that
     * got timeout's second SIGTERM (to the process group) on an OpenBLAS or
     * OpenMP thread. */
    static const struct { const char *opts, *after; int want; const char *says; } RUNS[] = {
        {"--run =days", "5", 2, "the model's name is empty"},
        /* serves: the warm-up's text is at most a body long */
        {"--run days --max-text 99999999999", "5", 0, "http://127.0.0.1:"},
        {"--run days --max-text 99999999999", "0.4", 0, "glue serve: stopped"},
    };
    for (size_t i = 0; i < sizeof RUNS / sizeof RUNS[0]; i++) {
        char cmd[1024];
        snprintf(cmd, sizeof cmd, "cd '%s' && timeout --preserve-status -s TERM %s '%s' serve %s --port 0 --threads 1 2>&1",
                 f.dir, RUNS[i].after, cli_fixture_bin(), RUNS[i].opts);
        int st;
        char *out = test_run(cmd, &st);
        CHECK_MSG(st == RUNS[i].want && strstr(out, RUNS[i].says), "serve %s (SIGTERM after %s s): exit %d:\n%s",
                  RUNS[i].opts, RUNS[i].after, st, out);
        free(out);
    }
    cli_fixture_close(&f);
}

/* A request body is one JSON object and its texts hold no NUL: cJSON stops
 * after the first value ('{...}{...}' and '{...} junk' were answered for the
 * first object) and decodes \u0000 (or takes a raw NUL byte) into a string
 * that then ended there ("a\u0000b" was predicted as "a"). */
TEST(serve_request_one_object_without_nul) {
#define BODY(s) s, sizeof s - 1   /* its bytes, NULs included */
    const ServeLimits lim = {.max_body = 4096, .max_text = 100, .max_texts = 8};
    static const struct { const char *body; size_t len; int code; const char *says; } CASES[] = {
        {BODY("{\"texts\": [\"a\\u0000b\"]}"), 400, "NUL"},
        {BODY("{\"texts\": [\"a\\u0000\"]}"), 400, "NUL"},
        {BODY("{\"texts\": [\"a\0b\"]}"), 400, "NUL"},
        {BODY("{\"texts\": [\"ab\"]}\0junk"), 400, "NUL"},
        {BODY("{\"texts\": [\"ab\"]}{\"texts\": [\"cd\"]}"), 400, "more after the object"},
        {BODY("{\"texts\": [\"ab\"]} junk"), 400, "more after the object"},
        /* still fine: a backslash before u0000, whitespace after the object */
        {BODY("{\"texts\": [\"a\\\\u0000b\"]}"), 0, NULL},
        {BODY(" {\"texts\": [\"ab\"]} \r\n\t"), 0, NULL},
    };
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        ServeRequest r;
        char err[256] = "";
        int code = serve_request_parse(CASES[i].body, CASES[i].len, &lim, &r, err, sizeof err);
        CHECK_MSG(code == CASES[i].code && (!CASES[i].says || strstr(err, CASES[i].says)), "case %zu: %d '%s'", i, code,
                  err);
        if (code == 0) CHECK(r.n == 1 && strlen(r.a[0]) >= 2);
        serve_request_free(&r);
    }
#undef BODY
}

/* A port another server holds: the refusal says why in glue's own words and
 * nothing else is printed (libmicrohttpd's "Failed to bind to port 0: Address
 * already in use" came first, naming port 0 of a port it was given). */
TEST(serve_port_in_use_says_why) {
    ServeConfig cfg = {.host = "127.0.0.1", .port = 0, .limits = {.max_body = 4096, .max_text = 100, .max_texts = 8},
                       .timeout_s = 5, .max_connections = 4, .workers = 1, .max_batch = 1, .max_wait_ms = 1,
                       .max_pending = 4};
    char err[512] = "";
    Server *a = server_start(NULL, 0, &cfg, err, sizeof err);
    if (!CHECK_MSG(a != NULL, "the first server did not start: %s", err)) return;
    cfg.port = server_port(a);
    StderrCapture cap;
    stderr_capture_begin(&cap);
    Server *b = server_start(NULL, 0, &cfg, err, sizeof err);
    char *said = stderr_capture_end(&cap);
    char want[128];
    snprintf(want, sizeof want, "cannot listen on 127.0.0.1:%d: Address already in use", cfg.port);
    CHECK_MSG(!b && strstr(err, want), "the second server: %s", err);
    CHECK_MSG(said && !said[0], "printed besides glue's message: %s", said ? said : "");
    free(said);
    if (b) server_stop(b);
    server_stop(a);
}
