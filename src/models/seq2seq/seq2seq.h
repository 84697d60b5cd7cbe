/* seq2seq.h — the translation model: a transformer encoder-decoder (Vaswani et
 * al. 2017) built from the same post-LN sublayers as BERT (nn/transformer.h),
 * shared between its files:
 *   seq2seq.c         config (JSON), parameters, create/free, save/load
 *   seq2seq_step.c    training workspace, forward + loss + backward of a batch
 *   seq2seq_decode.c  incremental decoding with cached keys/values: greedy, beam
 *   seq2seq_data.c    parallel corpus: reading, encoding, length-bucketed batches
 * and trained by the training harness's translation client (train/translate.h:
 * epochs, dev BLEU, best checkpoint, resume), used by `glue translate`
 * (src/cli/cmd_translate.c).
 *
 * Architecture (dimension letters: B sentences, S source length, T target
 * length, C model width, NH heads, HS = C/NH, FF FFN width, V vocabulary):
 *   encoder  x = dropout(sqrt(C) E[src] + P) -> L_enc x [self-attn, FFN]
 *   decoder  y = dropout(sqrt(C) E[tgt_in] + P) -> L_dec x [causal self-attn,
 *            cross-attn on the encoder output, FFN] -> logits = y E^T
 * One embedding E (V, C) for source, target and the output projection: the
 * vocabulary is shared (text/subword.h), the decoder input/output tie is
 * Press & Wolf (2017), and sharing with the encoder is what a joint vocabulary
 * allows. Positions P, by config: the paper's sinusoids, a learned table, or
 * none in the embeddings and instead LPR relative key/value tables (nn/relpos.h)
 * in every self-attention sublayer (per layer, shared by the heads, as Shaw et
 * al.). Loss: label-smoothed cross-entropy (nn/label_smoothing.h) over target
 * tokens. Source x_1..x_m [SEP]; target input [CLS] y_1..y_n, target output
 * y_1..y_n [SEP]. The FFN activation is BERT's (GELU) since the sublayer is
 * BERT's; the paper used ReLU.
 *
 * seq2seq_data.h adds the corpus. */
#ifndef GLUE_SEQ2SEQ_H
#define GLUE_SEQ2SEQ_H

#include <stdint.h>

#include "core/checkpoint.h"
#include "core/params.h"
#include "core/rng.h"
#include "nn/relpos.h"
#include "nn/transformer.h"
#include "text/vocab.h"

typedef struct cJSON cJSON;

typedef enum { S2S_POS_SINUSOID = 0, S2S_POS_LEARNED, S2S_POS_LPR } S2sPos;

/* Everything that defines the network (stored in checkpoints). JSON keys are
 * the field names below. */
typedef struct S2sConfig {
    int vocab_size;        /* V, from the vocabulary */
    int d_model;           /* C */
    int heads;             /* NH, divides C */
    int ffn;               /* FF */
    int encoder_layers, decoder_layers;
    int max_len;           /* longest sequence in tokens (with [CLS]/[SEP]) */
    float dropout;         /* embeddings and sublayer outputs */
    float attention_dropout;
    float layer_norm_eps;
    S2sPos positions;      /* "sinusoid" | "learned" | "lpr" */
    int lpr_base;          /* k of the log buckets */
    int lpr_keys, lpr_values;  /* which relative tables (a^K, a^V) LPR uses */
    float label_smoothing;
} S2sConfig;

/* One layer's weights (or, same layout, gradients); pointers into the arena.
 * Encoder layers leave `cross` empty. */
typedef struct S2sLayer {
    BlockAttnParams self, cross;
    BlockFfnParams ffn;
    float *rel_k, *rel_v;  /* (2S+1, HS) LPR tables, or NULL */
} S2sLayer;

typedef struct S2sWeights {
    float *embed;          /* (V, C) shared embedding and output projection */
    float *pos;            /* (max_len, C) learned positions, or NULL */
    S2sLayer *enc, *dec;   /* (encoder_layers), (decoder_layers) */
} S2sWeights;

typedef struct S2sWork S2sWork;   /* training activations (seq2seq_step.c) */

typedef struct Seq2Seq {
    S2sConfig cfg;
    Params *params;
    S2sWeights w;          /* weights */
    S2sWeights g;          /* gradients, after s2s_reserve */
    float *sinusoid;       /* (max_len, C) the fixed table, or NULL */
    int rel_max_bucket;    /* S of the LPR tables */
    RelPos *enc_rel, *dec_rel;        /* (layers) LPR, or NULL */
    BlockAttnCore *enc_core, *dec_core;  /* (layers) attention with LPR, or NULL */
    Vocab *vocab;          /* owned */
    S2sWork *work;         /* NULL until s2s_reserve */
    Rng rng;               /* dropout */
} Seq2Seq;

/* A batch of sentence pairs, padded: ids are vocabulary ids. */
typedef struct S2sBatch {
    int B, S, T;           /* sentences, source and target lengths */
    const int *src;        /* (B, S) x_1 .. x_m [SEP], [PAD] after src_len[b] */
    const int *src_len;    /* (B) >= 1 */
    const int *tgt_in;     /* (B, T) [CLS] y_1 .. y_n, [PAD] after */
    const int *tgt_out;    /* (B, T) y_1 .. y_n [SEP], -1 after (ignored) */
    const int *tgt_len;    /* (B) n + 1 */
} S2sBatch;

/* Loss sums of a batch. */
typedef struct S2sLoss {
    double smoothed;       /* Σ label-smoothed loss over target tokens */
    double nll;            /* Σ -log p(y) (perplexity = exp(nll / tokens)) */
    long tokens;
} S2sLoss;

/* ---- config (seq2seq.c) ---- */
S2sConfig s2s_config_default(void);
/* Overrides the fields present in j (unknown keys are ignored here: the caller
 * decides which keys a file may have). 0, or -1 after a message. */
int s2s_config_from_json(S2sConfig *c, const cJSON *j);
/* The model's numeric settings with their ranges (models/run_config.h), what
 * s2s_config_from_json enforces and --help-settings prints. */
const struct SettingSpec *s2s_model_settings(int *n);
cJSON *s2s_config_to_json(const S2sConfig *c);
/* 0 when consistent (C % NH, positive sizes, ...), else -1 after a message. */
int s2s_config_check(const S2sConfig *c);
const char *s2s_pos_name(S2sPos p);

/* ---- model (seq2seq.c) ---- */
/* A fresh model with weights drawn from seed; takes ownership of vocab, whose
 * size must be cfg->vocab_size. */
Seq2Seq *s2s_create(const S2sConfig *cfg, Vocab *vocab, uint64_t seed);
void s2s_free(Seq2Seq *m);
/* Checkpoint: config + vocabulary + weights stored as dtype (CKPT_F32 for
 * training; CKPT_F16 halves a shipped model). 0, or -1 after a message. */
int s2s_save(const Seq2Seq *m, const char *path, CkptDtype dtype);
/* NULL after a message (missing, corrupt, or not a translation model). */
Seq2Seq *s2s_load(const char *path);
/* The weights of a checkpoint into an existing model of the same config. */
int s2s_load_weights(Seq2Seq *m, const char *path);

/* ---- training step (seq2seq_step.c) ---- */
/* Allocates gradients and activations for batches with at most max_tokens
 * source tokens and max_tokens target tokens (B * S and B * T, padding
 * included), each sequence at most max_len <= cfg.max_len tokens. Does nothing
 * when the current reservation is large enough. */
void s2s_reserve(Seq2Seq *m, int max_tokens, int max_len);
/* Loss of a batch; rng != NULL turns dropout on (drawn from it). With
 * grad != 0 the gradient of the MEAN smoothed loss over the batch's target
 * tokens is ADDED to the params' gradient (zero it first). */
S2sLoss s2s_forward_backward(Seq2Seq *m, const S2sBatch *b, Rng *rng, int grad);
/* The longest sequence the reservation allows (0 before s2s_reserve). */
int s2s_reserved_len(const Seq2Seq *m);

/* ---- decoding (seq2seq_decode.c) ---- */
typedef struct S2sDecodeOptions {
    int beam;              /* 1 = greedy */
    float alpha;           /* GNMT length penalty ((5 + |Y|) / 6)^alpha; 0 = none */
    int extra_len;         /* hypotheses stop at source length + extra_len tokens */
    int force_beam;        /* beam search even for beam 1 (tests: it equals greedy) */
} S2sDecodeOptions;

/* Translates n sources (ids without [CLS]/[SEP], lengths src_len) at once:
 * out[i] (malloc'd, caller frees) gets the output pieces without [CLS]/[SEP],
 * out_len[i] their count. Deterministic; no dropout. */
void s2s_translate_batch(Seq2Seq *m, const int *const *src, const int *src_len, int n,
                         const S2sDecodeOptions *o, int **out, int *out_len);

/* ---- shared by the seq2seq files only ---- */
/* Points m->g and the LPR tables' gradients at the gradient mirror (after
 * params_grad_enable). */
void s2s_bind_grads(Seq2Seq *m);
void s2s_work_free(S2sWork *w);
/* out (B, T, C) = sqrt(C) E[ids] + the absolute positions offset..offset+T-1
 * (none with LPR). */
void s2s_embed(const Seq2Seq *m, float *out, const int *ids, int B, int T, int offset);
/* The sublayer dims of a call: self-attention over T (causal for the decoder),
 * cross-attention over Tk memory positions; train = dropout on. */
BlockDims s2s_dims(const Seq2Seq *m, int B, int T, int Tk, int train);
/* Decoder layer l on a reserved model (exposed for the reference test):
 * causal self-attention over y (B, T, C), cross-attention on mem (B, S, C),
 * FFN; returns the output (kept in the workspace). The backward writes dx
 * (which may be dy itself: dy is consumed before dx is written), adds dL/dmem
 * to the workspace's encoder-output gradient and the weight gradients. */
const float *s2s_dec_layer_forward(Seq2Seq *m, int l, const float *y, const float *mem, const S2sBatch *b, Rng *rng);
void s2s_dec_layer_backward(Seq2Seq *m, int l, float *dx, const float *dy, const float *y, const float *mem,
                            const S2sBatch *b, int train);
/* The encoder output's gradient accumulated by s2s_dec_layer_backward: (M, C). */
float *s2s_work_dmem(S2sWork *w);
/* The decoder output (B, T, C) of a batch without dropout, by the training
 * path (the tests compare incremental decoding with it). */
const float *s2s_forward_hidden(Seq2Seq *m, const S2sBatch *b);
/* Saved activations of an attention sublayer sized for a token budget: rows
 * <= M queries, each with <= keys keys (cross: memory rows <= M); the same
 * fields as block_attn_acts_init, freed by block_attn_acts_free. */
void s2s_attn_acts(BlockAttnActs *a, long M, long keys, int C, int NH, int cross);
void s2s_ffn_acts(BlockFfnActs *a, long M, int C, int FF);

#endif
