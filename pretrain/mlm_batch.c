/* mlm_batch.c — masked-LM minibatches from a sequence stream (see mlm_batch.h). */
#include "pretrain/mlm_batch.h"

#include "core/common.h"

#include <stdlib.h>
#include <string.h>

void mlm_batch_init(MlmBatch *b, int B_max, int T_max, int max_predictions, int pad_id) {
    CHECK_OR_DIE(B_max > 0 && T_max >= 3 && T_max <= MASKING_MAX_LEN && max_predictions > 0);
    memset(b, 0, sizeof *b);
    b->B_max = B_max;
    b->T_max = T_max;
    b->max_masked = B_max * max_predictions;
    b->pad_id = pad_id;
    b->ids = xmalloc((size_t)B_max * (size_t)T_max * sizeof *b->ids);
    b->lengths = xmalloc((size_t)B_max * sizeof *b->lengths);
    b->positions = xmalloc((size_t)b->max_masked * sizeof *b->positions);
    b->labels = xmalloc((size_t)b->max_masked * sizeof *b->labels);
}

void mlm_batch_free(MlmBatch *b) {
    free(b->ids);
    free(b->lengths);
    free(b->positions);
    free(b->labels);
    memset(b, 0, sizeof *b);
}

int mlm_batch_fill(MlmBatch *b, PretrainStream *s, const MaskConfig *mc, Rng *rng, int B) {
    CHECK_OR_DIE(B > 0 && B <= b->B_max && s->cfg.seq_len <= b->T_max);
    CHECK_OR_DIE(mc->max_predictions * b->B_max <= b->max_masked);
    /* Rows are read at stride T_max, then moved down to the batch's own T. */
    int n = 0, T = 0;
    for (; n < B; n++) {
        int got = stream_next(s, b->ids + (size_t)n * b->T_max, &b->lengths[n]);
        if (got < 0) return -1;
        if (got == 0) break;
        if (b->lengths[n] > T) T = b->lengths[n];
    }
    b->B = n;
    b->T = T;
    b->n_masked = 0;
    b->tokens = 0;
    for (int r = 0; r < n; r++) {
        int *row = b->ids + (size_t)r * T, len = b->lengths[r];
        memmove(row, b->ids + (size_t)r * b->T_max, (size_t)len * sizeof *row);
        for (int t = len; t < T; t++) row[t] = b->pad_id;
        int *pos = b->positions + b->n_masked;
        int k = masking_apply(mc, rng, row, len, pos, b->labels + b->n_masked);
        for (int i = 0; i < k; i++) pos[i] += r * T;
        b->n_masked += k;
        b->tokens += len;
    }
    b->masked_before = b->masked_after = 0;
    b->tokens_all = b->tokens;
    return n;
}

void mlm_batch_shard(MlmBatch *shard, const MlmBatch *all, int r0, int r1, int *positions) {
    CHECK_OR_DIE(0 <= r0 && r0 <= r1 && r1 <= all->B);
    int T = all->T, lo = r0 * T, hi = r1 * T;
    /* positions ascend, so the shard's targets are one run of them. */
    int i0 = 0;
    while (i0 < all->n_masked && all->positions[i0] < lo) i0++;
    int i1 = i0;
    while (i1 < all->n_masked && all->positions[i1] < hi) i1++;
    for (int i = i0; i < i1; i++) positions[i - i0] = all->positions[i] - lo;
    *shard = *all;
    shard->B = shard->B_max = r1 - r0;
    shard->ids = all->ids + (size_t)lo;
    shard->lengths = all->lengths + r0;
    shard->positions = positions;
    shard->labels = all->labels + i0;
    shard->n_masked = i1 - i0;
    shard->max_masked = shard->n_masked;
    shard->tokens = 0;
    for (int r = r0; r < r1; r++) shard->tokens += all->lengths[r];
    shard->masked_before = all->masked_before + i0;
    shard->masked_after = all->masked_after + (all->n_masked - i1);
    shard->tokens_all = all->tokens_all;
}

long mlm_batch_all_masked(const MlmBatch *b) { return (long)b->masked_before + b->n_masked + b->masked_after; }
