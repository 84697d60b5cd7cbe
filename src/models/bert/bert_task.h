/* bert_task.h — BERT behind ModelOps (BERT_OPS, name "bert"), shared between
 *   bert_task.c     config defaults, create (fresh or --init from a pretrained
 *                    checkpoint), WordPiece encoding, forward to logits,
 *                    backward, update
 *   bert_task_io.c  save / load of the fine-tuned model (weights + vocabulary +
 *                    run config) and save_state / load_state for exact --resume
 * The encoder itself is models/bert/bert.h; this layer adds the task: tokenizer,
 * dynamically padded batches, AdamW with clipping, and the dropout RNG. */
#ifndef GLUE_BERT_MODEL_H
#define GLUE_BERT_MODEL_H

#include <stdint.h>

#include "models/bert/bert.h"
#include "models/model.h"
#include "optim/optim.h"
#include "text/tokenizer.h"

extern const ModelOps BERT_OPS;

/* The encoder fine-tuning starts from unless told otherwise: the one this
 * repository ships (its README is the model card), found relative to the
 * working directory like the default vocabulary; `glue report` draws its
 * pretraining curve. The ELECTRA-mini: over five seeds with the recipe of
 * bert_default_config it scores above the tiny MLM encoder
 * (models/bert-tiny-wiki, kept as an --init option) on the six GLUE tasks. */
#define BERT_SHIPPED_ENCODER_DIR "models/electra-mini-wiki"

typedef struct BertTaskModel {
    Bert *bert;
    cJSON *config;          /* the run config (saved with the model) */
    const Task *task;
    int K;                  /* task->num_labels: 1 = regression */
    Vocab *vocab;
    Tokenizer *tok;
    int max_len;            /* T: tokens per row after truncation */
    int pairs;              /* examples per forward: max(batch, eval_batch) */
    int siamese;            /* pair_encoding "siamese": a pair's texts are rows i and pairs + i */
    int pair_features;      /* pair_encoding "features" (4) / "cross+features" (5): BertHeads.pair_features */
    int maxB;               /* rows per forward: pairs, x2 when siamese or features, x3 cross+features */
    Optimizer opt;          /* AdamW */
    float clip;             /* global gradient-norm limit, <= 0: none */
    Rng rng;                /* dropout */
    int *ids, *segments;    /* (maxB, max_len) batch buffers */
    int *lengths;           /* (maxB) */
    int step_n;             /* examples of the last training forward */
} BertTaskModel;

/* A split as WordPiece ids: row r is ids[off[r] .. off[r+1]), "[CLS] a [SEP]
 * (b [SEP])", segment 1 from seg_start[r] on; siamese: "[CLS] a [SEP]" then
 * "[CLS] b [SEP]", the second from seg_start[r] on. */
struct Encoded {
    int n;
    long *off;              /* (n + 1) */
    int *ids;
    int *seg_start;         /* (n) = the row's length for a single text */
};

/* bert_task.c: a model around an encoder (takes ownership of bert and vocab)
 * with the run's settings from config, its buffers reserved for training
 * (train = 1) or prediction only; NULL after a message. */
BertTaskModel *bert_task_model_new(Bert *bert, Vocab *vocab, const cJSON *config, const Task *task,
                                   uint64_t seed, int train);
void bert_task_model_free(BertTaskModel *m);

/* bert_task_io.c */
int bert_task_save(const BertTaskModel *m, const char *path);
/* The same as an int8 checkpoint (bert_save_int8); -1 after a message. */
int bert_task_save_int8(const BertTaskModel *m, const char *path);
BertTaskModel *bert_task_load(const char *path, const Task *task);
int bert_task_save_state(const BertTaskModel *m, const char *path);
int bert_task_load_state(BertTaskModel *m, const char *path);

/* bert_hf_classifier.c: a Hugging Face BertForSequenceClassification
 * directory as a model of `task` (ModelOps.load_external). */
Model *bert_hf_classifier_load(const char *dir, const Task *task);

#endif
