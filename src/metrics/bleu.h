/* bleu.h — corpus BLEU as sacreBLEU 2.x defines it, with one or several
 * references per segment.
 *
 * Each segment is lowercased (optional, like Python's str.lower()), stripped of
 * trailing whitespace, tokenized (13a = mteval-v13a, or none), split on Unicode
 * whitespace. A hypothesis n-gram (1..4) is clipped by its maximum count over
 * the segment's references; the segment's reference length is the one closest
 * to the hypothesis length, the shorter on a tie (sacreBLEU's 'closest'). Matches
 * and lengths are summed over the corpus; BLEU = BP * exp(mean log p_n) with the
 * 'exp' smoothing (an order with no match gets p_n = 1 / (2^k * total_n), k
 * counting such orders) and BP = exp(1 - ref_len / sys_len) when the system is
 * shorter. With one reference this is exactly the single-reference BLEU.
 *
 * Unlike the GLUE metrics, BLEU and its precisions are on sacreBLEU's 0..100
 * scale. Text is UTF-8; sacreBLEU cannot read invalid UTF-8 at all, so `glue bleu`
 * rejects such files, and the library decodes stray bytes as U+FFFD (text/utf8.h). */
#ifndef GLUE_BLEU_H
#define GLUE_BLEU_H

#include <stddef.h>

#define BLEU_MAX_ORDER 4

typedef enum { BLEU_TOKENIZE_13A = 0, BLEU_TOKENIZE_NONE } BleuTokenize;

typedef struct BleuOptions {
    int lowercase;
    BleuTokenize tokenize;
} BleuOptions;

/* Sufficient statistics, summed over segments (start from all zeros). */
typedef struct BleuStats {
    long sys_len, ref_len;
    long correct[BLEU_MAX_ORDER], total[BLEU_MAX_ORDER];
} BleuStats;

typedef struct BleuScore {
    double bleu;                         /* 0..100 */
    double precisions[BLEU_MAX_ORDER];   /* 0..100, smoothed as sacreBLEU reports them */
    double bp;
    long sys_len, ref_len;
} BleuScore;

/* "13a" / "none" -> 0 and *out; -1 if unknown. */
int bleu_tokenize_parse(const char *name, BleuTokenize *out);
const char *bleu_tokenize_name(BleuTokenize t);

/* The preprocessing steps, exposed for tests and for printing tokenized text.
 * Each returns a malloc'd string. */
char *bleu_lowercase(const char *s);        /* Python str.lower() (full mapping of U+0130, final sigma) */
char *bleu_tokenize_13a(const char *s);     /* sacreBLEU Tokenizer13a, on an already rstripped line */
char *bleu_preprocess(const char *s, const BleuOptions *opt);  /* lowercase? + rstrip + tokenize */

/* Add one segment (raw text) to the statistics: against its nrefs >= 1
 * references, or against a single one. */
void bleu_add_segment_refs(BleuStats *st, const char *hyp, const char *const *refs, int nrefs,
                           const BleuOptions *opt);
void bleu_add_segment(BleuStats *st, const char *hyp, const char *ref, const BleuOptions *opt);
/* sacreBLEU's 'closest' rule: the reference length nearest hyp_len, the
 * shorter one on a tie. nrefs >= 1. */
long bleu_closest_ref_len(long hyp_len, const long *ref_lens, int nrefs);
/* The score from summed statistics. */
void bleu_from_stats(const BleuStats *st, BleuScore *out);
/* Corpus BLEU of n hypothesis lines against n reference lines. */
void bleu_corpus(const char *const *hyp, const char *const *ref, int n, const BleuOptions *opt,
                 BleuScore *out);
/* The same against nrefs reference streams: refs[k][i] is reference k of line i. */
void bleu_corpus_refs(const char *const *hyp, const char *const *const *refs, int nrefs, int n,
                      const BleuOptions *opt, BleuScore *out);
/* sacreBLEU 2.x's signature of these settings, our version in place of its:
 * "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:glue-0.2.0". */
void bleu_signature(const BleuOptions *opt, int nrefs, char *out, size_t cap);

#endif
