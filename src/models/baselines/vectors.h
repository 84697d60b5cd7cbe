/* vectors.h — word vectors trained on raw text, written as a .vec text file
 * that TextCNN and the BiLSTM load (models/baselines/word_features.h,
 * word_vectors_load). Three methods:
 *   skipgram  fastText's skip-gram with negative sampling and character
 *             n-grams (Bojanowski et al. 2017, "Enriching Word Vectors with
 *             Subword Information");
 *   cbow      fastText's CBOW: the mean of the input rows of the context words
 *             (and their n-grams) predicts the centre word, negative sampling
 *             (Mikolov et al. 2013); the rest as skip-gram;
 *   glove     GloVe (Pennington et al. 2014), vectors_glove.h: weighted least
 *             squares on co-occurrence counts, AdaGrad, vectors W + W~.
 * All three read the corpus and build the vocabulary the same way (below).
 *
 * What follows the reference (facebookresearch/fastText, `fasttext skipgram`):
 * a word is the mean of its input rows (its own row and the hashed rows of the
 * character n-grams of "<word>", minn..maxn characters); each kept word
 * predicts the words within a random window of 1..window on each side, with
 * one positive and `neg` negative logistic losses, negatives drawn from a table
 * of counts^0.5; frequent words are subsampled (keep probability
 * sqrt(t/f) + t/f); the learning rate decays linearly to 0 over all tokens of
 * all epochs; input rows start U(-1/dim, 1/dim), output rows at 0; Hogwild SGD
 * on the fastText worker pool (fasttext_workers.c). A word's vector in the
 * output is the mean of its input rows, as `fasttext print-word-vectors`.
 *
 * Ours: words are the BERT basic tokenizer's (lower-cased, punctuation split)
 * so they match the vocabulary of the word-level models exactly; lines holding
 * only WikiExtractor's "<doc ...>" / "</doc>" markers and empty lines are
 * skipped; no end-of-line token. Deterministic for a seed with one thread;
 * with more, Hogwild's unsynchronised updates make runs differ slightly (as
 * the reference's). */
#ifndef GLUE_VECTORS_H
#define GLUE_VECTORS_H

#include <stdint.h>

typedef enum { VEC_SKIPGRAM, VEC_CBOW, VEC_GLOVE } VecMethod;
extern const char *const VEC_METHODS[];   /* "skipgram", "cbow", "glove", NULL: VecMethod order */

typedef struct VecConfig {
    VecMethod method;
    int dim;           /* vector size */
    int epochs;
    double lr;         /* initial learning rate (reference 0.05) */
    int window;        /* max context words on each side (reference 5) */
    int neg;           /* negatives per positive (reference 5) */
    int min_count;     /* words seen fewer times are dropped (reference 5) */
    int minn, maxn;    /* char n-gram lengths; maxn 0: words only (reference 3, 6) */
    long bucket;       /* hashed rows for the n-grams (reference 2,000,000) */
    double sample;     /* subsampling threshold t (reference 1e-4); not GloVe */
    double x_max, alpha; /* GloVe's weighting f(x) = min(1, (x / x_max)^alpha) (paper: 100, 3/4) */
    long max_words;    /* read at most this many whitespace-separated words (0: all) */
    int threads;
    uint64_t seed;
    int show_progress; /* progress line on stderr */
} VecConfig;

/* The reference's skip-gram defaults with dim 300, all threads, seed 1
 * (GloVe's x_max and alpha set too). */
VecConfig vectors_default_config(void);

typedef struct VecStats {
    long lines;        /* lines of text used */
    long words;        /* their words (basic tokenizer) */
    int vocab;         /* words written (those with >= min_count occurrences) */
    double loss;       /* mean loss over the last epoch's updates (GloVe: per co-occurrence) */
    double loss_first; /* the same over the first epoch */
    double seconds;    /* training time */
} VecStats;

/* Trains on the corpus files (plain or .gz, one text per line) and writes
 * out_path (written to out_path.tmp, then renamed). 0 ok; 1 after one clear
 * message (unreadable corpus, no words, unwritable output); 2 for a bad
 * setting. st may be NULL. */
int vectors_train(const VecConfig *c, const char *const *corpora, int ncorpora, const char *out_path, VecStats *st);

#endif
