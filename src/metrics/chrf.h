/* chrf.h — corpus chrF (Popović 2015) as sacreBLEU 2.x computes it with its
 * defaults (CHRF(): char_order 6, word_order 0, beta 2, whitespace False,
 * eps_smoothing False), printed as "chrF2".
 *
 * Why next to BLEU: chrF compares character n-grams, so it gives partial credit
 * for a right stem with a wrong ending (German inflection in Multi30k), needs no
 * tokenizer, and is the second number sacreBLEU users report.
 *
 * What it computes. A segment's text is lowercased (optional, Python's
 * str.lower()) and every Python whitespace character is removed; its character
 * n-grams (Unicode code points, not bytes) of orders 1..6 are counted. Against
 * one reference, order n gives [hyp count, ref count, matches], matches summing
 * min(hyp, ref) over the distinct hypothesis n-grams; a reference with no
 * n-gram of that order zeroes the hypothesis count there (sacreBLEU's
 * _get_match_statistics). With several references a segment keeps the
 * statistics of the reference with the best sentence-level chrF (the first on
 * a tie). The statistics are summed over the corpus; then, over the orders with
 * hyp > 0 and ref > 0 (the "effective order"), precision P and recall R are the
 * means of matches/hyp and matches/ref, and
 *     chrF = 100 * (1 + beta^2) * P * R / (beta^2 * P + R)   (0 when P + R = 0).
 * The same formula scores one segment when choosing among references. */
#ifndef GLUE_CHRF_H
#define GLUE_CHRF_H

#include <stddef.h>

#define CHRF_CHAR_ORDER 6
#define CHRF_BETA 2

typedef struct ChrfOptions {
    int lowercase;
} ChrfOptions;

/* Sufficient statistics, summed over segments (start from all zeros). */
typedef struct ChrfStats {
    long hyp[CHRF_CHAR_ORDER], ref[CHRF_CHAR_ORDER], match[CHRF_CHAR_ORDER];
} ChrfStats;

/* Add one segment (raw UTF-8 text) against its nrefs >= 1 references. */
void chrf_add_segment(ChrfStats *st, const char *hyp, const char *const *refs, int nrefs,
                      const ChrfOptions *opt);
/* chrF (0..100) of summed (or one segment's) statistics. */
double chrf_from_stats(const ChrfStats *st);
/* Corpus chrF of n hypothesis lines; refs[k][i] is reference k of line i. */
double chrf_corpus(const char *const *hyp, const char *const *const *refs, int nrefs, int n,
                   const ChrfOptions *opt);
/* sacreBLEU 2.x's chrF signature, our version in place of its:
 * "nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:glue-0.2.0". */
void chrf_signature(const ChrfOptions *opt, int nrefs, char *out, size_t cap);

#endif
