/* model.h — the one interface every classifier implements (DESIGN §3): BERT,
 * fastText, TextCNN, BiLSTM. The harness (src/train: the loop, the head and
 * evaluation) and the commands `glue finetune|eval|predict|compare` only
 * ever talk to a ModelOps.
 *
 * Each model turns a Dataset into its own features once (`encode`: WordPiece ids
 * for BERT, word + bigram ids for fastText, word ids for TextCNN/BiLSTM), then
 * trains and predicts on minibatches given as row indices into those features.
 *
 * Models compute logits; the harness owns the loss. A training step is
 * composed in one place (src/train/step.c):
 *   forward (logits, keeping what backward needs) -> the head's loss and its
 *   gradient dlogits (src/train/head.h: softmax cross-entropy, regression
 *   MSE) -> backward (adds every parameter's gradient) -> the gradient sum
 *   over data-parallel ranks (core/dist_grad.h) -> update (the model's
 *   clipping, optimizer and constraints);
 * and prediction is forward without training, then the head's probabilities
 * or scores. So a model never sees a label: the head reads them from the
 * Dataset, and a new loss (class weights, a multi-label sigmoid head) is
 * written once for every model.
 *
 * Except where a model's output layer IS its loss: fastText's hierarchical
 * softmax (a path of binary decisions down a Huffman tree, never the K
 * logits) and its plain softmax, both updated row by row by Hogwild threads
 * inside the step, have no logits for a head to take; nor has seq2seq_attn,
 * a decoder whose loss is the cross-entropy of label SEQUENCES (teacher
 * forced) and whose prediction is a decoded label set. Such a model supplies
 * `train_step` (the whole step, returning the mean loss) and `predict`
 * (probabilities or scores, what the head would report: evaluation, the
 * prediction rule and the commands read them unchanged) instead of
 * forward/backward/update; fastText and seq2seq_attn are the two.
 *
 * The contract: `default_config`, `create`, `encode`, `encoded_free`,
 * `save`, `load`, `num_params`, `free`, and either `forward`, `backward` and
 * `update` or `train_step` and `predict`, are required; `length`,
 * `save_state`/`load_state`, `use_bf16`, `use_int8`/`save_int8`/`calibrate_int8`, `quantize`, `load_external`, `score_scale`,
 * `data_parallel`, `memory_bytes` and `check_config` are optional (NULL: the feature is absent, and the
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
 * Their rows for a model's settings table: models/run_config.h (RUN_SETTING_*).
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

/* What the harness tells a training step. */
typedef struct TrainState {
    long step, total_steps;   /* optimizer steps so far / planned */
    double progress;          /* fraction of training done, in [0,1] (fastText's lr decay) */
    float lr;                 /* learning rate for this step (schedule applied) */
    int epoch;                /* 0-based */
    /* Data parallel (`mpirun -np N glue finetune`, ModelOps.data_parallel):
     * this rank, and the run seed (rank > 0 draws its dropout from them and
     * the step; rank 0 keeps the model's own stream). The harness's own:
     * this rank's rows over the global batch's (1 in one process; the
     * gradient of the local mean times share sums to the global mean's,
     * core/dist_grad.h), and the sum's buckets (MiB; 0 = one sum,
     * RUN_SETTING_BUCKET_MB). */
    int rank;
    uint64_t seed;
    double share;
    double bucket_mb;
} TrainState;

typedef struct ModelOps {
    const char *name;          /* "bert", "fasttext", "textcnn", "bilstm" */
    /* Defaults for this model and task (epochs, lr, batch, ...) as a JSON object the
     * caller may override key by key from the command line; task NULL: the
     * defaults of no task in particular (--help-settings without TASK). Caller frees. */
    cJSON *(*default_config)(const Task *task);
    /* Build a fresh model; train is available for vocabularies / label counts. */
    Model *(*create)(const cJSON *config, const Task *task, const Dataset *train, uint64_t seed);
    Encoded *(*encode)(Model *m, const Dataset *d);
    void (*encoded_free)(Encoded *e);

    /* ---- logits, for the harness's head (every model but fastText) ---- */
    /* logits (n, K) of rows[0..n) of e: K classes, or 1 score (regression).
     * st != NULL: a training forward. It starts a step (zeroes the
     * gradients), draws dropout as st says and keeps what backward needs; n
     * is at most the configured batch, and may be 0 (a data-parallel rank
     * given none of a short last batch: the zeroing only). st == NULL:
     * evaluation, any n. */
    void (*forward)(Model *m, const Encoded *e, const int *rows, int n, const TrainState *st, float *logits);
    /* dlogits (n, K): the loss's gradient w.r.t. the last training forward's
     * logits. ADDS every parameter's gradient. */
    void (*backward)(Model *m, const float *dlogits);
    /* One update from the gradients at st->lr: the model's clipping,
     * optimizer step and constraints. 0, or -1 with nothing changed when the
     * gradient is not finite (the harness reports the divergence). */
    int (*update)(Model *m, const TrainState *st);

    /* ---- a model whose output layer is its loss (fastText, seq2seq_attn; see above) ---- */
    /* One optimizer step on rows[0..n) of e; returns the mean loss. */
    float (*train_step)(Model *m, const Encoded *e, const int *rows, int n, const TrainState *st);
    /* out: (n, K) class probabilities, or (n, 1) score for regression. */
    void (*predict)(Model *m, const Encoded *e, const int *rows, int n, float *out);

    /* 0 ok. A glue checkpoint (core/checkpoint.h) whose config names the
     * model, {"model": name, ...}: a run says by itself which model it is. */
    int (*save)(const Model *m, const char *path);
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
    /* Optional (NULL: no such path). Evaluate from here on with int8 weights
     * (core/gemm_int8.h): `eval`/`predict --int8`; 0, or -1 after a message.
     * save_int8: an int8 checkpoint of the model (`glue quantize`), which
     * `load` reads back as a model that runs int8; -1 after a message (also
     * for a model that was loaded from one). */
    int (*use_int8)(Model *m);
    int (*save_int8)(const Model *m, const char *path);
    /* Optional (NULL: int8 without calibration). Calibration of int8 before
     * save_int8 (`glue quantize --calibrate N`): on = 1 starts recording
     * what the fp32 predictions that follow feed the int8 products; on = 0
     * turns what `examples` examples showed into the int8 checkpoint's
     * calibration. 0, or -1 after a message. */
    int (*calibrate_int8)(Model *m, int on, long examples);
    /* Optional (NULL: none). `glue quantize` of a model that compresses in
     * its own way (fastText: product quantization, FastText.zip): m is
     * compressed in place as settings say (keys of quantize_settings; train:
     * the training split, for settings that retrain; NULL when none does),
     * after which `save` writes the compressed checkpoint and `load` reads it
     * back. 0, or -1 after a message (also for a model already compressed). */
    int (*quantize)(Model *m, const cJSON *settings, const Dataset *train);
    const struct SettingSpec *quantize_settings;
    int num_quantize_settings;
    /* Optional (NULL: none). A model trained elsewhere, scored as it is:
     * `eval/predict --init DIR` (BERT: a Hugging Face classifier directory).
     * NULL + message on error. */
    Model *(*load_external)(const char *dir, const Task *task);
    /* Optional (NULL: 1). Regression: the model's output is the score divided
     * by this (BERT's siamese head outputs a cosine, STS-B's scores are 0..5):
     * the head compares it with score / scale and reports output * scale. */
    float (*score_scale)(const Model *m);
    /* Optional (NULL: none). The settings table (models/run_config.h) the
     * defaults and checks come from: `--help-settings` prints its ranges. */
    const struct SettingSpec *settings;
    int num_settings;
    /* Optional (NULL: refused under more than one rank: fastText's Hogwild
     * updates and the sparse embedding rows of TextCNN/BiLSTM are not summed
     * over ranks). `mpirun -np N glue finetune` trains such a model
     * data-parallel (BERT): it returns its gradients as one dense array of *n
     * floats, which the harness sums over the ranks between backward and
     * update, and from now on its backward calls ready(ctx, lo) when floats
     * [lo, *n) are final (BERT: the heads', then each layer's as it goes
     * down), so that the sum overlaps the backward. Called after a training
     * forward; the array does not move afterwards. */
    float *(*data_parallel)(Model *m, long *n, void (*ready)(void *ctx, long lo), void *ctx);
    /* Optional (NULL: not checked). The bytes create and training will
     * allocate for these settings (parameters, gradients, optimizer state,
     * and the batch buffers for min(batch, rows of train) rows at max_len),
     * within ~2x, computed before anything is allocated; *biggest_setting:
     * the setting whose lowering helps most. The harness refuses a run that
     * needs more than the machine has (model_check_memory). */
    double (*memory_bytes)(const cJSON *config, const Task *task, const Dataset *train, const char **biggest_setting);
    /* Optional (NULL: the settings table says it all). The rules of these
     * settings that the table's ranges cannot say (across keys, or against
     * the task: a loss for one label per row on a multi-label task), checked
     * as create checks them but without data or allocation, so that a command
     * that trains many runs refuses a bad one before the first trains. 0, or
     * -1 after a usage error. */
    int (*check_config)(const cJSON *config, const Task *task);
    /* NULL when the model can learn task whatever its settings; else why not
     * (a label decoder has no score to emit for a regression task). finetune
     * refuses such a pair (trainer_check_config); compare leaves its cell
     * empty and says so, since comparing every model on every task is its
     * job. A model without the hook learns every task. */
    const char *(*cannot)(const Task *task);
} ModelOps;

/* ops->memory_bytes against the memory available (core/memory.h): 0, or -1
 * after a usage error naming the estimate, what is available and the setting
 * to lower. A model without the hook passes. */
int model_check_memory(const ModelOps *ops, const cJSON *config, const Task *task, const Dataset *train);
/* The same for loading the checkpoint file ckpt (eval, predict): its weights
 * as read and as the model holds them, from the file's header, before
 * anything is read. 0, or -1 after a usage error in the same words. */
int model_check_memory_load(const ModelOps *ops, const char *ckpt);

/* Registry: all model kinds, by name; also the combinations of finished runs
 * (models/ensemble/ensemble.h: "ensemble", "boost"), which model_at does not
 * list: they are built from runs, never trained by finetune. */
const ModelOps *model_find(const char *name);
/* The closest model name to a misspelt one (for "did you mean"), NULL when none is near. */
const char *model_suggest(const char *name);
/* The models in registration order: bert, fasttext, textcnn, bilstm, then any
 * added by model_register. */
int model_count(void);
const ModelOps *model_at(int i);
/* "bert, fasttext, ..." (model_at's names, in order) into out, cut at cap. */
void model_names(char *out, size_t cap);
/* Adds a model kind (the test binary adds its quick bag-of-words model this
 * way, from a constructor). Dies on a duplicate name or a full table. */
void model_register(const ModelOps *ops);

#endif
