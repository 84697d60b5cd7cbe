/* vectors_eval.h — intrinsic checks of a .vec file (`glue vectors eval`):
 * nearest neighbours by cosine, and word-analogy accuracy in the format of
 * word2vec's questions-words.txt (Mikolov et al. 2013): ": category" lines,
 * then "a b c d" lines meaning a : b :: c : d. A question is answered by the
 * word closest (cosine) to b - a + c among all words of the file except a, b
 * and c (3CosAdd, as word2vec's compute-accuracy, without its cut to the
 * 30,000 most frequent words); questions with a word missing from the file
 * count as not answered (reported apart, not as wrong). Words are matched
 * lower-cased, as the vectors are trained. */
#ifndef GLUE_VECTORS_EVAL_H
#define GLUE_VECTORS_EVAL_H

#include "text/strmap.h"

typedef struct VecTable {
    int n, D;
    StrMap words;     /* word -> row */
    float *unit;      /* (n, D) each vector scaled to length 1 (a zero vector stays 0) */
} VecTable;

/* 0 ok; -1 after one clear message (missing file, bad header, malformed line). */
int vec_table_load(VecTable *t, const char *path);
void vec_table_free(VecTable *t);
/* Row of a word, -1 if absent. */
int vec_table_find(const VecTable *t, const char *word);

/* The k words closest to row `row` (itself excluded), most similar first:
 * rows in out (k), cosines in sim (k); returns how many (< k for tiny files). */
int vec_neighbours(const VecTable *t, int row, int k, int *out, float *sim);

enum { VEC_MAX_CATEGORIES = 32 };

typedef struct VecAnalogyResult {
    int categories;
    char name[VEC_MAX_CATEGORIES][64];
    long questions[VEC_MAX_CATEGORIES];   /* lines of the category */
    long answered[VEC_MAX_CATEGORIES];    /* all four words in the file */
    long correct[VEC_MAX_CATEGORIES];
} VecAnalogyResult;

/* Scores the analogy file; 0 ok, -1 after one clear message (unreadable file,
 * a line that is not four words, a question before any category, too many
 * categories). */
int vec_analogies(const VecTable *t, const char *path, VecAnalogyResult *r);

#endif
