/* test_sentences.c — the rule-based sentence splitter (src/text/sentences.c):
 * ends on . ! ? before a capital, a digit or a quote; not after abbreviations,
 * initials, dotted words, or inside numbers; blank texts have no sentence. */
#include <string.h>

#include "tests/test.h"
#include "text/sentences.h"

/* The sentences of text joined by '|' (each trimmed of leading spaces). */
static void split_joined(const char *text, char *out, size_t cap) {
    size_t ends[32];
    int n = sentence_split(text, strlen(text), ends, 32);
    size_t start = 0, used = 0;
    out[0] = '\0';
    for (int i = 0; i < n && i < 32; i++) {
        while (text[start] == ' ') start++;
        used += (size_t)snprintf(out + used, cap - used, "%s%.*s", i ? "|" : "", (int)(ends[i] - start), text + start);
        start = ends[i];
    }
}

static void expect_split(const char *text, const char *want) {
    char got[1024];
    split_joined(text, got, sizeof got);
    CHECK_MSG(strcmp(got, want) == 0, "'%s': got '%s', want '%s'", text, got, want);
}

TEST(sentences_split_rules) {
    expect_split("It rained. We stayed in!", "It rained.|We stayed in!");
    expect_split("Really?! \"Yes.\" Then 3 left.", "Really?!|\"Yes.\"|Then 3 left.");
    expect_split("Mr. Smith met Dr. Jones at 3.5 p.m. today.", "Mr. Smith met Dr. Jones at 3.5 p.m. today.");
    expect_split("J. R. R. Tolkien wrote it. The U.S. Army agreed.", "J. R. R. Tolkien wrote it.|The U.S. Army agreed.");
    expect_split("no capital. after this", "no capital. after this");
    expect_split("Wait... Then go.", "Wait...|Then go.");
    expect_split("one sentence without a stop", "one sentence without a stop");
    size_t ends[2];
    CHECK_EQ_INT(sentence_split("   ", 3, ends, 2), 0);
    CHECK_EQ_INT(sentence_split("", 0, ends, 2), 0);
    /* More sentences than room: the count is still all of them. */
    CHECK_EQ_INT(sentence_split("Go. Be. Do. See.", 16, ends, 2), 4);
}
