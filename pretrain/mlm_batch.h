/* mlm_batch.h — one masked-LM minibatch: B sequences from a stream, padded to
 * the longest of them, dynamically masked, with the targets as flat positions
 * b * T + t into the (B, T) batch — the form bert_mlm_loss takes.
 *
 * Buffers are sized once for (B_max, T_max) (mlm_batch_init); filling a batch
 * allocates nothing. */
#ifndef GLUE_PRETRAIN_MLM_BATCH_H
#define GLUE_PRETRAIN_MLM_BATCH_H

#include "pretrain/masking.h"
#include "pretrain/stream.h"

typedef struct MlmBatch {
    int B, T;             /* rows filled and their padded length (the longest row) */
    int B_max, T_max, max_masked;
    int pad_id;
    int *ids;             /* (B, T) masked input, [PAD] after each row's length */
    int *lengths;         /* (B) */
    int *positions;       /* (n_masked) b * T + t, ascending */
    int *labels;          /* (n_masked) original ids there */
    int n_masked;
    long tokens;          /* real (unpadded) tokens in the batch */
    /* A shard (mlm_batch_shard: some rows of a whole batch) also knows the
     * whole: targets in the whole batch's rows before and after its own, and
     * the whole batch's real tokens. A whole batch: 0, 0 and `tokens`. */
    int masked_before, masked_after;
    long tokens_all;
} MlmBatch;

/* Room for B_max rows of T_max; max_masked = B_max * max_predictions. */
void mlm_batch_init(MlmBatch *b, int B_max, int T_max, int max_predictions, int pad_id);
void mlm_batch_free(MlmBatch *b);
/* Fills up to B rows (B <= B_max) from the stream and masks them with rng.
 * Returns the rows filled (< B only at the end of a one-pass stream; 0 there),
 * or -1 after a message on a read error. */
int mlm_batch_fill(MlmBatch *b, PretrainStream *s, const MaskConfig *mc, Rng *rng, int B);

/* Rows [r0, r1) of the filled batch `all` as a batch of their own (a
 * data-parallel rank's share; the same T): ids, lengths and labels point into
 * `all`, positions are those rows' targets shifted to the shard, written into
 * `positions` (room for all->n_masked). The shard is valid while `all` is
 * unchanged; it owns nothing. */
void mlm_batch_shard(MlmBatch *shard, const MlmBatch *all, int r0, int r1, int *positions);
/* The targets of the whole batch b belongs to (its own when b is whole): what
 * a loss over a shard averages over so that the shards' losses add up to the
 * whole batch's mean (Bert.loss_count). */
long mlm_batch_all_masked(const MlmBatch *b);

#endif
