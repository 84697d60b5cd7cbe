/* dpcnn.h — DPCNN (Johnson & Zhang 2017, "Deep Pyramid Convolutional Neural
 * Networks for Text Categorization") as a ModelOps, shared between its files:
 *   dpcnn.c        ModelOps: settings, create, load, free
 *   dpcnn_step.c   forward / backward over a batch, the ops' forward, backward, update
 * Outside code needs only DPCNN_OPS (models/registry.c).
 *
 * The model, per sentence of L words (models/baselines/word_features.h):
 *   embedding (V, D) -> region embedding: a width-3 convolution to F maps
 *   ("same" zero padding: L positions) = a_0;
 *   level 0:   out_0 = a_0 + conv2(relu(conv1(relu(a_0))))   (pre-activation,
 *              width-3 "same" convolutions, identity shortcut);
 *   level l>0: a_l = maxpool(out_{l-1}) (size 3, stride 2, padding 1 at both
 *              ends that never wins: L -> ceil(L/2)), out_l = a_l + conv(relu(conv(relu(a_l))));
 *   NB = ceil(log2(max_len)) downsampling levels, each with its own weights, so
 *   every sentence ends at one position: out_NB (F) is the sentence's vector
 *   (a short sentence reaches length 1 early and goes on through the upper
 *   levels at length 1, so every sentence sees the same layers);
 *   -> dropout -> linear: K logits (the harness's head), or 1 output (regression).
 * Pairs (models/baselines/word_pair.h): both sentences apart, [u; v; |u - v|; u * v].
 * An empty text is one padding word (its embedding row is zero).
 *
 * Layout: as TextCNN (textcnn.h), the B sentences of a batch are packed into
 * one sequence per level, each preceded and followed by one zero position
 * (shared between neighbours), so a width-3 "valid" convolution of the whole
 * layout (nn/conv1d) is each sentence's "same" convolution, costs what the
 * words cost, and a row's result never depends on the rest of its batch. The
 * zero positions stay zero through ReLU (pre-activation) and are re-zeroed
 * after each convolution.
 *
 * Shapes: n rows, B = n (or 2n for pairs: a rows then b rows) sentences,
 * T_l positions of level l's layout, D embedding dim, F maps, FC = F (or 4F)
 * classifier inputs, K outputs. */
#ifndef GLUE_DPCNN_H
#define GLUE_DPCNN_H

#include <stdint.h>

#include "models/model.h"
#include "models/baselines/word_features.h"
#include "models/baselines/word_model_io.h"
#include "optim/optim.h"

extern const ModelOps DPCNN_OPS;

enum { DP_MAX_LEVELS = 32 };

typedef struct DpConfig {
    int dim;                       /* D */
    int filters;                   /* F, every convolution's maps */
    float dropout;                 /* on the classifier input, training only */
    int min_count, max_len;        /* vocabulary threshold, words per text */
    int batch, eval_batch;         /* rows per step / per prediction call (workspace size) */
    int optimizer_index;           /* 0 adamw, 1 adadelta */
    double weight_decay;
} DpConfig;

/* One level of the pyramid over the batch's packed layout. */
typedef struct DpLevel {
    int cap_T, T;                  /* positions it was sized for / of the last batch */
    int *start, *len;              /* (B) each sentence's first position and length */
    float *a;                      /* (T, F) the level's input: region embedding (0) or pooled */
    float *h1, *h2;                /* (T, F) relu(a), relu(conv1): the convolutions' inputs */
    float *out;                    /* (T, F) a + conv2(h2), zero at the padding positions */
    int *argmax;                   /* (T, F) the pool from this level's out into the next's a */
} DpLevel;

typedef struct DpWork {
    int cap_seqs;                  /* sentences it was sized for */
    int n, B, dropped;             /* the batch last laid out; its forward applied dropout */
    int *ids, *touched;            /* (T_0) word ids of level 0's layout; embedding rows written */
    unsigned char *seen;           /* (V) scratch of embedding_backward, kept zero */
    float *x, *dx;                 /* (T_0, D) embedded words and their gradient */
    float *col;                    /* conv1d scratch for the largest call */
    float *g0, *g1, *gh, *gc;      /* (T_0, F) gradients: two levels' d(out), d(h), d(conv) */
    float *enc, *denc;             /* (B, F) sentence vectors, their gradient */
    float *feat, *dfeat;           /* (n, FC) classifier input before dropout / its gradient */
    float *drop, *ddrop;           /* (n, FC) after dropout / its gradient */
    unsigned char *mask;           /* (n, FC) dropout mask */
    float *logits, *dlogits;       /* (n, K) */
    DpLevel lv[DP_MAX_LEVELS];
} DpWork;

typedef struct Dpcnn {
    WordModelBase base;            /* first: task, config, pair, seed, vocab, params, optimizer, dropout rng */
    DpConfig cfg;
    int K, FC, levels;             /* outputs; classifier inputs; NB + 1 */
    int h_emb, h_region_w, h_region_b, h_out_w, h_out_b;
    int h_conv_w[DP_MAX_LEVELS][2], h_conv_b[DP_MAX_LEVELS][2];
    float *emb, *region_w, *region_b, *out_w, *out_b;   /* (V, D), (F, 3, D), (F), (K, FC), (K) */
    float *conv_w[DP_MAX_LEVELS][2], *conv_b[DP_MAX_LEVELS][2];   /* (F, 3, F), (F) */
    DpWork w;
} Dpcnn;

/* dpcnn_step.c */
void dp_work_alloc(Dpcnn *m, int rows);
void dp_work_free(DpWork *w);
/* Forward of rows[0..n) (logits in w.logits; dropout when train), and the
 * backward that ADDS every parameter's gradient given w.dlogits (n, K). */
void dp_batch_forward(Dpcnn *m, const WordSeqs *s, const int *rows, int n, int train);
void dp_batch_backward(Dpcnn *m);
void dp_forward_ops(Model *m, const Encoded *e, const int *rows, int n, const TrainState *st, float *logits);
void dp_backward_ops(Model *m, const float *dlogits);

#endif
