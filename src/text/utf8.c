/* utf8.c — UTF-8 decoding with the one-U+FFFD-per-invalid-byte policy (utf8.h). */
#include "text/utf8.h"

/* Length of the sequence led by byte b0 and the allowed range of its second byte
 * (tighter than 0x80..0xBF for E0, ED, F0, F4: that is what rules out overlong
 * forms, surrogates and code points above U+10FFFF). 0 = b0 cannot lead. */
static int utf8_lead(unsigned b0, unsigned *lo, unsigned *hi) {
    *lo = 0x80, *hi = 0xBF;
    if (b0 < 0xC2) return 0;                 /* continuation byte or overlong C0/C1 */
    if (b0 < 0xE0) return 2;
    if (b0 < 0xF0) {
        if (b0 == 0xE0) *lo = 0xA0;
        if (b0 == 0xED) *hi = 0x9F;
        return 3;
    }
    if (b0 < 0xF5) {
        if (b0 == 0xF0) *lo = 0x90;
        if (b0 == 0xF4) *hi = 0x8F;
        return 4;
    }
    return 0;
}

int32_t utf8_decode(const char *s, size_t len, size_t *pos) {
    const unsigned char *u = (const unsigned char *)s + *pos;
    size_t avail = len - *pos;
    unsigned b0 = u[0];
    if (b0 < 0x80) { *pos += 1; return (int32_t)b0; }
    unsigned lo, hi;
    int n = utf8_lead(b0, &lo, &hi);
    if (n == 0 || avail < (size_t)n || u[1] < lo || u[1] > hi) { *pos += 1; return UTF8_REPLACEMENT; }
    int32_t cp = (int32_t)(b0 & (0x7Fu >> n));
    for (int k = 1; k < n; k++) {
        if (k > 1 && (u[k] & 0xC0) != 0x80) { *pos += 1; return UTF8_REPLACEMENT; }
        cp = (cp << 6) | (int32_t)(u[k] & 0x3F);
    }
    *pos += (size_t)n;
    return cp;
}

int utf8_encode(int32_t cp, char *out) {
    unsigned char *o = (unsigned char *)out;
    uint32_t c = (uint32_t)cp;
    if (c < 0x80) { o[0] = (unsigned char)c; return 1; }
    if (c < 0x800) {
        o[0] = (unsigned char)(0xC0 | (c >> 6));
        o[1] = (unsigned char)(0x80 | (c & 0x3F));
        return 2;
    }
    if (c < 0x10000) {
        o[0] = (unsigned char)(0xE0 | (c >> 12));
        o[1] = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
        o[2] = (unsigned char)(0x80 | (c & 0x3F));
        return 3;
    }
    o[0] = (unsigned char)(0xF0 | (c >> 18));
    o[1] = (unsigned char)(0x80 | ((c >> 12) & 0x3F));
    o[2] = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
    o[3] = (unsigned char)(0x80 | (c & 0x3F));
    return 4;
}

size_t utf8_count(const char *s, size_t len) {
    size_t n = 0;
    for (size_t pos = 0; pos < len; n++) utf8_decode(s, len, &pos);
    return n;
}

int utf8_valid(const char *s, size_t len) {
    for (size_t pos = 0; pos < len;) {
        size_t at = pos;
        /* A literal U+FFFD takes 3 bytes; only a 1-byte step marks an invalid byte. */
        if (utf8_decode(s, len, &pos) == UTF8_REPLACEMENT && pos == at + 1) return 0;
    }
    return 1;
}

size_t utf8_sanitize(const char *s, size_t len, char *out) {
    size_t n = 0;
    for (size_t pos = 0; pos < len;) n += (size_t)utf8_encode(utf8_decode(s, len, &pos), out + n);
    out[n] = '\0';
    return n;
}

int utf8_py_isspace(int32_t c) {
    return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 ||
           c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 ||
           c == 0x202F || c == 0x205F || c == 0x3000;
}
