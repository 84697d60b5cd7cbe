/* seq2seq.c — the translation model's config, parameters and checkpoints (see
 * seq2seq.h).
 *
 * Parameter names (one Params arena, PyTorch's Linear layout W (out, in)):
 *   embed (V, C); pos (max_len, C) when positions = learned;
 *   enc.<l>.self.{w_qkv (3C, C), b_qkv, w_o (C, C), b_o, ln_g, ln_b}
 *   enc.<l>.ffn.{w_in (FF, C), b_in, w_out (C, FF), b_out, ln_g, ln_b}
 *   enc.<l>.rel_k, enc.<l>.rel_v (2S+1, HS) when positions = lpr
 *   dec.<l>.self.*, dec.<l>.cross.*, dec.<l>.ffn.*, dec.<l>.rel_k, dec.<l>.rel_v
 * Initialisation as fairseq's transformer: Xavier-uniform linear weights (each
 * of the q, k, v blocks as its own C x C matrix), zero biases, LayerNorm 1/0,
 * embeddings N(0, C^-1/2) so that sqrt(C)-scaled embeddings start at unit
 * scale.
 *
 * Checkpoint: config {"model": "seq2seq", "config": {...}}, blob "vocab" (the
 * tokens, one a line: the model carries its vocabulary), the tensors. */
#include "models/seq2seq/seq2seq.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/checkpoint.h"
#include "core/common.h"
#include "models/run_config.h"
#include "nn/positions.h"

#define S2S_MODEL_NAME "seq2seq"
#define S2S_MAX_DIM 65536
#define S2S_MAX_LAYERS 64

S2sConfig s2s_config_default(void) {
    return (S2sConfig){
        .vocab_size = 0, .d_model = 256, .heads = 4, .ffn = 1024, .encoder_layers = 3, .decoder_layers = 3,
        .max_len = 128, .dropout = 0.1f, .attention_dropout = 0.0f, .layer_norm_eps = 1e-5f,
        .positions = S2S_POS_SINUSOID, .lpr_base = 4, .lpr_keys = 1, .lpr_values = 1, .label_smoothing = 0.1f,
    };
}

static const char *const S2S_POS_NAMES[] = {"sinusoid", "learned", "lpr"};
static const char *const S2S_POS_CHOICES[] = {"sinusoid", "learned", "lpr", NULL};

const char *s2s_pos_name(S2sPos p) { return S2S_POS_NAMES[p]; }

/* The model's numeric settings with the ranges the reader enforces: one
 * table, which `glue translate --help-settings` prints (s2s_model_settings).
 * The rules across keys (heads divides d_model; lpr needs lpr_keys or
 * lpr_values) stay in s2s_config_check, and vocab_size, which the
 * vocabulary sets. The defaults: s2s_config_default's. */
#define S2F(field) offsetof(S2sConfig, field)
static const SettingSpec S2S_MODEL_SETTINGS[] = {
    {"d_model", SETTING_INT, S2F(d_model), 256, 2, S2S_MAX_DIM, NULL, NULL},
    {"heads", SETTING_INT, S2F(heads), 4, 1, S2S_MAX_DIM, NULL, NULL},
    {"ffn", SETTING_INT, S2F(ffn), 1024, 1, S2S_MAX_DIM, NULL, NULL},
    {"encoder_layers", SETTING_INT, S2F(encoder_layers), 3, 1, S2S_MAX_LAYERS, NULL, NULL},
    {"decoder_layers", SETTING_INT, S2F(decoder_layers), 3, 1, S2S_MAX_LAYERS, NULL, NULL},
    {"max_len", SETTING_INT, S2F(max_len), 128, 4, 4096, NULL, NULL},
    {"dropout", SETTING_FLOAT_BELOW, S2F(dropout), 0.1, 0, 1, NULL, NULL},
    {"attention_dropout", SETTING_FLOAT_BELOW, S2F(attention_dropout), 0, 0, 1, NULL, NULL},
    {"layer_norm_eps", SETTING_FLOAT, S2F(layer_norm_eps), 1e-5, 1e-30, 1, NULL, NULL},
    {"lpr_base", SETTING_INT, S2F(lpr_base), 4, 1, 1e9, NULL, NULL},
    {"lpr_keys", SETTING_INT, S2F(lpr_keys), 1, 0, 1, NULL, NULL},
    {"lpr_values", SETTING_INT, S2F(lpr_values), 1, 0, 1, NULL, NULL},
    {"label_smoothing", SETTING_FLOAT_BELOW, S2F(label_smoothing), 0.1, 0, 1, NULL, NULL},
    {"positions", SETTING_CHOICE, SETTING_NO_FIELD, 0, 0, 0, "sinusoid", S2S_POS_CHOICES},   /* read below */
};
#undef S2F
enum { S2S_NUM_MODEL_SETTINGS = sizeof S2S_MODEL_SETTINGS / sizeof S2S_MODEL_SETTINGS[0] };

const SettingSpec *s2s_model_settings(int *n) {
    *n = S2S_NUM_MODEL_SETTINGS;
    return S2S_MODEL_SETTINGS;
}

/* Absent keys keep c's values; present ones must be numbers in the table's
 * ranges. */
int s2s_config_from_json(S2sConfig *c, const cJSON *j) {
    SettingsReader r = settings_reader(j, "translation config", "glue translate --help-settings lists the settings");
    c->vocab_size = (int)settings_int(&r, "vocab_size", c->vocab_size, -1e9, 1e9);   /* s2s_config_check: >= 5 */
    for (int i = 0; i < S2S_NUM_MODEL_SETTINGS; i++) {
        const SettingSpec *p = &S2S_MODEL_SETTINGS[i];
        if (p->kind == SETTING_CHOICE) continue;
        char *field = (char *)c + p->offset;
        if (p->kind == SETTING_INT) {
            int *v = (int *)field;
            *v = (int)settings_int(&r, p->key, *v, p->lo, p->hi);
        } else {
            float *v = (float *)field;
            *v = (float)(p->kind == SETTING_FLOAT_BELOW ? settings_real_below(&r, p->key, *v, p->lo, p->hi)
                                                        : settings_real(&r, p->key, *v, p->lo, p->hi));
        }
    }
    if (r.failed) return -1;
    const cJSON *pos = cJSON_GetObjectItemCaseSensitive(j, "positions");
    if (pos) {
        int found = -1;
        for (int i = 0; i < 3 && cJSON_IsString(pos); i++)
            if (strcmp(pos->valuestring, S2S_POS_NAMES[i]) == 0) found = i;
        if (found < 0) {
            user_error("use sinusoid, learned or lpr", "translation config: unknown positions %s",
                       cJSON_IsString(pos) ? pos->valuestring : "(not a string)");
            return -1;
        }
        c->positions = (S2sPos)found;
    }
    return 0;
}

cJSON *s2s_config_to_json(const S2sConfig *c) {
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "vocab_size", c->vocab_size);
    cJSON_AddNumberToObject(j, "d_model", c->d_model);
    cJSON_AddNumberToObject(j, "heads", c->heads);
    cJSON_AddNumberToObject(j, "ffn", c->ffn);
    cJSON_AddNumberToObject(j, "encoder_layers", c->encoder_layers);
    cJSON_AddNumberToObject(j, "decoder_layers", c->decoder_layers);
    cJSON_AddNumberToObject(j, "max_len", c->max_len);
    cJSON_AddNumberToObject(j, "dropout", c->dropout);
    cJSON_AddNumberToObject(j, "attention_dropout", c->attention_dropout);
    cJSON_AddNumberToObject(j, "layer_norm_eps", c->layer_norm_eps);
    cJSON_AddStringToObject(j, "positions", s2s_pos_name(c->positions));
    cJSON_AddNumberToObject(j, "lpr_base", c->lpr_base);
    cJSON_AddNumberToObject(j, "lpr_keys", c->lpr_keys);
    cJSON_AddNumberToObject(j, "lpr_values", c->lpr_values);
    cJSON_AddNumberToObject(j, "label_smoothing", c->label_smoothing);
    return j;
}

int s2s_config_check(const S2sConfig *c) {
    const char *bad = c->vocab_size < 5 ? "vocab_size must be at least 5 (the specials)"
                    : c->d_model < 2 || c->d_model > S2S_MAX_DIM ? "d_model out of range"
                    : c->heads < 1 || c->d_model % c->heads ? "heads must divide d_model"
                    : c->ffn < 1 || c->ffn > S2S_MAX_DIM ? "ffn out of range"
                    : c->encoder_layers < 1 || c->encoder_layers > S2S_MAX_LAYERS ? "encoder_layers out of range"
                    : c->decoder_layers < 1 || c->decoder_layers > S2S_MAX_LAYERS ? "decoder_layers out of range"
                    : c->max_len < 4 || c->max_len > 4096 ? "max_len must be in [4, 4096]"
                    : !(c->dropout >= 0 && c->dropout < 1) ? "dropout must be in [0, 1)"
                    : !(c->attention_dropout >= 0 && c->attention_dropout < 1) ? "attention_dropout must be in [0, 1)"
                    : !(c->layer_norm_eps > 0) ? "layer_norm_eps must be positive"
                    : c->lpr_base < 1 ? "lpr_base must be >= 1"
                    : c->positions == S2S_POS_LPR && !c->lpr_keys && !c->lpr_values
                        ? "positions lpr needs lpr_keys or lpr_values"
                    : !(c->label_smoothing >= 0 && c->label_smoothing < 1) ? "label_smoothing must be in [0, 1)"
                    : NULL;
    if (bad) { user_error(NULL, "translation config: %s", bad); return -1; }
    return 0;
}

/* ---- parameters ---- */

/* Handles of one layer's tensors, in declaration order. */
typedef struct {
    int self[6], cross[6], ffn[6], rel_k, rel_v;
} S2sLayerHandles;

static int s2s_declare(Params *p, const char *prefix, const char *name, const int *shape, int ndim, ParamInit init,
                       int flags) {
    char full[PARAM_NAME_MAX];
    snprintf(full, sizeof full, "%s.%s", prefix, name);
    return params_declare(p, full, shape, ndim, init, flags);
}

static void s2s_declare_attn(Params *p, const char *prefix, int C, int *h) {
    float a = sqrtf(6.0f / (2.0f * C));   /* Xavier for each C x C block */
    h[0] = s2s_declare(p, prefix, "w_qkv", PARAM_SHAPE(3 * C, C), PARAM_INIT_UNIFORM(a), 0);
    h[1] = s2s_declare(p, prefix, "b_qkv", PARAM_SHAPE(3 * C), PARAM_INIT_ZEROS, PARAM_NO_DECAY);
    h[2] = s2s_declare(p, prefix, "w_o", PARAM_SHAPE(C, C), PARAM_INIT_UNIFORM(a), 0);
    h[3] = s2s_declare(p, prefix, "b_o", PARAM_SHAPE(C), PARAM_INIT_ZEROS, PARAM_NO_DECAY);
    h[4] = s2s_declare(p, prefix, "ln_g", PARAM_SHAPE(C), PARAM_INIT_ONES, PARAM_NO_DECAY);
    h[5] = s2s_declare(p, prefix, "ln_b", PARAM_SHAPE(C), PARAM_INIT_ZEROS, PARAM_NO_DECAY);
}

static void s2s_declare_ffn(Params *p, const char *prefix, int C, int FF, int *h) {
    float a = sqrtf(6.0f / (float)(C + FF));
    h[0] = s2s_declare(p, prefix, "w_in", PARAM_SHAPE(FF, C), PARAM_INIT_UNIFORM(a), 0);
    h[1] = s2s_declare(p, prefix, "b_in", PARAM_SHAPE(FF), PARAM_INIT_ZEROS, PARAM_NO_DECAY);
    h[2] = s2s_declare(p, prefix, "w_out", PARAM_SHAPE(C, FF), PARAM_INIT_UNIFORM(a), 0);
    h[3] = s2s_declare(p, prefix, "b_out", PARAM_SHAPE(C), PARAM_INIT_ZEROS, PARAM_NO_DECAY);
    h[4] = s2s_declare(p, prefix, "ln_g", PARAM_SHAPE(C), PARAM_INIT_ONES, PARAM_NO_DECAY);
    h[5] = s2s_declare(p, prefix, "ln_b", PARAM_SHAPE(C), PARAM_INIT_ZEROS, PARAM_NO_DECAY);
}

static void s2s_declare_layer(const Seq2Seq *m, const char *side, int l, int decoder, S2sLayerHandles *h) {
    const S2sConfig *c = &m->cfg;
    int C = c->d_model, HS = C / c->heads, NB = 2 * m->rel_max_bucket + 1;
    char prefix[64];
    memset(h, 0xFF, sizeof *h);   /* -1: not declared */
    snprintf(prefix, sizeof prefix, "%s.%d.self", side, l);
    s2s_declare_attn(m->params, prefix, C, h->self);
    if (decoder) {
        snprintf(prefix, sizeof prefix, "%s.%d.cross", side, l);
        s2s_declare_attn(m->params, prefix, C, h->cross);
    }
    snprintf(prefix, sizeof prefix, "%s.%d.ffn", side, l);
    s2s_declare_ffn(m->params, prefix, C, c->ffn, h->ffn);
    if (c->positions == S2S_POS_LPR) {
        float a = sqrtf(6.0f / (float)(NB + HS));
        snprintf(prefix, sizeof prefix, "%s.%d", side, l);
        if (c->lpr_keys) h->rel_k = s2s_declare(m->params, prefix, "rel_k", PARAM_SHAPE(NB, HS), PARAM_INIT_UNIFORM(a), 0);
        if (c->lpr_values) h->rel_v = s2s_declare(m->params, prefix, "rel_v", PARAM_SHAPE(NB, HS), PARAM_INIT_UNIFORM(a), 0);
    }
}

typedef float *(*S2sMirror)(const Params *, int);

static float *s2s_ptr(const Params *p, int h, S2sMirror get) { return h < 0 ? NULL : get(p, h); }

/* An attention sublayer's six tensors (w_qkv, b_qkv, w_o, b_o, ln_g, ln_b). */
static BlockAttnParams s2s_attn_params(const Params *p, const int *h, S2sMirror get) {
    return (BlockAttnParams){.w_qkv = s2s_ptr(p, h[0], get), .b_qkv = s2s_ptr(p, h[1], get),
                          .w_o = s2s_ptr(p, h[2], get), .b_o = s2s_ptr(p, h[3], get),
                          .ln_g = s2s_ptr(p, h[4], get), .ln_b = s2s_ptr(p, h[5], get)};
}

/* Point a layer struct at the data (or gradient) of its tensors. */
static void s2s_bind_layer(S2sLayer *L, const Params *p, const S2sLayerHandles *h, S2sMirror get) {
    L->self = s2s_attn_params(p, h->self, get);
    L->cross = s2s_attn_params(p, h->cross, get);
    L->ffn = (BlockFfnParams){.w_in = s2s_ptr(p, h->ffn[0], get), .b_in = s2s_ptr(p, h->ffn[1], get),
                           .w_out = s2s_ptr(p, h->ffn[2], get), .b_out = s2s_ptr(p, h->ffn[3], get),
                           .ln_g = s2s_ptr(p, h->ffn[4], get), .ln_b = s2s_ptr(p, h->ffn[5], get)};
    L->rel_k = s2s_ptr(p, h->rel_k, get);
    L->rel_v = s2s_ptr(p, h->rel_v, get);
}

/* The attention core of an LPR self-attention sublayer: nn/attention with the
 * layer's relative tables (ctx = its RelPos). */
static long s2s_rel_scratch(void *ctx, AttnDims d) {
    d.rel = ctx;
    return attention_scratch_size(d);
}

static void s2s_rel_forward(void *ctx, float *out, float *att, unsigned char *mask, const float *q, const float *k,
                            const float *v, AttnDims d, Rng *rng, float *scratch) {
    d.rel = ctx;
    attention_forward(out, att, mask, q, k, v, d, rng, scratch);
}

static void s2s_rel_backward(void *ctx, float *dq, float *dk, float *dv, const float *dout, const float *att,
                             const unsigned char *mask, const float *q, const float *k, const float *v, AttnDims d,
                             float *scratch) {
    d.rel = ctx;
    attention_backward(dq, dk, dv, dout, att, mask, q, k, v, d, scratch);
}

static void s2s_bind_rel(Seq2Seq *m, RelPos **rel, BlockAttnCore **core, const S2sLayer *w, int layers) {
    *rel = xcalloc((size_t)layers, sizeof **rel);
    *core = xcalloc((size_t)layers, sizeof **core);
    for (int l = 0; l < layers; l++) {
        (*rel)[l] = (RelPos){.base = m->cfg.lpr_base, .max_bucket = m->rel_max_bucket, .ak = w[l].rel_k,
                             .av = w[l].rel_v};
        (*core)[l] = (BlockAttnCore){&(*rel)[l], s2s_rel_scratch, s2s_rel_forward, s2s_rel_backward};
    }
}

/* Handles are re-derived by name (cheap, a few dozen tensors). */
static void s2s_find_layer(const Seq2Seq *m, const char *side, int l, S2sLayerHandles *h) {
    static const char *const attn[6] = {"w_qkv", "b_qkv", "w_o", "b_o", "ln_g", "ln_b"};
    static const char *const ffn[6] = {"w_in", "b_in", "w_out", "b_out", "ln_g", "ln_b"};
    char name[PARAM_NAME_MAX];
    for (int i = 0; i < 6; i++) {
        snprintf(name, sizeof name, "%s.%d.self.%s", side, l, attn[i]);
        h->self[i] = params_find(m->params, name);
        snprintf(name, sizeof name, "%s.%d.cross.%s", side, l, attn[i]);
        h->cross[i] = params_find(m->params, name);
        snprintf(name, sizeof name, "%s.%d.ffn.%s", side, l, ffn[i]);
        h->ffn[i] = params_find(m->params, name);
    }
    snprintf(name, sizeof name, "%s.%d.rel_k", side, l);
    h->rel_k = params_find(m->params, name);
    snprintf(name, sizeof name, "%s.%d.rel_v", side, l);
    h->rel_v = params_find(m->params, name);
}

static void s2s_bind(Seq2Seq *m, S2sWeights *w, S2sMirror get) {
    const S2sConfig *c = &m->cfg;
    w->embed = s2s_ptr(m->params, params_find(m->params, "embed"), get);
    w->pos = s2s_ptr(m->params, params_find(m->params, "pos"), get);
    for (int l = 0; l < c->encoder_layers; l++) {
        S2sLayerHandles h;
        s2s_find_layer(m, "enc", l, &h);
        s2s_bind_layer(&w->enc[l], m->params, &h, get);
    }
    for (int l = 0; l < c->decoder_layers; l++) {
        S2sLayerHandles h;
        s2s_find_layer(m, "dec", l, &h);
        s2s_bind_layer(&w->dec[l], m->params, &h, get);
    }
}

void s2s_bind_grads(Seq2Seq *m) {
    s2s_bind(m, &m->g, params_grad);
    for (int l = 0; m->enc_rel && l < m->cfg.encoder_layers; l++) {
        m->enc_rel[l].dak = m->g.enc[l].rel_k;
        m->enc_rel[l].dav = m->g.enc[l].rel_v;
    }
    for (int l = 0; m->dec_rel && l < m->cfg.decoder_layers; l++) {
        m->dec_rel[l].dak = m->g.dec[l].rel_k;
        m->dec_rel[l].dav = m->g.dec[l].rel_v;
    }
}

Seq2Seq *s2s_create(const S2sConfig *cfg, Vocab *vocab, uint64_t seed) {
    if (s2s_config_check(cfg) != 0) return NULL;
    if (vocab_size(vocab) != cfg->vocab_size) {
        user_error(NULL, "translation model: the vocabulary has %d tokens, the config says %d", vocab_size(vocab),
                   cfg->vocab_size);
        return NULL;
    }
    Seq2Seq *m = xcalloc(1, sizeof *m);
    m->cfg = *cfg;
    m->vocab = vocab;
    int C = cfg->d_model;
    m->rel_max_bucket = cfg->positions == S2S_POS_LPR ? relpos_max_bucket(cfg->max_len - 1, cfg->lpr_base) : 0;
    m->params = params_create();
    params_declare(m->params, "embed", PARAM_SHAPE(cfg->vocab_size, C), PARAM_INIT_NORMAL(1.0f / sqrtf((float)C)), 0);
    if (cfg->positions == S2S_POS_LEARNED)
        params_declare(m->params, "pos", PARAM_SHAPE(cfg->max_len, C), PARAM_INIT_NORMAL(1.0f / sqrtf((float)C)), 0);
    S2sLayerHandles h;   /* bound by name below */
    for (int l = 0; l < cfg->encoder_layers; l++) s2s_declare_layer(m, "enc", l, 0, &h);
    for (int l = 0; l < cfg->decoder_layers; l++) s2s_declare_layer(m, "dec", l, 1, &h);
    Rng rng;
    rng_seed(&rng, seed);
    params_allocate(m->params, &rng);
    rng_seed_stream(&m->rng, seed, 1);   /* dropout: its own stream */
    m->w.enc = xcalloc((size_t)cfg->encoder_layers, sizeof(S2sLayer));
    m->w.dec = xcalloc((size_t)cfg->decoder_layers, sizeof(S2sLayer));
    m->g.enc = xcalloc((size_t)cfg->encoder_layers, sizeof(S2sLayer));
    m->g.dec = xcalloc((size_t)cfg->decoder_layers, sizeof(S2sLayer));
    s2s_bind(m, &m->w, params_data);
    if (cfg->positions == S2S_POS_SINUSOID) {
        m->sinusoid = xmalloc(sizeof(float) * (size_t)cfg->max_len * (size_t)C);
        positions_sinusoid(m->sinusoid, cfg->max_len, C);
    }
    if (cfg->positions == S2S_POS_LPR) {
        s2s_bind_rel(m, &m->enc_rel, &m->enc_core, m->w.enc, cfg->encoder_layers);
        s2s_bind_rel(m, &m->dec_rel, &m->dec_core, m->w.dec, cfg->decoder_layers);
    }
    return m;
}

void s2s_free(Seq2Seq *m) {
    if (!m) return;
    s2s_work_free(m->work);
    params_free(m->params);
    vocab_free(m->vocab);
    free(m->w.enc); free(m->w.dec); free(m->g.enc); free(m->g.dec);
    free(m->sinusoid);
    free(m->enc_rel); free(m->dec_rel); free(m->enc_core); free(m->dec_core);
    free(m);
}

/* ---- checkpoints ---- */

int s2s_save(const Seq2Seq *m, const char *path, CkptDtype dtype) {
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "model", S2S_MODEL_NAME);
    cJSON_AddItemToObject(j, "config", s2s_config_to_json(&m->cfg));
    CkptWriter *w = checkpoint_writer_open(path, j, -1);
    cJSON_Delete(j);
    if (!w) return -1;
    size_t len = 0;
    for (int i = 0; i < vocab_size(m->vocab); i++) len += strlen(vocab_token(m->vocab, i)) + 1;
    char *blob = xmalloc(len + 1), *at = blob;
    for (int i = 0; i < vocab_size(m->vocab); i++) {
        const char *t = vocab_token(m->vocab, i);
        size_t n = strlen(t);
        memcpy(at, t, n);
        at[n] = '\n';
        at += n + 1;
    }
    int rc = checkpoint_write_blob(w, "vocab", blob, len);
    free(blob);
    if (rc == 0) rc = checkpoint_write_params(w, m->params, dtype);
    return checkpoint_writer_finish(w, rc);
}

/* The vocabulary stored in a checkpoint. */
static Vocab *s2s_vocab_from_blob(const CkptBlob *b) {
    int n = 0;
    for (size_t i = 0; i < b->size; i++) n += b->data[i] == '\n';
    char *text = xmalloc(b->size + 1);
    memcpy(text, b->data, b->size);
    text[b->size] = '\0';
    const char **toks = xmalloc(sizeof(char *) * (size_t)(n ? n : 1));
    char *s = text;
    for (int i = 0; i < n; i++) {
        char *nl = strchr(s, '\n');
        *nl = '\0';
        toks[i] = s;
        s = nl + 1;
    }
    Vocab *v = n > 0 ? vocab_from_tokens(toks, n) : NULL;
    free(toks);
    free(text);
    return v;
}

/* Config of a translation checkpoint, or -1 after a message. */
static int s2s_checkpoint_config(const Checkpoint *c, S2sConfig *cfg) {
    const cJSON *model = cJSON_GetObjectItemCaseSensitive(c->config, "model");
    const cJSON *conf = cJSON_GetObjectItemCaseSensitive(c->config, "config");
    if (!cJSON_IsString(model) || strcmp(model->valuestring, S2S_MODEL_NAME) != 0 || !cJSON_IsObject(conf)) {
        user_error_data("give a checkpoint written by glue translate train", "%s is not a translation model", c->path);
        return -1;
    }
    *cfg = s2s_config_default();
    return s2s_config_from_json(cfg, conf);
}

Seq2Seq *s2s_load(const char *path) {
    Checkpoint *c = checkpoint_read(path);
    if (!c) return NULL;
    Seq2Seq *m = NULL;
    S2sConfig cfg;
    const CkptBlob *vb = checkpoint_find_blob(c, "vocab");
    if (s2s_checkpoint_config(c, &cfg) == 0) {
        Vocab *v = vb ? s2s_vocab_from_blob(vb) : NULL;
        if (!v) user_error_data(NULL, "%s: the checkpoint has no vocabulary", path);
        else if (!(m = s2s_create(&cfg, v, 0))) vocab_free(v);
        if (m && checkpoint_load_params(c, m->params) != 0) { s2s_free(m); m = NULL; }
    }
    checkpoint_free(c);
    return m;
}

int s2s_load_weights(Seq2Seq *m, const char *path) {
    Checkpoint *c = checkpoint_read(path);
    if (!c) return -1;
    S2sConfig cfg;
    int rc = s2s_checkpoint_config(c, &cfg);
    if (rc == 0) {
        cJSON *a = s2s_config_to_json(&cfg), *b = s2s_config_to_json(&m->cfg);
        if (!cJSON_Compare(a, b, 1)) {
            user_error(NULL, "%s: the checkpoint's model config differs from this run's", path);
            rc = -1;
        }
        cJSON_Delete(a);
        cJSON_Delete(b);
    }
    if (rc == 0) rc = checkpoint_load_params(c, m->params);
    checkpoint_free(c);
    return rc;
}
