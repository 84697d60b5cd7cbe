/* word_features.h — the word-level input shared by TextCNN and the BiLSTM.
 *
 * Three pieces, used in this order:
 *   1. WordVocab: the words of a task's training split (BERT basic tokenizer,
 *      lower-cased and accent-stripped, text/basic_tokenizer.h) seen at least
 *      min_count times, most frequent first, after two reserved ids:
 *      WF_PAD (0, padding; its embedding row stays zero in both models) and
 *      WF_UNK (1, every word not in the vocabulary). Built with the shared
 *      word dictionary (word_dict.h, basic tokenizer), so counting and the
 *      frequency order are one implementation; stored in checkpoints as two
 *      blobs (word_vocab_save / word_vocab_load).
 *   2. WordSeqs: each example's text a (and b for pair tasks) as word ids,
 *      truncated at max_len words each, with lengths: what a model's `encode`
 *      returns (the labels stay in the Dataset, for the harness's head). A text can be empty (length 0): the model
 *      decides how to treat it (TextCNN pads it, the BiLSTM sees only padding).
 *   3. word_vectors_load: initialises rows of an embedding matrix (V, D) from a
 *      word-vectors text file in the fastText .vec format (header "N D", then
 *      "word v1 ... vD" per line; plain or .gz). Words absent from the file keep
 *      their random init; the coverage is reported on stderr and returned.
 *
 * Shapes: V = vocabulary size (including the two reserved ids), D = embedding
 * dimension, n = rows of a split. */
#ifndef GLUE_WORD_FEATURES_H
#define GLUE_WORD_FEATURES_H

#include <stdint.h>

#include "models/baselines/word_dict.h"   /* WordDict: the word -> id map and counts */
#include "tasks/task.h"

enum { WF_PAD = 0, WF_UNK = 1, WF_NUM_RESERVED = 2 };

typedef struct WordVocab {
    WordDict dict;              /* V entries; entry id = word id; counts of the reserved ids are 0 */
} WordVocab;

/* ---- 1. vocabulary ---- */

/* Words of train's texts a and b seen >= min_count times; 0 ok, -1 after a
 * message (empty vocabulary, a data error). */
int word_vocab_build(WordVocab *v, const Dataset *train, int min_count);
/* The same, its messages naming `source` (e.g. "the corpus") and the option
 * that sets the count (e.g. "--min-count 1"): word_vocab_build is it with
 * "the training split" and "--set min_count=1". */
int word_vocab_build_from(WordVocab *v, const Dataset *train, int min_count, const char *source,
                          const char *lower_count);
void word_vocab_free(WordVocab *v);
static inline int word_vocab_size(const WordVocab *v) { return word_dict_size(&v->dict); }
/* Id of a word exactly as the tokenizer produced it (lower-cased), WF_UNK if absent. */
int word_vocab_id(const WordVocab *v, const char *w, size_t len);
/* The word of an id ("<pad>", "<unk>" for the reserved ones). */
const char *word_vocab_word(const WordVocab *v, int id);

/* Checkpoint I/O (core/checkpoint.h): blobs "<prefix>words" (NUL-terminated, id
 * order) and "<prefix>counts" (i64, V). prefix may be "". */
struct CkptWriter;
struct Checkpoint;
int word_vocab_save(const WordVocab *v, struct CkptWriter *w, const char *prefix);
/* 0 ok; -1 after a message naming path when the blobs are missing or damaged. */
int word_vocab_load(WordVocab *v, const struct Checkpoint *c, const char *prefix, const char *path);

/* ---- 2. encoded splits ---- */

typedef struct WordSeqs {
    int n;                    /* rows */
    int pair;                 /* 1: every row has a text b */
    int max_len;              /* each text truncated to at most this many words */
    int32_t *ids;             /* all word ids, row after row: a then b */
    int64_t *off;             /* (n + 1) row r's ids are ids[off[r] .. off[r+1]) */
    int32_t *len_a, *len_b;   /* (n) words of a and of b after truncation (len_b 0 if !pair) */
    int64_t tokens, unknown;  /* words kept, and how many of them are WF_UNK */
} WordSeqs;

/* Encodes every example of d (a, and b when the task has pairs); max_len >= 1. */
WordSeqs *word_seqs_encode(const WordVocab *v, const Dataset *d, int max_len);
void word_seqs_free(WordSeqs *s);
/* Row r's texts: len_a[r] ids, then len_b[r] ids. */
static inline const int32_t *word_seqs_a(const WordSeqs *s, int r) { return s->ids + s->off[r]; }
static inline const int32_t *word_seqs_b(const WordSeqs *s, int r) { return s->ids + s->off[r] + s->len_a[r]; }

/* ---- 3. pretrained vectors ---- */

typedef struct WordVecCoverage {
    int found;                /* vocabulary words (reserved ids excluded) given a vector */
    int words;                /* vocabulary words (reserved ids excluded) */
    double token_frac;        /* share of the training tokens (counts) whose word was found */
    long file_words;          /* vectors read from the file */
} WordVecCoverage;

/* Copies the vector of each vocabulary word found in path into its row of emb
 * (V, D). A word of the file matches its exact vocabulary word, or else the
 * word its lower-cased basic-tokenizer form gives (an exact match wins). The
 * WF_PAD and WF_UNK rows are never written. Prints a one-line coverage report
 * to stderr; cov may be NULL. Returns 0, or -1 after one clear message (missing
 * or unreadable file, bad header, dimension not D, malformed line: file:line). */
int word_vectors_load(const WordVocab *v, const char *path, float *emb, int D, WordVecCoverage *cov);
/* Number of the fields of a .vec line, separated by spaces or tabs. */
int word_vec_fields(const char *line);
/* The dimension of the vectors in path (its header's, or the numbers after
 * the first line's word when it has none), or -1 after one clear message. */
int word_vectors_dim(const char *path);

#endif
