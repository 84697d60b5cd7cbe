/* entnet.c — the Recurrent Entity Network behind ModelOps: its settings,
 * create, load, the ops table. The batch computation lives in
 * entnet_step.c; see entnet.h for the model. Checkpoints and the --resume
 * state are the word models' (word_model_io.h): tensors emb, mask, keys,
 * mem.U, mem.V, mem.W, mem.slope, query (single texts), out.H, out.slope,
 * out.w (R), out.b. */
#include "models/baselines/entnet.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "models/baselines/word_memory.h"
#include "models/baselines/word_pair.h"
#include "models/run_config.h"

/* Defaults: 20 memory blocks of 100 dimensions (brightmart's
 * text_classification a08_EntityNetwork: block_size 20, embed_size =
 * hidden_size = 100), the paper's gradient clipping at 40 and its N(0, 0.1)
 * initialisation, PReLU slopes at PyTorch's 0.25. Adam at 1e-3, batch 64,
 * 10 epochs and max_len 128 as the recurrent family (textrnn.c): the trainer
 * keeps the best epoch on dev. */
#define EN(field) offsetof(EntConfig, field)
static const SettingSpec ENT_SETTINGS[] = {
    RUN_SETTING_EPOCHS(10),
    RUN_SETTING_LR(1e-3),
    {"batch", SETTING_INT, EN(batch), 64, 1, 1 << 20, NULL, NULL},
    {"eval_batch", SETTING_INT, EN(eval_batch), 128, 1, 1 << 20, NULL, NULL},
    RUN_SETTING_SCHEDULE("constant"),
    RUN_SETTINGS_LOSS,
    RUN_SETTINGS_DECISION,
    {"weight_decay", SETTING_REAL, EN(weight_decay), 0.0, 0, 1, NULL, NULL},
    {"dim", SETTING_INT, EN(dim), 100, 1, 4096, NULL, NULL},
    {"blocks", SETTING_INT, EN(blocks), 20, 1, 1024, NULL, NULL},
    {"clip", SETTING_FLOAT, EN(clip), 40.0, 0, 1e6, NULL, NULL},
    {"min_count", SETTING_INT, EN(min_count), 1, 1, 1e9, NULL, NULL},
    {"max_len", SETTING_INT, EN(max_len), 128, 1, 4096, NULL, NULL},
};
#undef EN
#define NUM_ENT_SETTINGS ((int)(sizeof ENT_SETTINGS / sizeof ENT_SETTINGS[0]))

static cJSON *ent_default_config(const Task *task) {
    return word_model_defaults(ENT_SETTINGS, NUM_ENT_SETTINGS, task, 0);
}

static const WordModelKind ENT_KIND = {"entnet", "EntNet"};

static void ent_free(Entnet *m) {
    if (!m) return;
    ent_work_free(&m->w);
    word_model_release(&m->base);
    free(m);
}

static Entnet *ent_new(const cJSON *config, const Task *task) {
    Entnet *m = xcalloc(1, sizeof *m);
    if (word_model_init(&m->base, &ENT_KIND, config, task, ENT_SETTINGS, NUM_ENT_SETTINGS, &m->cfg) != 0) {
        ent_free(m);
        return NULL;
    }
    m->base.max_len = m->cfg.max_len;
    m->K = task->num_labels;
    return m;
}

#define ENT_INIT 0.1f   /* Henaff et al.: every weight from N(0, 0.1) */

static void ent_build(Entnet *m, uint64_t seed) {
    const EntConfig *c = &m->cfg;
    int V = word_vocab_size(&m->base.vocab), H = c->dim, M = c->blocks;
    m->base.seed = seed;
    Params *p = m->base.params = params_create();
    m->h_emb = params_declare(p, "emb", PARAM_SHAPE(V, H), PARAM_INIT_NORMAL(ENT_INIT), PARAM_SPARSE_ROWS);
    m->h_mask = params_declare(p, "mask", PARAM_SHAPE(c->max_len, H), PARAM_INIT_ONES, PARAM_NO_DECAY);
    m->h_keys = params_declare(p, "keys", PARAM_SHAPE(M, H), PARAM_INIT_NORMAL(ENT_INIT), 0);
    m->h_U = params_declare(p, "mem.U", PARAM_SHAPE(H, H), PARAM_INIT_NORMAL(ENT_INIT), 0);
    m->h_V = params_declare(p, "mem.V", PARAM_SHAPE(H, H), PARAM_INIT_NORMAL(ENT_INIT), 0);
    m->h_W = params_declare(p, "mem.W", PARAM_SHAPE(H, H), PARAM_INIT_NORMAL(ENT_INIT), 0);
    m->h_slope = params_declare(p, "mem.slope", PARAM_SHAPE(H), PARAM_INIT_CALLER, PARAM_NO_DECAY);
    m->h_query = m->base.pair ? -1 : params_declare(p, "query", PARAM_SHAPE(H), PARAM_INIT_NORMAL(ENT_INIT), 0);
    m->h_H = params_declare(p, "out.H", PARAM_SHAPE(H, H), PARAM_INIT_NORMAL(ENT_INIT), 0);
    m->h_oslope = params_declare(p, "out.slope", PARAM_SHAPE(H), PARAM_INIT_CALLER, PARAM_NO_DECAY);
    m->h_out_w = params_declare(p, "out.w", PARAM_SHAPE(m->K, H), PARAM_INIT_NORMAL(ENT_INIT), 0);
    m->h_out_b = params_declare(p, "out.b", PARAM_SHAPE(m->K), PARAM_INIT_ZEROS, PARAM_NO_DECAY);
    word_model_allocate(&m->base, m->h_emb, H, optim_adamw(c->weight_decay));
    for (int k = 0; k < H; k++) params_data(p, m->h_slope)[k] = params_data(p, m->h_oslope)[k] = 0.25f;
}

static Model *ent_create(const cJSON *config, const Task *task, const Dataset *train, uint64_t seed) {
    Entnet *m = ent_new(config, task);
    if (!m) return NULL;
    m->base.pair = word_pair_task(train);
    if (word_vocab_build(&m->base.vocab, train, m->cfg.min_count) != 0) {
        ent_free(m);
        return NULL;
    }
    m->cfg.eval_batch = word_memory_rows_cap(m->cfg.eval_batch, train);
    ent_build(m, seed);
    if (m->K == 1 && train->n > 0)   /* regression starts at the mean */
        params_data(m->base.params, m->h_out_b)[0] = (float)dataset_mean_score(train);
    return (Model *)m;
}

static void ent_free_ops(Model *m) { ent_free((Entnet *)m); }
static Model *ent_new_ops(const cJSON *config, const Task *task) { return (Model *)ent_new(config, task); }
static void ent_build_ops(Model *m, uint64_t seed) { ent_build((Entnet *)m, seed); }
static Model *ent_load(const char *path, const Task *task) {
    return word_model_load(&ENT_KIND, task, path, ent_new_ops, ent_build_ops, ent_free_ops);
}

const ModelOps ENTNET_OPS = {
    .name = "entnet",
    .default_config = ent_default_config,
    .create = ent_create,
    .memory_bytes = entnet_memory_bytes,
    .encode = han_encode,
    .encoded_free = han_encoded_free,
    .forward = ent_forward_ops,
    .backward = ent_backward_ops,
    .update = ent_update_ops,
    .load = ent_load,
    .free = ent_free_ops,
    .length = word_model_length,
    WORD_MODEL_FILE_OPS,
    .settings = ENT_SETTINGS,
    .num_settings = NUM_ENT_SETTINGS,
};
