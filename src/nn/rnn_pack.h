/* rnn_pack.h — what the recurrent ops (nn/lstm.h, nn/gru.h) share: the shape
 * of a padded batch of variable-length sequences, and the packing that makes
 * their cost follow the valid tokens rather than the padded (B, T) box, as with
 * PyTorch's packed sequences.
 *
 * Sequence b is valid for t < lengths[b] (lengths NULL: all T). The valid
 * positions, gathered in (b, t) order, are the N = sum(lengths) rows of a
 * packed (N, .) matrix; the input projection of every step and the weight
 * gradients are one GEMM each over it. A reverse op reads a sequence from its
 * last valid step back to t = 0 and writes its outputs where it read. */
#ifndef GLUE_NN_RNN_PACK_H
#define GLUE_NN_RNN_PACK_H

typedef struct {
    int B, T, C, H;  /* batch, padded time steps, input size, hidden size */
    int reverse;     /* 1: run each sequence backwards over its valid part */
    int ldh;         /* row stride of h and dh: H (0 means H), or 2H when the two
                        directions of a bidirectional op write one (B, T, 2H) output */
} RnnDims;

static inline int rnn_ldh(RnnDims d) { return d.ldh > 0 ? d.ldh : d.H; }
/* Length of sequence b (dies on one outside [0, T]). */
int rnn_len(const int *lengths, int b, int T);
/* Position written at step s of a sequence of length len. */
static inline int rnn_pos(int len, int s, int reverse) { return reverse ? len - 1 - s : s; }
/* N = sum of lengths; *maxlen gets the longest. */
long rnn_count(const int *lengths, RnnDims d, int *maxlen);

/* dst (N, width) = the valid rows of src (B, T, width). */
void rnn_pack(float *dst, const float *src, const int *lengths, RnnDims d, int width);
/* In place in x (B, T, width): packed rows spread out to their padded
 * positions, and the inverse. */
void rnn_unpack_inplace(float *x, const int *lengths, RnnDims d, int width, long N);
void rnn_pack_inplace(float *x, const int *lengths, RnnDims d, int width);

/* gates (B, T, G) = x W_ih^T + b_ih (b_ih NULL: no bias) at the valid
 * positions (the padded ones untouched), one GEMM over the packed rows; xp
 * (B*T, C) scratch. */
void rnn_input_projection(float *gates, const float *x, const int *lengths, long N, const float *w_ih,
                          const float *b_ih, RnnDims d, int G, float *xp);

/* hprev (active rows, H) = the h of step s - 1 of every sequence with s < len,
 * in batch order, from h (B, T, ldh); returns the count. */
int rnn_gather_prev(float *hprev, const float *h, const int *lengths, RnnDims d, int s);

/* The recurrent product of every step, h_prev W_hh^T with W_hh (G, H): W_hh^T
 * is packed once per call into wp (MATMUL_PACKED_B_FLOATS(H, G) floats of
 * scratch; core/blas.h's matmul_packed_b) instead of once per step inside the
 * GEMM, when the products are fp32 and there is more than one step. Returns
 * the packing (aligned, inside wp), or NULL when the steps use plain matmul
 * (bf16 products). */
float *rnn_pack_recurrent(float *wp, const float *w_hh, int G, int H, int maxlen);
/* rec (k, G) = hprev (k, H) W_hh^T, from wp when it is not NULL. */
void rnn_recurrent_product(float *rec, const float *hprev, const float *w_hh, const float *wp, int k, int G, int H);

/* Threads for the time steps of a forward. The sequences are independent, so
 * each thread runs every step of its own block of sequences (rnn_rows): the
 * recurrent product and the cell of its rows, no barrier per step, and the
 * same numbers at any thread count (each row's sums do not depend on the
 * others). 1 when the products are not packed (wp NULL: bf16 products go
 * through matmul), inside a parallel region, or when a step is too small to
 * share. */
int rnn_row_team(RnnDims d, int G, const float *wp);
/* Block t of `team` of the batch: its first sequence *b0 and its dims (B the
 * block's size, possibly 0). */
RnnDims rnn_rows(RnnDims d, int t, int team, int *b0);

/* Step s of every active sequence of d: the cell of gru.c or lstm.c over the
 * input projections in gates (B, T, G) and rec (active rows, G) = h_prev
 * W_hh^T in batch order (NULL at s = 0); aux (B, T, H) is what the cell
 * saves beside h and gates (the GRU's hn, the LSTM's cell state). */
typedef void (*RnnStepForward)(float *h, float *gates, float *aux, const float *rec, const int *lengths,
                               const float *b_hh, RnnDims d, int s);
/* The forward of a recurrent op of G = 3H or 4H gates: the input projection of
 * the packed batch, then every step of each thread's block of sequences
 * (rnn_row_team); h, gates and aux zero at the padded positions. scratch:
 * hprev (B, H), rec (B, G), packed x (B*T, C) and W_hh^T packed. */
void rnn_forward(float *h, float *gates, float *aux, const float *x, const int *lengths, const float *w_ih,
                 const float *w_hh, const float *b_ih, const float *b_hh, RnnDims d, int G, float *scratch,
                 RnnStepForward step);

/* The weight and input gradients once the pre-activation gradients of every
 * valid position are complete: dGi (B, T, G) of the input projection, dGh
 * (B, T, G) of the recurrent one (may be dGi: the LSTM's are the same). Both
 * are packed in place; Hprev (B*T, H) and xp (B*T, C) are scratch. Adds
 *   g_w_ih += dGi^T x, g_b_ih += sum dGi, g_w_hh += dGh^T h_prev,
 *   g_b_hh += sum dGh, dx += dGi W_ih   (any gradient may be NULL). */
void rnn_backward_weights(float *dx, float *g_w_ih, float *g_b_ih, float *g_w_hh, float *g_b_hh, float *dGi,
                          float *dGh, float *Hprev, float *xp, const float *h, const float *x,
                          const int *lengths, const float *w_ih, const float *w_hh, RnnDims d, int G);

#endif
