/* embedding.h — table lookup: row n of the output is row ids[n] of the weight.
 * Used for word pieces, positions and segments (BERT) and word ids (TextCNN,
 * BiLSTM). The backward is sparse: it touches only the rows that were looked up,
 * and can list them, so an optimizer over a large vocabulary can update only
 * those rows (fastText-style sparse updates). */
#ifndef GLUE_NN_EMBEDDING_H
#define GLUE_NN_EMBEDDING_H

/* out (N, C) = weight[ids[n]], weight (V, C), ids (N) in [0, V). */
void embedding_forward(float *out, const int *ids, const float *weight, int N, int V, int C);
/* out (N, C) += weight[ids[n]] — sums of embeddings (BERT: word + position +
 * segment) without a temporary. */
void embedding_forward_add(float *out, const int *ids, const float *weight, int N, int V, int C);

/* dweight (V, C) += scatter of dout (N, C) into rows ids[n] (repeated ids add up).
 * If touched_rows (N) is non-NULL, the distinct rows written are stored there in
 * first-seen order and their count is returned; `seen` (V) must then be a zeroed
 * byte array owned by the caller, and is left zeroed again on return (so the
 * caller never has to clear all V entries). Otherwise returns 0 and `seen` is
 * unused. */
int embedding_backward(float *dweight, int *touched_rows, unsigned char *seen,
                       const float *dout, const int *ids, int N, int V, int C);

#endif
