/* strmap.h — an interning hash table of byte strings: string -> dense entry index.
 *
 * Shared by the vocabulary (token -> id) and the WordPiece trainer (word counts,
 * token table). Entries are numbered 0, 1, 2, ... in insertion order, so callers
 * keep per-entry data in plain parallel arrays. Open addressing with linear
 * probing over a power-of-two table kept at most half full; keys are copied into
 * one growing character arena (no per-key malloc). A lookup can prepend a prefix
 * without building the string, which is how WordPiece asks for "##" + piece. */
#ifndef GLUE_STRMAP_H
#define GLUE_STRMAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct StrMap {
    char *chars;              /* every key, NUL-terminated, back to back */
    size_t chars_len, chars_cap;
    size_t *key_off;          /* (n) offset of entry i's key in chars */
    uint32_t *key_len;        /* (n) its length in bytes */
    uint64_t *key_hash;       /* (n) its hash, kept for rehashing */
    int n, cap;
    int32_t *slots;           /* (slot_mask + 1) entry index or -1 */
    size_t slot_mask;
} StrMap;

void strmap_init(StrMap *m);
void strmap_free(StrMap *m);
/* Entry of prefix[0..plen) + s[0..len), or -1. prefix may be NULL when plen is 0. */
int strmap_find(const StrMap *m, const char *prefix, size_t plen, const char *s, size_t len);
/* Entry of s[0..len), inserted first if absent (*added = 1 then, when added != NULL). */
int strmap_add(StrMap *m, const char *s, size_t len, int *added);
/* Key of an entry, NUL-terminated; valid until the next strmap_add. */
const char *strmap_key(const StrMap *m, int entry);
static inline size_t strmap_key_len(const StrMap *m, int entry) { return m->key_len[entry]; }
static inline int strmap_count(const StrMap *m) { return m->n; }

#endif
