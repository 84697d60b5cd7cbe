/* bleu.c — sacreBLEU 2.x corpus BLEU (see bleu.h): preprocessing (Python-style
 * lowercase, rstrip and whitespace split; the 13a tokenizer) and n-gram
 * statistics clipped against one or several references.
 *
 * sacreBLEU runs on Python str, i.e. code points. The 13a rules only ever test
 * ASCII classes or their complements ([^0-9]), so scanning UTF-8 bytes gives the
 * same matches as scanning code points: a multi-byte character is never part of
 * a positive class, and its last byte stands in for it before a '.' or ','. */
#include "metrics/bleu.h"

#include "core/common.h"
#include "core/provenance.h"
#include "text/utf8.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <utf8proc.h>

/* ---- a growing string ---------------------------------------------------- */

typedef struct { char *s; size_t n, cap; } StrBuf;

static void sb_init(StrBuf *b, size_t cap) {
    b->cap = cap + 16;
    b->s = xmalloc(b->cap);
    b->s[0] = '\0';
    b->n = 0;
}

static void sb_put(StrBuf *b, const char *s, size_t n) {
    if (b->n + n + 1 > b->cap) {
        while (b->n + n + 1 > b->cap) b->cap *= 2;
        b->s = xrealloc(b->s, b->cap);
    }
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = '\0';
}

static void sb_putc(StrBuf *b, char c) { sb_put(b, &c, 1); }

/* ---- code points ----------------------------------------------------------- */

/* Unicode "Cased": has a case or is a letter of a cased category. */
static int is_cased(int32_t c) {
    utf8proc_category_t k = utf8proc_category(c);
    return k == UTF8PROC_CATEGORY_LU || k == UTF8PROC_CATEGORY_LL || k == UTF8PROC_CATEGORY_LT ||
           utf8proc_tolower(c) != c || utf8proc_toupper(c) != c;
}

/* Unicode "Case_Ignorable": marks, format characters, modifiers, and the
 * Word_Break MidLetter / MidNumLet / Single_Quote characters. */
static int is_case_ignorable(int32_t c) {
    static const int32_t MID[] = {0x27, 0x2E, 0x3A, 0xB7, 0x387, 0x55F, 0x5F4, 0x2018, 0x2019,
                                  0x2024, 0x2027, 0xFE13, 0xFE52, 0xFE55, 0xFF07, 0xFF0E, 0xFF1A};
    utf8proc_category_t k = utf8proc_category(c);
    if (k == UTF8PROC_CATEGORY_MN || k == UTF8PROC_CATEGORY_ME || k == UTF8PROC_CATEGORY_CF ||
        k == UTF8PROC_CATEGORY_LM || k == UTF8PROC_CATEGORY_SK)
        return 1;
    for (size_t i = 0; i < sizeof MID / sizeof MID[0]; i++)
        if (c == MID[i]) return 1;
    return 0;
}

/* Python lowercases U+03A3 to final sigma when a cased letter precedes it and
 * none follows (skipping case-ignorable characters both ways). */
static int sigma_is_final(const int32_t *cp, int n, int i) {
    int j = i - 1;
    while (j >= 0 && is_case_ignorable(cp[j])) j--;
    if (j < 0 || !is_cased(cp[j])) return 0;
    j = i + 1;
    while (j < n && is_case_ignorable(cp[j])) j++;
    return j == n || !is_cased(cp[j]);
}

char *bleu_lowercase(const char *s) {
    size_t len = strlen(s);
    int32_t *cp = xmalloc(sizeof *cp * (len + 1));
    int n = 0;
    for (size_t pos = 0; pos < len;) cp[n++] = utf8_decode(s, len, &pos);
    StrBuf b;
    sb_init(&b, len + 8);
    for (int i = 0; i < n; i++) {
        char enc[UTF8_MAX_BYTES];
        int32_t c = cp[i];
        if (c == 0x130) { sb_put(&b, "i\xCC\x87", 3); continue; }   /* İ -> i + combining dot */
        c = c == 0x3A3 ? (sigma_is_final(cp, n, i) ? 0x3C2 : 0x3C3) : utf8proc_tolower(c);
        sb_put(&b, enc, (size_t)utf8_encode(c, enc));
    }
    free(cp);
    return b.s;
}

/* Length of s without trailing (Python) whitespace. */
static size_t rstrip_len(const char *s, size_t len) {
    size_t end = 0;
    for (size_t pos = 0; pos < len;)
        if (!utf8_py_isspace(utf8_decode(s, len, &pos))) end = pos;
    return end;
}

/* ---- the 13a tokenizer ------------------------------------------------------ */

/* str.replace(from, to): every non-overlapping occurrence, left to right. */
static char *replace_all(char *s, const char *from, const char *to) {
    size_t nf = strlen(from), nt = strlen(to);
    if (!strstr(s, from)) return s;
    StrBuf b;
    sb_init(&b, strlen(s));
    for (const char *p = s, *q; ; p = q + nf) {
        q = strstr(p, from);
        if (!q) { sb_put(&b, p, strlen(p)); break; }
        sb_put(&b, p, (size_t)(q - p));
        sb_put(&b, to, nt);
    }
    free(s);
    return b.s;
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }
static int is_period_comma(char c) { return c == '.' || c == ','; }

/* [\{-\~\[-\` -\&\(-\+\:-\@\/]: ASCII punctuation and symbols except ' , - . */
static int is_13a_symbol(char c) {
    return (c >= '{' && c <= '~') || (c >= '[' && c <= '`') || (c >= ' ' && c <= '&') ||
           (c >= '(' && c <= '+') || (c >= ':' && c <= '@') || c == '/';
}

/* The three two-character rules, as re.sub applies them: leftmost matches,
 * scanning resumes after a match, no overlaps.
 *   rule 0: ([^0-9])([\.,]) -> "\1 \2 "
 *   rule 1: ([\.,])([^0-9]) -> " \1 \2"
 *   rule 2: ([0-9])(-)      -> "\1 \2 "                                        */
static char *apply_pair_rule(const char *s, int rule) {
    size_t len = strlen(s);
    StrBuf b;
    sb_init(&b, len + len / 2);
    for (size_t i = 0; i < len;) {
        char x = s[i], y = i + 1 < len ? s[i + 1] : '\0';
        int hit = i + 1 < len &&
                  (rule == 0 ? !is_digit(x) && is_period_comma(y)
                   : rule == 1 ? is_period_comma(x) && !is_digit(y)
                               : is_digit(x) && y == '-');
        if (!hit) { sb_putc(&b, x); i++; continue; }
        char out[4] = {x, ' ', y, ' '};
        if (rule == 1) { out[0] = ' '; out[1] = x; out[2] = ' '; out[3] = y; }
        sb_put(&b, out, 4);
        i += 2;
    }
    return b.s;
}

/* Split on Python whitespace and join with single spaces (' '.join(s.split())). */
static char *squeeze_spaces(const char *s) {
    size_t len = strlen(s);
    StrBuf b;
    sb_init(&b, len);
    int pending = 0;
    for (size_t i = 0, next = 0; i < len; i = next) {
        if (utf8_py_isspace(utf8_decode(s, len, &next))) { pending = b.n > 0; continue; }
        if (pending) sb_putc(&b, ' ');
        pending = 0;
        sb_put(&b, s + i, next - i);
    }
    return b.s;
}

char *bleu_tokenize_13a(const char *line) {
    char *s = xstrdup(line);
    s = replace_all(s, "<skipped>", "");
    s = replace_all(s, "-\n", "");
    s = replace_all(s, "\n", " ");
    if (strchr(s, '&')) {
        s = replace_all(s, "&quot;", "\"");
        s = replace_all(s, "&amp;", "&");
        s = replace_all(s, "&lt;", "<");
        s = replace_all(s, "&gt;", ">");
    }
    size_t len = strlen(s);
    StrBuf b;   /* " " + s + " ", each symbol spaced out */
    sb_init(&b, 3 * len + 2);
    sb_putc(&b, ' ');
    for (size_t i = 0; i < len; i++) {
        if (is_13a_symbol(s[i])) { char t[3] = {' ', s[i], ' '}; sb_put(&b, t, 3); }
        else sb_putc(&b, s[i]);
    }
    sb_putc(&b, ' ');
    free(s);
    s = b.s;
    for (int rule = 0; rule < 3; rule++) {
        char *t = apply_pair_rule(s, rule);
        free(s);
        s = t;
    }
    char *out = squeeze_spaces(s);
    free(s);
    return out;
}

int bleu_tokenize_parse(const char *name, BleuTokenize *out) {
    if (strcasecmp(name, "13a") == 0) { *out = BLEU_TOKENIZE_13A; return 0; }
    if (strcasecmp(name, "none") == 0) { *out = BLEU_TOKENIZE_NONE; return 0; }
    return -1;
}

const char *bleu_tokenize_name(BleuTokenize t) { return t == BLEU_TOKENIZE_NONE ? "none" : "13a"; }

char *bleu_preprocess(const char *s, const BleuOptions *opt) {
    char *low = opt->lowercase ? bleu_lowercase(s) : xstrdup(s);
    low[rstrip_len(low, strlen(low))] = '\0';
    if (opt->tokenize == BLEU_TOKENIZE_NONE) return low;
    char *tok = bleu_tokenize_13a(low);
    free(low);
    return tok;
}

/* ---- n-gram statistics ------------------------------------------------------ */

typedef struct { const char *s; int len, pos; } Token;   /* pos: index in hyp, then each ref */
typedef struct { int n; int id[BLEU_MAX_ORDER]; } Ngram;

/* Tokens of s split on Python whitespace, appended to *tok (grown as needed). */
static int split_tokens(const char *s, Token **tok, int *count, int *cap) {
    size_t len = strlen(s);
    int start = -1, found = 0;
    for (size_t i = 0, next = 0; i <= len; i = next) {
        int space = i == len ? (next = len + 1, 1) : utf8_py_isspace(utf8_decode(s, len, &next));
        if (!space && start < 0) start = (int)i;
        if (space && start >= 0) {
            if (*count == *cap) { *cap = *cap ? 2 * *cap : 64; *tok = xrealloc(*tok, sizeof **tok * (size_t)*cap); }
            (*tok)[*count] = (Token){s + start, (int)i - start, *count};
            (*count)++;
            found++;
            start = -1;
        }
    }
    return found;
}

static int token_cmp(const void *a, const void *b) {
    const Token *x = a, *y = b;
    int m = x->len < y->len ? x->len : y->len, c = memcmp(x->s, y->s, (size_t)m);
    return c ? c : (x->len > y->len) - (x->len < y->len);
}

static int ngram_cmp(const void *a, const void *b) {
    const Ngram *x = a, *y = b;
    if (x->n != y->n) return x->n - y->n;
    for (int k = 0; k < x->n; k++)
        if (x->id[k] != y->id[k]) return (x->id[k] > y->id[k]) - (x->id[k] < y->id[k]);
    return 0;
}

/* All 1..4-grams of ids[0..n), sorted. Returns the count. */
static int ngrams_sorted(const int *ids, int n, Ngram **out) {
    int cap = BLEU_MAX_ORDER * (n > 0 ? n : 1), m = 0;
    Ngram *g = xmalloc(sizeof *g * (size_t)cap);
    for (int order = 1; order <= BLEU_MAX_ORDER; order++)
        for (int i = 0; i + order <= n; i++) {
            g[m].n = order;
            for (int k = 0; k < BLEU_MAX_ORDER; k++) g[m].id[k] = k < order ? ids[i + k] : -1;
            m++;
        }
    qsort(g, (size_t)m, sizeof *g, ngram_cmp);
    *out = g;
    return m;
}

/* For each distinct hypothesis n-gram (indexed by the first of its run in h),
 * raise best[i] to its count in the reference r: sacreBLEU clips a hypothesis
 * n-gram by its MAXIMUM count over the segment's references. */
static void max_ref_counts(const Ngram *h, int nh, const Ngram *r, int nr, int *best) {
    int i = 0, j = 0;
    while (i < nh && j < nr) {
        int c = ngram_cmp(&h[i], &r[j]);
        if (c < 0) { i++; continue; }
        if (c > 0) { j++; continue; }
        int i2 = i, j2 = j;
        while (i2 < nh && ngram_cmp(&h[i2], &h[i]) == 0) i2++;
        while (j2 < nr && ngram_cmp(&r[j2], &r[j]) == 0) j2++;
        if (j2 - j > best[i]) best[i] = j2 - j;
        i = i2;
        j = j2;
    }
}

/* Clipped matches: for each distinct hypothesis n-gram, min(hyp count, best ref count). */
static void add_clipped(const Ngram *h, int nh, const int *best, long *correct) {
    for (int i = 0, i2; i < nh; i = i2) {
        for (i2 = i + 1; i2 < nh && ngram_cmp(&h[i2], &h[i]) == 0; i2++) {}
        correct[h[i].n - 1] += (i2 - i) < best[i] ? (i2 - i) : best[i];
    }
}

long bleu_closest_ref_len(long hyp_len, const long *ref_lens, int nrefs) {
    long best = -1, best_diff = -1;
    for (int k = 0; k < nrefs; k++) {
        long diff = labs(hyp_len - ref_lens[k]);
        if (best_diff < 0 || diff < best_diff || (diff == best_diff && ref_lens[k] < best)) {
            best_diff = diff;
            best = ref_lens[k];
        }
    }
    return best;
}

/* One segment's tokens: the hypothesis's first, then each reference's, all
 * numbered by distinct string so n-grams compare as small int tuples. */
typedef struct {
    char **text;     /* preprocessed: [0] the hypothesis, [1..] the references */
    long *len;       /* tokens of each text */
    int *ids;        /* token ids, text after text */
    Token *tok;
    int count, cap;
} SegmentTokens;

static void segment_tokens(SegmentTokens *t, const char *hyp, const char *const *refs, int nrefs,
                           const BleuOptions *opt) {
    memset(t, 0, sizeof *t);
    t->text = xmalloc(sizeof *t->text * (size_t)(nrefs + 1));
    t->len = xmalloc(sizeof *t->len * (size_t)(nrefs + 1));
    for (int k = 0; k <= nrefs; k++) {
        t->text[k] = bleu_preprocess(k == 0 ? hyp : refs[k - 1], opt);
        t->len[k] = split_tokens(t->text[k], &t->tok, &t->count, &t->cap);
    }
    t->ids = xmalloc(sizeof *t->ids * (size_t)(t->count ? t->count : 1));
    if (t->count > 0) qsort(t->tok, (size_t)t->count, sizeof *t->tok, token_cmp);   /* tok is NULL when all are empty */
    for (int i = 0, id = -1; i < t->count; i++) {
        if (i == 0 || token_cmp(&t->tok[i], &t->tok[i - 1]) != 0) id++;
        t->ids[t->tok[i].pos] = id;
    }
}

static void segment_tokens_free(SegmentTokens *t, int nrefs) {
    for (int k = 0; k <= nrefs; k++) free(t->text[k]);
    free(t->text); free(t->len); free(t->ids); free(t->tok);
}

void bleu_add_segment_refs(BleuStats *st, const char *hyp, const char *const *refs, int nrefs,
                           const BleuOptions *opt) {
    CHECK_OR_DIE(nrefs >= 1);
    SegmentTokens t;
    segment_tokens(&t, hyp, refs, nrefs, opt);
    int nh = (int)t.len[0];
    Ngram *gh;
    int mh = ngrams_sorted(t.ids, nh, &gh);
    int *best = xcalloc((size_t)(mh ? mh : 1), sizeof *best);
    for (int k = 1, at = nh; k <= nrefs; at += (int)t.len[k], k++) {
        Ngram *gr;
        int mr = ngrams_sorted(t.ids + at, (int)t.len[k], &gr);
        max_ref_counts(gh, mh, gr, mr, best);
        free(gr);
    }
    add_clipped(gh, mh, best, st->correct);
    for (int order = 1; order <= BLEU_MAX_ORDER; order++)
        if (nh >= order) st->total[order - 1] += nh - order + 1;
    st->sys_len += nh;
    st->ref_len += bleu_closest_ref_len(nh, t.len + 1, nrefs);
    free(best);
    free(gh);
    segment_tokens_free(&t, nrefs);
}

void bleu_add_segment(BleuStats *st, const char *hyp, const char *ref, const BleuOptions *opt) {
    bleu_add_segment_refs(st, hyp, &ref, 1, opt);
}

void bleu_from_stats(const BleuStats *st, BleuScore *out) {
    memset(out, 0, sizeof *out);
    out->sys_len = st->sys_len;
    out->ref_len = st->ref_len;
    if (st->sys_len < st->ref_len)
        out->bp = st->sys_len > 0 ? exp(1.0 - (double)st->ref_len / (double)st->sys_len) : 0.0;
    else
        out->bp = 1.0;
    long any = 0;
    for (int k = 0; k < BLEU_MAX_ORDER; k++) any += st->correct[k];
    if (!any) return;   /* sacreBLEU: no match at all is BLEU 0 with zero precisions */
    double smooth = 1.0, log_sum = 0;
    int defined = 1;
    for (int k = 0; k < BLEU_MAX_ORDER; k++) {
        /* An order the system never reaches (all lines shorter) leaves p = 0,
         * which makes BLEU 0, as sacreBLEU's my_log(0) = -9999999999 does. */
        if (st->total[k] == 0) { defined = 0; break; }
        if (st->correct[k] == 0) {
            smooth *= 2;
            out->precisions[k] = 100.0 / (smooth * (double)st->total[k]);
        } else {
            out->precisions[k] = 100.0 * (double)st->correct[k] / (double)st->total[k];
        }
        log_sum += log(out->precisions[k]);
    }
    out->bleu = defined ? out->bp * exp(log_sum / BLEU_MAX_ORDER) : 0.0;
}

void bleu_corpus(const char *const *hyp, const char *const *ref, int n, const BleuOptions *opt,
                 BleuScore *out) {
    bleu_corpus_refs(hyp, &ref, 1, n, opt, out);
}

void bleu_corpus_refs(const char *const *hyp, const char *const *const *refs, int nrefs, int n,
                      const BleuOptions *opt, BleuScore *out) {
    BleuStats st;
    memset(&st, 0, sizeof st);
    const char **seg = xmalloc(sizeof *seg * (size_t)(nrefs > 0 ? nrefs : 1));
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < nrefs; k++) seg[k] = refs[k][i];
        bleu_add_segment_refs(&st, hyp[i], seg, nrefs, opt);
    }
    free(seg);
    bleu_from_stats(&st, out);
}

void bleu_signature(const BleuOptions *opt, int nrefs, char *out, size_t cap) {
    snprintf(out, cap, "nrefs:%d|case:%s|eff:no|tok:%s|smooth:exp|version:glue-%s", nrefs,
             opt->lowercase ? "lc" : "mixed", bleu_tokenize_name(opt->tokenize), GLUE_VERSION);
}
