/* utf8.h — decoding and encoding UTF-8, with one fixed policy for invalid input.
 *
 * Invalid UTF-8 policy (the whole suite follows it): every byte that does not
 * belong to a well-formed UTF-8 sequence decodes to U+FFFD, one per byte, and
 * decoding resumes at the next byte. Well-formed means the Unicode definition:
 * no overlong forms, no surrogates (U+D800..U+DFFF), nothing above U+10FFFF, no
 * truncated sequence. A valid byte is never swallowed by an invalid sequence, so
 * "ab\xE2\x82cd" decodes to a, b, U+FFFD, U+FFFD, c, d. The BERT tokenizer's
 * cleaning step then drops U+FFFD, so invalid bytes simply vanish from the text
 * (the same result as Python's bytes.decode("utf-8", "replace") followed by the
 * reference tokenizer, and as the reference's own decode(..., "ignore")).
 * Loaders that must reject bad text instead use utf8_valid(). */
#ifndef GLUE_UTF8_H
#define GLUE_UTF8_H

#include <stddef.h>
#include <stdint.h>

#define UTF8_REPLACEMENT 0xFFFD
/* Longest encoding of one code point, in bytes. */
#define UTF8_MAX_BYTES 4

/* Decode the code point at s[*pos] (requires *pos < len) and advance *pos past it
 * (by one byte for an invalid byte, which yields UTF8_REPLACEMENT). */
int32_t utf8_decode(const char *s, size_t len, size_t *pos);

/* Encode cp (0..0x10FFFF, not a surrogate) into out; returns the byte count 1..4. */
int utf8_encode(int32_t cp, char *out);

/* Number of code points in s[0..len) under the policy above. */
size_t utf8_count(const char *s, size_t len);

/* 1 if s[0..len) is entirely well-formed UTF-8 (a literal U+FFFD is fine). */
int utf8_valid(const char *s, size_t len);

/* Copy s[0..len) to out with every invalid byte replaced by U+FFFD (3 bytes), so
 * the result is safe to print or put into JSON. out needs room for 3 * len + 1
 * bytes; it is NUL-terminated. Returns the output length. */
size_t utf8_sanitize(const char *s, size_t len, char *out);

/* 1 if cp is whitespace to Python's str.isspace(), i.e. a separator of
 * str.split() and str.rstrip(): bidirectional class WS, B or S, or category Zs
 * (so also U+001C..U+001F, but not U+200B). sacreBLEU splits and strips text
 * with these, so BLEU's tokens and chrF's characters use the same set. */
int utf8_py_isspace(int32_t cp);

#endif
