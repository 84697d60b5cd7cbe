/* textcnn.h — TextCNN (Kim 2014, "Convolutional Neural Networks for Sentence
 * Classification") as a ModelOps, shared between its files:
 *   textcnn.c        ModelOps: config (per-task defaults), create, encode, free
 *   textcnn_step.c   forward / backward over a batch, the ops' forward, backward, update
 *   textcnn_io.c     save / load and the optimizer state for --resume
 * Outside code needs only TEXTCNN_OPS (models/registry.c).
 *
 * The model: words (models/baselines/word_features.h) -> embedding (V, D) -> for each
 * window width W (3, 4, 5 by default) F filters (F, W, D) with a bias, convolved
 * over time -> max over time -> ReLU -> concatenation (3F) -> dropout -> a
 * linear layer: K logits (the harness's head: softmax + cross-entropy), or 1
 * output (squared error, regression: STS-B). Kim's max-norm constraint rescales each row of the
 * output weight to norm <= max_norm after every update.
 * Pair tasks: both sentences go through the same embedding and filters, giving
 * u and v; the output layer reads [u; v; |u - v|; u * v] (as GLUE's baselines).
 *
 * Embedding variants (Kim's names): "rand" (U(-0.25, 0.25) init, trained),
 * "static" (from a word-vectors file, frozen), "non-static" (from the file,
 * trained), "multichannel" (two channels, both from the file: "emb" trained,
 * "emb_static" frozen); words missing from the file keep the random init (the
 * same draw in both channels). Each filter has a slice per channel and sums
 * over both (PyTorch's Conv2d with 2 input channels): a position of the
 * layout holds C = 2 x D values [emb(w); emb_static(w)] and the filters are
 * (F, W, C), so the channels are one wider convolution. (One slice shared by
 * both channels would be a convolution of their sum: the non-static model
 * again, with a frozen offset.)
 *
 * Layout ("wide" convolution, as Kim's code pads every sentence with W_max - 1
 * zero vectors): the B sentences of a batch are packed into one sequence of T
 * positions, each preceded and followed by P = W_max - 1 padding positions
 * (shared between neighbours), so no window of width <= W_max holds words of
 * two sentences, and the convolution costs what the words cost instead of
 * B x the longest sentence. Width W sees the layout shifted by s = W_max - W
 * positions, so for every width sentence j's windows start at output position
 * start_j - P and its n + W - 1 windows are exactly those that overlap it;
 * max-pooling reads only those. A row's result therefore depends only on its
 * own words, never on the rest of its batch, and an empty text gives W - 1
 * windows of padding only.
 *
 * Shapes: n rows of a batch, B = n (or 2n for pairs: a rows then b rows)
 * sentences, T positions of their packed layout, D embedding dim, C = D or 2D (multichannel) values
 * per position, F filters per width, NW widths,
 * H = NW * F pooled features per sentence, FC = H (or 4H for pairs) classifier
 * inputs, K outputs. */
#ifndef GLUE_TEXTCNN_H
#define GLUE_TEXTCNN_H

#include <stdint.h>

#include "core/params.h"
#include "core/rng.h"
#include "models/model.h"
#include "models/baselines/word_features.h"
#include "models/baselines/word_model_io.h"
#include "optim/optim.h"

extern const ModelOps TEXTCNN_OPS;

enum { TC_MAX_WINDOWS = 8, TC_MAX_WIDTH = 32 };

typedef enum { TC_EMB_RAND, TC_EMB_STATIC, TC_EMB_NON_STATIC, TC_EMB_MULTICHANNEL } TcEmbedding;

typedef struct TcConfig {
    int dim;                       /* D (set 0: the vectors file's size, or 300 for rand; resolved at create) */
    int channels;                  /* 2 for multichannel, else 1 */
    int filters;                   /* F per width */
    int num_windows;               /* NW */
    int window[TC_MAX_WINDOWS];    /* widths W, as given */
    int max_window;                /* W_max */
    float dropout;                 /* on the classifier input, training only */
    float max_norm;                /* output weight rows; <= 0: no constraint */
    int min_count;                 /* vocabulary threshold */
    int max_len;                   /* words per text after truncation */
    int batch, eval_batch;         /* rows per step / per prediction call (workspace size) */
    TcEmbedding embedding;
    const char *vectors;           /* .vec file (all but rand), points into TextCnn.config */
    OptimKind optimizer;           /* adadelta (Kim) or adamw */
    int optimizer_index;           /* the setting read: 0 adadelta, 1 adamw */
    double weight_decay;
} TcConfig;

/* Everything a batch needs, sized once for the largest batch (no allocation in
 * a step). */
typedef struct TcWork {
    int cap_seqs, cap_T;           /* sequences and positions it was sized for */
    int n, B, T;                   /* the batch last laid out */
    int dropped;                   /* its forward applied dropout */
    int *ids;                      /* (T) word ids of the packed layout */
    int *start, *len;              /* (B) each sequence's first position and words */
    float *x, *dx;                 /* (T, C) + slack of W_max rows for the shifted views */
    float *conv;                   /* (T, F) one width's convolution output */
    float *dconv;                  /* (T, F) its gradient */
    float *col;                    /* conv1d scratch for the widest filter */
    int *argmax;                   /* (NW, B, F) */
    float *pooled;                 /* (NW, B, F) max over time, ReLU applied */
    float *dpooled;                /* (NW, B, F) gradient after the ReLU */
    float *dpre;                   /* (NW, B, F) gradient before the ReLU */
    float *feat, *dfeat;           /* (n, FC) classifier input before dropout / its gradient */
    float *drop, *ddrop;           /* (n, FC) after dropout / its gradient */
    unsigned char *mask;           /* (n, FC) dropout mask */
    float *logits, *dlogits;       /* (n, K) */
    int *touched;                  /* (T) embedding rows written by a backward */
    unsigned char *seen;           /* (V) scratch of embedding_backward, kept zero */
} TcWork;

typedef struct TextCnn {
    WordModelBase base;            /* first: task, config, pair, seed, vocab, params, optimizer, dropout rng */
    TcConfig cfg;
    int K;                         /* outputs: classes, or 1 for regression */
    int H, FC;                     /* pooled features per sentence, classifier inputs */
    int h_emb, h_emb_static, h_conv_w[TC_MAX_WINDOWS], h_conv_b[TC_MAX_WINDOWS], h_out_w, h_out_b;
    float *emb;                    /* (V, D), row WF_PAD kept zero */
    float *emb_static;             /* (V, D) the frozen channel (multichannel), else NULL */
    float *conv_w[TC_MAX_WINDOWS]; /* (F, W, C) each */
    float *conv_b[TC_MAX_WINDOWS]; /* (F) */
    float *out_w;                  /* (K, FC) */
    float *out_b;                  /* (K) */
    TcWork w;
} TextCnn;

/* Values per position of the layout: C = channels x D. */
static inline int tc_width(const TcConfig *c) { return c->channels * c->dim; }

/* textcnn.c */
/* Reads and checks a config; 0 ok, -1 after one clear message. */
int tc_config_parse(const cJSON *j, TcConfig *c);
/* Model with config, vocabulary and K set: declares and allocates the params
 * (random init from seed), the optimizer and the workspace. */
void tc_build(TextCnn *m, uint64_t seed);
void tc_free(TextCnn *m);

/* textcnn_step.c */
void tc_work_alloc(TextCnn *m);
void tc_work_free(TcWork *w);
/* Forward of rows[0..n) (logits in w.logits; dropout when train), and the
 * backward that ADDS every parameter's gradient given w.dlogits (n, K). */
void tc_batch_forward(TextCnn *m, const WordSeqs *s, const int *rows, int n, int train);
void tc_batch_backward(TextCnn *m);
/* ModelOps' forward, backward and update (models/model.h): the Model is a
 * TextCnn (its first member the WordModelBase the shared word-model
 * functions read), the Encoded a WordSeqs. */
void tc_forward_ops(Model *m, const Encoded *e, const int *rows, int n, const TrainState *st, float *logits);
void tc_backward_ops(Model *m, const float *dlogits);
int tc_update_ops(Model *m, const TrainState *st);

/* textcnn_io.c */
extern const WordModelKind TC_KIND;
/* A model with its config parsed and task facts set, nothing else yet (NULL after a message). */
TextCnn *tc_new(const cJSON *config, const Task *task);
Model *tc_load(const char *path, const Task *task);   /* ModelOps' load; saving: word_model_io.h */

#endif
