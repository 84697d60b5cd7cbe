/* dpcnn.c — DPCNN behind ModelOps: its settings, create, load, the ops table.
 * The batch computation lives in dpcnn_step.c; see dpcnn.h for the model.
 * Checkpoints and the --resume state are the word models' (word_model_io.h):
 * tensors emb, region.w, region.b, level<l>.conv<1|2>.w/.b, out.w, out.b. */
#include "models/baselines/dpcnn.h"
#include "models/baselines/word_memory.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "models/baselines/word_pair.h"
#include "models/run_config.h"

/* Defaults: the paper's 250 feature maps and width-3 region embedding, with
 * Chinese-Text-Classification-Pytorch's DPCNN settings for the rest (300-d
 * random embeddings, Adam at 1e-3 constant, batch 128, dropout 0.5, up to 20
 * epochs: the trainer keeps the best on dev). The paper's SGD with momentum
 * was tuned for its 100k-document sets; Adam is what the peers ship. max_len
 * 128 words as TextCNN (99th percentile of GLUE texts <= 160 words). */
static const char *const DP_OPTIMIZERS[] = {"adamw", "adadelta", NULL};

#define DP(field) offsetof(DpConfig, field)
static const SettingSpec DP_SETTINGS[] = {
    RUN_SETTING_EPOCHS(20),   /* SST-2: 10, as TextCNN */
    RUN_SETTING_LR(1e-3),
    {"batch", SETTING_INT, DP(batch), 128, 1, 1 << 20, NULL, NULL},
    {"eval_batch", SETTING_INT, DP(eval_batch), 128, 1, 1 << 20, NULL, NULL},
    RUN_SETTING_SCHEDULE("constant"),
    RUN_SETTINGS_LOSS,
    RUN_SETTINGS_DECISION,
    {"optimizer", SETTING_CHOICE, DP(optimizer_index), 0, 0, 0, "adamw", DP_OPTIMIZERS},
    {"weight_decay", SETTING_REAL, DP(weight_decay), 0.0, 0, 1, NULL, NULL},
    {"dim", SETTING_INT, DP(dim), 300, 1, 4096, NULL, NULL},
    {"filters", SETTING_INT, DP(filters), 250, 1, 4096, NULL, NULL},
    {"dropout", SETTING_FLOAT_BELOW, DP(dropout), 0.5, 0, 1, NULL, NULL},
    {"min_count", SETTING_INT, DP(min_count), 1, 1, 1e9, NULL, NULL},
    {"max_len", SETTING_INT, DP(max_len), 128, 1, 100000, NULL, NULL},
};
#undef DP
#define NUM_DP_SETTINGS ((int)(sizeof DP_SETTINGS / sizeof DP_SETTINGS[0]))

static cJSON *dp_default_config(const Task *task) {
    return word_model_defaults(DP_SETTINGS, NUM_DP_SETTINGS, task, 10);
}

static const WordModelKind DP_KIND = {"dpcnn", "DPCNN"};

static void dp_free(Dpcnn *m) {
    if (!m) return;
    dp_work_free(&m->w);
    word_model_release(&m->base);
    free(m);
}

/* A model with its config parsed and task facts set (NULL after a message). */
static Dpcnn *dp_new(const cJSON *config, const Task *task) {
    Dpcnn *m = xcalloc(1, sizeof *m);
    if (word_model_init(&m->base, &DP_KIND, config, task, DP_SETTINGS, NUM_DP_SETTINGS, &m->cfg) != 0) {
        dp_free(m);
        return NULL;
    }
    m->base.max_len = m->cfg.max_len;
    m->K = task->num_labels;
    m->levels = 1;   /* + the downsampling levels that take max_len positions to 1 */
    while ((1L << (m->levels - 1)) < m->cfg.max_len) m->levels++;
    return m;
}

/* The model's kind of random init: Kim's U(-0.25, 0.25) word vectors (as
 * TextCNN), PyTorch's Conv1d / Linear init U(-1/sqrt(fan_in), 1/sqrt(fan_in)). */
#define DP_EMB_INIT 0.25f

static void dp_declare_conv(Dpcnn *m, const char *name, int C, int *hw, int *hb) {
    int F = m->cfg.filters;
    float bound = 1.0f / sqrtf(3.0f * C);
    char key[64];
    snprintf(key, sizeof key, "%s.w", name);
    *hw = params_declare(m->base.params, key, PARAM_SHAPE(F, 3, C), PARAM_INIT_UNIFORM(bound), 0);
    snprintf(key, sizeof key, "%s.b", name);
    *hb = params_declare(m->base.params, key, PARAM_SHAPE(F), PARAM_INIT_UNIFORM(bound), PARAM_NO_DECAY);
}

static void dp_build(Dpcnn *m, uint64_t seed) {
    const DpConfig *c = &m->cfg;
    int V = word_vocab_size(&m->base.vocab), D = c->dim, F = c->filters;
    m->base.seed = seed;
    m->FC = m->base.pair ? 4 * F : F;
    Params *p = m->base.params = params_create();
    /* Sparse rows: a step touches a few hundred of the V rows (lazy optimizer). */
    m->h_emb = params_declare(p, "emb", PARAM_SHAPE(V, D), PARAM_INIT_UNIFORM(DP_EMB_INIT), PARAM_SPARSE_ROWS);
    dp_declare_conv(m, "region", D, &m->h_region_w, &m->h_region_b);
    for (int l = 0; l < m->levels; l++)
        for (int k = 0; k < 2; k++) {
            char name[48];
            snprintf(name, sizeof name, "level%d.conv%d", l, k + 1);
            dp_declare_conv(m, name, F, &m->h_conv_w[l][k], &m->h_conv_b[l][k]);
        }
    float bound = 1.0f / sqrtf((float)m->FC);
    m->h_out_w = params_declare(p, "out.w", PARAM_SHAPE(m->K, m->FC), PARAM_INIT_UNIFORM(bound), 0);
    m->h_out_b = params_declare(p, "out.b", PARAM_SHAPE(m->K), PARAM_INIT_UNIFORM(bound), PARAM_NO_DECAY);
    m->emb = word_model_allocate(&m->base, m->h_emb, D,
                                 c->optimizer_index == 0 ? optim_adamw(c->weight_decay) : optim_adadelta(c->weight_decay));
    m->region_w = params_data(p, m->h_region_w);
    m->region_b = params_data(p, m->h_region_b);
    for (int l = 0; l < m->levels; l++)
        for (int k = 0; k < 2; k++) {
            m->conv_w[l][k] = params_data(p, m->h_conv_w[l][k]);
            m->conv_b[l][k] = params_data(p, m->h_conv_b[l][k]);
        }
    m->out_w = params_data(p, m->h_out_w);
    m->out_b = params_data(p, m->h_out_b);
    dp_work_alloc(m, c->batch > c->eval_batch ? c->batch : c->eval_batch);
}

static Model *dp_create(const cJSON *config, const Task *task, const Dataset *train, uint64_t seed) {
    Dpcnn *m = dp_new(config, task);
    if (!m) return NULL;
    m->base.pair = word_pair_task(train);
    if (word_vocab_build(&m->base.vocab, train, m->cfg.min_count) != 0) {
        dp_free(m);
        return NULL;
    }
    m->cfg.batch = word_memory_rows_cap(m->cfg.batch, train);   /* the workspace's rows */
    m->cfg.eval_batch = word_memory_rows_cap(m->cfg.eval_batch, train);
    dp_build(m, seed);
    if (m->K == 1 && train->n > 0) m->out_b[0] = (float)dataset_mean_score(train);   /* regression starts at the mean */
    return (Model *)m;
}

static void dp_free_ops(Model *m) { dp_free((Dpcnn *)m); }
static Model *dp_new_ops(const cJSON *config, const Task *task) { return (Model *)dp_new(config, task); }
static void dp_build_ops(Model *m, uint64_t seed) { dp_build((Dpcnn *)m, seed); }
static Model *dp_load(const char *path, const Task *task) {
    return word_model_load(&DP_KIND, task, path, dp_new_ops, dp_build_ops, dp_free_ops);
}

const ModelOps DPCNN_OPS = {
    .name = "dpcnn",
    .default_config = dp_default_config,
    .create = dp_create,
    .memory_bytes = dpcnn_memory_bytes,
    .encode = word_model_encode,
    .encoded_free = word_model_encoded_free,
    .forward = dp_forward_ops,
    .backward = dp_backward_ops,
    .update = word_model_update_ops,
    .load = dp_load,
    .free = dp_free_ops,
    .length = word_model_length,
    WORD_MODEL_FILE_OPS,
    .settings = DP_SETTINGS,
    .num_settings = NUM_DP_SETTINGS,
};
