/* test_tokenizer.c — the BERT tokenizer against the reference's golden outputs
 * (../shared/tests/wordpiece_golden.jsonl.gz: every line must match), invalid
 * UTF-8, Python str.lower() special cases, vocab loading, truncation, the
 * `glue tokenize` command, and the SST-2 speed (printed, loosely bounded). */
#include "core/common.h"
#include "core/lines.h"
#include "tests/capture.h"
#include "tests/scratch.h"
#include "tests/test.h"
#include "text/basic_tokenizer.h"
#include "text/tokenizer.h"
#include "text/utf8.h"
#include "text/vocab.h"
#include "text/wordpiece.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_TOKENS 4096

static Vocab *bert_vocab(void) {
    char path[1024];
    snprintf(path, sizeof path, "%s/models/vocab/bert-base-uncased-vocab.txt", test_shared_dir());
    return vocab_load(path);
}

/* The JSON string value of "key" in one golden line, decoded to UTF-8 bytes.
 * cJSON cannot be used for the texts: they contain \u0000, which a C string
 * would cut short. Values escape their quotes, so the first '"key": "' in the
 * line is the key itself. Returns 1 when found. */
static int golden_text(const char *line, const char *key, char *out, size_t cap, size_t *len) {
    char pat[32];
    snprintf(pat, sizeof pat, "\"%s\": \"", key);
    const char *p = strstr(line, pat);
    if (!p) return 0;
    size_t n = 0;
    for (p += strlen(pat); *p && *p != '"' && n + UTF8_MAX_BYTES < cap; p++) {
        if (*p != '\\') { out[n++] = *p; continue; }
        p++;
        const char *esc = strchr("\"\\/bfnrt", *p);
        if (esc) { out[n++] = "\"\\/\b\f\n\r\t"[esc - "\"\\/bfnrt"]; continue; }
        if (*p != 'u') return 0;
        unsigned cp = (unsigned)strtoul((char[5]){p[1], p[2], p[3], p[4], 0}, NULL, 16);
        p += 4;
        if (cp >= 0xD800 && cp < 0xDC00 && p[1] == '\\' && p[2] == 'u') {   /* surrogate pair */
            unsigned lo = (unsigned)strtoul((char[5]){p[3], p[4], p[5], p[6], 0}, NULL, 16);
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            p += 6;
        }
        n += (size_t)utf8_encode((int32_t)cp, out + n);
    }
    if (*p != '"') return 0;
    out[n] = '\0';
    *len = n;
    return 1;
}

/* ids (and tokens, when given) equal the golden arrays. */
static int golden_same(const cJSON *obj, const char *field, const int *ids, const char *const *tokens, int n) {
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(obj, field);
    if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) != n) return 0;
    for (int i = 0; i < n; i++) {
        const cJSON *it = cJSON_GetArrayItem(arr, i);
        if (tokens ? !cJSON_IsString(it) || strcmp(it->valuestring, tokens[i]) != 0
                   : !cJSON_IsNumber(it) || it->valueint != ids[i])
            return 0;
    }
    return 1;
}

/* One golden line: 1 when tokens, ids (and segments) all match. */
static int golden_check_line(Tokenizer *tok, const char *line, char *a, char *b, size_t cap) {
    int ids[MAX_TOKENS], seg[MAX_TOKENS];
    const char *toks[MAX_TOKENS];
    size_t la, lb;
    cJSON *obj = cJSON_Parse(line);
    if (!obj) return 0;
    int n, ok;
    if (golden_text(line, "text", a, cap, &la)) {
        n = tokenizer_ids(tok, a, la, ids, toks, MAX_TOKENS);
        ok = n <= MAX_TOKENS;
    } else {
        const cJSON *ml = cJSON_GetObjectItemCaseSensitive(obj, "max_len");
        ok = golden_text(line, "text_a", a, cap, &la) && golden_text(line, "text_b", b, cap, &lb) &&
             cJSON_IsNumber(ml) && ml->valueint <= MAX_TOKENS;
        n = ok ? tokenizer_encode(tok, a, la, b, lb, ml->valueint, ids, seg) : 0;
        for (int i = 0; i < n; i++) toks[i] = vocab_token(tok->vocab, ids[i]);
        ok = ok && golden_same(obj, "segments", seg, NULL, n);
    }
    ok = ok && golden_same(obj, "ids", ids, NULL, n) && golden_same(obj, "tokens", ids, toks, n);
    cJSON_Delete(obj);
    return ok;
}

TEST(tokenizer_golden_all_lines) {
    Vocab *v = bert_vocab();
    if (!CHECK_MSG(v != NULL, "bert-base-uncased vocab not found under %s", test_shared_dir())) return;
    Tokenizer *tok = tokenizer_create(v);
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/wordpiece_golden.jsonl.gz", test_shared_dir());
    LineReader r;
    if (!CHECK_MSG(lines_open(&r, path) == LINES_OK, "%s", r.err)) { lines_close(&r); return; }
    size_t cap = 1 << 16;
    char *a = malloc(cap), *b = malloc(cap), *line;
    size_t len;
    int total = 0, matched = 0, singles = 0;
    while (lines_next(&r, &line, &len) == 1) {
        total++;
        singles += strncmp(line, "{\"text\":", 8) == 0;
        if (golden_check_line(tok, line, a, b, cap)) matched++;
        else if (total - matched <= 5) printf("  golden line %d differs: %.200s\n", total, line);
    }
    printf("  wordpiece golden: %d/%d lines match (%d single texts, %d pairs)\n", matched, total, singles,
           total - singles);
    CHECK_EQ_INT(r.status, LINES_OK);
    CHECK_MSG(total > 2000, "golden file has only %d lines", total);
    CHECK_EQ_INT(matched, total);
    lines_close(&r);
    free(a);
    free(b);
    tokenizer_free(tok);
    vocab_free(v);
}

/* ---- invalid UTF-8 ---------------------------------------------------------------- */

TEST(utf8_decode_one_replacement_per_invalid_byte) {
    struct { const char *s; size_t len; int n; int32_t cps[8]; } cases[] = {
        {"ab\xE2\x82" "cd", 6, 6, {'a', 'b', 0xFFFD, 0xFFFD, 'c', 'd'}},   /* truncated 3-byte */
        {"\xC0\xAF", 2, 2, {0xFFFD, 0xFFFD}},                             /* overlong '/' */
        {"\xED\xA0\x80", 3, 3, {0xFFFD, 0xFFFD, 0xFFFD}},                 /* surrogate D800 */
        {"\xF4\x90\x80\x80", 4, 4, {0xFFFD, 0xFFFD, 0xFFFD, 0xFFFD}},     /* above U+10FFFF */
        {"\xF0\x9F\x98\x80", 4, 1, {0x1F600}},
        {"\xF4\x8F\xBF\xBF", 4, 1, {0x10FFFF}},
        {"\xEF\xBF\xBD", 3, 1, {0xFFFD}},                                 /* a real U+FFFD */
        {"\xC3\xA9\x80x", 4, 3, {0xE9, 0xFFFD, 'x'}},                      /* stray continuation */
        {"\xFF\xFEz", 3, 3, {0xFFFD, 0xFFFD, 'z'}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        size_t pos = 0;
        int n = 0, same = 1;
        while (pos < cases[c].len && n < 8) same &= utf8_decode(cases[c].s, cases[c].len, &pos) == cases[c].cps[n++];
        CHECK_MSG(same && n == cases[c].n, "case %zu: %d code points, same %d", c, n, same);
        CHECK_EQ_INT(utf8_count(cases[c].s, cases[c].len), cases[c].n);
    }
    CHECK(utf8_valid("\xEF\xBF\xBD ok", 6));
    CHECK(!utf8_valid("ok \xC3", 4));
    char out[32];
    CHECK_EQ_INT(utf8_sanitize("a\xFF" "b", 3, out), 5);
    CHECK(strcmp(out, "a\xEF\xBF\xBD" "b") == 0);
}

/* Invalid bytes inserted between the code points of the golden texts vanish: the
 * tokens stay exactly the golden ones (the reference decodes with "ignore"). */
TEST(tokenizer_invalid_utf8_bytes_are_dropped) {
    static const char *const BAD[] = {"\xFF", "\xC3", "\xE2\x82", "\xED\xA0\x80", "\xC0\xAF", "\xF4\x90\x80\x80", "\x80\x80"};
    const int NBAD = (int)(sizeof BAD / sizeof BAD[0]);
    Vocab *v = bert_vocab();
    if (!CHECK(v != NULL)) return;
    Tokenizer *tok = tokenizer_create(v);
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/wordpiece_golden.jsonl.gz", test_shared_dir());
    LineReader r;
    lines_open(&r, path);
    size_t cap = 1 << 16;
    char *text = malloc(cap), *bad = malloc(4 * cap), *line;
    int *want = malloc(sizeof(int) * MAX_TOKENS), *got = malloc(sizeof(int) * MAX_TOKENS);
    size_t len, tl;
    int tested = 0, same = 0, k = 0;
    while (lines_next(&r, &line, &len) == 1) {
        if (!golden_text(line, "text", text, cap, &tl)) continue;
        size_t n = 0;
        for (size_t pos = 0; pos < tl;) {          /* a bad sequence before every 3rd code point */
            if (k++ % 3 == 0) { strcpy(bad + n, BAD[k % NBAD]); n += strlen(BAD[k % NBAD]); }
            size_t at = pos;
            utf8_decode(text, tl, &pos);
            memcpy(bad + n, text + at, pos - at);
            n += pos - at;
        }
        int nw = tokenizer_ids(tok, text, tl, want, NULL, MAX_TOKENS);
        int ng = tokenizer_ids(tok, bad, n, got, NULL, MAX_TOKENS);
        tested++;
        same += nw == ng && memcmp(want, got, sizeof(int) * (size_t)(nw < MAX_TOKENS ? nw : MAX_TOKENS)) == 0;
    }
    printf("  invalid UTF-8 inserted into %d golden texts: %d tokenize as before\n", tested, same);
    CHECK(tested > 1000);
    CHECK_EQ_INT(same, tested);
    lines_close(&r);
    free(text); free(bad); free(want); free(got);
    tokenizer_free(tok);
    vocab_free(v);
}

/* ---- Python str.lower() special cases, cleaning, long words ------------------------- */

static int same_ids(Tokenizer *tok, const char *x, const char *y) {
    int a[256], b[256];
    int na = tokenizer_ids(tok, x, strlen(x), a, NULL, 256), nb = tokenizer_ids(tok, y, strlen(y), b, NULL, 256);
    return na == nb && na <= 256 && memcmp(a, b, sizeof(int) * (size_t)na) == 0;
}

TEST(tokenizer_python_lower_and_cleaning_cases) {
    Vocab *v = bert_vocab();
    if (!CHECK(v != NULL)) return;
    Tokenizer *tok = tokenizer_create(v);
    /* 'İ'.lower() is "i" + U+0307, whose accent is then stripped. */
    CHECK(same_ids(tok, "\xC4\xB0STANBUL", "istanbul"));
    /* Final sigma: Python lowers Σ to ς at the end of a word, to σ elsewhere;
     * the vocabulary has both ("##ς" 19580, "##σ" 29734), so it shows. */
    CHECK(!same_ids(tok, "\xCE\xBF\xCE\xB4\xCE\xBF\xCF\x82", "\xCE\xBF\xCE\xB4\xCE\xBF\xCF\x83"));
    CHECK(same_ids(tok, "\xCE\x9F\xCE\x94\xCE\x9F\xCE\xA3", "\xCE\xBF\xCE\xB4\xCE\xBF\xCF\x82"));       /* ΟΔΟΣ -> οδος */
    CHECK(same_ids(tok, "\xCE\x9F\xCE\x94\xCE\x9F\xCE\xA3.", "\xCE\xBF\xCE\xB4\xCE\xBF\xCF\x82."));     /* '.' is case-ignorable */
    CHECK(same_ids(tok, "\xCE\x9F\xCE\x94\xCE\x9F\xCE\xA3.\xCE\x91", "\xCE\xBF\xCE\xB4\xCE\xBF\xCF\x83.\xCE\xB1"));
    CHECK(same_ids(tok, "\xCE\xA3\xCE\x91", "\xCF\x83\xCE\xB1"));                                      /* ΣΑ -> σα */
    CHECK(same_ids(tok, "\xCE\xA3", "\xCF\x83"));                                                      /* Σ -> σ */
    int ids[300];
    const char *toks[300];
    /* U+2028 splits like whitespace (Python's split), \v and ZWSP are dropped (Cc, Cf). */
    CHECK_EQ_INT(tokenizer_ids(tok, "cat\xE2\x80\xA8" "dog", 9, ids, toks, 300), 2);
    CHECK(strcmp(toks[0], "cat") == 0 && strcmp(toks[1], "dog") == 0);
    CHECK(same_ids(tok, "do\vg", "dog"));
    CHECK(same_ids(tok, "do\xE2\x80\x8Bg", "dog"));
    CHECK(same_ids(tok, "cat\xC2\xA0" "dog", "cat dog"));
    /* A private-use character is kept (category Co) and makes its word [UNK]. */
    CHECK_EQ_INT(tokenizer_ids(tok, "x\xEE\x80\x80y z", 7, ids, NULL, 300), 2);
    CHECK_EQ_INT(ids[0], vocab_specials(v)->unk);
    /* Words of 200 code points are split, of 201 are [UNK] without trying. */
    char word[WORDPIECE_MAX_WORD_CHARS + 2];
    memset(word, 'a', sizeof word);
    int n200 = tokenizer_ids(tok, word, WORDPIECE_MAX_WORD_CHARS, ids, NULL, 300);
    CHECK(n200 > 50 && ids[0] != vocab_specials(v)->unk);
    CHECK_EQ_INT(tokenizer_ids(tok, word, WORDPIECE_MAX_WORD_CHARS + 1, ids, NULL, 300), 1);
    CHECK_EQ_INT(ids[0], vocab_specials(v)->unk);
    /* Capacity smaller than the result: the full count comes back (as snprintf). */
    CHECK_EQ_INT(tokenizer_ids(tok, "one two three", 13, ids, NULL, 1), 3);
    tokenizer_free(tok);
    vocab_free(v);
}

TEST(basic_tokenizer_words) {
    BasicTokenizer bt;
    basic_tokenizer_init(&bt, 1);
    const char *text = "Don't  STOP\xE2\x80\x94now! Caf\xC3\xA9 \xE6\x9D\xB1\xE4\xBA\xAC" "x";
    static const char *const want[] = {"don", "'", "t", "stop", "\xE2\x80\x94", "now", "!", "cafe",
                                       "\xE6\x9D\xB1", "\xE4\xBA\xAC", "x"};
    int n = basic_tokenize(&bt, text, strlen(text));
    CHECK_EQ_INT(n, 11);
    for (int i = 0; i < n && i < 11; i++) CHECK_MSG(strcmp(basic_word(&bt, i), want[i]) == 0, "word %d: %s", i, basic_word(&bt, i));
    CHECK_EQ_INT(bt.words[4].len, 3);
    CHECK_EQ_INT(bt.words[4].nchars, 1);
    CHECK_EQ_INT(basic_tokenize(&bt, " \t\r\n", 4), 0);
    basic_tokenizer_free(&bt);
    /* Cased: no lower-casing and no accent stripping (the reference skips both). */
    basic_tokenizer_init(&bt, 0);
    n = basic_tokenize(&bt, "H\xC3\xA9llo, WORLD", 13);
    CHECK_EQ_INT(n, 3);
    CHECK(n == 3 && strcmp(basic_word(&bt, 0), "H\xC3\xA9llo") == 0 && strcmp(basic_word(&bt, 2), "WORLD") == 0);
    basic_tokenizer_free(&bt);
}

/* ---- vocabulary files ------------------------------------------------------------- */

static void write_file(const char *path, const char *s) {
    FILE *f = fopen(path, "wb");
    if (f) { fputs(s, f); fclose(f); }
}

TEST(vocab_load_lines_duplicates_specials) {
    char path[SCRATCH_PATH_MAX];
    int fd = scratch_file("vocab", path, sizeof path);
    if (!CHECK(fd >= 0)) return;
    close(fd);
    /* CRLF, padding spaces, an empty line (still an id), a duplicate (last wins), no final newline. */
    write_file(path, "[PAD]\r\n[UNK]\r\n  hello  \n\nhello\n##lo\n[CLS]\n[SEP]");
    Vocab *v = vocab_load(path);
    if (!CHECK(v != NULL)) { remove(path); return; }
    CHECK_EQ_INT(vocab_size(v), 8);
    CHECK_EQ_INT(vocab_id(v, "hello"), 4);
    CHECK(strcmp(vocab_token(v, 2), "hello") == 0);
    CHECK(strcmp(vocab_token(v, 3), "") == 0);
    CHECK(vocab_token(v, 8) == NULL && vocab_token(v, -1) == NULL);
    CHECK_EQ_INT(vocab_id_piece(v, "lo", 2, 1), 5);
    CHECK_EQ_INT(vocab_id_piece(v, "lo", 2, 0), -1);
    CHECK_EQ_INT(vocab_id(v, "[UNK]\r"), -1);
    const VocabSpecials *sp = vocab_specials(v);
    CHECK(sp->pad == 0 && sp->unk == 1 && sp->cls == 6 && sp->sep == 7 && sp->mask == -1);
    CHECK_EQ_INT(vocab_max_piece_bytes(v), 5);
    Tokenizer *tok = tokenizer_create(v);
    int ids[16];
    CHECK_EQ_INT(tokenizer_ids(tok, "HELLOlo xyz hello", 17, ids, NULL, 16), 4);
    CHECK(ids[0] == 4 && ids[1] == 5 && ids[2] == 1 && ids[3] == 4);
    tokenizer_free(tok);
    vocab_free(v);
    /* No [UNK]: the tokenizer refuses the vocabulary instead of crashing later. */
    write_file(path, "[CLS]\n[SEP]\nhello\n");
    v = vocab_load(path);
    CHECK(v != NULL && tokenizer_create(v) == NULL);
    vocab_free(v);
    write_file(path, "");
    CHECK(vocab_load(path) == NULL);
    remove(path);
    CHECK(vocab_load("/nonexistent/vocab.txt") == NULL);
    /* A NUL byte in a token: refused with file:line (fuzz_vocab found such a
     * token unreachable: tests/fuzz/regressions/fuzz_vocab/). */
    FILE *f = fopen(path, "wb");
    fwrite("[PAD]\n[UNK]\n##\t\0\0x\n", 1, 19, f);
    fclose(f);
    StderrCapture cap;
    stderr_capture_begin(&cap);
    Vocab *bad = vocab_load(path);
    char *msg = stderr_capture_end(&cap);
    CHECK_MSG(bad == NULL && strstr(msg, ":3: NUL byte in the token"), "%s", msg);
    free(msg);
    vocab_free(bad);
    remove(path);
}

/* ---- model inputs ----------------------------------------------------------------- */

TEST(tokenizer_encode_truncates_longest_first) {
    Vocab *v = bert_vocab();
    if (!CHECK(v != NULL)) return;
    Tokenizer *tok = tokenizer_create(v);
    const VocabSpecials *sp = vocab_specials(v);
    int ids[16], seg[16], a[8], b[8];
    tokenizer_ids(tok, "a b c d", 7, a, NULL, 8);
    tokenizer_ids(tok, "e f g h", 7, b, NULL, 8);
    /* Budget 5 for 4 + 4 tokens: pop b (tie), a (longer), b (tie) -> 3 + 2. */
    int T = tokenizer_encode(tok, "a b c d", 7, "e f g h", 7, 8, ids, seg);
    int want[8] = {sp->cls, a[0], a[1], a[2], sp->sep, b[0], b[1], sp->sep}, want_seg[8] = {0, 0, 0, 0, 0, 1, 1, 1};
    CHECK_EQ_INT(T, 8);
    CHECK(memcmp(ids, want, sizeof want) == 0);
    CHECK(memcmp(seg, want_seg, sizeof want_seg) == 0);
    /* Room to spare: nothing dropped. */
    CHECK_EQ_INT(tokenizer_encode(tok, "a b c d", 7, "e f g h", 7, 16, ids, seg), 11);
    /* Single text keeps its first max_len - 2 tokens. */
    T = tokenizer_encode(tok, "a b c d", 7, NULL, 0, 4, ids, seg);
    CHECK(T == 4 && ids[0] == sp->cls && ids[1] == a[0] && ids[2] == a[1] && ids[3] == sp->sep && seg[3] == 0);
    /* Empty texts still give the special tokens. */
    CHECK_EQ_INT(tokenizer_encode(tok, "", 0, "", 0, 3, ids, NULL), 3);
    tokenizer_free(tok);
    vocab_free(v);
}

/* A fresh tokenizer has no scratch ids yet: an empty (or all-control) text as
 * the first input must not copy from NULL (undefined behaviour, fatal under
 * `make asan`; reachable by `glue tokenize --pair hello ""` and by a task whose
 * first example is empty). */
TEST(tokenizer_encode_empty_texts_on_fresh_tokenizer) {
    Vocab *v = bert_vocab();
    if (!CHECK(v != NULL)) return;
    const VocabSpecials *sp = vocab_specials(v);
    int ids[8], seg[8];
    Tokenizer *tok = tokenizer_create(v);
    CHECK_EQ_INT(tokenizer_encode(tok, "\x01", 1, "", 0, 8, ids, seg), 3);
    CHECK(ids[0] == sp->cls && ids[1] == sp->sep && ids[2] == sp->sep && seg[2] == 1);
    tokenizer_free(tok);
    tok = tokenizer_create(v);
    CHECK_EQ_INT(tokenizer_encode(tok, "", 0, NULL, 0, 8, ids, seg), 2);
    tokenizer_free(tok);
    /* Through the command, as the issue reported it. */
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s tokenize --vocab '%s/models/vocab/bert-base-uncased-vocab.txt' --pair hello '' 2>&1",
             test_glue_bin(), test_shared_dir());
    int status;
    char *out = test_run(cmd, &status);
    CHECK_MSG(status == 0, "status %d: %s", status, out);
    free(out);
    vocab_free(v);
}

/* ---- random strings against Python's str.lower() / unicodedata ------------------------ */

static int hex_value(char c) { return c <= '9' ? c - '0' : c - 'a' + 10; }

/* Decode hex s[0..n) into out; returns the byte count. */
static size_t hex_decode(const char *s, size_t n, char *out) {
    for (size_t i = 0; i + 1 < n; i += 2) out[i / 2] = (char)(hex_value(s[i]) << 4 | hex_value(s[i + 1]));
    return n / 2;
}

/* tests/tokenizer_reference.py restates the reference BasicTokenizer in Python
 * (its str.lower(), its unicodedata) and prints the words of random strings. */
TEST(basic_tokenizer_matches_python_on_random_unicode) {
    if (access("/usr/bin/python3", X_OK) != 0) { test_skip("no /usr/bin/python3"); return; }
    if (!CHECK_MSG(access("tests/tokenizer_reference.py", R_OK) == 0, "tests/tokenizer_reference.py missing")) return;
    int status;
    char *out = test_run("/usr/bin/python3 tests/tokenizer_reference.py 7 4000", &status);
    CHECK_EQ_INT(status, 0);
    BasicTokenizer bt;
    basic_tokenizer_init(&bt, 1);
    char text[512], words[2048];
    int cases = 0, same = 0;
    for (char *line = out, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = '\0';
        char *tab = strchr(line, '\t');
        if (!tab || strlen(line) > 2 * sizeof text || strlen(tab) > 2 * sizeof words) continue;
        size_t tl = hex_decode(line, (size_t)(tab - line), text);
        /* expected: the hex words joined by ',' -> rebuild the same from ours */
        int n = basic_tokenize(&bt, text, tl);
        size_t wl = 0;
        for (int i = 0; i < n && wl + 2 * bt.words[i].len + 2 < sizeof words; i++) {
            if (i) words[wl++] = ',';
            for (uint32_t k = 0; k < bt.words[i].len; k++)
                wl += (size_t)sprintf(words + wl, "%02x", (unsigned char)basic_word(&bt, i)[k]);
        }
        words[wl] = '\0';
        cases++;
        if (strcmp(words, tab + 1) == 0) same++;
        else if (cases - same <= 5) printf("  differs: input %s\n    python %s\n    ours   %s\n", line, tab + 1, words);
    }
    printf("  random Unicode strings: %d/%d split exactly as Python\n", same, cases);
    CHECK(cases == 4000);
    CHECK_EQ_INT(same, cases);
    basic_tokenizer_free(&bt);
    free(out);
}

/* ---- the `glue tokenize` command ------------------------------------------------------- */

static char *vocab_arg(void) {
    static char buf[1024];   /* read-only after the first call within a test */
    snprintf(buf, sizeof buf, "--vocab %s/models/vocab/bert-base-uncased-vocab.txt", test_shared_dir());
    return buf;
}

/* The JSON arrays `field` of two objects print the same. */
static int same_array(const cJSON *x, const cJSON *y, const char *field) {
    char *a = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(x, field));
    char *b = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(y, field));
    int same = a && b && strcmp(a, b) == 0;
    free(a);
    free(b);
    return same;
}

/* Golden texts without TAB/newline go through `glue tokenize --json` on stdin:
 * the single texts in one run, the pairs in one `--pair --max-len N` run per
 * max_len of the file; every output line must carry the golden tokens, ids and
 * segments. */
#define CLI_GROUPS 4   /* singles + up to 3 distinct max_len values */

static void cli_check_group(const char *input, int max_len, cJSON *gold) {
    char cmd[4096], opts[64] = "";
    if (max_len) snprintf(opts, sizeof opts, "--pair --max-len %d", max_len);
    snprintf(cmd, sizeof cmd, "%s tokenize %s --json %s < %s", test_glue_bin(), vocab_arg(), opts, input);
    int status, n = 0, same = 0;
    char *out = test_run(cmd, &status);
    CHECK_EQ_INT(status, 0);
    for (char *l = out, *next; l && *l; l = next, n++) {
        next = strchr(l, '\n');
        if (next) *next++ = '\0';
        cJSON *o = cJSON_Parse(l), *g = cJSON_GetArrayItem(gold, n);
        same += o && g && same_array(o, g, "tokens") && same_array(o, g, "ids") && (!max_len || same_array(o, g, "segments"));
        cJSON_Delete(o);
    }
    printf("  glue tokenize --json %s: %d/%d golden lines\n", opts, same, cJSON_GetArraySize(gold));
    CHECK_EQ_INT(n, cJSON_GetArraySize(gold));
    CHECK_EQ_INT(same, n);
    free(out);
}

TEST(cli_tokenize_stdin_matches_golden) {
    char path[1024], in[CLI_GROUPS][SCRATCH_PATH_MAX];
    snprintf(path, sizeof path, "%s/tests/wordpiece_golden.jsonl.gz", test_shared_dir());
    FILE *f[CLI_GROUPS] = {0};
    cJSON *gold[CLI_GROUPS] = {0};
    int max_len[CLI_GROUPS] = {0}, ngroups = 1, lines = 0;
    LineReader r;
    lines_open(&r, path);
    char a[8192], b[8192], *line;
    size_t len, la, lb;
    while (lines_next(&r, &line, &len) == 1) {
        cJSON *obj = cJSON_Parse(line);
        const cJSON *ml = cJSON_GetObjectItemCaseSensitive(obj, "max_len");
        int pair = cJSON_IsNumber(ml), g = pair;   /* group 0: singles; pairs by max_len */
        int ok = pair ? golden_text(line, "text_a", a, sizeof a, &la) && golden_text(line, "text_b", b, sizeof b, &lb)
                      : golden_text(line, "text", a, sizeof a, &la);
        if (!ok || strcspn(a, "\t\n\r") < la || (pair && strcspn(b, "\t\n\r") < lb)) { cJSON_Delete(obj); continue; }
        while (pair && g < ngroups && max_len[g] != ml->valueint) g++;
        if (g == ngroups && ngroups < CLI_GROUPS) max_len[ngroups++] = ml->valueint;
        if (g == ngroups) { cJSON_Delete(obj); continue; }
        if (!f[g]) {
            char tag[16];
            snprintf(tag, sizeof tag, "tok%d", g);
            f[g] = fdopen(scratch_file(tag, in[g], sizeof in[g]), "w");
            gold[g] = cJSON_CreateArray();
        }
        fprintf(f[g], pair ? "%s\t%s\n" : "%s\n", a, b);
        cJSON_AddItemToArray(gold[g], obj);
        lines++;
    }
    lines_close(&r);
    CHECK(lines > 2000);
    for (int g = 0; g < ngroups; g++) {
        if (!f[g]) continue;
        fclose(f[g]);
        cli_check_group(in[g], max_len[g], gold[g]);
        remove(in[g]);
        cJSON_Delete(gold[g]);
    }
}

TEST(cli_tokenize_outputs_and_errors) {
    char cmd[2048];
    int status;
    snprintf(cmd, sizeof cmd, "%s tokenize %s 'Hello, World!'", test_glue_bin(), vocab_arg());
    char *out = test_run(cmd, &status);
    CHECK_EQ_INT(status, 0);
    CHECK_MSG(strcmp(out, "hello , world !\t7592 1010 2088 999\n") == 0, "got '%s'", out);
    free(out);
    snprintf(cmd, sizeof cmd, "%s tokenize %s --json 'Hello, World!'", test_glue_bin(), vocab_arg());
    out = test_run(cmd, &status);
    CHECK_MSG(strcmp(out, "{\"text\":\"Hello, World!\",\"tokens\":[\"hello\",\",\",\"world\",\"!\"],"
                          "\"ids\":[7592,1010,2088,999]}\n") == 0, "got '%s'", out);
    free(out);
    /* Pair arguments two by two, model input with segments. */
    snprintf(cmd, sizeof cmd, "%s tokenize %s --pair --max-len 6 'a b c' 'd e'", test_glue_bin(), vocab_arg());
    out = test_run(cmd, &status);
    CHECK_MSG(strcmp(out, "[CLS] a b [SEP] d [SEP]\t101 1037 1038 102 1040 102\t0 0 0 0 1 1\n") == 0, "got '%s'", out);
    free(out);
    /* Invalid UTF-8 on stdin: dropped by the tokenizer, shown as U+FFFD in valid JSON. */
    snprintf(cmd, sizeof cmd, "printf 'caf\\303\\251 \\377ok\\n' | %s tokenize %s --json", test_glue_bin(), vocab_arg());
    out = test_run(cmd, &status);
    cJSON *o = cJSON_Parse(out);
    CHECK_MSG(o != NULL, "not JSON: %s", out);
    const cJSON *text = cJSON_GetObjectItemCaseSensitive(o, "text"), *ids = cJSON_GetObjectItemCaseSensitive(o, "ids");
    CHECK(cJSON_IsString(text) && strcmp(text->valuestring, "caf\xC3\xA9 \xEF\xBF\xBDok") == 0);
    CHECK(cJSON_GetArraySize(ids) == 2 && cJSON_GetArrayItem(ids, 0)->valueint == 7668 &&
          cJSON_GetArrayItem(ids, 1)->valueint == 7929);
    cJSON_Delete(o);
    free(out);
    struct { const char *args; int status; const char *msg; } bad[] = {
        {"--pari x", 2, "unknown option"},
        {"--pair --max-len 2 a b", 2, "--max-len"},
        /* 0 is out of range like -1 (issue 42: it was taken as "no --max-len") */
        {"--max-len 0 x", 2, "--max-len must be between 2 and 1000000, got 0"},
        {"--max-len -1 x", 2, "--max-len must be between 2 and 1000000, got -1"},
        {"--pair --max-len 0 a b", 2, "--max-len must be between 3 and 1000000, got 0"},
        {"--max-len=0 x", 2, "got 0"},
        {"--pair a b c", 2, "even number"},
        {"--max-len abc x", 2, "integer"},
        {"--vocab /nonexistent/vocab.txt x", 74, "cannot open vocabulary"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(cmd, sizeof cmd, "%s tokenize %s %s 2>&1", test_glue_bin(),
                 strstr(bad[i].args, "--vocab") ? "" : vocab_arg(), bad[i].args);
        out = test_run(cmd, &status);
        CHECK_MSG(status == bad[i].status && strstr(out, bad[i].msg), "'%s': status %d, output '%s'", bad[i].args, status, out);
        free(out);
    }
    /* --max-len without its value: one message (it was printed twice). */
    snprintf(cmd, sizeof cmd, "%s tokenize %s x --max-len 2>&1", test_glue_bin(), vocab_arg());
    out = test_run(cmd, &status);
    const char *first = strstr(out, "needs a value");
    CHECK_MSG(status == 2 && first && !strstr(first + 1, "needs a value"), "status %d, output '%s'", status, out);
    free(out);
    snprintf(cmd, sizeof cmd, "printf 'no tab here\\n' | %s tokenize %s --pair 2>&1", test_glue_bin(), vocab_arg());
    out = test_run(cmd, &status);
    CHECK_MSG(status == 65 && strstr(out, "stdin:1:"), "status %d, output '%s'", status, out);
    free(out);
}

/* ---- speed ------------------------------------------------------------------------------ */

TEST(tokenizer_speed_sst2_train) {
    char path[1024];
    snprintf(path, sizeof path, "%s/data/glue/SST-2/train.tsv.gz", test_shared_dir());
    LineReader r;
    if (lines_open(&r, path) != LINES_OK) { lines_close(&r); test_skip("SST-2 train.tsv.gz not found"); return; }
    Vocab *v = bert_vocab();
    if (!CHECK(v != NULL)) { lines_close(&r); return; }
    Tokenizer *tok = tokenizer_create(v);
    size_t cap = 1 << 24, used = 0, len;
    char *text = malloc(cap), *line;
    size_t *off = malloc(sizeof(size_t) * 100000);
    int n = 0;
    while (lines_next(&r, &line, &len) == 1 && n < 100000) {
        if (r.line_no == 1) continue;                      /* header */
        size_t sl = strcspn(line, "\t");                   /* the sentence column */
        if (used + sl + 1 > cap) break;
        memcpy(text + used, line, sl);
        off[n++] = used;
        used += sl + 1;
        text[used - 1] = '\0';
    }
    lines_close(&r);
    int ids[512];
    long tokens = 0;
    double t0 = now_seconds();
    for (int i = 0; i < n; i++) tokens += tokenizer_ids(tok, text + off[i], strlen(text + off[i]), ids, NULL, 512);
    double secs = now_seconds() - t0;
    printf("  SST-2 train: %d lines, %ld WordPiece tokens in %.3f s (%.0f lines/s)\n", n, tokens, secs, n / secs);
    CHECK_EQ_INT(n, 67349);
    CHECK_MSG(secs < 3.0, "tokenizing SST-2 train took %.2f s", secs);
    free(text);
    free(off);
    tokenizer_free(tok);
    vocab_free(v);
}
