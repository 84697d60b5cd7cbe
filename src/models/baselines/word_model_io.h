/* word_model_io.h — what the word-level models with a parameter arena
 * (TextCNN, the recurrent family, DPCNN, ...) share: their base, the steps of
 * their construction alike in each, and their checkpoint layout, through the
 * checkpoint module (core/checkpoint.h: compressed, CRC-checked, written atomically).
 *
 * Model file:
 *   config   {"model": NAME, "task": ..., "num_labels": K, "pair": true|false,
 *             "config": {the run's settings}}
 *   blobs    "seed" (u64), "vocab.words" + "vocab.counts" (word_features.h)
 *   tensors  every parameter by its arena name
 * State file (what --resume needs beyond the weights):
 *   config   {"model": NAME}
 *   blobs    the optimizer (optim_save: step count and moments) and "rng"
 *            (the dropout stream)
 * Each model says what is its own: how to build itself from the head. */
#ifndef GLUE_WORD_MODEL_IO_H
#define GLUE_WORD_MODEL_IO_H

#include <stddef.h>
#include <stdint.h>

#include "core/checkpoint.h"
#include "core/params.h"
#include "core/rng.h"
#include "models/baselines/word_features.h"
#include "models/model.h"
#include "models/run_config.h"
#include "optim/optim.h"
#include "tasks/task.h"

/* Which model a file belongs to: NAME in the files, DISPLAY in messages
 * ("TextCNN"); messages tell the user to re-train with --model NAME. */
typedef struct WordModelKind {
    const char *name, *display;
} WordModelKind;

/* What TextCNN and the BiLSTM have in common, the first member of each (so
 * a Model of either is a WordModelBase): what their files hold and what the
 * shared ModelOps functions below read. */
typedef struct WordModelBase {
    const WordModelKind *kind;
    const Task *task;
    cJSON *config;          /* the config as given (saved with the model) */
    int pair;               /* the task has a text b */
    int max_len;            /* words per text after truncation */
    uint64_t seed;
    WordVocab vocab;
    Params *params;
    Optimizer opt;
    Rng rng;                /* dropout masks; saved with the optimizer state */
} WordModelBase;

/* The first steps of a model's construction: kind and task set, the config
 * copied and its settings read by spec into cfg (messages under kind's name).
 * 0 ok, -1 after a message (the caller frees what it made). */
int word_model_init(WordModelBase *b, const WordModelKind *kind, const cJSON *config, const Task *task,
                    const SettingSpec *spec, int n, void *cfg);
/* Releases what the base holds (the parameters, vocabulary and config), not b itself. */
void word_model_release(WordModelBase *b);
/* A settings table's defaults; sst2_epochs (if not 0) the epochs on SST-2,
 * whose 67k phrases need fewer passes (task NULL: no task yet, --help-settings). */
cJSON *word_model_defaults(const SettingSpec *spec, int n, const Task *task, int sst2_epochs);
/* The declared parameters allocated and drawn from the model's seed, their
 * gradients on, the padding row of the embedding emb (V, D) zeroed; opt the
 * optimizer (lazy: it visits only the embedding rows a step touched), and the
 * dropout stream seeded apart from the init's. The embedding's data. */
float *word_model_allocate(WordModelBase *b, int emb, int D, Optimizer opt);

/* ModelOps functions for any word model (m is a WordModelBase): the split as
 * word ids (WordSeqs), its release, saving the model and its training state,
 * loading that state, the parameter count. */
Encoded *word_model_encode(Model *m, const Dataset *d);
void word_model_encoded_free(Encoded *e);
/* ModelOps.length of a model that reads a pair's texts apart (its cost is
 * the longer one's): the longer of row's two texts, in words. */
int word_model_length(const Encoded *e, int row);
int word_model_save_ops(const Model *m, const char *path);
int word_model_save_state_ops(const Model *m, const char *path);
int word_model_load_state_ops(Model *m, const char *path);
long word_model_num_params(const Model *m);
/* The ModelOps entries above that a word model with the shared files fills alike. */
#define WORD_MODEL_FILE_OPS                                                                        \
    .save = word_model_save_ops, .save_state = word_model_save_state_ops,                          \
    .load_state = word_model_load_state_ops, .num_params = word_model_num_params

/* A recurrent layer's tensors PREFIX.w_ih SUFFIX (G H, C), .w_hh (G H, H),
 * .b_ih, .b_hh (G H; not decayed), G gates (GRU 3, LSTM 4), in that order
 * with PyTorch's init U(-1/sqrt(H), 1/sqrt(H)). */
void word_model_declare_rnn(Params *p, const char *prefix, const char *suffix, int G, int C, int H, int *w_ih,
                            int *w_hh, int *b_ih, int *b_hh);

/* A model's forward of rows[0..n) of e (dropout when train): its logits (n, K). */
typedef const float *(*WordBatchForward)(Model *m, const Encoded *e, const int *rows, int n, int train);
/* ModelOps.forward by run: a training batch (st set) at once after zeroing the
 * gradients, an evaluation in chunks of cap rows (the workspace's). */
void word_model_forward(Model *m, const Encoded *e, const int *rows, int n, const TrainState *st, float *logits, int K,
                        int cap, WordBatchForward run);
/* One optimizer step at lr after the gradients' norm, clipped to clip (0:
 * measured only); -1 when the norm is not finite (diverged: nothing changed). */
int word_model_step(Model *m, float clip, float lr);
int word_model_update_ops(Model *m, const TrainState *st);   /* word_model_step unclipped */

/* What a model file says besides the weights. */
typedef struct WordModelHead {
    const cJSON *config;   /* the run's settings (points into the checkpoint) */
    int pair;
    uint64_t seed;
    WordVocab vocab;       /* loaded; the caller takes it over */
} WordModelHead;

int word_model_save(const WordModelKind *kind, const Task *task, int pair, const cJSON *config, uint64_t seed,
                    const WordVocab *vocab, const Params *params, const char *path);
/* Reads a model file and checks that it is kind's, for task; fills head.
 * The checkpoint (for checkpoint_load_params; caller frees), or NULL after
 * one message. */
Checkpoint *word_model_read(const WordModelKind *kind, const Task *task, const char *path, WordModelHead *head);
/* A word model's whole load (ModelOps.load) for a model made in two steps:
 * make_model reads the settings (NULL after a message, nothing allocated for
 * the weights), build makes the weights from the file's vocabulary (taken over)
 * and seed, which the file's tensors then fill; free_model releases a model
 * whose weights do not load. The model or NULL after one message. */
Model *word_model_load(const WordModelKind *kind, const Task *task, const char *path,
                       Model *(*make_model)(const cJSON *config, const Task *task),
                       void (*build)(Model *m, uint64_t seed), void (*free_model)(Model *m));
/* One message: path is not a usable checkpoint of kind, because what. */
void word_model_bad(const WordModelKind *kind, const char *path, const char *what);

int word_model_save_state(const WordModelKind *kind, const Optimizer *opt, const Params *params, const void *rng,
                          size_t rng_size, const char *path);
/* Reads a state file of kind into opt (its params must be ready for
 * optim_load) and rng. 0 ok, -1 after a message. */
int word_model_load_state(const WordModelKind *kind, Optimizer *opt, Params *params, void *rng, size_t rng_size,
                          const char *path);

#endif
