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
 * working directory like the default vocabulary. The ELECTRA-mini carried to
 * 185M tokens: over five seeds with the recipe of bert_default_config it
 * scores above the same run at 110M tokens (models/electra-mini-wiki, the
 * default before it) and the tiny MLM encoder (models/bert-tiny-wiki), both
 * kept as --init options, on the six GLUE tasks. The recipe was chosen on the
 * 110M encoder and kept as it was. */
#define BERT_SHIPPED_ENCODER_DIR "models/electra-mini-wiki-185m"
/* The shipped encoder's pretraining in the order it ran, one folder per
 * stretch, each with its log: `glue report` draws their curves. */
#define BERT_SHIPPED_ENCODER_LINEAGE {"models/electra-mini-wiki", BERT_SHIPPED_ENCODER_DIR}

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
    /* Multi-task (bert_multi.h): bert and vocab are shared with the other
     * tasks' models (none of them owns or frees them), this task's head is
     * `head`, attached to the encoder at each forward, and an update steps
     * the encoder with *encoder_opt (the group's) and the head with opt,
     * clipped together. NULL, NULL: a model of its own. */
    BertTaskHead *head;
    Optimizer *encoder_opt;
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
/* A model of `task` over the encoder bert that other tasks' models share,
 * with head (attached to bert) and the encoder's optimizer encoder_opt
 * (BertTaskModel.head, .encoder_opt), for training. Owns neither bert, vocab,
 * head nor encoder_opt. NULL after a message. */
BertTaskModel *bert_task_model_shared(Bert *bert, Vocab *vocab, BertTaskHead *head, Optimizer *encoder_opt,
                                      const cJSON *config, const Task *task, uint64_t seed);
void bert_task_model_free(BertTaskModel *m);
/* The encoder a run's config starts from, with the heads `want`: its "init"
 * (a glue checkpoint, its directory, a Hugging Face directory; the heads'
 * tensors it has are loaded, a classifier never) or, for init "none", the
 * "bert" config from random init; *vocab its vocabulary. NULL after a message. */
Bert *bert_task_encoder(const cJSON *config, const BertHeads *want, uint64_t seed, Vocab **vocab);
/* The classifier inputs the config's pair_encoding asks for
 * (BertHeads.pair_features: 0, 4 or 5), or -1 after a message. */
int bert_task_pair_features(const cJSON *config);

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
