/* chrf.c — sacreBLEU 2.x corpus chrF (see chrf.h): character n-gram statistics
 * per segment, the best of several references, and the effective-order F-score.
 *
 * n-grams are runs of code points compared as int32 tuples, counted by sorting
 * (no hashing: segments are short, and sorting gives exact counts). The
 * floating-point steps follow sacreBLEU's _compute_f_score operation by
 * operation, so the score is the same double Python computes. */
#include "metrics/chrf.h"

#include "core/common.h"
#include "core/provenance.h"
#include "metrics/bleu.h"
#include "text/utf8.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A segment as sacreBLEU's extract_all_char_ngrams sees it: ''.join(s.split()),
 * as code points. */
typedef struct { int32_t *cp; int n; } Chars;

typedef struct { const int32_t *p; int n; } Gram;   /* cp[p .. p+n) */

/* The code points of s (lowercased when asked), Python whitespace removed. */
static Chars chars_of(const char *s, const ChrfOptions *opt) {
    char *low = opt->lowercase ? bleu_lowercase(s) : NULL;
    const char *t = low ? low : s;
    size_t len = strlen(t);
    Chars c = {xmalloc(sizeof *c.cp * (len + 1)), 0};
    for (size_t pos = 0; pos < len;) {
        int32_t cp = utf8_decode(t, len, &pos);
        if (!utf8_py_isspace(cp)) c.cp[c.n++] = cp;
    }
    free(low);
    return c;
}

static int gram_cmp(const void *a, const void *b) {
    const Gram *x = a, *y = b;
    for (int k = 0; k < x->n; k++)
        if (x->p[k] != y->p[k]) return x->p[k] < y->p[k] ? -1 : 1;
    return 0;
}

/* The n-grams of order n of c, sorted; *count of them (0 when c is shorter). */
static Gram *grams_sorted(const Chars *c, int n, int *count) {
    int m = c->n - n + 1 > 0 ? c->n - n + 1 : 0;
    Gram *g = xmalloc(sizeof *g * (size_t)(m ? m : 1));
    for (int i = 0; i < m; i++) g[i] = (Gram){c->cp + i, n};
    if (m > 1) qsort(g, (size_t)m, sizeof *g, gram_cmp);
    *count = m;
    return g;
}

/* Sum over the distinct n-grams of h of min(count in h, count in r). */
static long gram_matches(const Gram *h, int nh, const Gram *r, int nr) {
    long match = 0;
    int i = 0, j = 0;
    while (i < nh && j < nr) {
        int c = gram_cmp(&h[i], &r[j]);
        if (c < 0) { i++; continue; }
        if (c > 0) { j++; continue; }
        int i2 = i, j2 = j;
        while (i2 < nh && gram_cmp(&h[i2], &h[i]) == 0) i2++;
        while (j2 < nr && gram_cmp(&r[j2], &r[j]) == 0) j2++;
        match += (i2 - i) < (j2 - j) ? (i2 - i) : (j2 - j);
        i = i2;
        j = j2;
    }
    return match;
}

/* The hypothesis's sorted n-grams of every order, computed once per segment. */
typedef struct { Gram *g[CHRF_CHAR_ORDER]; int n[CHRF_CHAR_ORDER]; } HypGrams;

/* [hyp, ref, match] per order of the hypothesis against one reference. A
 * reference without n-grams of an order counts no hypothesis n-grams there
 * (sacreBLEU: `hyp_count if ref_ngrams else 0`). */
static void pair_stats(const HypGrams *h, const Chars *ref, ChrfStats *out) {
    for (int k = 0; k < CHRF_CHAR_ORDER; k++) {
        int nr;
        Gram *r = grams_sorted(ref, k + 1, &nr);
        out->hyp[k] = nr > 0 ? h->n[k] : 0;
        out->ref[k] = nr;
        out->match[k] = gram_matches(h->g[k], h->n[k], r, nr);
        free(r);
    }
}

void chrf_add_segment(ChrfStats *st, const char *hyp, const char *const *refs, int nrefs,
                      const ChrfOptions *opt) {
    CHECK_OR_DIE(nrefs >= 1);
    Chars hc = chars_of(hyp, opt);
    HypGrams h;
    for (int k = 0; k < CHRF_CHAR_ORDER; k++) h.g[k] = grams_sorted(&hc, k + 1, &h.n[k]);
    ChrfStats best, cur;
    memset(&best, 0, sizeof best);
    double best_f = -1.0;
    for (int r = 0; r < nrefs; r++) {
        Chars rc = chars_of(refs[r], opt);
        pair_stats(&h, &rc, &cur);
        free(rc.cp);
        double f = chrf_from_stats(&cur);
        if (f > best_f) { best_f = f; best = cur; }   /* strictly better: the first wins ties */
    }
    for (int k = 0; k < CHRF_CHAR_ORDER; k++) {
        st->hyp[k] += best.hyp[k];
        st->ref[k] += best.ref[k];
        st->match[k] += best.match[k];
        free(h.g[k]);
    }
    free(hc.cp);
}

/* sacreBLEU's _compute_f_score without eps smoothing, step by step (the same
 * rounding): precisions and recalls averaged over the effective orders. */
double chrf_from_stats(const ChrfStats *st) {
    const double factor = CHRF_BETA * CHRF_BETA;
    double avg_prec = 0.0, avg_rec = 0.0;
    int effective = 0;
    for (int k = 0; k < CHRF_CHAR_ORDER; k++) {
        if (st->hyp[k] <= 0 || st->ref[k] <= 0) continue;
        avg_prec += (double)st->match[k] / (double)st->hyp[k];
        avg_rec += (double)st->match[k] / (double)st->ref[k];
        effective++;
    }
    if (effective == 0) return 0.0;
    avg_prec /= effective;
    avg_rec /= effective;
    if (avg_prec + avg_rec == 0.0) return 0.0;
    double score = (1 + factor) * avg_prec * avg_rec;
    score /= factor * avg_prec + avg_rec;
    return 100 * score;
}

double chrf_corpus(const char *const *hyp, const char *const *const *refs, int nrefs, int n,
                   const ChrfOptions *opt) {
    ChrfStats st;
    memset(&st, 0, sizeof st);
    const char **seg = xmalloc(sizeof *seg * (size_t)(nrefs > 0 ? nrefs : 1));
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < nrefs; k++) seg[k] = refs[k][i];
        chrf_add_segment(&st, hyp[i], seg, nrefs, opt);
    }
    free(seg);
    return chrf_from_stats(&st);
}

void chrf_signature(const ChrfOptions *opt, int nrefs, char *out, size_t cap) {
    snprintf(out, cap, "nrefs:%d|case:%s|eff:yes|nc:%d|nw:0|space:no|version:glue-%s", nrefs,
             opt->lowercase ? "lc" : "mixed", CHRF_CHAR_ORDER, GLUE_VERSION);
}
