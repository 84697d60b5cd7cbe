/* positions.h — absolute position information added to token embeddings:
 * the fixed sinusoids of Vaswani et al. (2017) or a learned table (BERT-style),
 * both as a (maxT, C) table whose row t is added at position t. The model
 * decides whether the table is a parameter (learned: positions_backward gives
 * its gradient) or a constant (sinusoidal: no backward). Relative positions are
 * the other option (nn/relpos.h). */
#ifndef GLUE_NN_POSITIONS_H
#define GLUE_NN_POSITIONS_H

/* table (T, C): table[t, 2i] = sin(t / 10000^(2i/C)), table[t, 2i+1] =
 * cos(t / 10000^(2i/C)) — the paper's interleaved layout (fairseq and tensor2tensor
 * concatenate the sin and cos halves instead; the information is the same).
 * Computed in double, rounded once. */
void positions_sinusoid(float *table, int T, int C);

/* x (B, T, C) += table[offset + t] for t < T (a decoding step at position p is
 * T = 1, offset = p). */
void positions_add(float *x, const float *table, int B, int T, int C, int offset);

/* dtable[offset + t] += Σ_b dx[b, t], dx (B, T, C): the learned table's gradient. */
void positions_backward(float *dtable, const float *dx, int B, int T, int C, int offset);

#endif
