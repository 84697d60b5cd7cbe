/* textrnn.h — TextRNN (Zhou et al. 2016, "Attention-Based Bidirectional Long
 * Short-Term Memory Networks for Relation Classification"; NeuralClassifier's
 * TextRNN) and, as its configuration cell=lstm pool=max, the GLUE BiLSTM
 * baseline (Wang et al. 2018, §5), as ModelOps shared between its files:
 *   textrnn.c          ModelOps of `textrnn`, `bilstm` and `rcnn`: settings tables
 *                      (defaults per task), create, encode, free, length
 *   textrnn_net.c      the network over a batch: forward, backward, update
 *   textrnn_encoder.c  the BiRNN encoder and its pooling
 *   textrnn_io.c       load and the optimizer state for exact --resume
 *   rcnn.c             RCNN's encoder (Lai et al. 2015) on the same network
 *   han.c              HAN's (Yang et al. 2016): its encoded splits (words
 *                      and sentences) and its two-level encoder
 * Outside code needs only the ModelOps (models/registry.c).
 *
 * The network, per text: word embedding (D, random or from a .vec file) ->
 * dropout -> one-layer bidirectional LSTM or GRU (H per direction, nn/lstm.h,
 * nn/gru.h, variable lengths) -> pooling over the valid steps (max | mean |
 * last | attention: M = tanh(H), alpha = softmax(w^T M), u = tanh(H alpha),
 * nn/seqpool.h) -> u (P = 2H). Single-sentence tasks classify u; pair tasks
 * run both texts through the same encoder and classify [u; v; |u - v|; u * v]
 * (F = 4P), as the GLUE baselines and InferSent do. The classifier is an MLP:
 * dropout -> linear (M) -> tanh or ReLU -> dropout -> linear (K), or with
 * mlp = 0 dropout -> linear (K) as Zhou et al.; the harness's head takes the
 * logits (or the one regression output). Adam(W) and global-norm clipping.
 *
 * Shapes: n examples in a batch; R sequences (n, or 2n for pairs: the a texts
 * then the b texts); T = the longest sequence of the batch (<= max_len); V
 * vocabulary, D embedding, H hidden per direction, P pooled, F features (P or
 * 4P), M MLP hidden, K outputs (classes, or 1 score). */
#ifndef GLUE_TEXTRNN_H
#define GLUE_TEXTRNN_H

#include <stdint.h>

#include "core/params.h"
#include "core/rng.h"
#include "models/model.h"
#include "models/baselines/word_features.h"
#include "models/baselines/word_model_io.h"
#include "models/baselines/word_sentences.h"
#include "optim/optim.h"

extern const ModelOps TEXTRNN_OPS, BILSTM_OPS, RCNN_OPS, HAN_OPS;

/* The encoder of a text into u (P): what the models on this network differ in. */
typedef enum { TR_ENC_BIRNN, TR_ENC_RCNN, TR_ENC_HAN } TrEncoder;

typedef enum { TR_ACT_TANH, TR_ACT_RELU } TrActivation;
typedef enum { TR_CELL_LSTM, TR_CELL_GRU } TrCell;
typedef enum { TR_POOL_MAX, TR_POOL_MEAN, TR_POOL_LAST, TR_POOL_ATTENTION } TrPool;

typedef struct TrConfig {
    int dim;               /* D: word embedding size */
    int hidden;            /* H: recurrent units per direction */
    int mlp;               /* M: classifier hidden units (0: one linear layer) */
    int max_len;           /* words kept per text */
    int min_count;         /* words seen fewer times in train become <unk> */
    int batch;             /* examples per training step (sizes the buffers) */
    float dropout;         /* on the features and the MLP hidden layer */
    float emb_dropout;     /* on the word embeddings */
    float clip;            /* global gradient norm limit (0: none) */
    float weight_decay;    /* AdamW decoupled decay (0: Adam) */
    TrActivation act;
    TrCell cell;
    TrPool pool;
    int context;           /* RCNN: the left / right context size */
    int attention;         /* HAN: the attention's hidden size */
    const char *vectors;   /* .vec file for the embedding init, "" for random */
} TrConfig;

/* Parameter handles into the arena. */
typedef struct TrParams {
    int emb;                             /* (V, D), sparse rows */
    int w_ih[2], w_hh[2], b_ih[2], b_hh[2]; /* per direction: (GH, D), (GH, H), (GH), (GH); G 4 (LSTM) or 3 (GRU) */
    int w1, b1, w2, b2;                  /* (M, F), (M), (K, M), (K); mlp 0: w2 (K, F), no w1, b1 */
    int attn;                            /* (2H) attention pooling's w, or -1 */
    int ctx_ws[2], ctx_w[2], ctx_c0[2];  /* RCNN left, right context: (Hc, D), (Hc, Hc), (Hc) */
    int y_w, y_b;                        /* RCNN: (H, 2Hc + D), (H) */
    /* HAN, word level then sentence level: the BiGRU as w_ih.. above (the word
     * level's) and here the sentence level's; attention (A, 2H), (A), (A) */
    int s_ih[2], s_hh[2], s_bih[2], s_bhh[2];
    int att_w[2], att_b[2], att_u[2];
} TrParams;

/* Activations for the largest batch (cap_n examples, cap_r sequences of up to
 * max_len steps), allocated once; a batch uses the front of each buffer with
 * its own (R, T). The *_grad and mask buffers exist only once training is set
 * up (tr_train_prepare). */
typedef struct TrBuffers {
    int cap_n, cap_r;
    int *ids;               /* (R, T) word ids, WF_PAD after the end */
    int *lengths;           /* (R) */
    float *x;               /* (R, T, D) embeddings (after dropout) */
    float *h;               /* (R, T, 2H) the BiRNN's outputs (RCNN: its y, (R, T, H)) */
    float *gates, *state;   /* (2, R, T, 4H), (2, R, T, H) saved for the backward: the
                               LSTM's gates and cell, the GRU's gates and hn */
    float *rnn_scratch;     /* lstm_ or gru_scratch_size */
    float *pooled;          /* (R, P) */
    int *argmax;            /* (R, P) max pooling */
    float *keys, *alpha;    /* (R, T, 2H) tanh(H), (R, T): attention pooling */
    float *cat, *ctx_hs;    /* RCNN: (R, T, 2Hc + D) [c_l; e; c_r], (2, R, T, Hc) context states;
                               its y (R, T, H) is in h */
    float *feat;            /* (n, F) after dropout */
    float *hid;             /* (n, M) after activation and dropout */
    float *act;             /* (n, M) after activation, before dropout */
    float *out;             /* (n, K) logits or scores */
    /* training only */
    unsigned char *x_mask, *feat_mask, *hid_mask;  /* dropout masks, like x, feat, hid */
    float *dx, *dx_drop;    /* (R, T, D) grad of the embeddings after / before dropout */
    float *dh;              /* (R, T, 2H) */
    float *dpooled;         /* (R, P) */
    float *dkeys;           /* (R, T, 2H) attention pooling */
    float *dcat;            /* RCNN (R, T, 2Hc + D) */
    struct HanBuffers *han; /* HAN's, sized per batch (han.c) */
    const WordSeqs *seqs;   /* the forward's batch: its features and rows */
    const int *rows;
    float *dfeat, *dfeat_drop; /* (n, F) */
    float *dhid, *dact;     /* (n, M) */
    float *dout;            /* (n, K) */
    int *touched;           /* (R * T) embedding rows written this step */
    unsigned char *seen;    /* (V) zeroed, for embedding_backward */
} TrBuffers;

typedef struct TextRnn {
    WordModelBase base;     /* first: task, config, pair, seed, vocab, params, optimizer, dropout rng */
    TrConfig cfg;
    int K;                  /* classes, 1 = regression */
    TrEncoder enc;
    int P;                  /* pooled: 2H (RCNN: H) */
    int F;                  /* features: P, or 4P for pairs */
    TrParams p;
    TrBuffers buf;
    int training_ready;     /* grads, optimizer state and backward buffers exist */
    int last_n, last_T;     /* the last training forward's examples and T */
} TextRnn;

/* textrnn.c */
/* Reads and checks a config; 0 ok, -1 after one clear message. */
int tr_config_parse(const WordModelKind *kind, const cJSON *j, TrConfig *c);
/* A model with config, vocabulary and declared + allocated parameters (random
 * init from seed); pair: the examples have a text b; train (NULL: none) caps
 * the batch buffers at its rows. Takes ownership of *vocab. NULL after a
 * message. */
TextRnn *tr_new(const WordModelKind *kind, const cJSON *config, const Task *task, WordVocab *vocab, uint64_t seed,
                int pair, const Dataset *train);
void tr_free(TextRnn *m);

/* textrnn_net.c */
/* Allocates the activation buffers (inference) for batches of up to n examples. */
void tr_buffers_alloc(TextRnn *m, int n);
/* Gradients, optimizer state and backward buffers, once (fresh model, resume). */
void tr_train_prepare(TextRnn *m);
void tr_buffers_free(TrBuffers *b);
/* Forward of rows[0..n) (n <= buf.cap_n) into buf.out (n, K): logits, or scores.
 * train: dropout on, masks saved for tr_backward. Returns the batch's T. */
int tr_forward(TextRnn *m, const WordSeqs *s, const int *rows, int n, int train);
/* Adds every parameter gradient given buf.dout (n, K) and the saved forward of
 * the same batch (T as tr_forward returned); marks the embedding rows touched. */
void tr_backward(TextRnn *m, int n, int T);
/* ModelOps' forward, backward and update (models/model.h): the Model is a
 * TextRnn (its first member the WordModelBase the shared word-model functions
 * read), the Encoded a WordSeqs. A training batch larger than the buffers
 * grows them. */
void tr_forward_ops(Model *m, const Encoded *e, const int *rows, int n, const TrainState *st, float *logits);
void tr_backward_ops(Model *m, const float *dlogits);
int tr_update_ops(Model *m, const TrainState *st);

/* textrnn_encoder.c */
/* Scratch floats of the recurrent op (either cell) for R sequences of T steps. */
long tr_rnn_scratch_size(const TextRnn *m, int R, int T);
/* buf.pooled (R, P) from buf.x (R, T, D) and buf.lengths. */
void tr_encode_forward(TextRnn *m, int R, int T, int train);
/* From buf.dpooled: adds the encoder's parameter gradients and writes buf.dx
 * (R, T, D), the gradient of the embeddings after dropout. */
void tr_encode_backward(TextRnn *m, int R, int T);

/* rcnn.c */
void rcnn_declare(TextRnn *m);
void rcnn_buffers_alloc(TextRnn *m, long RT);
void rcnn_train_alloc(TextRnn *m, long RT);
long rcnn_scratch_size(const TextRnn *m, int R, int T);
void rcnn_encode_forward(TextRnn *m, int R, int T);
void rcnn_encode_backward(TextRnn *m, int R, int T);

/* han.c */
void han_declare(TextRnn *m);
void han_buffers_free(struct HanBuffers *h);
void han_encode_forward(TextRnn *m, int R, int T, int train);
void han_encode_backward(TextRnn *m, int R, int T);
/* The last forward's sentences (tests): lens (RS) the words of each, counts
 * (R) each text's; either may be NULL. Returns RS. */
int han_batch_sentences(const TextRnn *m, int *lens, int *counts);

/* textrnn_io.c */
extern const WordModelKind TEXTRNN_KIND, BILSTM_KIND, RCNN_KIND, HAN_KIND;
/* ModelOps' load of textrnn and of bilstm (saving: word_model_io.h). */
Model *tr_load_textrnn(const char *path, const Task *task);
Model *tr_load_bilstm(const char *path, const Task *task);
Model *tr_load_rcnn(const char *path, const Task *task);
Model *tr_load_han(const char *path, const Task *task);
int tr_load_state(Model *m, const char *path);

#endif
