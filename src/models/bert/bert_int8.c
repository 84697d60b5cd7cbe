/* bert_int8.c — BERT inference with int8 weights (see bert_use_int8 in bert.h)
 * and int8 checkpoints (`glue quantize`).
 *
 * What is int8: each encoder layer's four dense products (QKV, attention
 * output, FFN in, FFN out: nearly all of a forward's multiply-adds), through
 * core/gemm_int8 (weights per output row, activations per row, dynamic).
 * What stays fp32: embeddings, LayerNorms, the attention's per-head score and
 * context products and its softmax (activations by activations, a small share
 * of the FLOPs at classification lengths), the pooler and the heads (one row
 * per sentence). The packed copies hang off the layer structs the transformer
 * sublayers read (BlockAttnParams / BlockFfnParams int8_* fields).
 *
 * The checkpoint: bert_io's layout with the six stored dense weights of each
 * layer (query, key, value, attention output, intermediate, output) and the
 * word embedding table (a third of BERT-base's parameters, most of a small
 * model's; read back dequantized into fp32, the lookup stays fp32) as int8
 * tensors (core/checkpoint.h CKPT_I8, which makes the file format version 2:
 * an older glue refuses it by that version) plus "<name>_scale" (rows) in
 * f32, and "quantized": {"format": "int8", "version": 1, ...} in the config. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "core/gemm_int8.h"
#include "models/bert/bert.h"

enum { I8_PER_LAYER = 4, I8_STORED = 6, BERT_INT8_VERSION = 1 };

/* The stored tensors of a layer, and which packed matrix (0 QKV, 1 attention
 * output, 2 FFN in, 3 FFN out) each belongs to: query, key, value are the
 * QKV matrix's row blocks in that order (bert.c declares them adjacent). */
static const char *const I8_SUFFIX[I8_STORED] = {
    "attention.self.query.weight", "attention.self.key.weight", "attention.self.value.weight",
    "attention.output.dense.weight", "intermediate.dense.weight", "output.dense.weight"};
static const int I8_MATRIX[I8_STORED] = {0, 0, 0, 1, 2, 3};

#define BERT_WORD_EMB "bert.embeddings.word_embeddings.weight"
#define BERT_INT8_HINT "quantize the fp32 run again: glue quantize RUN_DIR"

static void bert_int8_attach(Bert *m) {
    for (int l = 0; l < m->cfg.num_layers; l++) {
        BertLayer *ly = &m->w.layers[l];
        Int8Weights *p = m->int8 ? &m->int8[I8_PER_LAYER * l] : NULL;
        ly->attn.int8_qkv = p ? &p[0] : NULL;
        ly->attn.int8_o = p ? &p[1] : NULL;
        ly->ffn.int8_in = p ? &p[2] : NULL;
        ly->ffn.int8_out = p ? &p[3] : NULL;
    }
}

/* Rows and inputs of packed matrix j (C hidden, FF intermediate). */
static void bert_int8_shape(const Bert *m, int j, int *N, int *K) {
    int C = m->cfg.hidden_size, FF = m->cfg.intermediate_size;
    *N = j == 0 ? 3 * C : j == 2 ? FF : C;
    *K = j == 3 ? FF : C;
}

static const float *bert_int8_weights(const Bert *m, int l, int j) {
    const BertLayer *ly = &m->w.layers[l];
    return j == 0 ? ly->attn.w_qkv : j == 1 ? ly->attn.w_o : j == 2 ? ly->ffn.w_in : ly->ffn.w_out;
}

int bert_use_int8(Bert *m, int on) {
    int L = m->cfg.num_layers;
    if (on && m->int8 && m->int8_stored) return 0;   /* the stored integers, not a re-quantization */
    if (m->int8) {
        m->int8_stored = 0;
        for (int i = 0; i < I8_PER_LAYER * L; i++) int8_weights_free(&m->int8[i]);
        free(m->int8);
        m->int8 = NULL;
        bert_int8_attach(m);
    }
    if (!on) return 0;
    m->int8 = xcalloc((size_t)(I8_PER_LAYER * L), sizeof *m->int8);
    for (int l = 0; l < L; l++)
        for (int j = 0; j < I8_PER_LAYER; j++) {
            int N, K;
            bert_int8_shape(m, j, &N, &K);
            if (int8_weights_quantize(&m->int8[I8_PER_LAYER * l + j], bert_int8_weights(m, l, j), N, K) != 0) {
                user_error("the model diverged; retrain it", "layer %d: a dense weight is NaN or infinite, "
                           "which int8 cannot represent", l);
                bert_use_int8(m, 0);
                return -1;
            }
        }
    bert_int8_attach(m);
    return 0;
}

/* The stored index (0..5) of an encoder tensor name that is int8, I8_STORED
 * for the word embeddings, or -1. */
static int bert_int8_stored_index(const char *name) {
    if (strcmp(name, BERT_WORD_EMB) == 0) return I8_STORED;
    int layer, end = 0;
    if (sscanf(name, "bert.encoder.layer.%d.%n", &layer, &end) != 1 || end == 0) return -1;
    for (int i = 0; i < I8_STORED; i++)
        if (strcmp(name + end, I8_SUFFIX[i]) == 0) return i;
    return -1;
}

static cJSON *bert_int8_description(void) {
    cJSON *q = cJSON_CreateObject();
    cJSON_AddStringToObject(q, "format", "int8");
    cJSON_AddNumberToObject(q, "version", BERT_INT8_VERSION);
    cJSON_AddStringToObject(q, "weights", "encoder dense layers: int8, symmetric, a scale per output row");
    cJSON_AddStringToObject(q, "activations", "dynamic: 7-bit unsigned per row with a zero point");
    cJSON_AddStringToObject(q, "fp32", "embeddings, LayerNorm, attention scores and softmax, pooler, heads");
    return q;
}

/* Every tensor of m: the int8 ones quantized per row with their scales. */
static int bert_write_int8(const Bert *m, CkptWriter *w) {
    const Params *p = m->params;
    for (int h = 0; h < params_num_tensors(p); h++) {
        const ParamTensor *t = params_tensor(p, h);
        const float *data = params_data(p, h);
        if (bert_int8_stored_index(t->name) < 0 || t->ndim != 2) {
            if (checkpoint_write_tensor(w, t->name, CKPT_F32, t->shape, t->ndim, data)) return -1;
            continue;
        }
        int N = t->shape[0], K = t->shape[1];
        int8_t *q = xmalloc((size_t)N * (size_t)K + 1);
        float *scale = xmalloc(sizeof(float) * (size_t)N);
        int rc = int8_quantize_rows(q, scale, data, N, K);
        if (rc) user_error("the model diverged; retrain it", "%s is NaN or infinite somewhere: no int8 for it", t->name);
        char name[PARAM_NAME_MAX + 8];
        snprintf(name, sizeof name, "%s_scale", t->name);
        rc = rc || checkpoint_write_tensor_i8(w, t->name, t->shape, 2, q) ||
             checkpoint_write_tensor(w, name, CKPT_F32, (const int[]){N}, 1, scale);
        free(q);
        free(scale);
        if (rc) return -1;
    }
    return 0;
}

int bert_save_int8(const Bert *m, const char *path, const cJSON *extra, const Vocab *vocab) {
    if (m->int8_stored) {
        user_error_usage("quantize the fp32 run it came from", "the model is already int8 (read from an int8 checkpoint)");
        return -1;
    }
    cJSON *cfg = bert_checkpoint_config(m);
    for (const cJSON *it = extra ? extra->child : NULL; it; it = it->next)
        cJSON_AddItemToObject(cfg, it->string, cJSON_Duplicate(it, 1));
    cJSON_AddItemToObject(cfg, "quantized", bert_int8_description());
    CkptWriter *w = checkpoint_writer_open(path, cfg, -1);
    cJSON_Delete(cfg);
    if (!w) return -1;
    size_t len = 0;
    char *text = vocab ? bert_vocab_text(vocab, &len) : NULL;
    int bad = bert_write_int8(m, w) || (text && checkpoint_write_blob(w, BERT_VOCAB_BLOB, text, len));
    free(text);
    if (bad) {
        checkpoint_writer_abort(w);
        return -1;
    }
    return checkpoint_writer_commit(w);
}

int bert_checkpoint_is_int8(const Checkpoint *c) {
    return cJSON_GetObjectItemCaseSensitive(c->config, "quantized") != NULL;
}

/* The stored tensor i of layer l: its int8 values (a float copy of them,
 * already in the model's param) and row scales, checked. NULL after a message. */
static const CkptTensor *bert_int8_stored(const Checkpoint *c, const char *tensor, long rows, const float **scale) {
    char name[PARAM_NAME_MAX + 8];
    snprintf(name, sizeof name, "%s", tensor);
    const CkptTensor *t = checkpoint_find_tensor(c, name);
    if (!t || t->dtype != CKPT_I8) {
        user_error(BERT_INT8_HINT, "%s: int8 checkpoint without the int8 tensor %s", c->path, name);
        return NULL;
    }
    strcat(name, "_scale");
    const CkptTensor *s = checkpoint_find_tensor(c, name);
    if (!s || s->dtype != CKPT_F32 || s->ndim != 1 || s->shape[0] != rows) {
        user_error(BERT_INT8_HINT, "%s: %s is %s", c->path, name, s ? "malformed (want f32, one per row)" : "missing");
        return NULL;
    }
    if (t->ndim != 2 || t->shape[0] != rows) {
        user_error(BERT_INT8_HINT, "%s: %s has another shape than the model's", c->path, tensor);
        return NULL;
    }
    for (long r = 0; r < rows; r++)
        if (!isfinite(s->data[r]) || s->data[r] <= 0.0f) {
            user_error(BERT_INT8_HINT, "%s: %s[%ld] is %g: int8 scales are finite and positive", c->path, name, r,
                       (double)s->data[r]);
            return NULL;
        }
    *scale = s->data;
    return t;
}

/* Packed matrix j of layer l from the stored integers; its fp32 weights (which
 * hold the integers after bert_copy_tensors) become q * scale. */
static int bert_int8_load_matrix(Bert *m, const Checkpoint *c, int l, int j) {
    int N, K, C = m->cfg.hidden_size;
    bert_int8_shape(m, j, &N, &K);
    int8_t *q = xmalloc((size_t)N * (size_t)K + 1);
    float *scale = xmalloc(sizeof(float) * (size_t)N);
    float *W = (float *)bert_int8_weights(m, l, j);
    int rc = 0;
    for (int i = 0; i < I8_STORED && rc == 0; i++) {
        if (I8_MATRIX[i] != j) continue;
        int r0 = j == 0 ? i * C : 0, rows = j == 0 ? C : N;
        const float *s = NULL;
        char name[PARAM_NAME_MAX];
        snprintf(name, sizeof name, "bert.encoder.layer.%d.%s", l, I8_SUFFIX[i]);
        if (!bert_int8_stored(c, name, rows, &s)) { rc = -1; break; }
        memcpy(scale + r0, s, sizeof(float) * (size_t)rows);
    }
    for (long r = 0; r < N && rc == 0; r++)
        for (long k = 0; k < K; k++) {
            float v = W[r * K + k];
            q[r * K + k] = (int8_t)v;
            W[r * K + k] = v * scale[r];
        }
    const char *why = NULL;
    if (rc == 0 && int8_weights_pack(&m->int8[I8_PER_LAYER * l + j], q, scale, N, K, &why) != 0) {
        user_error(BERT_INT8_HINT, "%s: layer %d: %s", c->path, l, why);
        rc = -1;
    }
    free(q);
    free(scale);
    return rc;
}

/* The word embeddings, when stored in int8 (the param holds the integers
 * after bert_copy_tensors): dequantized in place. 0, or -1 after a message. */
static int bert_int8_load_embeddings(Bert *m, const Checkpoint *c) {
    const CkptTensor *t = checkpoint_find_tensor(c, BERT_WORD_EMB);
    if (!t || t->dtype != CKPT_I8 || m->emb_donor) return 0;
    const float *s = NULL;
    long V = m->cfg.vocab_size, E = t->ndim == 2 ? t->shape[1] : 0;
    if (!bert_int8_stored(c, BERT_WORD_EMB, V, &s)) return -1;
    float *W = m->w.word_emb;
    for (long i = 0; i < V * E; i++)
        if (W[i] < -127.0f) {
            user_error(BERT_INT8_HINT, "%s: %s holds -128 (int8 weights are in [-127, 127])", c->path, BERT_WORD_EMB);
            return -1;
        }
    for (long r = 0; r < V; r++)
        for (long k = 0; k < E; k++) W[r * E + k] *= s[r];
    return 0;
}

int bert_int8_load(Bert *m, const Checkpoint *c) {
    const cJSON *qd = cJSON_GetObjectItemCaseSensitive(c->config, "quantized");
    for (int i = 0; i < c->n_tensors; i++)
        if (c->tensors[i].dtype == CKPT_I8 && (!qd || bert_int8_stored_index(c->tensors[i].name) < 0)) {
            user_error(BERT_INT8_HINT, "%s: tensor %s is int8, which glue stores only for the encoder's dense "
                       "weights of an int8 checkpoint", c->path, c->tensors[i].name);
            return -1;
        }
    if (!qd) return 0;
    const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(qd, "format");
    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(qd, "version");
    if (!cJSON_IsString(fmt) || strcmp(fmt->valuestring, "int8") != 0 || !cJSON_IsNumber(ver)) {
        user_error(BERT_INT8_HINT, "%s: \"quantized\" in its config is not glue's int8 format", c->path);
        return -1;
    }
    if (ver->valuedouble != BERT_INT8_VERSION) {
        user_error("read it with the glue that wrote it", "%s: int8 format version %g; this glue reads version %d",
                   c->path, ver->valuedouble, BERT_INT8_VERSION);
        return -1;
    }
    bert_use_int8(m, 0);
    if (bert_int8_load_embeddings(m, c) != 0) return -1;
    m->int8 = xcalloc((size_t)(I8_PER_LAYER * m->cfg.num_layers), sizeof *m->int8);
    for (int l = 0; l < m->cfg.num_layers; l++)
        for (int j = 0; j < I8_PER_LAYER; j++)
            if (bert_int8_load_matrix(m, c, l, j) != 0) {
                bert_use_int8(m, 0);
                return -1;
            }
    bert_int8_attach(m);
    m->int8_stored = 1;
    return 0;
}
