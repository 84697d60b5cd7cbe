/* ngrams.h — fastText's word splitting and hashing: the FNV-1a hash, word n-grams
 * hashed into buckets and character n-grams of "<word>" (Bojanowski et al. 2017).
 *
 * Everything here reproduces the reference tool (facebookresearch/fastText,
 * dictionary.cc) bit for bit, so that a bucket id computed here is the bucket the
 * official binary uses for the same text: the hash takes bytes as *signed* chars,
 * and word n-grams combine 32-bit hashes sign-extended to 64 bits. */
#ifndef GLUE_NGRAMS_H
#define GLUE_NGRAMS_H

#include <stddef.h>
#include <stdint.h>

/* fastText's multiplier for combining word hashes into an n-gram hash. */
#define NGRAM_WORD_MULT 116049371ull

/* 32-bit FNV-1a over s[0..n), each byte sign-extended first (fastText's quirk:
 * for ASCII it is plain FNV-1a, for bytes >= 0x80 it differs). */
uint32_t ngram_hash(const char *s, size_t n);

/* 1 for the bytes fastText splits words on: ' ', \n, \r, \t, \v, \f, \0. */
int ngram_is_space(int c);

/* The next whitespace-separated word of s[0..len) at or after *pos: returns 1 and
 * sets *start and *wlen (and advances *pos past it), or 0 at the end. */
int ngram_next_word(const char *s, size_t len, size_t *pos, size_t *start, size_t *wlen);

/* Word n-grams of a line whose words hash to hashes[0..n): for every i and every
 * length 2..N starting at i, the bucket (in [0, bucket)) of that n-gram, in
 * fastText's order (i ascending, then length). out must hold
 * ngram_word_count(n, N) entries; returns that count. bucket > 0. */
int ngram_word_count(int n, int N);
int ngram_word_ngrams(const uint32_t *hashes, int n, int N, uint64_t bucket, int32_t *out);

/* Character n-grams of "<" word ">" with minn <= length <= maxn (in UTF-8
 * characters; a lone "<" or ">" is not an n-gram), as buckets in [0, bucket),
 * in fastText's order. Writes at most cap ids; returns how many there are (call
 * with cap 0 to size the buffer). bucket > 0. */
int ngram_char_ngrams(const char *word, size_t len, int minn, int maxn, uint64_t bucket,
                      int32_t *out, int cap);

#endif
