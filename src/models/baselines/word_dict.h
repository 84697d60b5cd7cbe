/* word_dict.h — the word dictionary of the word-level baselines (fastText,
 * and through word_features.h the TextCNN, the BiLSTM and word vectors): a
 * text's words as the models read them, and a word -> id map with counts,
 * most frequent first. Neutral ground: no model owns it.
 *
 * A text's words: whitespace split (the fastText reference's rule) or the
 * BERT basic tokenizer's words; a pair is "a WORD_SEP b"; every text ends with
 * WORD_EOS (the fastText reference reads the newline ending a line as that
 * word). */
#ifndef GLUE_WORD_DICT_H
#define GLUE_WORD_DICT_H

#include <stddef.h>
#include <stdint.h>

#include "tasks/task.h"
#include "text/basic_tokenizer.h"
#include "text/strmap.h"

#define WORD_EOS "</s>"
#define WORD_SEP "__sep__"   /* between the two texts of a pair (our choice; fastText has no pairs) */

typedef enum { WORD_SPLIT_WHITESPACE, WORD_SPLIT_BASIC } WordSplit;

/* The words of one text (reused buffers: no allocation once grown). */
typedef struct {
    char *buf;          /* the words, each NUL-terminated */
    size_t used, cap;
    size_t *start;      /* (n) offset of word i in buf */
    int n, max;
    BasicTokenizer bt;  /* for WORD_SPLIT_BASIC, made on first use */
    int have_bt;
} WordList;

/* The words of example x: a [WORD_SEP b] WORD_EOS. */
void word_list_of_example(WordList *w, const Example *x, WordSplit split);
void word_list_free(WordList *w);

/* Words, most frequent first after word_dict_threshold: word id = map entry. */
typedef struct WordDict {
    StrMap map;         /* V entries */
    int64_t *count;     /* (V) occurrences in the training data */
} WordDict;

/* Adds count occurrences of w (a new word gets the next id). */
void word_dict_add(WordDict *d, const char *w, size_t len, int64_t count);
static inline int word_dict_size(const WordDict *d) { return d->map.n; }
/* Drops words below min_count and renumbers the rest by frequency (ties keep
 * first-seen order, so ids are reproducible). */
void word_dict_threshold(WordDict *d, int min_count);
/* d = the words of train's examples seen at least min_count times (may be empty). */
void word_dict_count(WordDict *d, const Dataset *train, WordSplit split, int min_count);
void word_dict_free(WordDict *d);

#endif
