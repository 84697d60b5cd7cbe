/* sentences.h — a rule-based sentence splitter for English text (HAN's
 * sentence level, Yang et al. 2016).
 *
 * A sentence ends after a run of . ! ? (with any closing quotes or brackets
 * after it) that is followed by whitespace and then an upper-case letter, a
 * digit, an opening quote or bracket, or the end of the text. A single "." does
 * not end one after a known abbreviation ("Mr.", "Dr.", "e.g.", "etc.", month
 * names, ...), after an initial ("J. R. R. Tolkien") or after a word with a dot
 * inside ("U.S."). Decimal numbers and "e.g.x" are safe, since no whitespace
 * follows their dots. Whitespace-only pieces are not sentences. */
#ifndef GLUE_TEXT_SENTENCES_H
#define GLUE_TEXT_SENTENCES_H

#include <stddef.h>

/* Byte offsets just past each sentence of text[0..len) (the last one is len
 * when the text does not end in whitespace): at most cap written; returns the
 * number of sentences (0 for a blank text). */
int sentence_split(const char *text, size_t len, size_t *ends, int cap);

#endif
