/* strmap.c — open-addressing string interning table (see strmap.h). */
#include "text/strmap.h"

#include "core/common.h"

#include <stdlib.h>
#include <string.h>

#define STRMAP_MIN_SLOTS 64
#define FNV64_OFFSET 1469598103934665603ull
#define FNV64_PRIME 1099511628211ull

static uint64_t strmap_hash_bytes(uint64_t h, const char *s, size_t len) {
    for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)s[i]) * FNV64_PRIME;
    return h;
}

/* FNV-1a finished by a murmur-style mix, so the low bits used as the slot index
 * depend on every byte. */
static uint64_t strmap_hash(const char *prefix, size_t plen, const char *s, size_t len) {
    uint64_t h = strmap_hash_bytes(strmap_hash_bytes(FNV64_OFFSET, prefix, plen), s, len);
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return h;
}

void strmap_init(StrMap *m) {
    memset(m, 0, sizeof *m);
    m->slot_mask = STRMAP_MIN_SLOTS - 1;
    m->slots = xmalloc(sizeof(int32_t) * STRMAP_MIN_SLOTS);
    memset(m->slots, 0xFF, sizeof(int32_t) * STRMAP_MIN_SLOTS);
}

void strmap_free(StrMap *m) {
    free(m->chars);
    free(m->key_off);
    free(m->key_len);
    free(m->key_hash);
    free(m->slots);
    memset(m, 0, sizeof *m);
}

static int strmap_key_equals(const StrMap *m, int e, const char *prefix, size_t plen,
                             const char *s, size_t len) {
    if (m->key_len[e] != plen + len) return 0;
    const char *k = m->chars + m->key_off[e];
    return (plen == 0 || memcmp(k, prefix, plen) == 0) && memcmp(k + plen, s, len) == 0;
}

static int strmap_lookup(const StrMap *m, uint64_t h, const char *prefix, size_t plen,
                         const char *s, size_t len, size_t *slot_out) {
    size_t slot = (size_t)h & m->slot_mask;
    for (;;) {
        int32_t e = m->slots[slot];
        if (e < 0) { *slot_out = slot; return -1; }
        if (m->key_hash[e] == h && strmap_key_equals(m, e, prefix, plen, s, len)) return e;
        slot = (slot + 1) & m->slot_mask;
    }
}

int strmap_find(const StrMap *m, const char *prefix, size_t plen, const char *s, size_t len) {
    size_t slot;
    return strmap_lookup(m, strmap_hash(prefix, plen, s, len), prefix, plen, s, len, &slot);
}

/* Double the slot table and reinsert every entry from its stored hash. */
static void strmap_grow_slots(StrMap *m) {
    size_t nslots = (m->slot_mask + 1) * 2;
    free(m->slots);
    m->slots = xmalloc(sizeof(int32_t) * nslots);
    memset(m->slots, 0xFF, sizeof(int32_t) * nslots);
    m->slot_mask = nslots - 1;
    for (int e = 0; e < m->n; e++) {
        size_t slot = (size_t)m->key_hash[e] & m->slot_mask;
        while (m->slots[slot] >= 0) slot = (slot + 1) & m->slot_mask;
        m->slots[slot] = e;
    }
}

int strmap_add(StrMap *m, const char *s, size_t len, int *added) {
    uint64_t h = strmap_hash(NULL, 0, s, len);
    size_t slot;
    int e = strmap_lookup(m, h, NULL, 0, s, len, &slot);
    if (added) *added = e < 0;
    if (e >= 0) return e;
    if (m->n == m->cap) {
        m->cap = m->cap ? 2 * m->cap : 256;
        m->key_off = xrealloc(m->key_off, sizeof(size_t) * (size_t)m->cap);
        m->key_len = xrealloc(m->key_len, sizeof(uint32_t) * (size_t)m->cap);
        m->key_hash = xrealloc(m->key_hash, sizeof(uint64_t) * (size_t)m->cap);
    }
    if (m->chars_len + len + 1 > m->chars_cap) {
        while (m->chars_len + len + 1 > m->chars_cap) m->chars_cap = m->chars_cap ? 2 * m->chars_cap : 4096;
        m->chars = xrealloc(m->chars, m->chars_cap);
    }
    e = m->n++;
    memcpy(m->chars + m->chars_len, s, len);
    m->chars[m->chars_len + len] = '\0';
    m->key_off[e] = m->chars_len;
    m->key_len[e] = (uint32_t)len;
    m->key_hash[e] = h;
    m->chars_len += len + 1;
    m->slots[slot] = e;
    if ((size_t)m->n * 2 > m->slot_mask + 1) strmap_grow_slots(m);
    return e;
}

const char *strmap_key(const StrMap *m, int entry) { return m->chars + m->key_off[entry]; }
