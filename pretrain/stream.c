/* stream.c — shuffled, packed training sequences from a token cache (see stream.h). */
#include "pretrain/stream.h"

#include "core/common.h"

#include <stdlib.h>
#include <string.h>

/* RNG stream ids: one domain for shard orders (per epoch), one for packing
 * and sequence order (per epoch and shard). */
enum { STREAM_ORDER_SALT = 0x5348, STREAM_PACK_SALT = 0x5041 };

void stream_init(PretrainStream *s, TokenCache *cache, const PretrainStreamConfig *cfg) {
    CHECK_OR_DIE(cfg->seq_len >= 3);
    memset(s, 0, sizeof *s);
    s->cfg = *cfg;
    s->cache = cache;
    s->order = xmalloc((size_t)cache->n_shards * sizeof *s->order);
    /* Buffers for the largest shard now, so that reading sequences never
     * allocates (a shard of n entries has at most n pieces). */
    long most = 0;
    for (int i = 0; i < cache->n_shards; i++)
        if ((long)cache->shard_entries[i] > most) most = (long)cache->shard_entries[i];
    s->ids_cap = s->seqs_cap = most;
    s->ids = xmalloc((size_t)most * sizeof *s->ids);
    s->seq_off = xmalloc((size_t)most * sizeof *s->seq_off);
    s->seq_len = xmalloc((size_t)most * sizeof *s->seq_len);
    token_cache_reserve(cache, most);
    StreamPos start = {0, 0, 0};
    CHECK_OR_DIE(stream_seek(s, start) == 0);
}

void stream_free(PretrainStream *s) {
    free(s->order);
    free(s->ids);
    free(s->seq_off);
    free(s->seq_len);
    memset(s, 0, sizeof *s);
}

static void stream_make_order(PretrainStream *s) {
    int n = s->cache->n_shards;
    for (int i = 0; i < n; i++) s->order[i] = i;
    if (!s->cfg.shuffle) return;
    Rng r;
    rng_seed_stream(&r, s->cfg.seed ^ STREAM_ORDER_SALT, s->pos.epoch);
    rng_shuffle_int(&r, s->order, n);
}

StreamPos stream_tell(const PretrainStream *s) { return s->pos; }

int stream_seek(PretrainStream *s, StreamPos pos) {
    if (pos.shard >= (uint64_t)s->cache->n_shards || (!s->cfg.shuffle && pos.epoch > 0)) {
        user_error("resume with the corpus and settings the run started with",
                   "data position (epoch %llu, shard %llu) does not fit %s (%d shards)",
                   (unsigned long long)pos.epoch, (unsigned long long)pos.shard, s->cache->path,
                   s->cache->n_shards);
        return -1;
    }
    s->pos = pos;
    s->loaded = 0;
    stream_make_order(s);
    return 0;
}

void stream_pack_document(const int32_t *doc, long n, int max_tokens, float short_prob,
                          const unsigned char *is_cont, Rng *rng,
                          void (*emit)(void *ctx, long start, int len), void *ctx) {
    long pos = 0;
    while (pos < n) {
        int target = max_tokens;
        /* Drawn for every piece, also the last, so the RNG use is fixed per piece. */
        if (short_prob > 0 && rng_uniform(rng) < short_prob && max_tokens > 2)
            target = 2 + (int)rng_below(rng, (uint32_t)(max_tokens - 1));
        long cut = pos + target < n ? pos + target : n;
        if (cut < n) {
            long c = cut;
            while (c > pos + 1 && is_cont[doc[c]]) c--;   /* back to the word's first piece */
            if (c > pos + 1 || !is_cont[doc[c]]) cut = c;
        }
        emit(ctx, pos, (int)(cut - pos));
        pos = cut;
    }
}

typedef struct {
    PretrainStream *s;
    long base;   /* offset of the document in s->ids */
} PackCtx;

static void pack_emit(void *ctx, long start, int len) {
    PackCtx *p = ctx;
    PretrainStream *s = p->s;
    CHECK_OR_DIE(s->n_seqs < s->seqs_cap);   /* pieces are non-empty: fewer than the shard's entries */
    s->seq_off[s->n_seqs] = p->base + start;
    s->seq_len[s->n_seqs++] = len;
}

/* Reads and packs the shard at pos.shard; its sequence order is shuffled. */
static int stream_load(PretrainStream *s) {
    int shard = s->order[s->pos.shard];
    s->n_ids = token_cache_read_shard(s->cache, shard, &s->ids, &s->ids_cap);
    if (s->n_ids < 0) return -1;
    Rng r;
    rng_seed_stream(&r, s->cfg.seed ^ STREAM_PACK_SALT, s->pos.epoch * (uint64_t)s->cache->n_shards + (uint64_t)shard);
    s->n_seqs = 0;
    PackCtx ctx = {s, 0};
    float short_prob = s->cfg.shuffle ? s->cfg.short_prob : 0.0f;
    for (long i = 0; i < s->n_ids;) {
        long e = i;
        while (e < s->n_ids && s->ids[e] != TOKEN_CACHE_EOD) e++;
        ctx.base = i;
        stream_pack_document(s->ids + i, e - i, s->cfg.seq_len - 2, short_prob, s->cfg.is_cont, &r, pack_emit,
                             &ctx);
        i = e + 1;
    }
    if (s->cfg.shuffle)   /* Fisher-Yates over (offset, length) pairs */
        for (long i = s->n_seqs - 1; i > 0; i--) {
            long j = (long)(rng_u64(&r) % (uint64_t)(i + 1));
            long o = s->seq_off[i]; s->seq_off[i] = s->seq_off[j]; s->seq_off[j] = o;
            int l = s->seq_len[i]; s->seq_len[i] = s->seq_len[j]; s->seq_len[j] = l;
        }
    s->loaded = 1;
    return 0;
}

int stream_next(PretrainStream *s, int *out, int *len) {
    for (;;) {
        if (!s->loaded && stream_load(s)) return -1;
        if (s->pos.seq < (uint64_t)s->n_seqs) break;
        /* This shard is done: the next one, or the next epoch. */
        s->loaded = 0;
        s->pos.seq = 0;
        if (++s->pos.shard == (uint64_t)s->cache->n_shards) {
            if (!s->cfg.shuffle) { s->pos.shard--; s->pos.seq = (uint64_t)s->n_seqs; s->loaded = 1; return 0; }
            s->pos.shard = 0;
            s->pos.epoch++;
            stream_make_order(s);
        }
    }
    long off = s->seq_off[s->pos.seq];
    int n = s->seq_len[s->pos.seq];
    s->pos.seq++;
    out[0] = s->cfg.cls_id;
    memcpy(out + 1, s->ids + off, (size_t)n * sizeof *out);
    out[n + 1] = s->cfg.sep_id;
    *len = n + 2;
    s->sequences++;
    return 1;
}
