/* model.h — the one interface every classifier implements (DESIGN §3): BERT,
 * fastText, TextCNN, BiLSTM. The trainer (src/train/trainer.c) and the commands
 * `glue finetune|eval|predict|compare` only ever talk to a ModelOps.
 *
 * Each model turns a Dataset into its own features once (`encode`: WordPiece ids
 * for BERT, word + bigram ids for fastText, word ids for TextCNN/BiLSTM), then
 * trains and predicts on minibatches given as row indices into those features.
 *
 * The contract: `default_config`, `create`, `encode`, `encoded_free`,
 * `train_step`, `predict`, `save`, `load`, `num_params` and `free` are required;
 * `length`, `save_state`/`load_state`, `use_bf16`, `load_external` and
 * `data_parallel` are optional (NULL or 0: the feature is absent, and the
 * commands say so). A model is deterministic for a seed and a thread count
 * (and, data-parallel, a number of ranks). Errors inside create/load are
 * one user_error message and a NULL return, never a crash.
 *
 * Config keys (default_config) the trainer reads; every other key is the model's:
 *   "epochs" (int, required), "lr" (number, required), "batch" (int, required),
 *   "warmup" (fraction of the steps with linear warm-up, default 0),
 *   "schedule" ("linear" decay to 0 after warm-up | "constant" | "cosine",
 *               default "linear"),
 *   "eval_batch" (int, default EVALUATE_BATCH_DEFAULT in train/evaluate.h).
 * `--max-len N` sets "max_len" and is refused for a model without that key.
 * The trainer hands the same config object (defaults overridden by the user) to
 * `create`, and stores it as config.json in the run directory. */
#ifndef GLUE_MODEL_H
#define GLUE_MODEL_H

#include <stdint.h>

#include "tasks/task.h"

/* A trained model's checkpoint in its directory: a run directory's (run_dir.h)
 * and a shipped model's (models/<name>/), which --init DIR looks for. */
#define MODEL_CKPT "model.ckpt"

typedef struct cJSON cJSON;
typedef struct Model Model;       /* opaque, one struct per model kind */
typedef struct Encoded Encoded;   /* opaque, a split's features in the model's terms */

/* What the trainer tells a step. */
typedef struct TrainState {
    long step, total_steps;   /* optimizer steps so far / planned */
    double progress;          /* fraction of training done, in [0,1] (fastText's lr decay) */
    float lr;                 /* learning rate for this step (schedule applied) */
    int epoch;                /* 0-based */
    /* Data parallel (`mpirun -np N glue finetune`, ModelOps.data_parallel):
     * this rank's rows over the global batch's (1 in one process; the
     * gradient of the local mean times share sums to the global mean's, see
     * core/dist_grad.h), this rank, and the run seed (rank > 0 draws its
     * dropout from it; rank 0 keeps the model's own stream). */
    double share;
    int rank;
    uint64_t seed;
    double bucket_mb;   /* the gradient sum's buckets (MiB; 0 = one sum), RUN_SETTING_BUCKET_MB */
} TrainState;

typedef struct ModelOps {
    const char *name;          /* "bert", "fasttext", "textcnn", "bilstm" */
    /* Defaults for this model and task (epochs, lr, batch, ...) as a JSON object the
     * caller may override key by key from the command line. Caller frees. */
    cJSON *(*default_config)(const Task *task);
    /* Build a fresh model; train is available for vocabularies / label counts. */
    Model *(*create)(const cJSON *config, const Task *task, const Dataset *train, uint64_t seed);
    Encoded *(*encode)(Model *m, const Dataset *d);
    void (*encoded_free)(Encoded *e);
    /* One optimizer step on rows[0..n) of e; returns the mean loss. */
    float (*train_step)(Model *m, const Encoded *e, const int *rows, int n, const TrainState *st);
    /* out: (n, K) class probabilities, or (n, 1) score for regression. */
    void (*predict)(Model *m, const Encoded *e, const int *rows, int n, float *out);
    int (*save)(const Model *m, const char *path);           /* 0 ok */
    Model *(*load)(const char *path, const Task *task);      /* NULL + message on error */
    long (*num_params)(const Model *m);
    void (*free)(Model *m);
    /* Optional (NULL: every row is as costly as any other). Tokens of row `row`
     * after truncation, used to sort evaluation batches by length. */
    int (*length)(const Encoded *e, int row);
    /* Optional (NULL: --resume restarts from the saved weights with a fresh
     * optimizer and says so). Everything beyond the weights that training needs
     * to continue exactly: optimizer moments, step counters, dropout RNG. 0 ok;
     * load_state prints a message and returns non-zero on a bad file. */
    int (*save_state)(const Model *m, const char *path);
    int (*load_state)(Model *m, const char *path);
    /* Optional (NULL: no such path). Evaluate from here on with bf16 weights
     * (core/gemm_bf16.h), an inference approximation: `eval`/`predict --bf16`. */
    void (*use_bf16)(Model *m);
    /* Optional (NULL: none). A model trained elsewhere, scored as it is:
     * `eval/predict --init DIR` (BERT: a Hugging Face classifier directory).
     * NULL + message on error. */
    Model *(*load_external)(const char *dir, const Task *task);
    /* Optional (NULL: none). The settings table (models/run_config.h) the
     * defaults and checks come from: `--help-settings` prints its ranges. */
    const struct SettingSpec *settings;
    int num_settings;
    /* 1: train_step sums the gradient over ranks (core/dist_grad.h) between its backward and the
     * clipping (BERT: in buckets started during the backward), so `mpirun -np N glue finetune` trains data-parallel (BERT).
     * 0: refused under more than one rank (fastText's Hogwild updates and the
     * sparse embedding rows of TextCNN/BiLSTM are not summed over ranks). */
    int data_parallel;
} ModelOps;

/* Registry: all model kinds, by name. */
const ModelOps *model_find(const char *name);
/* The closest model name to a misspelt one (for "did you mean"). */
const char *model_suggest(const char *name);
/* The models in registration order: bert, fasttext, textcnn, bilstm, then any
 * added by model_register. */
int model_count(void);
const ModelOps *model_at(int i);
/* Adds a model kind (the test binary adds its quick bag-of-words model this
 * way, from a constructor). Dies on a duplicate name or a full table. */
void model_register(const ModelOps *ops);

#endif
