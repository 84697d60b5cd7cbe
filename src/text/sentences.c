/* sentences.c — the rule-based sentence splitter (see sentences.h). */
#include "text/sentences.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

/* Lower-case abbreviations that a single "." follows without ending a sentence. */
static const char *const SENT_ABBREVIATIONS[] = {
    "mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "mt", "vs", "etc", "eg", "ie", "cf", "al", "inc", "ltd",
    "co", "corp", "dept", "gen", "gov", "sen", "rep", "rev", "col", "lt", "sgt", "capt", "no", "vol", "fig",
    "approx", "est", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec", NULL};

static int sent_is_end_mark(char c) { return c == '.' || c == '!' || c == '?'; }
static int sent_is_closer(char c) { return c == '"' || c == '\'' || c == ')' || c == ']'; }

/* Whether the "." at text[i] follows an abbreviation, an initial or a word
 * with a dot inside. */
static int sent_after_abbreviation(const char *text, size_t i) {
    size_t start = i;
    while (start > 0 && (isalpha((unsigned char)text[start - 1]) || text[start - 1] == '.')) start--;
    size_t n = i - start;
    if (n == 0) return 0;
    if (n == 1) return 1;                                  /* an initial */
    if (memchr(text + start, '.', n)) return 1;            /* U.S. e.g. */
    for (int k = 0; SENT_ABBREVIATIONS[k]; k++)
        if (strlen(SENT_ABBREVIATIONS[k]) == n && strncasecmp(text + start, SENT_ABBREVIATIONS[k], n) == 0) return 1;
    return 0;
}

/* Whether a sentence may start with the character at c. */
static int sent_starter(unsigned char c) { return isupper(c) || isdigit(c) || c == '"' || c == '\'' || c == '(' || c == '['; }

static int sent_blank(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!isspace((unsigned char)s[i])) return 0;
    return 1;
}

int sentence_split(const char *text, size_t len, size_t *ends, int cap) {
    int count = 0;
    size_t begin = 0;
    for (size_t i = 0; i < len; i++) {
        if (!sent_is_end_mark(text[i])) continue;
        size_t j = i;
        while (j < len && sent_is_end_mark(text[j])) j++;
        int single_dot = j - i == 1 && text[i] == '.';
        while (j < len && sent_is_closer(text[j])) j++;
        size_t k = j;
        while (k < len && isspace((unsigned char)text[k])) k++;
        if (k == j || k == len || !sent_starter((unsigned char)text[k]) ||
            (single_dot && sent_after_abbreviation(text, i))) {
            i = j - 1;
            continue;
        }
        if (!sent_blank(text + begin, j - begin)) {
            if (count < cap) ends[count] = j;
            count++;
        }
        begin = j;
        i = k - 1;
    }
    if (begin < len && !sent_blank(text + begin, len - begin)) {
        if (count < cap) ends[count] = len;
        count++;
    }
    return count;
}
