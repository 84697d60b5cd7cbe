/* textcnn.c — TextCNN behind ModelOps: its config (Kim's settings), create,
 * encode, the ops table. The batch computation lives in textcnn_step.c, the
 * checkpoints in textcnn_io.c; see textcnn.h for the model. */
#include "models/baselines/textcnn.h"
#include "models/baselines/word_memory.h"
#include "models/baselines/word_pair.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>

#include "core/common.h"
#include "models/run_config.h"

/* Kim (2014): 300-d embeddings, widths 3, 4, 5 with 100 maps each, dropout 0.5,
 * max-norm 3, minibatch 50, Adadelta (rho 0.95; lr 1 is Zeiler's rule) at a
 * constant rate. Epochs: the trainer keeps the best epoch on dev; SST-2's 67k
 * phrases need fewer passes than the small tasks. max_len 128 words keeps all
 * but a few RTE premises whole (99th percentile of GLUE texts <= 160 words). */
static const char *const TC_EMBEDDINGS[] = {"rand", "static", "non-static", "multichannel", NULL};   /* TcEmbedding order */
static const char *const TC_OPTIMIZERS[] = {"adadelta", "adamw", NULL};   /* or "adamw" (then lr ~1e-3) */

#define TC(field) offsetof(TcConfig, field)
static const SettingSpec TC_SETTINGS[] = {
    RUN_SETTING_EPOCHS(20),   /* SST-2: 10 */
    RUN_SETTING_LR(1.0),
    {"batch", SETTING_INT, TC(batch), 50, 1, 1 << 20, NULL, NULL},
    {"eval_batch", SETTING_INT, TC(eval_batch), 50, 1, 1 << 20, NULL, NULL},
    RUN_SETTING_SCHEDULE("constant"),
    RUN_SETTINGS_LOSS,
    RUN_SETTINGS_DECISION,
    {"optimizer", SETTING_CHOICE, TC(optimizer_index), 0, 0, 0, "adadelta", TC_OPTIMIZERS},
    {"weight_decay", SETTING_REAL, TC(weight_decay), 0.0, 0, 1, NULL, NULL},
    {"dim", SETTING_INT, TC(dim), 0, 0, 4096, NULL, NULL},   /* 0: the vectors file's, or 300 (Kim's) */
    {"filters", SETTING_INT, TC(filters), 100, 1, 4096, NULL, NULL},
    {"dropout", SETTING_FLOAT_BELOW, TC(dropout), 0.5, 0, 1, NULL, NULL},
    {"max_norm", SETTING_FLOAT, TC(max_norm), 3.0, 0, 1e30, NULL, NULL},
    {"min_count", SETTING_INT, TC(min_count), 1, 1, 1e9, NULL, NULL},
    {"max_len", SETTING_INT, TC(max_len), 128, 1, 100000, NULL, NULL},
    {"embedding", SETTING_CHOICE, TC(embedding), 0, 0, 0, "rand", TC_EMBEDDINGS},   /* all but rand need vectors */
    {"vectors", SETTING_STRING, TC(vectors), 0, 0, 0, "", NULL},   /* a .vec file of dim-sized vectors */
};
#undef TC
#define NUM_TC_SETTINGS ((int)(sizeof TC_SETTINGS / sizeof TC_SETTINGS[0]))

static cJSON *tc_default_config(const Task *task) {
    cJSON *c = word_model_defaults(TC_SETTINGS, NUM_TC_SETTINGS, task, 10);
    cJSON_AddItemToObject(c, "windows", cJSON_CreateIntArray((const int[]){3, 4, 5}, 3));
    return c;
}

#define TC_HINT "fix the setting (glue finetune ... --set key=value)"

static int tc_windows(const cJSON *j, TcConfig *c) {
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(j, "windows");
    int n = cJSON_IsArray(a) ? cJSON_GetArraySize(a) : 0;
    if (n < 1 || n > TC_MAX_WINDOWS) {
        user_error_usage(TC_HINT, "textcnn: windows must be a list of 1 to %d filter widths, e.g. [3,4,5]", TC_MAX_WINDOWS);
        return -1;
    }
    c->num_windows = n;
    c->max_window = 0;
    for (int i = 0; i < n; i++) {
        const cJSON *w = cJSON_GetArrayItem(a, i);
        double v = cJSON_IsNumber(w) ? w->valuedouble : 0;
        if (!(v >= 1 && v <= TC_MAX_WIDTH) || v != floor(v)) {
            user_error_usage(TC_HINT, "textcnn: window widths must be whole numbers in 1..%d", TC_MAX_WIDTH);
            return -1;
        }
        c->window[i] = (int)v;
        if (c->window[i] > c->max_window) c->max_window = c->window[i];
    }
    return 0;
}

int tc_config_parse(const cJSON *j, TcConfig *c) {
    memset(c, 0, sizeof *c);
    SettingsReader s = settings_reader(j, "textcnn", TC_HINT);
    settings_table_read(&s, TC_SETTINGS, NUM_TC_SETTINGS, c);
    if (s.failed || tc_windows(j, c)) return -1;
    c->optimizer = c->optimizer_index == 0 ? OPTIM_ADADELTA : OPTIM_ADAMW;
    c->channels = c->embedding == TC_EMB_MULTICHANNEL ? 2 : 1;
    if ((c->embedding == TC_EMB_RAND) != (c->vectors[0] == '\0')) {
        user_error_usage("set embedding=static, non-static or multichannel together with vectors=FILE.vec, or neither",
                   c->embedding == TC_EMB_RAND ? "textcnn: vectors given but embedding is rand"
                                               : "textcnn: embedding %s needs a vectors file", TC_EMBEDDINGS[c->embedding]);
        return -1;
    }
    return 0;
}

/* Kim's random init of word vectors: U(-0.25, 0.25), about the variance of
 * word2vec's pre-trained vectors. */
#define TC_EMB_INIT 0.25f

void tc_build(TextCnn *m, uint64_t seed) {
    const TcConfig *c = &m->cfg;
    int V = word_vocab_size(&m->base.vocab), D = c->dim, F = c->filters;
    m->base.seed = seed;
    m->H = c->num_windows * F;
    m->FC = m->base.pair ? 4 * m->H : m->H;
    Params *p = m->base.params = params_create();
    /* Sparse rows: a step touches a few hundred of the V rows; the optimizer
     * visits only those (lazy), and the padding row is never touched. */
    m->h_emb = params_declare(p, "emb", PARAM_SHAPE(V, D), PARAM_INIT_UNIFORM(TC_EMB_INIT), PARAM_SPARSE_ROWS);
    /* The frozen channel: no gradient is ever written, so no row is touched
     * and the (lazy) optimizer never moves it; tc_create copies "emb" in. */
    m->h_emb_static = c->channels == 2 ? params_declare(p, "emb_static", PARAM_SHAPE(V, D), PARAM_INIT_CALLER,
                                                        PARAM_SPARSE_ROWS)
                                       : -1;
    for (int k = 0; k < c->num_windows; k++) {
        /* PyTorch's Conv1d/Conv2d init: U(-1/sqrt(fan_in), 1/sqrt(fan_in)), fan_in = W * C */
        float bound = 1.0f / sqrtf((float)(c->window[k] * tc_width(c)));
        char name[64];
        snprintf(name, sizeof name, "conv%d.w", k);
        m->h_conv_w[k] = params_declare(p, name, PARAM_SHAPE(F, c->window[k], tc_width(c)), PARAM_INIT_UNIFORM(bound), 0);
        snprintf(name, sizeof name, "conv%d.b", k);
        m->h_conv_b[k] = params_declare(p, name, PARAM_SHAPE(F), PARAM_INIT_UNIFORM(bound), PARAM_NO_DECAY);
    }
    /* Kim's code starts the softmax layer at zero. */
    m->h_out_w = params_declare(p, "out.w", PARAM_SHAPE(m->K, m->FC), PARAM_INIT_ZEROS, 0);
    m->h_out_b = params_declare(p, "out.b", PARAM_SHAPE(m->K), PARAM_INIT_ZEROS, PARAM_NO_DECAY);
    m->emb = word_model_allocate(&m->base, m->h_emb, D, c->optimizer == OPTIM_ADAMW ? optim_adamw(c->weight_decay)
                                                                                    : optim_adadelta(c->weight_decay));
    m->emb_static = c->channels == 2 ? params_data(p, m->h_emb_static) : NULL;
    for (int k = 0; k < c->num_windows; k++) {
        m->conv_w[k] = params_data(p, m->h_conv_w[k]);
        m->conv_b[k] = params_data(p, m->h_conv_b[k]);
    }
    m->out_w = params_data(p, m->h_out_w);
    m->out_b = params_data(p, m->h_out_b);
    tc_work_alloc(m);
}

void tc_free(TextCnn *m) {
    if (!m) return;
    tc_work_free(&m->w);
    word_model_release(&m->base);
    free(m);
}

const WordModelKind TC_KIND = {"textcnn", "TextCNN"};

TextCnn *tc_new(const cJSON *config, const Task *task) {
    TextCnn *m = xcalloc(1, sizeof *m);
    m->base.kind = &TC_KIND;
    m->base.config = cJSON_Duplicate(config, 1);
    if (tc_config_parse(m->base.config, &m->cfg) != 0) {
        tc_free(m);
        return NULL;
    }
    m->base.task = task;
    m->base.max_len = m->cfg.max_len;
    m->K = task->num_labels;
    return m;
}

/* dim 0: the size of the vectors (so a file of any size loads without
 * --set dim), or Kim's 300 for rand. The size is written into the config, so
 * the checkpoint and a loaded model have it. */
#define TC_RAND_DIM 300

static int tc_resolve_dim(TextCnn *m) {
    if (m->cfg.dim > 0) return 0;
    int d = m->cfg.embedding == TC_EMB_RAND ? TC_RAND_DIM : word_vectors_dim(m->cfg.vectors);
    if (d < 0) return -1;
    if (d > 4096) {
        user_error_usage(TC_HINT, "textcnn: %s has %d-dimensional vectors, more than 4096", m->cfg.vectors, d);
        return -1;
    }
    m->cfg.dim = d;
    cJSON_ReplaceItemInObjectCaseSensitive(m->base.config, "dim", cJSON_CreateNumber(d));
    return 0;
}

static Model *tc_create(const cJSON *config, const Task *task, const Dataset *train, uint64_t seed) {
    TextCnn *m = tc_new(config, task);
    if (!m) return NULL;
    m->base.pair = word_pair_task(train);
    if (tc_resolve_dim(m) != 0) {
        tc_free(m);
        return NULL;
    }
    if (word_vocab_build(&m->base.vocab, train, m->cfg.min_count) != 0) {
        tc_free(m);
        return NULL;
    }
    m->cfg.batch = word_memory_rows_cap(m->cfg.batch, train);   /* the workspace's rows */
    m->cfg.eval_batch = word_memory_rows_cap(m->cfg.eval_batch, train);
    tc_build(m, seed);
    if (m->cfg.embedding != TC_EMB_RAND &&
        word_vectors_load(&m->base.vocab, m->cfg.vectors, m->emb, m->cfg.dim, NULL) != 0) {
        tc_free(m);
        return NULL;
    }
    if (m->emb_static)   /* both channels start from the same vectors (and the same random rows) */
        memcpy(m->emb_static, m->emb, (size_t)word_vocab_size(&m->base.vocab) * m->cfg.dim * sizeof *m->emb);
    if (m->K == 1 && train->n > 0) m->out_b[0] = (float)dataset_mean_score(train);   /* regression starts at the mean */
    return (Model *)m;
}

static void tc_free_ops(Model *m) { tc_free((TextCnn *)m); }

static int tc_check_config(const cJSON *config, const Task *task) {
    TcConfig c;
    return tc_config_parse(config, &c);   /* the windows, and embedding with vectors */
}

const ModelOps TEXTCNN_OPS = {
    .name = "textcnn",
    .default_config = tc_default_config,
    .create = tc_create,
    .memory_bytes = textcnn_memory_bytes,
    .check_config = tc_check_config,
    .encode = word_model_encode,
    .encoded_free = word_model_encoded_free,
    .forward = tc_forward_ops,
    .backward = tc_backward_ops,
    .update = tc_update_ops,
    .load = tc_load,
    .free = tc_free_ops,
    .length = word_model_length,
    WORD_MODEL_FILE_OPS,
    .settings = TC_SETTINGS,
    .num_settings = NUM_TC_SETTINGS,
};
