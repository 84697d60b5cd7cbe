/* wordpiece.h — greedy longest-match-first WordPiece over one normalised word.
 *
 * As the reference WordpieceTokenizer: from the start of the word take the
 * longest prefix in the vocabulary, then repeatedly the longest "##"-prefixed
 * continuation; if some position has no match at all the whole word becomes
 * [UNK] (not just the unmatched rest). A word longer than
 * WORDPIECE_MAX_WORD_CHARS code points is [UNK] without trying. */
#ifndef GLUE_WORDPIECE_H
#define GLUE_WORDPIECE_H

#include "text/vocab.h"

#include <stddef.h>

/* The reference's max_input_chars_per_word (google-research/bert uses 200, and
 * the golden file confirms it: a 120-letter word is split, not [UNK]). */
#define WORDPIECE_MAX_WORD_CHARS 200

/* Pieces of word[0..len) (nchars code points, UTF-8) written to ids, which must
 * have room for max(nchars, 1) entries; returns the number written (>= 1 for a
 * non-empty word). unk_id is written for a word that cannot be split. */
int wordpiece_encode_word(const Vocab *v, int unk_id, const char *word, size_t len, size_t nchars, int *ids);
/* The same with the first piece looked up as a continuation ("##" + piece) when
 * continuation != 0: a word joined to the previous one (text/subword.h). */
int wordpiece_encode_word_cont(const Vocab *v, int unk_id, const char *word, size_t len, size_t nchars,
                               int continuation, int *ids);

#endif
