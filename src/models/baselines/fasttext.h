/* fasttext.h — fastText (Joulin et al. 2016, "Bag of Tricks for Efficient Text
 * Classification") as a ModelOps, shared between its files:
 *   fasttext.c        ModelOps: config, create, encode, predict, free
 *   fasttext_dict.c   the vocabulary (word_dict.h, minCount) and encoding a text into input rows (words, word n-grams, char n-grams)
 *   fasttext_train.c  the Hogwild SGD step (softmax, hierarchical softmax, squared loss)
 *   fasttext_hs.c     the Huffman tree over label counts for hierarchical softmax
 *   fasttext_io.c     save / load through the checkpoint module
 *   fasttext_pq.c     product quantization of a matrix (fasttext_pq.h)
 *   fasttext_quantize.c  `glue quantize`: pruning by norm, retraining, quantizing the model
 *   fasttext_io_pq.c  save / load of a quantized model
 * Outside code needs only FASTTEXT_OPS (models/registry.c) and FT_SEP (the
 * benchmark writes pairs the way the model joins them); the rest is the model's
 * private anatomy.
 *
 * The model is the reference's supervised mode: hidden = mean of the input rows of
 * a text's words (+ hashed word n-grams and char n-grams), output = a linear
 * classifier with softmax or hierarchical softmax, learning rate decaying linearly
 * to 0 over all tokens of all epochs. Our extension: regression (STS-B) with one
 * linear output plus bias and squared loss — the reference has no regression. */
#ifndef GLUE_FASTTEXT_H
#define GLUE_FASTTEXT_H

#include <stdint.h>

#include "core/checkpoint.h"
#include "core/vec.h"
#include "core/workers.h"
#include "models/baselines/fasttext_pq.h"
#include "models/baselines/word_dict.h"
#include "models/model.h"
#include "models/run_config.h"

extern const ModelOps FASTTEXT_OPS;
/* The official tool's supervised defaults (FASTTEXT_OPS defaults differ for GLUE). */
cJSON *ft_reference_config(void);

/* The token that ends every text, as the reference reads a newline, and the
 * one between the two texts of a pair (models/baselines/word_dict.h). */
#define FT_EOS WORD_EOS
#define FT_SEP WORD_SEP

typedef enum { FT_LOSS_SOFTMAX, FT_LOSS_HS, FT_LOSS_OVA } FtLoss;

typedef struct FtConfig {
    int dim;            /* C: embedding size */
    int epochs;
    float lr;           /* initial learning rate, decays linearly to 0 */
    int word_ngrams;    /* longest word n-gram (1 = words only) */
    int min_count;      /* words seen fewer times are dropped */
    int minn, maxn;     /* char n-gram lengths; maxn 0 = none */
    long bucket;        /* hash rows for n-grams (0 when no n-grams are used) */
    FtLoss loss;
    WordSplit tokenizer;
    int threads;        /* Hogwild workers */
    uint64_t seed;
} FtConfig;

/* The reference's `fasttext quantize` settings, with its defaults
 * (fasttext_quantize.c: FT_QUANT_SETTINGS). */
typedef struct FtQuantConfig {
    int dsub;           /* values per sub-vector of the input matrix (the output's: 2) */
    long cutoff;        /* keep this many input rows, the largest by norm (0: all) */
    int qnorm;          /* quantize the row norms apart */
    int qout;           /* quantize the output matrix too */
    int retrain;        /* after the cutoff, train the kept rows again */
    int epochs;         /* retraining: epochs and initial learning rate */
    float lr;
} FtQuantConfig;

/* Huffman tree over the labels: each label's path of internal nodes (rows of the
 * output matrix) and the branch taken at each. */
typedef struct FtTree {
    int K;              /* labels (leaves); K - 1 internal nodes */
    int *depth;         /* (K) path length */
    int32_t *node;      /* (K, K-1) internal node ids along the path, leaf first */
    uint8_t *code;      /* (K, K-1) 1 = the node's "binary" child taken */
} FtTree;

typedef struct FastText {
    FtConfig cfg;
    cJSON *config;      /* the config as given (saved with the model) */
    const Task *task;
    int K;              /* classes; 1 = regression */
    int64_t *label_count; /* (K) training examples per class (NULL for regression) */
    WordDict dict;
    long rows;          /* V + bucket: rows of wi */
    float *wi;          /* (V + bucket, C) input embeddings */
    uint8_t *wi_ready;  /* (V + bucket) 1 once a row is initialised (bucket rows lazily) */
    int out_rows;       /* K (softmax), K - 1 (hs), 1 (regression) */
    float *wo;          /* (out_rows, C) output layer, zero init */
    float bias;         /* regression only: score = wo . h + bias */
    FtTree tree;        /* hs only */
    float *scratch;     /* (threads, scratch_stride) per-worker hidden (C), grad (C), output (K) */
    long scratch_stride;/* 2C + K rounded up to a cache line: workers never share one */
    double *worker_loss;/* (threads, WORKER_DOUBLES_PER_LINE) each worker's loss sum, own line */
    Workers *workers; /* cfg.threads workers */
    /* Product quantized (fasttext_quantize.c, or loaded so): wi and wo hold the
     * rows the codes give back; only rows with wi_ready are kept, and encode
     * drops the others (words and n-grams the cutoff removed, n-grams never
     * seen in training), as the reference's pruned dictionary does. */
    int quantized;
    FtQuantConfig qcfg;
    FtQMatrix qi;       /* the kept input rows: words 0..V-1, then the kept bucket rows ascending */
    FtQMatrix qo;       /* qcfg.qout: the output rows */
} FastText;

struct Encoded {
    int n;              /* rows */
    int64_t *off;       /* (n + 1) ids of row r: ids[off[r] .. off[r+1]) */
    int32_t *ids;       /* rows of wi */
    int32_t *ntok;      /* (n) tokens per row, for the learning-rate schedule */
    int *label;         /* (n) class, -1 unlabelled */
    uint8_t *target;    /* multi-label task: (n, K) 0/1, row r's label set; else NULL */
    float *score;       /* (n) regression target */
    int64_t total_tokens;
};

/* fasttext_ova.c: one-vs-all (multi-label). The K binary logistic losses of
 * one example against target (K) 0/1 with their SGD step (grad += the step
 * for h); probs (K): each label's sigmoid. */
float ft_ova_update(float *wo, const float *h, float *grad, int C, int K, const uint8_t *target, float lr);
void ft_ova_probs(const float *wo, const float *h, int C, int K, float *probs);

/* fasttext_dict.c */
/* Builds the vocabulary from train; 0 ok, -1 (message printed) when it is empty. */
int ft_dict_build(WordDict *d, const Dataset *train, const FtConfig *cfg);
/* Encodes rows of d as input-row ids; initialises the bucket rows they touch. */
Encoded *ft_encode(FastText *m, const Dataset *d);
void ft_encoded_free(Encoded *e);

/* fasttext_hs.c */
void ft_tree_build(FtTree *t, const int64_t *label_count, int K);
void ft_tree_free(FtTree *t);
/* Loss of label y, with SGD updates when lr > 0 (grad += dL/dh scaled by -lr). */
float ft_hs_update(const FtTree *t, float *wo, const float *h, float *grad, int C, int y, float lr);
/* probs (K) of every label. */
void ft_hs_probs(const FtTree *t, const float *wo, const float *h, int C, float *probs);

/* fasttext_train.c */
float ft_train_rows(FastText *m, const Encoded *e, const int *rows, int n, double progress);
void ft_predict_rows(FastText *m, const Encoded *e, const int *rows, int n, float *out);
/* Row r of wi set to its fixed random init (a function of seed and r only). */
void ft_init_row(FastText *m, long r);

/* fasttext.c */
/* Reads and checks a config; 0 ok, -1 after one clear message. */
int ft_config_parse(const cJSON *j, uint64_t seed, FtConfig *c);
/* A model with its config parsed, nothing else yet (NULL after a message). */
FastText *ft_new(const cJSON *config, const Task *task, uint64_t seed);
/* Allocates matrices, the Huffman tree (hs), scratch and threads once cfg, K,
 * label_count and dict are set. Rows start zero and not ready. */
void ft_alloc(FastText *m);
void ft_free(FastText *m);

/* fasttext_quantize.c */
/* The quantized checkpoint format this code writes and reads ("quantized"."version"). */
#define FT_PQ_FORMAT 1
#define FT_NUM_QUANT_SETTINGS 7
extern const SettingSpec FT_QUANT_SETTINGS[FT_NUM_QUANT_SETTINGS];
/* Quantizes m in place with settings (FT_QUANT_SETTINGS keys; missing keys
 * take the defaults); train: the training split (needed by retrain). 0, or -1
 * after a message. */
int ft_quantize(FastText *m, const cJSON *settings, const Dataset *train);
/* The kept rows in qi's order into rows (V + kept buckets); returns the count. */
long ft_kept_rows(const FastText *m, int32_t *rows);
/* Parses a saved or given quantize config; 0, or -1 after a message. */
int ft_quant_config_parse(const cJSON *j, FtQuantConfig *q);
cJSON *ft_quant_config_json(const FtQuantConfig *q);

/* fasttext_io_pq.c: the quantized model's tensors (see there); load: after
 * the head and ft_alloc; 0, or -1 after a message. */
int ft_write_quantized(CkptWriter *w, const FastText *m);
int ft_load_quantized(FastText *m, const Checkpoint *c, const cJSON *quantized, const char *path);

/* fasttext_io.c */
int ft_save(const FastText *m, const char *path);
/* One message for any damaged checkpoint; returns -1. */
int ft_bad(const char *path, const char *what);
const CkptBlob *ft_blob(const Checkpoint *c, const char *name, long size);
const CkptTensor *ft_tensor(const Checkpoint *c, const char *name, long rows, long cols);
FastText *ft_load(const char *path, const Task *task);
int ft_save_state(const FastText *m, const char *path);
int ft_load_state(FastText *m, const char *path);

#endif
