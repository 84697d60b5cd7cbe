/* cmd_tokenize.c — `glue tokenize`: BERT WordPiece tokens and ids of texts given
 * as arguments or read from stdin (one text a line, "a<TAB>b" with --pair).
 *
 * Without --max-len a single text prints its WordPiece tokens (no [CLS]/[SEP]);
 * with --pair, or with --max-len, the model input "[CLS] a [SEP] (b [SEP])"
 * truncated longest-first, plus segment ids. --json prints one object a line
 * with the fields of ../shared/tests/wordpiece_golden.jsonl.gz. */
#include "cli/commands.h"
#include "core/args.h"
#include "core/common.h"
#include "core/files.h"
#include "text/tokenizer.h"
#include "text/utf8.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#define TOKENIZE_USAGE "glue tokenize [--vocab FILE] [--pair] [--max-len N] [--json] [TEXT...]"
#define TOKENIZE_PAIR_MAX_LEN 128      /* BERT's usual GLUE sequence length */
#define TOKENIZE_MAX_LEN_LIMIT 1000000
#define TOKENIZE_MAX_TEXTS 256

typedef struct {
    Tokenizer *tok;
    int pair, json, max_len;   /* max_len 0: bare WordPiece tokens */
    int *ids, *segments;
    const char **tokens;
    int cap;
    char *clean;               /* a text with invalid bytes made U+FFFD, for JSON */
    size_t clean_cap;
    long texts, cut, longest;  /* inputs, how many --max-len truncated, the longest of those (tokens) */
} TokenizeRun;

static void tokenize_reserve(TokenizeRun *r, int n) {
    if (n <= r->cap) return;
    while (r->cap < n) r->cap = r->cap ? 2 * r->cap : 512;
    r->ids = xrealloc(r->ids, sizeof(int) * (size_t)r->cap);
    r->segments = xrealloc(r->segments, sizeof(int) * (size_t)r->cap);
    r->tokens = xrealloc(r->tokens, sizeof(char *) * (size_t)r->cap);
}

/* Add text as a JSON string; invalid UTF-8 bytes are shown as U+FFFD. */
static void tokenize_add_text(TokenizeRun *r, cJSON *obj, const char *key, const char *s, size_t len) {
    if (3 * len + 1 > r->clean_cap) r->clean = xrealloc(r->clean, r->clean_cap = 3 * len + 1);
    utf8_sanitize(s, len, r->clean);
    cJSON_AddItemToObject(obj, key, cJSON_CreateString(r->clean));
}

static void tokenize_print_json(TokenizeRun *r, const char *a, size_t la, const char *b, size_t lb, int T) {
    cJSON *o = cJSON_CreateObject();
    tokenize_add_text(r, o, b ? "text_a" : "text", a, la);
    if (b) tokenize_add_text(r, o, "text_b", b, lb);
    if (r->max_len) cJSON_AddNumberToObject(o, "max_len", r->max_len);
    cJSON_AddItemToObject(o, "tokens", cJSON_CreateStringArray(r->tokens, T));
    cJSON_AddItemToObject(o, "ids", cJSON_CreateIntArray(r->ids, T));
    if (r->max_len) cJSON_AddItemToObject(o, "segments", cJSON_CreateIntArray(r->segments, T));
    json_print_line(o);
    cJSON_Delete(o);
}

/* Text output: tokens, TAB, ids (TAB, segments). */
static void tokenize_print_text(const TokenizeRun *r, int T) {
    for (int i = 0; i < T; i++) printf("%s%s", i ? " " : "", r->tokens[i]);
    putchar('\t');
    for (int i = 0; i < T; i++) printf(i ? " %d" : "%d", r->ids[i]);
    if (r->max_len) {
        putchar('\t');
        for (int i = 0; i < T; i++) printf(i ? " %d" : "%d", r->segments[i]);
    }
    putchar('\n');
}

static void tokenize_one(TokenizeRun *r, const char *a, size_t la, const char *b, size_t lb) {
    int T;
    if (r->max_len) {
        tokenize_reserve(r, r->max_len);
        T = tokenizer_encode(r->tok, a, la, b, lb, r->max_len, r->ids, r->segments);
        for (int i = 0; i < T; i++) r->tokens[i] = vocab_token(r->tok->vocab, r->ids[i]);
        r->cut += r->tok->last_len > T;
        if (r->tok->last_len > T && r->tok->last_len > r->longest) r->longest = r->tok->last_len;
    } else {
        T = tokenizer_ids(r->tok, a, la, r->ids, r->tokens, r->cap);
        if (T > r->cap) {
            tokenize_reserve(r, T);
            T = tokenizer_ids(r->tok, a, la, r->ids, r->tokens, r->cap);
        }
    }
    r->texts++;
    if (r->json) tokenize_print_json(r, a, la, b, lb, T);
    else tokenize_print_text(r, T);
}

/* One text a line from stdin; with --pair split at the first TAB. */
static int tokenize_stdin(TokenizeRun *r) {
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    long line_no = 0;
    int status = 0;
    while ((n = getline(&line, &cap, stdin)) >= 0) {
        line_no++;
        size_t len = (size_t)n;
        if (len && line[len - 1] == '\n') len--;
        if (len && line[len - 1] == '\r') len--;
        if (!r->pair) { tokenize_one(r, line, len, NULL, 0); continue; }
        const char *tab = memchr(line, '\t', len);
        if (!tab) {
            user_error_data("with --pair each line is 'first text<TAB>second text'",
                       "stdin:%ld: no TAB between the two texts", line_no);
            status = 1;
            break;
        }
        size_t la = (size_t)(tab - line);
        tokenize_one(r, line, la, tab + 1, len - la - 1);
    }
    free(line);
    return status;
}

int cmd_tokenize(int argc, char **argv) {
    Args a;
    args_init(&a, argc, argv);
    const char *vocab_path = args_str(&a, "--vocab", NULL);
    TokenizeRun r = {0};
    r.pair = args_flag(&a, "--pair");
    r.json = args_flag(&a, "--json");
    /* Not given: bare WordPiece tokens (0 inside), or pairs at BERT's length.
     * Given, it is a length, and 0 is as out of range as -1. (args_flag: a
     * second getter of the value would report a missing one twice.) */
    int given = args_flag(&a, "--max-len");
    long max_len = args_int(&a, "--max-len", r.pair ? TOKENIZE_PAIR_MAX_LEN : 0);
    const char *texts[TOKENIZE_MAX_TEXTS];
    int ntexts = args_positional(&a, texts, TOKENIZE_MAX_TEXTS);
    int rc = args_finish(&a, TOKENIZE_USAGE);
    if (rc) return rc;
    int min_len = r.pair ? 3 : 2;
    if ((given || max_len != 0) && (max_len < min_len || max_len > TOKENIZE_MAX_LEN_LIMIT)) {
        user_error_usage("[CLS] and [SEP] need room too", "--max-len must be between %d and %d, got %ld", min_len,
                         TOKENIZE_MAX_LEN_LIMIT, max_len);
        return EXIT_USAGE;
    }
    if (ntexts > TOKENIZE_MAX_TEXTS || (r.pair && ntexts % 2)) {
        user_error("use stdin for many texts; with --pair give texts two by two (A B A B ...)",
                   ntexts % 2 ? "--pair needs an even number of texts, got %d" : "too many texts (%d)", ntexts);
        return EXIT_USAGE;
    }
    r.max_len = (int)max_len;
    Vocab *v = vocab_load(vocab_path ? vocab_path : tokenizer_default_vocab_path());
    if (!v) return 1;
    r.tok = tokenizer_create(v);
    if (r.tok) {
        tokenize_reserve(&r, 512);
        if (ntexts == 0) rc = tokenize_stdin(&r);
        for (int i = 0; i < ntexts; i += 1 + r.pair)
            tokenize_one(&r, texts[i], strlen(texts[i]), r.pair ? texts[i + 1] : NULL,
                         r.pair ? strlen(texts[i + 1]) : 0);
        if (r.cut)
            user_warning("%ld of %ld inputs truncated to max_len %d tokens (the longest had %ld)", r.cut, r.texts,
                         r.max_len, r.longest);
    } else {
        rc = 1;
    }
    tokenizer_free(r.tok);
    vocab_free(v);
    free(r.ids);
    free(r.segments);
    free(r.tokens);
    free(r.clean);
    return rc;
}
