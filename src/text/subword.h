/* subword.h — the translation tokenizer: cased BERT words + WordPiece, exactly
 * reversible, so that model output can be detokenised back to ordinary text
 * (BLEU is computed on detokenised output against the raw references).
 *
 * Encoding: the BasicTokenizer with lowercase = 0 (case and accents kept, as
 * German output is scored cased) splits a text into words at whitespace and
 * punctuation; each word that follows the previous one with no whitespace
 * between ("dog" "." in "dog.", "T" "-" "Shirt" in "T-Shirt") is encoded in
 * its continuation spelling, starting with a "##" piece. Decoding then only
 * needs the WordPiece rule: a "##" piece glues to what precedes it, any other
 * piece starts a new word after one space. So decode(encode(s)) == s for any s
 * whose characters the vocabulary covers, up to whitespace (runs become one
 * space, none at the ends) and the characters BERT's cleaning drops (controls).
 * CJK ideographs are always separate words (as in BERT) and come back
 * space-separated.
 *
 * The vocabulary must be trained the same way: `glue vocab train --cased
 * --mark-joins` (text/wordpiece_train.h), one vocabulary shared by source and
 * target. [CLS] / [SEP] serve as begin / end of sentence, [PAD] as padding.
 *
 * A SubwordTokenizer keeps reusable buffers: one per thread. */
#ifndef GLUE_SUBWORD_H
#define GLUE_SUBWORD_H

#include <stddef.h>

#include "text/basic_tokenizer.h"
#include "text/vocab.h"

typedef struct SubwordTokenizer {
    const Vocab *vocab;   /* not owned */
    VocabSpecials sp;
    BasicTokenizer basic; /* cased */
    int *word_ids;        /* scratch for one word's pieces */
    int word_cap;
} SubwordTokenizer;

/* NULL (after user_error) when the vocabulary lacks [PAD], [UNK], [CLS] or [SEP]. */
SubwordTokenizer *subword_create(const Vocab *v);
void subword_free(SubwordTokenizer *t);

/* Piece ids of text[0..len) (no [CLS]/[SEP]): at most cap are written; returns
 * the total, which may exceed cap (call again with more room, as snprintf). */
int subword_encode(SubwordTokenizer *t, const char *text, size_t len, int *ids, int cap);

/* The text of pieces ids[0..n): malloc'd, NUL-terminated. Specials other than
 * [UNK] ([PAD] [CLS] [SEP] [MASK]) are skipped; [UNK] is written as "[UNK]". */
char *subword_decode(const Vocab *v, const int *ids, int n);

#endif
