/* entnet.h — the Recurrent Entity Network (Henaff et al. 2017, "Tracking the
 * World State with Recurrent Entity Networks") as a ModelOps classifier,
 * shared between its files:
 *   entnet.c        ModelOps: settings, create, load, free
 *   entnet_step.c   forward / backward over a batch, the ops' forward, backward, update
 * Outside code needs only ENTNET_OPS (models/registry.c).
 *
 * The model, per row (H the embedding and memory size, M blocks, K outputs):
 *   input encoder: each sentence of text a (word_sentences.h) is one input
 *     s_t = sum_i f_i * e_i, its words' embeddings e_i (V x H) times the
 *     learned multiplicative mask f_i (max_len x H) of their position in the
 *     sentence (initialised to ones: a bag of words to start from);
 *   dynamic memory (nn/entity_memory.h): M blocks of key w_j and value h_j,
 *     h_j = w_j before the first sentence, one gated update per sentence;
 *   output module: the query q (H) is a learned vector for a single text
 *     (the task's question), the encoder's bag of text b for pairs;
 *     p_j = softmax_j(q^T h_j), u = sum_j p_j h_j,
 *     y = R PReLU(q + H u) + b: K logits for the harness's head, or 1 score.
 * A text of one sentence (most of GLUE) is one memory update. An empty text a
 * leaves the memory at its keys; an empty text b gives q = 0.
 *
 * Every row is computed on its own but for the output layer's GEMM over the
 * batch, so a row's result does not depend on the rest of its batch. */
#ifndef GLUE_ENTNET_H
#define GLUE_ENTNET_H

#include <stdint.h>

#include "models/baselines/word_model_io.h"
#include "models/baselines/word_sentences.h"
#include "models/model.h"

extern const ModelOps ENTNET_OPS;

typedef struct EntConfig {
    int dim, blocks;                 /* H, M */
    float clip;
    int min_count, max_len, batch, eval_batch;
    double weight_decay;
} EntConfig;

/* A batch's activations, grown when a batch needs more. NW words of the
 * batch (row by row: a's, then b's), NS sentence steps. */
typedef struct EntWork {
    int n;
    long cap_w, cap_s, cap_n;
    int *ids, *touched;              /* (NW) */
    unsigned char *seen;             /* (V) zeroed, for embedding_backward */
    int *woff;                       /* (n + 1) row r's words [woff[r], woff[r+1]) */
    int *soff;                       /* (n + 1) row r's steps [soff[r], soff[r+1]) */
    int *sstart, *slen;              /* (NS) each step's first word (batch index) and words */
    float *x, *dx;                   /* (NW H) embeddings, their gradient */
    float *s, *ds;                   /* (NS H) the encoded sentences */
    float *h;                        /* (NS M H) the memory after each step */
    float *g, *pre, *norm;           /* (NS M), (NS M H), (NS M) saved by the updates */
    float *q, *dq, *p, *u, *opre, *o, *dout; /* (n H), (n H), (n M), (n H) x3, (n H) */
    float *logits, *dlogits;         /* (n K) */
    float *tmp;                      /* op scratch */
} EntWork;

typedef struct Entnet {
    WordModelBase base;              /* first: task, config, pair, seed, vocab, params, optimizer, rng */
    EntConfig cfg;
    int K;
    int h_emb, h_mask, h_keys, h_U, h_V, h_W, h_slope, h_query, h_H, h_oslope, h_out_w, h_out_b;   /* h_query -1 for pairs */
    EntWork w;
} Entnet;

/* entnet_step.c */
void ent_work_free(EntWork *w);
void ent_batch_forward(Entnet *m, const HanSeqs *s, const int *rows, int n);
void ent_batch_backward(Entnet *m);
void ent_forward_ops(Model *m, const Encoded *e, const int *rows, int n, const TrainState *st, float *logits);
void ent_backward_ops(Model *m, const float *dlogits);
int ent_update_ops(Model *m, const TrainState *st);

#endif
