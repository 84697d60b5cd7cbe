/* token_cache.h — a corpus tokenized once into a compact binary file of ids.
 *
 * Why: WordPiece-tokenizing the 37M words of the Wikipedia corpus costs
 * minutes of CPU; doing it on every run (and again after every resume) would
 * take that from training on a 2-core machine. The cache is built once, in
 * parallel over lines, and then read shard by shard.
 *
 * Content: the token ids of every text unit of the corpus in order, units of
 * one document concatenated, an end-of-document mark after each document.
 * The stream is cut into shards of about `shard_tokens` ids, always at a
 * document end unless a document runs past twice that (a Brown-like corpus
 * without document marks), where it is cut anyway (the two halves become two
 * documents). A shard is the unit of shuffling and of memory: training holds
 * one shard at a time (pretrain/stream.h), never the corpus.
 *
 * File layout (little-endian):
 *   0   "GLUETOKS"                      magic
 *   8   u32 version (TOKEN_CACHE_VERSION)
 *   12  u32 bytes per id: 2 (vocabulary < 65535) or 4
 *   16  u32 number of shards
 *   20  u32 metadata length M
 *   24  u64 offset of the shard index
 *   32  shards: ids, end of document = the all-ones id (0xFFFF / 0xFFFFFFFF)
 *   index: per shard u64 offset, u64 entries (ids + marks), u32 CRC-32, u32 0
 *   then M bytes of JSON: {"key": {...}, "tokens", "docs", "units", "seconds"}
 * Written to PATH.tmp, fsynced and renamed, so a killed build leaves no cache
 * that looks complete.
 *
 * The key names what the cache was made from — each corpus file's path,
 * format, size and modification time, the vocabulary's size and the CRC of
 * its tokens, the lowercase setting and the shard size — and
 * token_cache_find rebuilds when it differs. */
#ifndef GLUE_TOKEN_CACHE_H
#define GLUE_TOKEN_CACHE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "pretrain/corpus.h"
#include "text/vocab.h"

typedef struct cJSON cJSON;

enum { TOKEN_CACHE_VERSION = 1 };
/* Default shard size: 2^20 ids (2 MB on disk, 4 MB decoded, ~8k sequences of 128). */
enum { TOKEN_CACHE_SHARD_TOKENS = 1 << 20 };
/* End of a document in a decoded shard. */
enum { TOKEN_CACHE_EOD = -1 };

typedef struct TokenCache {
    char *path;
    FILE *f;
    int id_bytes;
    int n_shards;
    uint64_t *shard_offset;   /* (n_shards) */
    uint64_t *shard_entries;  /* (n_shards) ids + end-of-document marks */
    uint32_t *shard_crc;      /* (n_shards) */
    cJSON *meta;              /* the metadata JSON */
    long n_tokens, n_docs;
    void *raw;                /* read buffer for one shard */
    size_t raw_cap;
} TokenCache;

typedef struct TokenCacheBuild {
    const CorpusFile *files;
    int n_files;
    const Vocab *vocab;
    int lowercase;            /* the tokenizer's setting (1 for uncased vocabularies) */
    long shard_tokens;        /* <= 0: TOKEN_CACHE_SHARD_TOKENS */
    int show_progress;
} TokenCacheBuild;

/* The key of what b would build (see above). NULL after a message when a file
 * cannot be examined. Caller frees. */
cJSON *token_cache_key(const TokenCacheBuild *b);
/* Tokenizes b's corpus into path (atomically). 0 ok; -1 after a message. */
int token_cache_build(const TokenCacheBuild *b, const char *path);

typedef enum {
    TOKEN_CACHE_OK,
    TOKEN_CACHE_MISSING,  /* no such file */
    TOKEN_CACHE_STALE,    /* made from other files or another vocabulary */
    TOKEN_CACHE_BAD,      /* unreadable, truncated, not a cache, other version */
} TokenCacheStatus;

/* Opens and checks a cache (magic, version, index, metadata; the shards' CRCs
 * are checked as they are read). When key != NULL it must equal the stored
 * key. NULL with *st and a message in err (cap bytes) when not OK; nothing is
 * printed. */
TokenCache *token_cache_open(const char *path, const cJSON *key, TokenCacheStatus *st, char *err,
                             size_t cap);
void token_cache_close(TokenCache *c);
/* Reads shard s (CRC checked) into *ids (grown as needed, capacity *cap),
 * ids decoded, TOKEN_CACHE_EOD after each document. Returns the number of
 * entries, or -1 after a message (I/O error, corrupt shard). */
long token_cache_read_shard(TokenCache *c, int s, int32_t **ids, long *cap);
/* Sizes the read buffer for shards of up to `entries` entries now. */
void token_cache_reserve(TokenCache *c, long entries);

/* The cache for b in dir ("<dir>/tokens-<hash of key>.bin"): opened when it
 * exists and is current, otherwise built first (dir created as needed).
 * NULL after a message. */
TokenCache *token_cache_find(const TokenCacheBuild *b, const char *dir);
/* The default cache directory: $GLUE_CACHE, else $HOME/.cache/glue, else
 * ".glue-cache". */
const char *token_cache_default_dir(void);

#endif
