/* transformer_clf.c — the Transformer trained from scratch behind ModelOps:
 * its settings, create, load, the ops table. The batch computation lives in
 * transformer_clf_step.c; see transformer_clf.h for the model. Checkpoints and
 * the --resume state are the word models' (word_model_io.h): tensors emb,
 * [cls,] layer<l>.attn.{qkv,o}.{w,b}, layer<l>.attn.ln.{g,b},
 * layer<l>.ffn.{in,out}.{w,b}, layer<l>.ffn.ln.{g,b}, out.w, out.b. */
#include "models/baselines/transformer_clf.h"
#include "models/baselines/word_memory.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "models/baselines/word_pair.h"
#include "models/run_config.h"

/* Defaults, from the peers, not tuned on GLUE's dev sets: 2 layers and Adam
 * at 5e-4 with batch 128 as Chinese-Text-Classification-Pytorch's
 * Transformer; 4 heads of 32 (d = 128) and dropout 0.1 as NeuralClassifier's
 * Transformer; an FFN of 4d (512) and a linear warm-up as Vaswani et al. (the
 * harness's warm-up over the first 10% of the steps, then linear decay, in
 * place of the paper's inverse square root); LayerNorm epsilon 1e-5
 * (PyTorch's). Mean pooling: every token's output counts, the usual readout
 * of an encoder without pretraining; cls is BERT's. Up to 20 epochs as the
 * other word models (the trainer keeps the best on dev), 10 on SST-2. */
static const char *const TF_POOLS[] = {"mean", "cls", NULL};   /* TfPool order */

#define TF(field) offsetof(TfConfig, field)
static const SettingSpec TF_SETTINGS[] = {
    RUN_SETTING_EPOCHS(20),   /* SST-2: 10 */
    RUN_SETTING_LR(5e-4),
    {"batch", SETTING_INT, TF(batch), 128, 1, 1 << 20, NULL, NULL},
    {"eval_batch", SETTING_INT, TF(eval_batch), 128, 1, 1 << 20, NULL, NULL},
    RUN_SETTING_WARMUP(0.1),
    RUN_SETTING_SCHEDULE("linear"),
    RUN_SETTING_GROUP_BY_LENGTH(1),   /* Vaswani et al. batch by approximate length */
    RUN_SETTINGS_LOSS,
    RUN_SETTINGS_DECISION,
    {"weight_decay", SETTING_REAL, TF(weight_decay), 0.0, 0, 1, NULL, NULL},
    {"dim", SETTING_INT, TF(dim), 128, 2, 4096, NULL, NULL},
    {"heads", SETTING_INT, TF(heads), 4, 1, 64, NULL, NULL},
    {"ff", SETTING_INT, TF(ff), 512, 1, 16384, NULL, NULL},
    {"layers", SETTING_INT, TF(layers), 2, 1, TF_MAX_LAYERS, NULL, NULL},
    {"dropout", SETTING_FLOAT_BELOW, TF(dropout), 0.1, 0, 1, NULL, NULL},
    {"attn_dropout", SETTING_FLOAT_BELOW, TF(attn_dropout), 0.1, 0, 1, NULL, NULL},
    {"eps", SETTING_FLOAT, TF(eps), 1e-5, 1e-12, 1, NULL, NULL},
    {"pool", SETTING_CHOICE, TF(pool), 0, 0, 0, "mean", TF_POOLS},
    {"min_count", SETTING_INT, TF(min_count), 1, 1, 1e9, NULL, NULL},
    {"max_len", SETTING_INT, TF(max_len), 128, 1, 1024, NULL, NULL},   /* attention memory grows as its square */
};
#undef TF
#define NUM_TF_SETTINGS ((int)(sizeof TF_SETTINGS / sizeof TF_SETTINGS[0]))

#define TF_HINT "fix the setting (glue finetune ... --set key=value)"

static cJSON *tf_default_config(const Task *task) {
    return word_model_defaults(TF_SETTINGS, NUM_TF_SETTINGS, task, 10);
}

static const WordModelKind TF_KIND = {"transformer", "Transformer"};

static void tf_free(TransformerClf *m) {
    if (!m) return;
    tf_work_free(&m->w, m->cfg.layers);
    word_model_release(&m->base);
    free(m);
}

/* A model with its config parsed and task facts set (NULL after a message). */
static TransformerClf *tf_new(const cJSON *config, const Task *task) {
    TransformerClf *m = xcalloc(1, sizeof *m);
    int failed = word_model_init(&m->base, &TF_KIND, config, task, TF_SETTINGS, NUM_TF_SETTINGS, &m->cfg) != 0;
    if (!failed && m->cfg.dim % m->cfg.heads != 0) {
        user_error_usage(TF_HINT, "transformer: dim %d is not a multiple of heads %d", m->cfg.dim, m->cfg.heads);
        failed = 1;
    }
    if (failed) {
        tf_free(m);
        return NULL;
    }
    m->base.max_len = m->cfg.max_len;
    m->K = task->num_labels;
    return m;
}

/* Xavier uniform for a (out, in) matrix, as the paper's tensor2tensor code. */
static int tf_matrix(Params *p, const char *name, int out, int in) {
    return params_declare(p, name, PARAM_SHAPE(out, in), PARAM_INIT_UNIFORM(sqrtf(6.0f / (float)(in + out))), 0);
}

static int tf_vector(Params *p, const char *name, int n, ParamInit init) {
    return params_declare(p, name, PARAM_SHAPE(n), init, PARAM_NO_DECAY);
}

/* Handles of one layer's tensors, in BlockAttnParams / BlockFfnParams order. */
typedef struct { int qkv_w, qkv_b, o_w, o_b, ln1_g, ln1_b, in_w, in_b, out_w, out_b, ln2_g, ln2_b; } TfLayerHandles;

static void tf_declare_layer(TransformerClf *m, int l, TfLayerHandles *h) {
    Params *p = m->base.params;
    int C = m->cfg.dim, FF = m->cfg.ff;
    char name[64];
#define TF_NAME(fmt) (snprintf(name, sizeof name, "layer%d." fmt, l), name)
    h->qkv_w = params_declare(p, TF_NAME("attn.qkv.w"), PARAM_SHAPE(3 * C, C), PARAM_INIT_UNIFORM(sqrtf(3.0f / C)), 0);
    h->qkv_b = tf_vector(p, TF_NAME("attn.qkv.b"), 3 * C, PARAM_INIT_ZEROS);
    h->o_w = tf_matrix(p, TF_NAME("attn.o.w"), C, C);
    h->o_b = tf_vector(p, TF_NAME("attn.o.b"), C, PARAM_INIT_ZEROS);
    h->ln1_g = tf_vector(p, TF_NAME("attn.ln.g"), C, PARAM_INIT_ONES);
    h->ln1_b = tf_vector(p, TF_NAME("attn.ln.b"), C, PARAM_INIT_ZEROS);
    h->in_w = tf_matrix(p, TF_NAME("ffn.in.w"), FF, C);
    h->in_b = tf_vector(p, TF_NAME("ffn.in.b"), FF, PARAM_INIT_ZEROS);
    h->out_w = tf_matrix(p, TF_NAME("ffn.out.w"), C, FF);
    h->out_b = tf_vector(p, TF_NAME("ffn.out.b"), C, PARAM_INIT_ZEROS);
    h->ln2_g = tf_vector(p, TF_NAME("ffn.ln.g"), C, PARAM_INIT_ONES);
    h->ln2_b = tf_vector(p, TF_NAME("ffn.ln.b"), C, PARAM_INIT_ZEROS);
#undef TF_NAME
}

/* The layer's weights (grad 0) or gradients (grad 1) as the block structs. */
static void tf_bind_layer(TransformerClf *m, int l, const TfLayerHandles *h, int grad) {
    const Params *p = m->base.params;
    float *(*at)(const Params *, int) = grad ? params_grad : params_data;
    BlockAttnParams *a = grad ? &m->attn_g[l] : &m->attn[l];
    BlockFfnParams *f = grad ? &m->ffn_g[l] : &m->ffn[l];
    /* Designated: the inference-only packed copies (bf16, int8) stay NULL. */
    *a = (BlockAttnParams){.w_qkv = at(p, h->qkv_w), .b_qkv = at(p, h->qkv_b), .w_o = at(p, h->o_w),
                           .b_o = at(p, h->o_b), .ln_g = at(p, h->ln1_g), .ln_b = at(p, h->ln1_b)};
    *f = (BlockFfnParams){.w_in = at(p, h->in_w), .b_in = at(p, h->in_b), .w_out = at(p, h->out_w),
                          .b_out = at(p, h->out_b), .ln_g = at(p, h->ln2_g), .ln_b = at(p, h->ln2_b)};
}

static void tf_build(TransformerClf *m, uint64_t seed) {
    const TfConfig *c = &m->cfg;
    int V = word_vocab_size(&m->base.vocab), C = c->dim, L = c->layers;
    m->base.seed = seed;
    m->FC = m->base.pair ? 4 * C : C;
    Params *p = m->base.params = params_create();
    /* N(0, 1/C), times sqrt(C) in the forward: unit-scale inputs, as the
     * sinusoids (fairseq's init for Vaswani's scaling). Sparse rows: the
     * lazy optimizer visits only a step's words. */
    m->h_emb = params_declare(p, "emb", PARAM_SHAPE(V, C), PARAM_INIT_NORMAL(1.0f / sqrtf((float)C)), PARAM_SPARSE_ROWS);
    m->h_cls = c->pool == TF_POOL_CLS ? tf_vector(p, "cls", C, PARAM_INIT_NORMAL(1.0f)) : -1;
    TfLayerHandles h[TF_MAX_LAYERS];
    for (int l = 0; l < L; l++) tf_declare_layer(m, l, &h[l]);
    m->h_out_w = tf_matrix(p, "out.w", m->K, m->FC);
    m->h_out_b = tf_vector(p, "out.b", m->K, PARAM_INIT_ZEROS);
    m->emb = word_model_allocate(&m->base, m->h_emb, C, optim_adamw(c->weight_decay));
    m->cls = m->h_cls >= 0 ? params_data(p, m->h_cls) : NULL;
    for (int l = 0; l < L; l++) {
        tf_bind_layer(m, l, &h[l], 0);
        tf_bind_layer(m, l, &h[l], 1);
    }
    m->out_w = params_data(p, m->h_out_w);
    m->out_b = params_data(p, m->h_out_b);
    tf_work_alloc(m, c->batch > c->eval_batch ? c->batch : c->eval_batch);
}

static Model *tf_create(const cJSON *config, const Task *task, const Dataset *train, uint64_t seed) {
    TransformerClf *m = tf_new(config, task);
    if (!m) return NULL;
    m->base.pair = word_pair_task(train);
    if (word_vocab_build(&m->base.vocab, train, m->cfg.min_count) != 0) {
        tf_free(m);
        return NULL;
    }
    m->cfg.batch = word_memory_rows_cap(m->cfg.batch, train);   /* the workspace's rows */
    m->cfg.eval_batch = word_memory_rows_cap(m->cfg.eval_batch, train);
    tf_build(m, seed);
    if (m->K == 1 && train->n > 0) m->out_b[0] = (float)dataset_mean_score(train);   /* regression starts at the mean */
    return (Model *)m;
}

static void tf_free_ops(Model *m) { tf_free((TransformerClf *)m); }
static Model *tf_new_ops(const cJSON *config, const Task *task) { return (Model *)tf_new(config, task); }
static void tf_build_ops(Model *m, uint64_t seed) { tf_build((TransformerClf *)m, seed); }
static Model *tf_load(const char *path, const Task *task) {
    return word_model_load(&TF_KIND, task, path, tf_new_ops, tf_build_ops, tf_free_ops);
}

static int tf_check_config(const cJSON *config, const Task *task) {
    TransformerClf *m = tf_new(config, task);   /* dim against heads; nothing allocated */
    if (m) tf_free(m);
    return m ? 0 : -1;
}

const ModelOps TRANSFORMER_OPS = {
    .name = "transformer",
    .default_config = tf_default_config,
    .create = tf_create,
    .memory_bytes = transformer_memory_bytes,
    .check_config = tf_check_config,
    .encode = word_model_encode,
    .encoded_free = word_model_encoded_free,
    .forward = tf_forward_ops,
    .backward = tf_backward_ops,
    .update = word_model_update_ops,
    .load = tf_load,
    .free = tf_free_ops,
    .length = word_model_length,
    WORD_MODEL_FILE_OPS,
    .settings = TF_SETTINGS,
    .num_settings = NUM_TF_SETTINGS,
};
