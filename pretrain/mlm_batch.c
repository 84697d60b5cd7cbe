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
    return n;
}
