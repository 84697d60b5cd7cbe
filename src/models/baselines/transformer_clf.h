/* transformer_clf.h — a Transformer encoder trained from scratch (Vaswani et
 * al. 2017, "Attention Is All You Need", the encoder as the classifier zoos
 * have it) as a ModelOps: the "what does pretraining buy" row beside BERT.
 *   transformer_clf.c        ModelOps: settings, create, load, free
 *   transformer_clf_step.c   forward / backward over a batch, the ops' forward, backward, update
 * Outside code needs only TRANSFORMER_OPS (models/registry.c).
 *
 * The model, per sentence: word ids (the word models' dictionary,
 * word_features.h) -> embedding (V, C) times sqrt(C) (Vaswani's scaling) +
 * the fixed sinusoids (nn/positions.h), with pool=cls a learned vector first
 * at position 0 -> dropout -> L of glue's own encoder layers (nn/transformer.h
 * as BERT runs them: post-LN self-attention over the sentence's own tokens,
 * then a GELU FFN) -> pooling: the mean of the sentence's outputs, or the
 * output at the [CLS] position -> dropout -> linear: K logits (the harness's
 * head), or 1 output (regression).
 * Pairs (models/baselines/word_pair.h): both sentences apart,
 * [u; v; |u - v|; u * v], as every word model of the zoo reads them.
 * An empty text is one padding word (its embedding row is zero).
 *
 * Why word ids and not WordPiece: the row should differ from BERT's by the
 * pretraining alone where it can, but WordPiece is itself learnt on the
 * pretraining corpus; word ids from the task's training split are what every
 * other model of the zoo reads, so the table compares architectures on the
 * same input and BERT's row adds pretraining (and its vocabulary) on top.
 * Why pairs apart: the zoo's rule for pairs, and so the comparison with BERT
 * (which reads a pair as one sequence, cross-attending) shows what that buys.
 *
 * Layout: the B sentences of a batch (n rows, or 2n for pairs: a rows then b
 * rows) padded to the longest, T positions; padding keys are masked
 * (BlockDims.lengths), so a row's outputs depend only on its own words. */
#ifndef GLUE_TRANSFORMER_CLF_H
#define GLUE_TRANSFORMER_CLF_H

#include <stdint.h>

#include "models/model.h"
#include "models/baselines/word_features.h"
#include "models/baselines/word_model_io.h"
#include "nn/transformer.h"
#include "optim/optim.h"

extern const ModelOps TRANSFORMER_OPS;

enum { TF_MAX_LAYERS = 24 };
typedef enum { TF_POOL_MEAN, TF_POOL_CLS } TfPool;

typedef struct TfConfig {
    int dim, heads, ff, layers;    /* C, NH, FF, L */
    float dropout, attn_dropout;   /* embeddings, sublayer outputs, classifier input / attention probabilities */
    float eps;                     /* LayerNorm epsilon */
    int pool;                      /* TfPool */
    int min_count, max_len;        /* vocabulary threshold, words per text */
    int batch, eval_batch;         /* rows per step / per prediction call (workspace size) */
    double weight_decay;
} TfConfig;

typedef struct TfWork {
    int cap_seqs, cap_T;           /* sentences and positions it was sized for */
    int n, B, T, train;            /* the batch last laid out; its forward had dropout on */
    int *ids, *lengths, *touched;  /* (B, T) word ids (padding WF_PAD), (B) tokens, (B T) rows written */
    unsigned char *seen;           /* (V) scratch of embedding_backward, kept zero */
    float *pos;                    /* (cap_T, C) the sinusoids */
    float *x0, *dx, *dy;           /* (B, T, C) the first layer's input; gradients */
    unsigned char *x0_mask;        /* (B, T, C) its dropout mask */
    BlockAttnActs attn[TF_MAX_LAYERS];
    BlockFfnActs ffn[TF_MAX_LAYERS];
    float *scratch;
    float *enc, *denc;             /* (B, C) pooled sentences and their gradient */
    float *feat, *dfeat;           /* (n, FC) classifier input before dropout / its gradient */
    float *drop, *ddrop;           /* (n, FC) after dropout / its gradient */
    unsigned char *mask;           /* (n, FC) dropout mask */
    float *logits, *dlogits;       /* (n, K) */
} TfWork;

typedef struct TransformerClf {
    WordModelBase base;            /* first: task, config, pair, seed, vocab, params, optimizer, dropout rng */
    TfConfig cfg;
    int K, FC;                     /* outputs; classifier inputs */
    int h_emb, h_cls, h_out_w, h_out_b;
    float *emb, *cls, *out_w, *out_b;   /* (V, C), (C) with pool=cls else NULL, (K, FC), (K) */
    BlockAttnParams attn[TF_MAX_LAYERS], attn_g[TF_MAX_LAYERS];   /* weights and their gradients */
    BlockFfnParams ffn[TF_MAX_LAYERS], ffn_g[TF_MAX_LAYERS];
    TfWork w;
} TransformerClf;

/* transformer_clf_step.c */
void tf_work_alloc(TransformerClf *m, int rows);
void tf_work_free(TfWork *w, int layers);
/* Forward of rows[0..n) (logits in w.logits; dropout when train), and the
 * backward that ADDS every parameter's gradient given w.dlogits (n, K). */
void tf_batch_forward(TransformerClf *m, const WordSeqs *s, const int *rows, int n, int train);
void tf_batch_backward(TransformerClf *m);
void tf_forward_ops(Model *m, const Encoded *e, const int *rows, int n, const TrainState *st, float *logits);
void tf_backward_ops(Model *m, const float *dlogits);

#endif
