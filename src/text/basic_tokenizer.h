/* basic_tokenizer.h — BERT's BasicTokenizer: normalised words before WordPiece.
 *
 * Reproduces the reference (google-research/bert tokenization.py, BasicTokenizer
 * with do_lower_case=True) character for character:
 *   1. decode UTF-8 (each invalid byte -> U+FFFD, see text/utf8.h);
 *   2. clean: drop U+0000, U+FFFD and control characters (categories Cc and Cf,
 *      except \t \n \r which count as whitespace); whitespace (those three, ' '
 *      and category Zs) separates tokens;
 *   3. every CJK ideograph (the reference's code-point ranges) becomes a token;
 *   4. per whitespace token: Python's str.lower() (full mapping: U+0130 'İ' ->
 *      "i" + U+0307, and the context-dependent final sigma), then NFD (utf8proc)
 *      and removal of nonspacing marks (Mn), i.e. accents;
 *   5. split on punctuation: ASCII 33-47, 58-64, 91-96, 123-126 and every Unicode
 *      P* category; each punctuation character is a word of its own.
 * With lowercase = 0 (cased models) step 4 is skipped, as in the reference.
 *
 * Each word also records whether it was `joined` to the previous one (no
 * whitespace between them, e.g. "dog" "." in "dog."), which makes the split
 * reversible: the translation tokenizer (text/subword.h) detokenises with it.
 *
 * The words are the unit fastText, TextCNN and the BiLSTM work on. No allocation
 * per word: words live in one buffer reused from call to call, so a
 * BasicTokenizer is not thread-safe (use one per thread). */
#ifndef GLUE_BASIC_TOKENIZER_H
#define GLUE_BASIC_TOKENIZER_H

#include <stddef.h>
#include <stdint.h>

typedef struct BasicWord {
    size_t off;          /* start of the word in BasicTokenizer.buf */
    uint32_t len;        /* length in bytes (UTF-8) */
    uint32_t nchars;     /* length in code points */
    int joined;          /* 1: follows the previous word with no whitespace between */
} BasicWord;

typedef struct BasicTokenizer {
    int lowercase;                /* uncased: lower-case and strip accents */
    int32_t *raw;                 /* one whitespace token's code points, as cleaned */
    int raw_len, raw_cap;
    int32_t *norm;                /* that token lower-cased, NFD, accents removed */
    int norm_len, norm_cap;
    char *buf;                    /* the words of the last call, each NUL-terminated */
    size_t buf_len, buf_cap;
    BasicWord *words;
    int num_words, words_cap;
} BasicTokenizer;

void basic_tokenizer_init(BasicTokenizer *bt, int lowercase);
void basic_tokenizer_free(BasicTokenizer *bt);
/* Split text[0..len) into words; returns their number. Word i is bt->words[i],
 * its NUL-terminated text basic_word(bt, i); both valid until the next call. */
int basic_tokenize(BasicTokenizer *bt, const char *text, size_t len);
static inline const char *basic_word(const BasicTokenizer *bt, int i) { return bt->buf + bt->words[i].off; }

#endif
