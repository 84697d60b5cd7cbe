/* basic_tokenizer.c — BERT's BasicTokenizer (see basic_tokenizer.h for the steps).
 * Character classes follow the reference's _is_whitespace / _is_control /
 * _is_punctuation / _is_chinese_char; Unicode data comes from utf8proc. */
#include "text/basic_tokenizer.h"

#include "core/common.h"
#include "text/utf8.h"

#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

/* Room for one code point's lower-case form (at most 2) fully decomposed. */
#define BT_DECOMP_MAX 16

/* ---- character classes ------------------------------------------------------ */

/* The reference's whitespace, plus U+2028/U+2029: the reference keeps those
 * through cleaning but Python's str.split() then splits on them. */
static int bt_is_whitespace(int32_t cp) {
    if (cp == ' ' || cp == '\t' || cp == '\n' || cp == '\r') return 1;
    if (cp < 0x80) return 0;
    return cp == 0x2028 || cp == 0x2029 || utf8proc_category(cp) == UTF8PROC_CATEGORY_ZS;
}

/* Dropped by cleaning: NUL, U+FFFD and categories Cc, Cf (but not \t \n \r). */
static int bt_is_dropped(int32_t cp) {
    if (cp < 0x80) return (cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r') || cp == 0x7F;
    if (cp == UTF8_REPLACEMENT) return 1;
    utf8proc_category_t c = utf8proc_category(cp);
    return c == UTF8PROC_CATEGORY_CC || c == UTF8PROC_CATEGORY_CF;
}

/* All non-alphanumeric ASCII counts as punctuation ("$", "^", "`" too). */
static int bt_is_punct(int32_t cp) {
    if (cp < 0x80) return (cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) ||
                          (cp >= 123 && cp <= 126);
    utf8proc_category_t c = utf8proc_category(cp);
    return c >= UTF8PROC_CATEGORY_PC && c <= UTF8PROC_CATEGORY_PO;
}

/* The CJK Unified Ideographs blocks and extensions A-E plus the compatibility
 * ideographs, exactly the reference's ranges (not Hiragana, Katakana, Hangul). */
static int bt_is_cjk(int32_t cp) {
    return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
           (cp >= 0x20000 && cp <= 0x2A6DF) || (cp >= 0x2A700 && cp <= 0x2B73F) ||
           (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B820 && cp <= 0x2CEAF) ||
           (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

/* Unicode Case_Ignorable: categories Mn Me Cf Lm Sk plus the Word_Break
 * MidLetter / MidNumLet / Single_Quote characters. */
static int bt_case_ignorable(int32_t cp) {
    switch (cp) {
    case 0x27: case 0x2E: case 0x3A: case 0xB7: case 0x387: case 0x55F: case 0x5F4:
    case 0x2018: case 0x2019: case 0x2024: case 0x2027: case 0xFE13: case 0xFE52:
    case 0xFE55: case 0xFF07: case 0xFF0E: case 0xFF1A:
        return 1;
    default: break;
    }
    utf8proc_category_t c = utf8proc_category(cp);
    return c == UTF8PROC_CATEGORY_MN || c == UTF8PROC_CATEGORY_ME || c == UTF8PROC_CATEGORY_CF ||
           c == UTF8PROC_CATEGORY_LM || c == UTF8PROC_CATEGORY_SK;
}

/* Unicode Cased: upper, lower or title case letters, plus anything with a case
 * mapping (circled letters, Roman numerals) and the ordinal indicators. */
static int bt_cased(int32_t cp) {
    utf8proc_category_t c = utf8proc_category(cp);
    return c == UTF8PROC_CATEGORY_LU || c == UTF8PROC_CATEGORY_LL || c == UTF8PROC_CATEGORY_LT ||
           utf8proc_tolower(cp) != cp || utf8proc_toupper(cp) != cp || cp == 0xAA || cp == 0xBA;
}

/* Python's lower() of U+03A3 inside a token: final sigma (U+03C2) when a cased
 * letter precedes and none follows, skipping case-ignorable characters both ways. */
static int32_t bt_lower_sigma(const int32_t *tok, int n, int i) {
    int j = i - 1;
    while (j >= 0 && bt_case_ignorable(tok[j])) j--;
    if (j < 0 || !bt_cased(tok[j])) return 0x3C3;
    j = i + 1;
    while (j < n && bt_case_ignorable(tok[j])) j++;
    return j < n && bt_cased(tok[j]) ? 0x3C3 : 0x3C2;
}

/* ---- buffers ---------------------------------------------------------------- */

static void *bt_reserve(void *p, int *cap, int need, size_t elem) {
    if (need <= *cap) return p;
    while (*cap < need) *cap = *cap ? 2 * *cap : 256;
    return xrealloc(p, (size_t)*cap * elem);
}

void basic_tokenizer_init(BasicTokenizer *bt, int lowercase) {
    memset(bt, 0, sizeof *bt);
    bt->lowercase = lowercase;
}

void basic_tokenizer_free(BasicTokenizer *bt) {
    free(bt->raw);
    free(bt->norm);
    free(bt->buf);
    free(bt->words);
    memset(bt, 0, sizeof *bt);
}

/* Append the lower-cased, NFD-decomposed form of cp to bt->norm. */
static void bt_push_decomposed(BasicTokenizer *bt, int32_t cp) {
    bt->norm = bt_reserve(bt->norm, &bt->norm_cap, bt->norm_len + BT_DECOMP_MAX, sizeof(int32_t));
    if (cp < 0x80) { bt->norm[bt->norm_len++] = cp; return; }
    int boundclass = 0;
    utf8proc_ssize_t n = utf8proc_decompose_char(cp, bt->norm + bt->norm_len, BT_DECOMP_MAX,
                                                 UTF8PROC_DECOMPOSE, &boundclass);
    CHECK_OR_DIE(n > 0 && n <= BT_DECOMP_MAX);
    bt->norm_len += (int)n;
}

/* NFD's canonical ordering: a stable sort by combining class of every run of
 * non-starters (what utf8proc_decompose does for whole strings). */
static void bt_canonical_order(int32_t *s, int n) {
    for (int i = 1; i < n; i++) {
        int ci = utf8proc_get_property(s[i])->combining_class;
        for (int j = i; ci != 0 && j > 0; j--) {
            int cj = utf8proc_get_property(s[j - 1])->combining_class;
            if (cj <= ci) break;
            int32_t t = s[j]; s[j] = s[j - 1]; s[j - 1] = t;
        }
    }
}

/* bt->raw -> bt->norm: lower(), NFD, drop Mn (or a plain copy when cased). */
static void bt_normalize_token(BasicTokenizer *bt) {
    bt->norm_len = 0;
    int ascii = 1;
    for (int i = 0; i < bt->raw_len; i++) {
        int32_t cp = bt->raw[i];
        if (!bt->lowercase) {
            bt->norm = bt_reserve(bt->norm, &bt->norm_cap, bt->norm_len + 1, sizeof(int32_t));
            bt->norm[bt->norm_len++] = cp;
        } else if (cp < 0x80) {
            bt_push_decomposed(bt, cp >= 'A' && cp <= 'Z' ? cp + ('a' - 'A') : cp);
        } else {
            ascii = 0;
            if (cp == 0x130) {                 /* full lower-case mapping: 'i' + dot above */
                bt_push_decomposed(bt, 'i');
                bt_push_decomposed(bt, 0x307);
            } else {
                bt_push_decomposed(bt, cp == 0x3A3 ? bt_lower_sigma(bt->raw, bt->raw_len, i) : utf8proc_tolower(cp));
            }
        }
    }
    if (!bt->lowercase || ascii) return;
    bt_canonical_order(bt->norm, bt->norm_len);
    int k = 0;
    for (int i = 0; i < bt->norm_len; i++)
        if (bt->norm[i] < 0x80 || utf8proc_category(bt->norm[i]) != UTF8PROC_CATEGORY_MN) bt->norm[k++] = bt->norm[i];
    bt->norm_len = k;
}

/* Append norm[from..to) as one word; words after `first` (the index of the
 * first word of this whitespace token) are joined to their predecessor. */
static void bt_emit_word(BasicTokenizer *bt, int from, int to, int first) {
    if (from >= to) return;
    BasicWord *w = &bt->words[bt->num_words++];
    w->joined = bt->num_words - 1 > first;
    w->off = bt->buf_len;
    w->nchars = (uint32_t)(to - from);
    for (int i = from; i < to; i++) bt->buf_len += (size_t)utf8_encode(bt->norm[i], bt->buf + bt->buf_len);
    w->len = (uint32_t)(bt->buf_len - w->off);
    bt->buf[bt->buf_len++] = '\0';
}

/* Normalise the pending whitespace token and split it on punctuation. */
static void bt_flush(BasicTokenizer *bt) {
    if (bt->raw_len == 0) return;
    bt_normalize_token(bt);
    bt->raw_len = 0;
    int n = bt->norm_len;
    bt->words = bt_reserve(bt->words, &bt->words_cap, bt->num_words + n, sizeof(BasicWord));
    size_t need = bt->buf_len + (size_t)n * (UTF8_MAX_BYTES + 1);
    if (need > bt->buf_cap) {
        while (bt->buf_cap < need) bt->buf_cap = bt->buf_cap ? 2 * bt->buf_cap : 4096;
        bt->buf = xrealloc(bt->buf, bt->buf_cap);
    }
    int start = 0, first = bt->num_words;
    for (int i = 0; i < n; i++) {
        if (!bt_is_punct(bt->norm[i])) continue;
        bt_emit_word(bt, start, i, first);
        bt_emit_word(bt, i, i + 1, first);
        start = i + 1;
    }
    bt_emit_word(bt, start, n, first);
}

static void bt_push_raw(BasicTokenizer *bt, int32_t cp) {
    bt->raw = bt_reserve(bt->raw, &bt->raw_cap, bt->raw_len + 1, sizeof(int32_t));
    bt->raw[bt->raw_len++] = cp;
}

int basic_tokenize(BasicTokenizer *bt, const char *text, size_t len) {
    bt->num_words = 0;
    bt->buf_len = 0;
    bt->raw_len = 0;
    for (size_t pos = 0; pos < len;) {
        unsigned char b = (unsigned char)text[pos];
        int32_t cp = b < 0x80 ? (pos++, (int32_t)b) : utf8_decode(text, len, &pos);
        if (bt_is_dropped(cp)) continue;
        if (bt_is_whitespace(cp)) { bt_flush(bt); continue; }
        if (bt_is_cjk(cp)) {
            bt_flush(bt);
            bt_push_raw(bt, cp);
            bt_flush(bt);
            continue;
        }
        bt_push_raw(bt, cp);
    }
    bt_flush(bt);
    return bt->num_words;
}
