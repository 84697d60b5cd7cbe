/* seq2seq_data.h — parallel corpora for the translation model: a pair of
 * line-aligned files (source, target; plain or .gz) read through core/lines,
 * encoded once with the reversible subword tokenizer (text/subword.h), and cut
 * into length-bucketed batches under a token budget.
 *
 * Batches: the pairs are ordered by (source length, target length) with ties
 * broken by a seeded shuffle, then cut greedily so that each batch has
 * B * S <= max_tokens and B * T <= max_tokens (S, T = the longest source and
 * target in the batch with their [SEP] / [CLS]: padding counted); the batch
 * order is then shuffled. So an epoch pads little and each epoch's batches
 * are a pure function of (seed, epoch): a resumed run rebuilds them. */
#ifndef GLUE_SEQ2SEQ_DATA_H
#define GLUE_SEQ2SEQ_DATA_H

#include <stdint.h>

#include "models/seq2seq/seq2seq.h"
#include "text/subword.h"

typedef struct S2sCorpus {
    int n;
    int **src, **tgt;      /* (n) piece ids, no specials */
    int *src_len, *tgt_len;
    char **src_text, **tgt_text;  /* raw lines when kept (evaluation), else NULL */
    long src_unk, tgt_unk; /* [UNK] pieces (a vocabulary that does not cover the data) */
} S2sCorpus;

/* Reads and encodes src_path / tgt_path (tgt_path may be NULL: sources only).
 * keep_text keeps the raw lines. 0, or 1 after a message (missing file,
 * different line counts, invalid UTF-8 is kept as U+FFFD by the tokenizer). */
int s2s_corpus_load(S2sCorpus *c, const char *src_path, const char *tgt_path, SubwordTokenizer *tok, int keep_text);
void s2s_corpus_free(S2sCorpus *c);

/* A list of batches, each a run of pair indices. */
typedef struct S2sBatches {
    int n;                 /* batches */
    int *start, *count;    /* (n) batch b = order[start[b] .. start[b] + count[b]) */
    int *order;            /* pair indices */
    int skipped;           /* pairs longer than max_len (left out) */
    int max_len;           /* longest sequence used, with its special token */
} S2sBatches;

/* Batches of corpus c for epoch `epoch` of a run seeded with seed (rng stream
 * per epoch); shuffle = 0 keeps length order and batch order (evaluation). */
void s2s_batches_make(S2sBatches *out, const S2sCorpus *c, int max_tokens, int max_len, uint64_t seed, int epoch,
                      int shuffle);
void s2s_batches_free(S2sBatches *b);

/* Room for filling S2sBatch arrays of up to max_tokens tokens per side. */
typedef struct S2sBatchBuf {
    int *src, *src_len, *tgt_in, *tgt_out, *tgt_len;
} S2sBatchBuf;

void s2s_batch_buf_init(S2sBatchBuf *buf, int max_tokens);
void s2s_batch_buf_free(S2sBatchBuf *buf);
/* The padded S2sBatch of pairs idx[0..n): source x [SEP], target [CLS] y / y [SEP]. */
S2sBatch s2s_batch_fill(S2sBatchBuf *buf, const S2sCorpus *c, const VocabSpecials *sp, const int *idx, int n);

#endif
