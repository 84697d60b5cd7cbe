/* test_length_batches.c — the cuts of length-sorted rows into prediction
 * batches (train/length_batches.h): every row in exactly one batch, in order,
 * none larger than the maximum; rows of one length fill whole batches; a few
 * long rows are not padded together with many short ones; no rows, no batch. */
#include "train/length_batches.h"
#include "tests/test.h"

enum { LBT_N = 64 };

/* The plan's invariants; returns its batch count. */
static int lbt_plan(const int *len, int n, int max_batch, int *starts) {
    int count = length_batches_plan(len, n, max_batch, 1, starts);
    CHECK(count >= (n + max_batch - 1) / max_batch && count <= n);
    CHECK_EQ_INT(starts[0], 0);
    CHECK_EQ_INT(starts[count], n);
    for (int k = 0; k < count; k++) CHECK(starts[k + 1] > starts[k] && starts[k + 1] - starts[k] <= max_batch);
    return count;
}

TEST(length_batches_cut_where_lengths_change) {
    int len[LBT_N], starts[LBT_N + 1];
    for (int i = 0; i < LBT_N; i++) len[i] = 20;
    CHECK_EQ_INT(lbt_plan(len, LBT_N, 64, starts), 1);
    CHECK_EQ_INT(lbt_plan(len, LBT_N, 16, starts), 4);
    /* 4 rows of 60 tokens, 60 of 8: padding the short ones to 60 would cost
     * 7x their work, a second batch only its fixed overhead. */
    for (int i = 0; i < LBT_N; i++) len[i] = i < 4 ? 60 : 8;
    CHECK_EQ_INT(lbt_plan(len, LBT_N, 64, starts), 2);
    CHECK_EQ_INT(starts[1], 4);
    /* Lengths 64 down to 1: several batches, padded slots within 20% of the
     * tokens (one batch would pad 2080 tokens to 4096 slots). */
    int tokens = 0, slots = 0;
    for (int i = 0; i < LBT_N; i++) len[i] = LBT_N - i, tokens += len[i];
    int count = lbt_plan(len, LBT_N, 64, starts);
    for (int k = 0; k < count; k++) slots += (starts[k + 1] - starts[k]) * len[starts[k]];
    CHECK_MSG(count > 2 && slots * 5 <= tokens * 6, "%d batches, %d slots for %d tokens", count, slots, tokens);
    /* On more threads a batch's fixed part weighs more: fewer, longer batches. */
    int count2 = length_batches_plan(len, LBT_N, 64, 2, starts);
    CHECK_MSG(count2 < count, "%d batches on 2 threads, %d on 1", count2, count);
    CHECK_EQ_INT(length_batches_plan(len, 0, 64, 1, starts), 0);
    CHECK_EQ_INT(starts[0], 0);
}
