/* vectors_glove.h — GloVe word vectors (Pennington, Socher and Manning 2014,
 * "GloVe: Global Vectors for Word Representation"), the `glove` method of
 * `glue vectors train` (vectors.h reads the corpus and builds the vocabulary).
 *
 * What follows the paper and its reference code (stanfordnlp/GloVe):
 *   counts   X_ij: for each word, every word within `window` words after it (in
 *            the same line) adds 1/d to X_ij and X_ji, d the distance;
 *   cost     J = sum over X_ij > 0 of f(X_ij) (w_i . w~_j + b_i + b~_j - log X_ij)^2,
 *            f(x) = (x / x_max)^alpha below x_max, 1 above (x_max 100, alpha 3/4);
 *   training AdaGrad (lr 0.05, squared-gradient sums start at 1, as the
 *            reference), each epoch one pass over the nonzero X_ij in one
 *            random order (shuffled once), Hogwild over the worker pool;
 *            w, w~ start U(-0.5/D, 0.5/D), biases too;
 *   output   w + w~ per word (the reference's default).
 * Ours: the corpus words and vocabulary are skip-gram's (basic tokenizer,
 * min_count); words out of the vocabulary are dropped before the windows are
 * taken, as the reference's; no char n-grams. */
#ifndef GLUE_VECTORS_GLOVE_H
#define GLUE_VECTORS_GLOVE_H

#include <stdint.h>

#include "models/baselines/vectors.h"
#include "models/baselines/word_features.h"

typedef struct GloveCooc {
    int32_t i, j;   /* word ids */
    float x;        /* X_ij */
} GloveCooc;

/* The nonzero X_ij of text (word ids >= WF_NUM_RESERVED, all < V) in *out
 * (caller frees), in no particular order; returns their number. */
long glove_count(const WordSeqs *text, int V, int window, GloveCooc **out);

typedef struct GloveParams {
    int V, D;
    float *w, *wt;   /* (V, D) word and context vectors */
    float *b, *bt;   /* (V) their biases */
} GloveParams;

/* f(x) of the weighting. */
double glove_weight(double x, double x_max, double alpha);
/* J/2 over e[0..n) (the reference's cost); when grad is not NULL (same
 * shapes, zeroed by the caller) adds dJ/2 to it. */
double glove_cost(const GloveParams *p, const GloveCooc *e, long n, double x_max, double alpha, GloveParams *grad);

/* Counts, trains and writes out_path (as vectors_train); st may be NULL. */
int glove_train(const VecConfig *c, const WordVocab *v, const WordSeqs *text, const char *out_path, VecStats *st);

#endif
