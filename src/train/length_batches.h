/* length_batches.h — where to cut rows sorted by length into prediction
 * batches. A model that pads a batch to its longest row (BERT) spends work on
 * every padded slot, and a call's rows are often of mixed lengths (a server's
 * batch of requests: 64 random SST-2 sentences took 1.5x the CPU of the same
 * sentences predicted among all 872 of the split). Cutting the sorted rows into
 * batches of similar length costs a forward pass's fixed overhead per batch
 * and saves padding; length_batches_plan picks the cuts with the least total
 * estimated cost. */
#ifndef GLUE_LENGTH_BATCHES_H
#define GLUE_LENGTH_BATCHES_H

/* len[0..n): the rows' lengths, longest first; threads: the OpenMP threads
 * the forward passes run on. Writes the first row of each batch to starts
 * (room for n + 1 ints; starts[count] = n) and returns the count of batches,
 * none of more than max_batch rows. The same lengths and threads always give
 * the same cuts. */
int length_batches_plan(const int *len, int n, int max_batch, int threads, int *starts);

#endif
