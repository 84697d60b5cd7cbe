/* ngrams.c — fastText's hashing of words, word n-grams and character n-grams
 * (see ngrams.h for the compatibility rules this file keeps). */
#include "text/ngrams.h"

#define FNV_OFFSET 2166136261u
#define FNV_PRIME 16777619u

/* One FNV-1a step; the byte goes through int8_t as in fastText, so 0xC3 is
 * xor-ed in as 0xFFFFFFC3, not 0xC3. */
static inline uint32_t fnv_step(uint32_t h, char c) {
    return (h ^ (uint32_t)(int32_t)(int8_t)c) * FNV_PRIME;
}

uint32_t ngram_hash(const char *s, size_t n) {
    uint32_t h = FNV_OFFSET;
    for (size_t i = 0; i < n; i++) h = fnv_step(h, s[i]);
    return h;
}

int ngram_is_space(int c) {
    return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\v' || c == '\f' || c == '\0';
}

int ngram_next_word(const char *s, size_t len, size_t *pos, size_t *start, size_t *wlen) {
    size_t i = *pos;
    while (i < len && ngram_is_space((unsigned char)s[i])) i++;
    if (i >= len) { *pos = len; return 0; }
    size_t j = i;
    while (j < len && !ngram_is_space((unsigned char)s[j])) j++;
    *start = i;
    *wlen = j - i;
    *pos = j;
    return 1;
}

int ngram_word_count(int n, int N) {
    int count = 0;
    for (int i = 0; i < n; i++) {
        int longest = n - i < N ? n - i : N;   /* words available from i */
        if (longest > 1) count += longest - 1;
    }
    return count;
}

int ngram_word_ngrams(const uint32_t *hashes, int n, int N, uint64_t bucket, int32_t *out) {
    int k = 0;
    for (int i = 0; i < n; i++) {
        /* fastText keeps word hashes in int32 and widens them to uint64, i.e.
         * sign-extends them; unsigned overflow of the product is intended. */
        uint64_t h = (uint64_t)(int64_t)(int32_t)hashes[i];
        for (int j = i + 1; j < n && j < i + N; j++) {
            h = h * NGRAM_WORD_MULT + (uint64_t)(int64_t)(int32_t)hashes[j];
            out[k++] = (int32_t)(h % bucket);
        }
    }
    return k;
}

/* Byte k of the virtual string "<" word ">" (length len + 2). */
static inline char bracketed_at(const char *word, size_t len, size_t k) {
    return k == 0 ? '<' : k == len + 1 ? '>' : word[k - 1];
}

static inline int is_utf8_continuation(char c) { return ((unsigned char)c & 0xC0) == 0x80; }

int ngram_char_ngrams(const char *word, size_t len, int minn, int maxn, uint64_t bucket,
                      int32_t *out, int cap) {
    size_t L = len + 2;
    int k = 0;
    for (size_t i = 0; i < L; i++) {
        if (is_utf8_continuation(bracketed_at(word, len, i))) continue;
        uint32_t h = FNV_OFFSET;   /* the hash grows with the n-gram: no copies */
        size_t j = i;
        for (int n = 1; j < L && n <= maxn; n++) {
            h = fnv_step(h, bracketed_at(word, len, j++));
            while (j < L && is_utf8_continuation(bracketed_at(word, len, j)))
                h = fnv_step(h, bracketed_at(word, len, j++));
            /* a single "<" or ">" says nothing about the word */
            if (n >= minn && !(n == 1 && (i == 0 || j == L))) {
                if (k < cap) out[k] = (int32_t)(h % bucket);
                k++;
            }
        }
    }
    return k;
}
