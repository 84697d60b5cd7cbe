/* stream.h — training sequences from a token cache: shuffled by shards,
 * packed into `[CLS] ... [SEP]`, with a position that can be saved and
 * restored exactly.
 *
 * Order. Each epoch visits the cache's shards in a fresh random order; within
 * a shard, the sequences cut from it are visited in a random order too. Only
 * the current shard is in memory (see token_cache.h for its size).
 *
 * Packing (BERT's create_pretraining_data without the next-sentence task):
 * each document's token stream is cut into consecutive pieces of up to
 * T - 2 tokens, T the sequence length; with probability short_prob a piece
 * gets a shorter random target length in [2, T - 2] instead, as BERT did for
 * 10% of its sequences so the model also sees short inputs (fine-tuning
 * inputs are mostly short). A piece never spans two documents, and a cut that
 * would fall inside a word (before a "##" piece) moves back to the word's
 * start, so whole-word masking always sees whole words. The last piece of a
 * document may be short. Pieces are drawn afresh each epoch (the short
 * lengths come from an RNG of (seed, epoch, shard)), so epochs differ.
 *
 * Determinism and resume. Everything above is a function of (seed, epoch,
 * shard), so the position (epoch, index into the epoch's shard order, index
 * into the shard's sequence order) identifies the next sequence exactly:
 * stream_seek(stream_tell()) after a restart gives the same sequences as an
 * uninterrupted stream.
 *
 * Evaluation mode (shuffle = 0): shards and sequences in corpus order, one
 * pass (stream_next returns 0 at the end). */
#ifndef GLUE_PRETRAIN_STREAM_H
#define GLUE_PRETRAIN_STREAM_H

#include <stdint.h>

#include "core/rng.h"
#include "pretrain/token_cache.h"

/* The saved position (a checkpoint blob, host order). */
typedef struct StreamPos {
    uint64_t epoch;
    uint64_t shard;      /* index into the epoch's shard order */
    uint64_t seq;        /* index into that shard's sequence order */
} StreamPos;

typedef struct PretrainStreamConfig {
    int seq_len;                    /* T, >= 3: [CLS] + up to T - 2 tokens + [SEP] */
    float short_prob;               /* chance of a random shorter target length */
    int shuffle;                    /* 1: training order; 0: corpus order, one pass */
    uint64_t seed;
    int cls_id, sep_id;
    const unsigned char *is_cont;   /* (V) 1 for "##" pieces (not owned) */
} PretrainStreamConfig;

typedef struct PretrainStream {
    PretrainStreamConfig cfg;
    TokenCache *cache;              /* not owned */
    StreamPos pos;
    int *order;                     /* (n_shards) this epoch's shard order */
    int loaded;                     /* the shard at pos.shard is packed */
    int32_t *ids;                   /* the loaded shard's entries */
    long ids_cap, n_ids;
    long *seq_off;                  /* (seqs_cap) start of each piece in ids, visiting order */
    int *seq_len;                   /* (seqs_cap) its length in tokens */
    long n_seqs, seqs_cap;          /* seqs_cap = ids_cap = the largest shard (no growth) */
    long sequences;                 /* handed out by this object (statistics) */
} PretrainStream;

void stream_init(PretrainStream *s, TokenCache *cache, const PretrainStreamConfig *cfg);
void stream_free(PretrainStream *s);
/* Next sequence into out (room for T ids): [CLS] piece [SEP]; *len its length.
 * Returns 1, 0 at the end of the single pass (shuffle = 0 only), -1 after a
 * message on a read error. */
int stream_next(PretrainStream *s, int *out, int *len);
StreamPos stream_tell(const PretrainStream *s);
/* Continues from a position saved by stream_tell (with the same cache, seed
 * and settings). -1 after a message when it does not fit this cache. */
int stream_seek(PretrainStream *s, StreamPos pos);

/* The packing of one document, exposed for tests: cuts doc[0..n) into pieces
 * as described above, calling emit(ctx, start, len) for each. */
void stream_pack_document(const int32_t *doc, long n, int max_tokens, float short_prob,
                          const unsigned char *is_cont, Rng *rng,
                          void (*emit)(void *ctx, long start, int len), void *ctx);

#endif
