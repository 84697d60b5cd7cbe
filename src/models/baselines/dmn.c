/* dmn.c — the Dynamic Memory Network behind ModelOps: its settings, create,
 * load, the ops table. The batch computation lives in dmn_step.c; see dmn.h
 * for the model. Checkpoints and the --resume state are the word models'
 * (word_model_io.h): tensors emb, query (single texts), in.*, gate.w1/b1/w2/b2,
 * episode.*, memory.* (each GRU's w_ih, w_hh, b_ih, b_hh), out.w, out.b. */
#include "models/baselines/dmn.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "models/baselines/word_memory.h"
#include "models/baselines/word_pair.h"
#include "models/run_config.h"

/* Defaults: brightmart's text_classification DMN (a09_DynamicMemoryNet:
 * embedding 100, hidden 100, 2 passes, the gate's tanh layer 3 x hidden
 * wide, gradient clipping at 5); the paper sizes none of these for
 * classification. Dropout 0.5 before the answer layer (brightmart trains
 * with keep_prob 1.0; 0.5 is the recurrent family's, textrnn.c), Adam at
 * 1e-3, batch 64, 10 epochs and max_len 128 as the recurrent family (the
 * trainer keeps the best epoch on dev). brightmart's answer module is one
 * step of a GRU from m reading [0; q] and a dense layer; ours is the dense
 * layer on [m; q]. */
#define DM(field) offsetof(DmnConfig, field)
static const SettingSpec DMN_SETTINGS[] = {
    RUN_SETTING_EPOCHS(10),
    RUN_SETTING_LR(1e-3),
    {"batch", SETTING_INT, DM(batch), 64, 1, 1 << 20, NULL, NULL},
    {"eval_batch", SETTING_INT, DM(eval_batch), 128, 1, 1 << 20, NULL, NULL},
    RUN_SETTING_SCHEDULE("constant"),
    RUN_SETTINGS_LOSS,
    RUN_SETTINGS_DECISION,
    {"weight_decay", SETTING_REAL, DM(weight_decay), 0.0, 0, 1, NULL, NULL},
    {"dim", SETTING_INT, DM(dim), 100, 1, 4096, NULL, NULL},
    {"hidden", SETTING_INT, DM(hidden), 100, 1, 4096, NULL, NULL},
    {"attention", SETTING_INT, DM(attention), 300, 1, 4096, NULL, NULL},
    {"passes", SETTING_INT, DM(passes), 2, 1, 16, NULL, NULL},
    {"dropout", SETTING_FLOAT_BELOW, DM(dropout), 0.5, 0, 1, NULL, NULL},
    {"clip", SETTING_FLOAT, DM(clip), 5.0, 0, 1e6, NULL, NULL},
    {"min_count", SETTING_INT, DM(min_count), 1, 1, 1e9, NULL, NULL},
    {"max_len", SETTING_INT, DM(max_len), 128, 1, 4096, NULL, NULL},
};
#undef DM
#define NUM_DMN_SETTINGS ((int)(sizeof DMN_SETTINGS / sizeof DMN_SETTINGS[0]))

static cJSON *dmn_default_config(const Task *task) {
    return word_model_defaults(DMN_SETTINGS, NUM_DMN_SETTINGS, task, 0);
}

static const WordModelKind DMN_KIND = {"dmn", "DMN"};

static void dmn_free(Dmn *m) {
    if (!m) return;
    dmn_work_free(&m->w);
    word_model_release(&m->base);
    free(m);
}

static Dmn *dmn_new(const cJSON *config, const Task *task) {
    Dmn *m = xcalloc(1, sizeof *m);
    if (word_model_init(&m->base, &DMN_KIND, config, task, DMN_SETTINGS, NUM_DMN_SETTINGS, &m->cfg) != 0) {
        dmn_free(m);
        return NULL;
    }
    m->base.max_len = m->cfg.max_len;
    m->K = task->num_labels;
    return m;
}

/* PyTorch's GRU / Linear init U(-1/sqrt(fan), 1/sqrt(fan)); Kim's
 * U(-0.25, 0.25) word vectors, as the other word models. */
static void dmn_build(Dmn *m, uint64_t seed) {
    const DmnConfig *c = &m->cfg;
    int V = word_vocab_size(&m->base.vocab), D = c->dim, H = c->hidden, A = c->attention;
    m->base.seed = seed;
    Params *p = m->base.params = params_create();
    m->h_emb = params_declare(p, "emb", PARAM_SHAPE(V, D), PARAM_INIT_UNIFORM(0.25f), PARAM_SPARSE_ROWS);
    m->h_query = m->base.pair ? -1 : params_declare(p, "query", PARAM_SHAPE(H), PARAM_INIT_UNIFORM(1.0f / sqrtf((float)H)), 0);
    word_model_declare_rnn(p, "in", "", 3, D, H, &m->in.w_ih, &m->in.w_hh, &m->in.b_ih, &m->in.b_hh);
    float b1 = 1.0f / sqrtf(4.0f * H), b2 = 1.0f / sqrtf((float)A), bo = 1.0f / sqrtf(2.0f * H);
    m->h_w1 = params_declare(p, "gate.w1", PARAM_SHAPE(A, 4 * H), PARAM_INIT_UNIFORM(b1), 0);
    m->h_b1 = params_declare(p, "gate.b1", PARAM_SHAPE(A), PARAM_INIT_UNIFORM(b1), PARAM_NO_DECAY);
    m->h_w2 = params_declare(p, "gate.w2", PARAM_SHAPE(1, A), PARAM_INIT_UNIFORM(b2), 0);
    m->h_b2 = params_declare(p, "gate.b2", PARAM_SHAPE(1), PARAM_INIT_UNIFORM(b2), PARAM_NO_DECAY);
    word_model_declare_rnn(p, "episode", "", 3, H, H, &m->ep.w_ih, &m->ep.w_hh, &m->ep.b_ih, &m->ep.b_hh);
    word_model_declare_rnn(p, "memory", "", 3, H, H, &m->mem.w_ih, &m->mem.w_hh, &m->mem.b_ih, &m->mem.b_hh);
    m->h_out_w = params_declare(p, "out.w", PARAM_SHAPE(m->K, 2 * H), PARAM_INIT_UNIFORM(bo), 0);
    m->h_out_b = params_declare(p, "out.b", PARAM_SHAPE(m->K), PARAM_INIT_UNIFORM(bo), PARAM_NO_DECAY);
    word_model_allocate(&m->base, m->h_emb, D, optim_adamw(c->weight_decay));
}

static Model *dmn_create(const cJSON *config, const Task *task, const Dataset *train, uint64_t seed) {
    Dmn *m = dmn_new(config, task);
    if (!m) return NULL;
    m->base.pair = word_pair_task(train);
    if (word_vocab_build(&m->base.vocab, train, m->cfg.min_count) != 0) {
        dmn_free(m);
        return NULL;
    }
    m->cfg.eval_batch = word_memory_rows_cap(m->cfg.eval_batch, train);
    dmn_build(m, seed);
    if (m->K == 1 && train->n > 0)   /* regression starts at the mean */
        params_data(m->base.params, m->h_out_b)[0] = (float)dataset_mean_score(train);
    return (Model *)m;
}

static void dmn_free_ops(Model *m) { dmn_free((Dmn *)m); }
static Model *dmn_new_ops(const cJSON *config, const Task *task) { return (Model *)dmn_new(config, task); }
static void dmn_build_ops(Model *m, uint64_t seed) { dmn_build((Dmn *)m, seed); }
static Model *dmn_load(const char *path, const Task *task) {
    return word_model_load(&DMN_KIND, task, path, dmn_new_ops, dmn_build_ops, dmn_free_ops);
}

const ModelOps DMN_OPS = {
    .name = "dmn",
    .default_config = dmn_default_config,
    .create = dmn_create,
    .memory_bytes = dmn_memory_bytes,
    .encode = han_encode,
    .encoded_free = han_encoded_free,
    .forward = dmn_forward_ops,
    .backward = dmn_backward_ops,
    .update = dmn_update_ops,
    .load = dmn_load,
    .free = dmn_free_ops,
    .length = word_model_length,
    WORD_MODEL_FILE_OPS,
    .settings = DMN_SETTINGS,
    .num_settings = NUM_DMN_SETTINGS,
};
