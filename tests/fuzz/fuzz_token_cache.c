/* fuzz_token_cache.c — the pretraining token cache (pretrain/token_cache.c).
 * Byte 0, bit 0: 0 = the rest is a cache file as is (header, index, metadata,
 * shards, CRCs all fuzzed) and every shard is read; 1 = the rest is a text
 * corpus (format from bits 1-2), tokenized into a cache with a small
 * vocabulary and tiny shards, which must then open and read back whole. */
#include "pretrain/token_cache.h"
#include "tests/fuzz/fuzz_util.h"

#include <cjson/cJSON.h>
#include <stdlib.h>

static const char *const TOKENS[] = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "sat",
                                     "un", "##s", "a", ".", "dog", "##ning", "run"};

static int read_all(TokenCache *c) {
    int32_t *ids = NULL;
    long cap = 0, total = 0;
    for (int s = 0; s < c->n_shards; s++) {
        long n = token_cache_read_shard(c, s, &ids, &cap);
        if (n < 0) { total = -1; break; }
        total += n;
    }
    free(ids);
    return total < 0 ? -1 : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static Vocab *v;
    if (!v) v = vocab_from_tokens(TOKENS, (int)(sizeof TOKENS / sizeof TOKENS[0]));
    if (size < 1) return 0;
    char path[512], err[512];
    snprintf(path, sizeof path, "%s", fuzz_path("tokens.bin"));
    TokenCacheStatus st;
    if (!(data[0] & 1)) {
        fuzz_write(path, data + 1, size - 1, 0);
        TokenCache *c = token_cache_open(path, NULL, &st, err, sizeof err);
        if (c) {
            read_all(c);
            token_cache_close(c);
        }
        return 0;
    }
    char corpus[512];
    snprintf(corpus, sizeof corpus, "%s", fuzz_path("corpus.txt"));
    fuzz_write(corpus, data + 1, size - 1, 0);
    CorpusFile f = {.path = corpus, .format = (CorpusFormat)((data[0] >> 1) % 4)};
    TokenCacheBuild b = {.files = &f, .n_files = 1, .vocab = v, .lowercase = 1, .shard_tokens = 8};
    if (token_cache_build(&b, path) != 0) return 0;
    cJSON *key = token_cache_key(&b);
    TokenCache *c = token_cache_open(path, key, &st, err, sizeof err);
    if (!c || read_all(c) != 0) __builtin_trap();   /* what it built must read back */
    token_cache_close(c);
    cJSON_Delete(key);
    return 0;
}
