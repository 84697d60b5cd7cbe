/* bilstm.h — the GLUE BiLSTM baseline (Wang et al. 2018, "GLUE: A Multi-Task
 * Benchmark and Analysis Platform for Natural Language Understanding", §5) as a
 * ModelOps, shared between its files:
 *   bilstm.c       ModelOps: config (defaults per task), create, encode,
 *                  free, length
 *   bilstm_net.c   the network over a batch: forward, backward, the update
 *   bilstm_io.c    save / load and the optimizer state for exact --resume
 * Outside code needs only BILSTM_OPS (models/registry.c).
 *
 * The network, per text: word embedding (D, random or from a .vec file) ->
 * dropout -> one-layer BiLSTM (H per direction, nn/lstm.h, variable lengths) ->
 * max pooling over the valid time steps -> u (2H). Single-sentence tasks
 * classify u; pair tasks run both texts through the same encoder and classify
 * [u; v; |u - v|; u * v] (8H), as the GLUE baselines and InferSent do. The
 * classifier is an MLP: dropout -> linear (M) -> tanh or ReLU -> dropout ->
 * linear (K) logits (the harness's head: softmax with cross-entropy), or one
 * output (squared error, regression: STS-B). Trained with Adam(W) and global-norm clipping.
 *
 * Shapes: n examples in a batch; R sequences (n, or 2n for pairs: the a texts
 * then the b texts); T = the longest sequence of the batch (<= max_len); V
 * vocabulary, D embedding, H hidden per direction, F features (2H or 8H), M MLP
 * hidden, K outputs (classes, or 1 score). */
#ifndef GLUE_BILSTM_H
#define GLUE_BILSTM_H

#include <stdint.h>

#include "core/params.h"
#include "core/rng.h"
#include "models/model.h"
#include "models/baselines/word_features.h"
#include "models/baselines/word_model_io.h"
#include "optim/optim.h"

extern const ModelOps BILSTM_OPS;

typedef enum { BL_ACT_TANH, BL_ACT_RELU } BlActivation;

typedef struct BlConfig {
    int dim;               /* D: word embedding size */
    int hidden;            /* H: LSTM units per direction */
    int mlp;               /* M: classifier hidden units */
    int max_len;           /* words kept per text */
    int min_count;         /* words seen fewer times in train become <unk> */
    int batch;             /* examples per training step (sizes the buffers) */
    float dropout;         /* on the features and the MLP hidden layer */
    float emb_dropout;     /* on the word embeddings */
    float clip;            /* global gradient norm limit (0: none) */
    float weight_decay;    /* AdamW decoupled decay (0: Adam) */
    BlActivation act;
    const char *vectors;   /* .vec file for the embedding init, "" for random */
} BlConfig;

/* Parameter handles into the arena. */
typedef struct BlParams {
    int emb;                             /* (V, D), sparse rows */
    int w_ih[2], w_hh[2], b_ih[2], b_hh[2]; /* per direction: (4H, D), (4H, H), (4H), (4H) */
    int w1, b1, w2, b2;                  /* (M, F), (M), (K, M), (K) */
} BlParams;

/* Activations for the largest batch (cap_n examples, cap_r sequences of up to
 * max_len steps), allocated once; a batch uses the front of each buffer with
 * its own (R, T). The *_grad and mask buffers exist only once training is set
 * up (bl_train_prepare). */
typedef struct BlBuffers {
    int cap_n, cap_r;
    int *ids;               /* (R, T) word ids, WF_PAD after the end */
    int *lengths;           /* (R) */
    float *x;               /* (R, T, D) embeddings (after dropout) */
    float *h;               /* (R, T, 2H) BiLSTM outputs */
    float *gates, *cell;    /* (2, R, T, 4H), (2, R, T, H) saved for the backward */
    float *lstm_scratch;    /* lstm_scratch_size */
    float *pooled;          /* (R, 2H) */
    int *argmax;            /* (R, 2H) */
    float *feat;            /* (n, F) after dropout */
    float *hid;             /* (n, M) after activation and dropout */
    float *act;             /* (n, M) after activation, before dropout */
    float *out;             /* (n, K) logits or scores */
    /* training only */
    unsigned char *x_mask, *feat_mask, *hid_mask;  /* dropout masks, like x, feat, hid */
    float *dx, *dx_drop;    /* (R, T, D) grad of the embeddings after / before dropout */
    float *dh;              /* (R, T, 2H) */
    float *dpooled;         /* (R, 2H) */
    float *dfeat, *dfeat_drop; /* (n, F) */
    float *dhid, *dact;     /* (n, M) */
    float *dout;            /* (n, K) */
    int *touched;           /* (R * T) embedding rows written this step */
    unsigned char *seen;    /* (V) zeroed, for embedding_backward */
} BlBuffers;

typedef struct BiLstm {
    WordModelBase base;     /* first: task, config, pair, seed, vocab, params, optimizer, dropout rng */
    BlConfig cfg;
    int K;                  /* classes, 1 = regression */
    int F;                  /* features: 2H, or 8H for pairs */
    BlParams p;
    BlBuffers buf;
    int training_ready;     /* grads, optimizer state and backward buffers exist */
    int last_n, last_T;     /* the last training forward's examples and T */
} BiLstm;

/* bilstm.c */
/* Reads and checks a config; 0 ok, -1 after one clear message. */
int bl_config_parse(const cJSON *j, BlConfig *c);
/* A model with config, vocabulary and declared + allocated parameters (random
 * init from seed); pair: the examples have a text b. Takes ownership of *vocab.
 * NULL after a message. */
BiLstm *bl_new(const cJSON *config, const Task *task, WordVocab *vocab, uint64_t seed, int pair);
void bl_free(BiLstm *m);

/* bilstm_net.c */
/* Allocates the activation buffers (inference) for batches of up to n examples. */
void bl_buffers_alloc(BiLstm *m, int n);
/* Gradients, optimizer state and backward buffers, once (fresh model, resume). */
void bl_train_prepare(BiLstm *m);
void bl_buffers_free(BlBuffers *b);
/* Forward of rows[0..n) (n <= buf.cap_n) into buf.out (n, K): logits, or scores.
 * train: dropout on, masks saved for bl_backward. Returns the batch's T. */
int bl_forward(BiLstm *m, const WordSeqs *s, const int *rows, int n, int train);
/* Adds every parameter gradient given buf.dout (n, K) and the saved forward of
 * the same batch (T as bl_forward returned); marks the embedding rows touched. */
void bl_backward(BiLstm *m, int n, int T);
/* ModelOps' forward, backward and update (models/model.h): the Model is a
 * BiLstm (its first member the WordModelBase the shared word-model functions
 * read), the Encoded a WordSeqs. A training batch larger than the buffers
 * grows them. */
void bl_forward_ops(Model *m, const Encoded *e, const int *rows, int n, const TrainState *st, float *logits);
void bl_backward_ops(Model *m, const float *dlogits);
int bl_update_ops(Model *m, const TrainState *st);

/* bilstm_io.c */
extern const WordModelKind BL_KIND;
Model *bl_load(const char *path, const Task *task);   /* ModelOps' load and load_state; saving: word_model_io.h */
int bl_load_state(Model *m, const char *path);

#endif
