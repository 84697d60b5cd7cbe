/* transformer.h — the transformer block's sublayers (prefix block_) shared by the BERT encoder
 * (models/bert/bert.h) and the translation encoder-decoder:
 *
 *   self-attention   y = LN(x + dropout(attn(x W_q, x W_k, x W_v) W_o + b_o))
 *   cross-attention  y = LN(x + dropout(attn(x W_q, m W_k, m W_v) W_o + b_o)),
 *                    m = the encoder memory (B, Tk, C)
 *   FFN              y = LN(x + dropout(gelu(x W_1 + b_1) W_2 + b_2))
 *
 * (Vaswani et al. 2017 / BERT: the LayerNorm comes AFTER the residual add.)
 * With BlockDims.pre_ln, self-attention and FFN put it before the sublayer
 * instead: y = x + dropout(f(LN(x))) (the residual stream is never
 * normalised; a model adds a final LayerNorm after its last layer).
 * A BERT layer = self-attention + FFN; a decoder layer = causal self-attention +
 * cross-attention + FFN. GELU is the exact erf form. Dropout (hidden and on the
 * attention probabilities) is on only when an Rng is passed, and draws from it.
 *
 * Dimension letters: B batch, T (query) length, Tk memory length (cross
 * attention), C channels, NH heads, HS = C / NH head size, FF FFN width (4C).
 *
 * Weights use PyTorch's Linear layout W (out, in). The three attention input
 * projections are ONE (3C, C) block — rows [0, C) query, [C, 2C) key,
 * [2C, 3C) value — with one (3C) bias, so self-attention is a single fused GEMM
 * x (B*T, C) · W^T -> (B*T, 3C). Cross-attention uses the same block: rows
 * [0, C) project x, rows [C, 3C) project the memory. A model whose parameters
 * are named separately (Hugging Face's query/key/value) declares them one after
 * another so they are adjacent in the params arena (see models/bert/bert.c).
 *
 * Memory: each sublayer saves what its backward needs in a BlockAttnActs /
 * BlockFfnActs allocated ONCE for the largest (B, T, Tk) (block_*_acts_init); calls
 * with smaller B, T use the front of each buffer, laid out contiguously for the
 * call's own (B, T). Temporaries go in a caller-owned scratch of
 * block_scratch_floats(max) floats, shared by all sublayers (nothing in it lives
 * from one call to the next). Nothing is allocated inside forward/backward.
 *
 * Gradients: weight gradients are ADDED into a second BlockAttnParams/BlockFfnParams
 * whose pointers are the gradient mirrors of the weights (params_grad). The
 * input gradient dx is WRITTEN (=): it is the chain's running gradient and every
 * sublayer has exactly one input, so overwriting saves the caller a memset per
 * sublayer. The cross-attention memory gradient dmem is ADDED (+=): the memory
 * feeds every decoder layer. dx must not alias dy.
 *
 * Relative positions (Shaw et al. 2018) and other attention variants: set
 * BlockDims.core to a BlockAttnCore whose forward/backward replace nn/attention's
 * (same contract as attention_forward/backward, plus a context pointer for the
 * variant's own parameters and gradients). NULL = plain nn/attention.
 *
 * Threads (core/threads.h): call from the main thread; BLAS runs outside the
 * OpenMP regions of the element-wise passes. */
#ifndef GLUE_NN_TRANSFORMER_H
#define GLUE_NN_TRANSFORMER_H

#include "core/gemm_int8.h"
#include "core/rng.h"
#include "nn/attention.h"

/* db (OC) += column sums of dy (N, OC): linear_bias_backward (nn/linear.h)
 * threaded (deterministically), for the sublayers and the heads on top. */
void block_bias_backward(float *db, const float *dy, long N, int OC);

/* Replaces the attention core (softmax(q k^T / sqrt(HS) + mask) v) of a
 * sublayer; see nn/attention.h for the arguments, which the sublayer fills
 * exactly as it would for attention_forward/backward (fused q/k/v views with
 * row strides, key lengths, causal flag, attention dropout). */
typedef struct BlockAttnCore {
    void *ctx;
    long (*scratch_size)(void *ctx, AttnDims d);
    void (*forward)(void *ctx, float *out, float *att, unsigned char *drop_mask, const float *q,
                    const float *k, const float *v, AttnDims d, Rng *rng, float *scratch);
    void (*backward)(void *ctx, float *dq, float *dk, float *dv, const float *dout, const float *att,
                     const unsigned char *drop_mask, const float *q, const float *k, const float *v,
                     AttnDims d, float *scratch);
} BlockAttnCore;

/* The shape and options of one call (or, for the *_init / scratch functions,
 * the largest call that will be made). */
typedef struct BlockDims {
    int B, T;                 /* batch, length of x */
    int Tk;                   /* cross-attention: memory length; ignored by self-attention */
    int C, NH, FF;            /* channels, heads (C % NH == 0), FFN width */
    float eps;                /* LayerNorm epsilon (BERT 1e-12) */
    float hidden_dropout;     /* after the output projections (with an Rng) */
    float attn_dropout;       /* on the attention probabilities (with an Rng) */
    int causal;               /* self-attention: position i sees j <= i (decoder) */
    const int *lengths;       /* (B) or NULL: self-attention keys t >= lengths[b] are padding */
    const int *mem_lengths;   /* (B) or NULL: cross-attention memory keys past it are padding */
    const BlockAttnCore *core;   /* NULL: nn/attention */
    const float *alibi;       /* (NH) or NULL: self-attention ALiBi slopes (nn/attention.h) */
    const int *q_pos;         /* cross-attention: (B, T) or NULL; set when the queries are rows of
                               * the memory's own sequence (x[b, i] is mem[b, q_pos[b, i]] before
                               * the sublayer): ALiBi then applies, at those positions */
    int pre_ln;               /* self-attention and FFN only: y = x + dropout(f(LN(x))) (pre-LN,
                               * Xiong et al. 2020) instead of y = LN(x + dropout(f(x))); the
                               * sublayer's ln_g/ln_b are then its input LayerNorm */
} BlockDims;

/* Weights of an attention sublayer, or (same layout) their gradients. */
typedef struct BlockAttnParams {
    float *w_qkv;             /* (3C, C) rows: query, key, value */
    float *b_qkv;             /* (3C) */
    float *w_o;               /* (C, C) output projection */
    float *b_o;               /* (C) */
    float *ln_g, *ln_b;       /* (C) LayerNorm after the residual add */
    /* Inference with bf16 weights (core/gemm_bf16.h): packed copies of w_qkv
     * and w_o that self-attention's forward uses instead, or NULL (always NULL
     * in gradients; cross-attention ignores them). */
    const struct Bf16Weights *bf16_qkv, *bf16_o;
    /* Inference with int8 weights (core/gemm_int8.h), the same way, ahead of
     * bf16; cross-attention uses them too (BERT's last layer at [CLS]). */
    const struct Int8Weights *int8_qkv, *int8_o;
    /* Calibration of int8 smoothing (NULL otherwise): the fp32 forward raises
     * absmax_qkv[k] (C) to the largest |input k| the QKV product reads, and
     * absmax_o[k] (C) the output projection's. */
    float *absmax_qkv, *absmax_o;
} BlockAttnParams;

/* Weights of an FFN sublayer, or their gradients. */
typedef struct BlockFfnParams {
    float *w_in;              /* (FF, C) */
    float *b_in;              /* (FF) */
    float *w_out;             /* (C, FF) */
    float *b_out;             /* (C) */
    float *ln_g, *ln_b;       /* (C) */
    const struct Bf16Weights *bf16_in, *bf16_out;   /* as BlockAttnParams' bf16_* */
    const struct Int8Weights *int8_in, *int8_out;   /* as BlockAttnParams' int8_* */
    float *absmax_in, *absmax_out;  /* as BlockAttnParams' absmax_*: (C), (FF) */
} BlockFfnParams;

/* What the residual + LayerNorm end of either sublayer keeps for its backward. */
typedef struct BlockTailActs {
    unsigned char *drop_mask; /* (B, T, C) hidden-dropout mask */
    float *res;               /* (B, T, C) x + dropout(projection): the LayerNorm input;
                               * pre-LN: LN(x), the input of the sublayer's first projection */
    float *mean, *rstd;       /* (B, T) LayerNorm statistics */
} BlockTailActs;

/* What an attention sublayer keeps for its backward (and its output). */
typedef struct BlockAttnActs {
    float *qkv;               /* self: (B, T, 3C); cross: q (B, T, C) */
    float *kv;                /* cross only: (B, Tk, 2C) memory keys | values; else NULL */
    float *att;               /* (B, NH, T, Tk) attention probabilities (Tk = T for self) */
    unsigned char *att_mask;  /* (B, NH, T, Tk) attention-dropout mask */
    float *ctx;               /* (B, T, C) heads merged: input of the output projection */
    BlockTailActs tail;
    float *out;               /* (B, T, C) the sublayer's output y */
    int train;                /* set by the forward: dropout was on (an Rng given) */
} BlockAttnActs;

/* What an FFN sublayer keeps for its backward (and its output). */
typedef struct BlockFfnActs {
    float *pre;               /* (B, T, FF) x W_1 + b_1 (GELU input) */
    float *act;               /* (B, T, FF) gelu(pre) (input of W_2) */
    Int8Acts act_q;           /* with int8 weights: act quantized for W_2 (act itself not kept) */
    BlockTailActs tail;
    float *out;               /* (B, T, C) the sublayer's output y */
    int train;                /* set by the forward: dropout was on */
} BlockFfnActs;

/* Allocate / free the saved activations for the largest call `max` (cross = 1
 * for a cross-attention sublayer, which also needs max.Tk). */
void block_attn_acts_init(BlockAttnActs *a, const BlockDims *max, int cross);
/* The same for calls of varying shape under a budget (seq2seq's token-budget
 * batches): at most `rows` query rows, `key_rows` key rows (cross) and `scores`
 * attention entries summed over heads. */
void block_attn_acts_init_sized(BlockAttnActs *a, long rows, long key_rows, long scores, int C, int cross);
void block_attn_acts_free(BlockAttnActs *a);
void block_ffn_acts_init(BlockFfnActs *a, const BlockDims *max);
void block_ffn_acts_free(BlockFfnActs *a);

/* Floats of scratch that any forward/backward of this file needs for calls up
 * to `max` (including the attention core's, nn/attention or max.core). */
long block_scratch_floats(const BlockDims *max);

/* Self-attention sublayer: a->out (B, T, C) from x (B, T, C). Padding keys come
 * from d->lengths, causal masking from d->causal. rng NULL: no dropout. */
void block_self_attn_forward(BlockAttnActs *a, const float *x, const BlockAttnParams *w, const BlockDims *d,
                          Rng *rng, float *scratch);
/* dx (B, T, C) = dL/dx (written); g += weight gradients; given dy = dL/dy. */
void block_self_attn_backward(float *dx, BlockAttnParams *g, const float *dy, const BlockAttnActs *a,
                           const float *x, const BlockAttnParams *w, const BlockDims *d, float *scratch);

/* Cross-attention sublayer: queries from x (B, T, C), keys and values from
 * mem (B, Tk, C) with padding from d->mem_lengths. */
void block_cross_attn_forward(BlockAttnActs *a, const float *x, const float *mem, const BlockAttnParams *w,
                           const BlockDims *d, Rng *rng, float *scratch);
/* dx written, dmem (B, Tk, C) ADDED, g += weight gradients. */
void block_cross_attn_backward(float *dx, float *dmem, BlockAttnParams *g, const float *dy,
                            const BlockAttnActs *a, const float *x, const float *mem,
                            const BlockAttnParams *w, const BlockDims *d, float *scratch);

/* FFN sublayer: a->out (B, T, C) from x (B, T, C). */
void block_ffn_forward(BlockFfnActs *a, const float *x, const BlockFfnParams *w, const BlockDims *d, Rng *rng,
                    float *scratch);
/* dx written, g += weight gradients. */
void block_ffn_backward(float *dx, BlockFfnParams *g, const float *dy, const BlockFfnActs *a,
                     const float *x, const BlockFfnParams *w, const BlockDims *d, float *scratch);

#endif
