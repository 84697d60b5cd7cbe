/* textrnn.c — TextRNN and the BiLSTM baseline (its cell=lstm pool=max
 * configuration with the GLUE baseline's sizes) behind ModelOps: their settings
 * tables (defaults per task), create / encode / free. The network is in
 * textrnn_net.c and textrnn_encoder.c, checkpoints in textrnn_io.c; see textrnn.h. */
#include "models/baselines/textrnn.h"
#include "models/baselines/word_memory.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>

#include "core/common.h"
#include "models/run_config.h"

/* Tasks with at most this many training rows get the small-data defaults:
 * more epochs (each is cheap) and the best epoch picked on dev. So does a
 * multi-label task of any size: its sparse sigmoid outputs move slowly (at 2
 * epochs on GoEmotions' 43k rows the best epoch was the last for textrnn,
 * rcnn, han and bilstm, dev macro-F1 9-14 and rising; observed on dev, as
 * BERT's 10 epochs there were). */
#define TR_SMALL_TASK_ROWS 20000

/* Choice names in enum order; the first of each is what a config without the
 * key reads (a bilstm checkpoint from before the cell and pool settings). */
static const char *const TR_ACTIVATIONS[] = {"tanh", "relu", NULL};            /* TrActivation */
static const char *const TR_CELLS[] = {"lstm", "gru", NULL};                   /* TrCell */
static const char *const TR_POOLS[] = {"max", "mean", "last", "attention", NULL};  /* TrPool */

#define TR(field) offsetof(TrConfig, field)
/* The rows both models have; the rest differ in their defaults only. */
#define TR_COMMON_SETTINGS                                                                           \
    RUN_SETTING_EPOCHS(10), /* per task: tr_default_config */                                        \
    RUN_SETTING_LR(1e-3),                                                                            \
    {"batch", SETTING_INT, TR(batch), 64, 1, RUN_MAX_BATCH, NULL, NULL},                             \
    RUN_SETTING_WARMUP(0.0),                                                                         \
    RUN_SETTING_SCHEDULE("linear"),                                                                  \
    RUN_SETTINGS_LOSS,                                                                               \
    RUN_SETTINGS_DECISION,                                                                           \
    {"activation", SETTING_CHOICE, TR(act), 0, 0, 0, "tanh", TR_ACTIVATIONS},                        \
    {"dropout", SETTING_FLOAT_BELOW, TR(dropout), 0.5, 0, 1, NULL, NULL},                            \
    {"max_len", SETTING_INT, TR(max_len), 128, 1, 4096, NULL, NULL},                                 \
    {"min_count", SETTING_INT, TR(min_count), 1, 1, 1e9, NULL, NULL},                                \
    {"clip", SETTING_FLOAT, TR(clip), 5.0, 0, 1e6, NULL, NULL},                                      \
    {"weight_decay", SETTING_FLOAT, TR(weight_decay), 0.0, 0, 1, NULL, NULL},                        \
    {"vectors", SETTING_STRING, TR(vectors), 0, 0, 0, "", NULL} /* a .vec file: embedding init */

/* bilstm, the GLUE baseline (Wang et al. 2018): H 512 per direction, an MLP
 * of 512, Adam at 1e-3 decaying linearly, dropout 0.5 on the features and the
 * MLP, 0.2 on the embeddings. On SST-2 (4 epochs, seed 0) dev accuracy peaked
 * after epoch 1 (84.75, then 84.06 84.40 84.17 as the training loss fell to
 * 0.07), so large tasks get 2 epochs; small ones 10, the best epoch kept on dev. */
static const SettingSpec BILSTM_SETTINGS[] = {
    TR_COMMON_SETTINGS,
    {"dim", SETTING_INT, TR(dim), 300, 1, 4096, NULL, NULL},
    {"hidden", SETTING_INT, TR(hidden), 512, 1, 4096, NULL, NULL},
    {"mlp", SETTING_INT, TR(mlp), 512, 0, 16384, NULL, NULL},
    {"emb_dropout", SETTING_FLOAT_BELOW, TR(emb_dropout), 0.2, 0, 1, NULL, NULL},
    {"cell", SETTING_CHOICE, TR(cell), 0, 0, 0, "lstm", TR_CELLS},
    {"pool", SETTING_CHOICE, TR(pool), 0, 0, 0, "max", TR_POOLS},
};

/* textrnn, Zhou et al. 2016: a BiLSTM with attention pooling, 100-dimensional
 * word vectors (they tried 50 and 100), dropout 0.3 on the embeddings and 0.5
 * before the output layer, the output layer a linear map of h* (mlp 0). Their
 * hidden size is not given: 100, as the embedding (NeuralClassifier's TextRNN
 * also keeps the two equal). Differences, said here once: the two directions
 * are concatenated (NeuralClassifier's TextRNN, and what bilstm needs), not
 * summed as Zhou et al. do; no dropout on the LSTM outputs (their 0.3); Adam
 * at 1e-3 instead of AdaDelta and no L2; the epochs, batch and clipping of
 * bilstm, so that the two differ in the network only. */
static const SettingSpec TEXTRNN_SETTINGS[] = {
    TR_COMMON_SETTINGS,
    {"dim", SETTING_INT, TR(dim), 100, 1, 4096, NULL, NULL},
    {"hidden", SETTING_INT, TR(hidden), 100, 1, 4096, NULL, NULL},
    {"mlp", SETTING_INT, TR(mlp), 0, 0, 16384, NULL, NULL},
    {"emb_dropout", SETTING_FLOAT_BELOW, TR(emb_dropout), 0.3, 0, 1, NULL, NULL},
    {"cell", SETTING_CHOICE, TR(cell), 0, 0, 0, "lstm", TR_CELLS},
    {"pool", SETTING_CHOICE, TR(pool), 0, 0, 0, "attention", TR_POOLS},
};

/* rcnn, Lai et al. 2015: word embeddings and left / right contexts of 50, the
 * latent semantic layer 100, its max over the words into one linear layer
 * (mlp 0). The paper trains with SGD at 0.01 and no dropout; here Adam at 1e-3
 * and dropout 0.5 before the output layer (brightmart's TextRCNN), the epochs,
 * batch and clipping of the other word models. */
static const SettingSpec RCNN_SETTINGS[] = {
    TR_COMMON_SETTINGS,
    {"dim", SETTING_INT, TR(dim), 50, 1, 4096, NULL, NULL},
    {"context", SETTING_INT, TR(context), 50, 1, 4096, NULL, NULL},
    {"hidden", SETTING_INT, TR(hidden), 100, 1, 4096, NULL, NULL},
    {"mlp", SETTING_INT, TR(mlp), 0, 0, 16384, NULL, NULL},
    {"emb_dropout", SETTING_FLOAT_BELOW, TR(emb_dropout), 0.0, 0, 1, NULL, NULL},
};

/* han, Yang et al. 2016: 200-dimensional word vectors, bidirectional GRUs of
 * 50 per direction at both levels, attention of 100, the document vector into
 * one linear layer (mlp 0). The paper trains with SGD (momentum 0.9) and no
 * dropout; here Adam at 1e-3 and dropout 0.5 before the output layer, as the
 * other word models, and their epochs, batch and clipping. */
static const SettingSpec HAN_SETTINGS[] = {
    TR_COMMON_SETTINGS,
    {"dim", SETTING_INT, TR(dim), 200, 1, 4096, NULL, NULL},
    {"hidden", SETTING_INT, TR(hidden), 50, 1, 4096, NULL, NULL},
    {"attention", SETTING_INT, TR(attention), 100, 1, 4096, NULL, NULL},
    {"mlp", SETTING_INT, TR(mlp), 0, 0, 16384, NULL, NULL},
    {"emb_dropout", SETTING_FLOAT_BELOW, TR(emb_dropout), 0.0, 0, 1, NULL, NULL},
};
#define NUM_HAN_SETTINGS ((int)(sizeof HAN_SETTINGS / sizeof HAN_SETTINGS[0]))
#undef TR
#define NUM_RCNN_SETTINGS ((int)(sizeof RCNN_SETTINGS / sizeof RCNN_SETTINGS[0]))
#define NUM_TR_SETTINGS ((int)(sizeof TEXTRNN_SETTINGS / sizeof TEXTRNN_SETTINGS[0]))

const WordModelKind TEXTRNN_KIND = {"textrnn", "TextRNN"}, BILSTM_KIND = {"bilstm", "BiLSTM"},
                    RCNN_KIND = {"rcnn", "RCNN"}, HAN_KIND = {"han", "HAN"};

static const SettingSpec *tr_settings(const WordModelKind *kind, int *n) {
    *n = kind == &RCNN_KIND ? NUM_RCNN_SETTINGS : kind == &HAN_KIND ? NUM_HAN_SETTINGS : NUM_TR_SETTINGS;
    return kind == &BILSTM_KIND ? BILSTM_SETTINGS
           : kind == &RCNN_KIND ? RCNN_SETTINGS
           : kind == &HAN_KIND  ? HAN_SETTINGS
                                : TEXTRNN_SETTINGS;
}

static cJSON *tr_defaults(const WordModelKind *kind, const Task *task) {
    const TaskSplit *train = task ? task_split(task, "train") : NULL;
    int small = (train && train->official_rows > 0 && train->official_rows <= TR_SMALL_TASK_ROWS) ||
                (task && task->multi_label);
    cJSON *c = cJSON_CreateObject();
    int n;
    const SettingSpec *spec = tr_settings(kind, &n);
    settings_table_defaults(c, spec, n);
    cJSON_ReplaceItemInObjectCaseSensitive(c, "epochs", cJSON_CreateNumber(small ? 10 : 2));
    return c;
}
static cJSON *tr_default_config_textrnn(const Task *task) { return tr_defaults(&TEXTRNN_KIND, task); }
static cJSON *tr_default_config_bilstm(const Task *task) { return tr_defaults(&BILSTM_KIND, task); }
static cJSON *tr_default_config_rcnn(const Task *task) { return tr_defaults(&RCNN_KIND, task); }
static cJSON *tr_default_config_han(const Task *task) { return tr_defaults(&HAN_KIND, task); }

#define TR_CONFIG_HINT "fix the setting (glue finetune ... --set key=value)"

int tr_config_parse(const WordModelKind *kind, const cJSON *j, TrConfig *c) {
    memset(c, 0, sizeof *c);
    SettingsReader s = settings_reader(j, kind->name, TR_CONFIG_HINT);
    int n;
    const SettingSpec *spec = tr_settings(kind, &n);
    settings_table_read(&s, spec, n, c);
    return s.failed ? -1 : 0;
}

/* Declares every tensor in a fixed order (the checkpoint's names; bilstm's
 * from before TextRNN unchanged, so its files load and a seed draws the same
 * weights). PyTorch's initialisations: recurrent and linear layers
 * U(-1/sqrt(fan), 1/sqrt(fan)). */
static void tr_declare(TextRnn *m) {
    const TrConfig *c = &m->cfg;
    int V = word_vocab_size(&m->base.vocab), D = c->dim, H = c->hidden, M = c->mlp, F = m->F, K = m->K;
    int gru = c->cell == TR_CELL_GRU || m->enc == TR_ENC_HAN, G = gru ? 3 : 4;
    const char *cell = m->enc == TR_ENC_HAN ? "han.word.gru" : gru ? "gru" : "lstm";
    Params *p = m->base.params;
    static const char *const suffix[2] = {"", "_reverse"};
    /* Word vectors of the scale of the recurrent input weights' reach; N(0, 1)
     * as in PyTorch's nn.Embedding would saturate the gates at the start. */
    m->p.emb = params_declare(p, "emb", PARAM_SHAPE(V, D), PARAM_INIT_NORMAL(0.1f), PARAM_SPARSE_ROWS | PARAM_NO_DECAY);
    for (int dir = 0; m->enc != TR_ENC_RCNN && dir < 2; dir++)   /* HAN: its word level's */
        word_model_declare_rnn(p, cell, suffix[dir], G, D, H, &m->p.w_ih[dir], &m->p.w_hh[dir], &m->p.b_ih[dir],
                               &m->p.b_hh[dir]);
    if (m->enc == TR_ENC_RCNN) rcnn_declare(m);
    if (m->enc == TR_ENC_HAN) han_declare(m);
    float a1 = 1.0f / sqrtf((float)F), a2 = 1.0f / sqrtf((float)(M > 0 ? M : F));
    m->p.w1 = m->p.b1 = -1;
    if (M > 0) {
        m->p.w1 = params_declare(p, "mlp.w1", PARAM_SHAPE(M, F), PARAM_INIT_UNIFORM(a1), 0);
        m->p.b1 = params_declare(p, "mlp.b1", PARAM_SHAPE(M), PARAM_INIT_UNIFORM(a1), PARAM_NO_DECAY);
    }
    m->p.w2 = params_declare(p, "mlp.w2", PARAM_SHAPE(K, M > 0 ? M : F), PARAM_INIT_UNIFORM(a2), 0);
    m->p.b2 = params_declare(p, "mlp.b2", PARAM_SHAPE(K), PARAM_INIT_UNIFORM(a2), PARAM_NO_DECAY);
    m->p.attn = -1;
    if (c->pool == TR_POOL_ATTENTION)   /* after the rest: the other tensors' draws stay as they were */
        m->p.attn = params_declare(p, "attn.w", PARAM_SHAPE(2 * H), PARAM_INIT_UNIFORM(1.0f / sqrtf(2.0f * H)), 0);
}

/* Seed streams: parameters and dropout never share one. */
enum { TR_STREAM_INIT = 0, TR_STREAM_DROPOUT = 1 };

TextRnn *tr_new(const WordModelKind *kind, const cJSON *config, const Task *task, WordVocab *vocab, uint64_t seed,
                int pair, const Dataset *train) {
    TextRnn *m = xcalloc(1, sizeof *m);
    m->base.kind = kind;
    m->base.vocab = *vocab;
    memset(vocab, 0, sizeof *vocab);
    if (tr_config_parse(kind, config, &m->cfg) != 0) {
        tr_free(m);
        return NULL;
    }
    m->base.config = cJSON_Duplicate(config, 1);
    m->cfg.vectors = run_config_string(m->base.config, "vectors", "");   /* owned by m->base.config now */
    m->base.task = task;
    m->base.max_len = m->cfg.max_len;
    m->K = task->num_labels;
    m->base.pair = pair != 0;
    m->enc = kind == &RCNN_KIND ? TR_ENC_RCNN : kind == &HAN_KIND ? TR_ENC_HAN : TR_ENC_BIRNN;
    m->P = m->enc == TR_ENC_RCNN ? m->cfg.hidden : 2 * m->cfg.hidden;
    m->F = (m->base.pair ? 4 : 1) * m->P;
    m->base.seed = seed;
    m->base.params = params_create();
    tr_declare(m);
    Rng init;
    rng_seed_stream(&init, seed, TR_STREAM_INIT);
    params_allocate(m->base.params, &init);
    /* The padding row is never looked up for a valid word and stays zero. */
    memset(params_data(m->base.params, m->p.emb) + (size_t)WF_PAD * m->cfg.dim, 0, sizeof(float) * (size_t)m->cfg.dim);
    rng_seed_stream(&m->base.rng, seed, TR_STREAM_DROPOUT);
    m->base.opt = optim_adamw(m->cfg.weight_decay);
    tr_buffers_alloc(m, word_memory_rows_cap(m->cfg.batch, train));
    return m;
}

void tr_free(TextRnn *m) {
    if (!m) return;
    tr_buffers_free(&m->buf);
    word_model_release(&m->base);
    free(m);
}

/* Whether the examples come in pairs: the split says so, or a row has a text b. */
static int tr_dataset_has_pairs(const Dataset *d) {
    if (d->split && d->split->col_b >= 0) return 1;
    for (int i = 0; i < d->n; i++)
        if (d->ex[i].b) return 1;
    return 0;
}

static Model *tr_create(const WordModelKind *kind, const cJSON *config, const Task *task, const Dataset *train,
                        uint64_t seed) {
    TrConfig c;
    if (tr_config_parse(kind, config, &c) != 0) return NULL;
    WordVocab vocab;
    if (word_vocab_build(&vocab, train, c.min_count) != 0) return NULL;
    TextRnn *m = tr_new(kind, config, task, &vocab, seed, tr_dataset_has_pairs(train), train);
    if (!m) return NULL;
    if (m->cfg.vectors[0] &&
        word_vectors_load(&m->base.vocab, m->cfg.vectors, params_data(m->base.params, m->p.emb), m->cfg.dim, NULL) != 0) {
        tr_free(m);
        return NULL;
    }
    if (m->K == 1 && train->n > 0)   /* regression starts at the mean target */
        params_data(m->base.params, m->p.b2)[0] = (float)dataset_mean_score(train);
    tr_train_prepare(m);
    return (Model *)m;
}

static Model *tr_create_textrnn(const cJSON *config, const Task *task, const Dataset *train, uint64_t seed) {
    return tr_create(&TEXTRNN_KIND, config, task, train, seed);
}
static Model *tr_create_rcnn(const cJSON *config, const Task *task, const Dataset *train, uint64_t seed) {
    return tr_create(&RCNN_KIND, config, task, train, seed);
}
static Model *tr_create_han(const cJSON *config, const Task *task, const Dataset *train, uint64_t seed) {
    return tr_create(&HAN_KIND, config, task, train, seed);
}
static Model *tr_create_bilstm(const cJSON *config, const Task *task, const Dataset *train, uint64_t seed) {
    return tr_create(&BILSTM_KIND, config, task, train, seed);
}

static void tr_free_ops(Model *m) { tr_free((TextRnn *)m); }

static int tr_length(const Encoded *e, int row) {
    const WordSeqs *s = (const WordSeqs *)e;
    return s->len_a[row] + s->len_b[row];
}

/* The two differ in their name (checkpoints say which), defaults and load. */
#define TR_OPS(NAME, SUFFIX, TABLE, NUM, ENCODE, ENCODED_FREE)                                                    \
    {.name = NAME, .default_config = tr_default_config_##SUFFIX, .create = tr_create_##SUFFIX, \
     .encode = ENCODE, .encoded_free = ENCODED_FREE, .forward = tr_forward_ops,                  \
     .backward = tr_backward_ops, .update = tr_update_ops, .save = word_model_save_ops,          \
     .load = tr_load_##SUFFIX, .num_params = word_model_num_params, .free = tr_free_ops,         \
     .length = tr_length, .save_state = word_model_save_state_ops, .load_state = tr_load_state,  \
     .settings = TABLE, .num_settings = NUM, .memory_bytes = textrnn_memory_bytes}
const ModelOps TEXTRNN_OPS = TR_OPS("textrnn", textrnn, TEXTRNN_SETTINGS, NUM_TR_SETTINGS,
                                   word_model_encode, word_model_encoded_free);
const ModelOps BILSTM_OPS = TR_OPS("bilstm", bilstm, BILSTM_SETTINGS, NUM_TR_SETTINGS,
                                   word_model_encode, word_model_encoded_free);
const ModelOps RCNN_OPS = TR_OPS("rcnn", rcnn, RCNN_SETTINGS, NUM_RCNN_SETTINGS,
                                   word_model_encode, word_model_encoded_free);
const ModelOps HAN_OPS = TR_OPS("han", han, HAN_SETTINGS, NUM_HAN_SETTINGS, han_encode, han_encoded_free);
