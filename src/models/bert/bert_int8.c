/* bert_int8.c — BERT inference with int8 weights (see bert_use_int8 in bert.h)
 * and int8 checkpoints (`glue quantize`).
 *
 * What is int8: each encoder layer's four dense products (QKV, attention
 * output, FFN in, FFN out: nearly all of a forward's multiply-adds), through
 * core/gemm_int8 (weights per output row, activations per row, dynamic),
 * each product's inputs optionally smoothed per channel (SmoothQuant factors
 * from `glue quantize --calibrate N`, bert_int8_calibrate.c).
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
 * f32, each layer's four "<product>.input_smooth" (f32, one per input
 * channel: the weights stored are W s, the inputs divided by s; all 1 when
 * not calibrated), and "quantized": {"format": "int8", "version": 2, ...} in
 * the config. Version 1 (before smoothing: no input_smooth) is read as
 * factors of 1, which it meant; a version 2 file missing one, or holding one
 * that is not finite and positive, is refused naming it. A glue that reads
 * only version 1 refuses version 2 by its version. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "core/gemm_int8.h"
#include "models/bert/bert.h"

enum { I8_PER_LAYER = 4, I8_STORED = 6, BERT_INT8_VERSION = 2 };

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

const float *bert_int8_weights(const Bert *m, int l, int j, int *N, int *K) {
    const BertLayer *ly = &m->w.layers[l];
    bert_int8_shape(m, j, N, K);
    return j == 0 ? ly->attn.w_qkv : j == 1 ? ly->attn.w_o : j == 2 ? ly->ffn.w_in : ly->ffn.w_out;
}

float *bert_int8_channels(const Bert *m, float *base, int l, int j) {
    int C = m->cfg.hidden_size, FF = m->cfg.intermediate_size;
    return base + (long)l * (3L * C + FF) + (long)j * C;   /* C, C, C, then FF */
}

/* The smoothing factors of matrix j of layer l, or NULL (none). */
static const float *bert_int8_smooth(const Bert *m, int l, int j) {
    return m->int8_smooth ? bert_int8_channels(m, m->int8_smooth, l, j) : NULL;
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
            const float *W = bert_int8_weights(m, l, j, &N, &K), *s = bert_int8_smooth(m, l, j);
            Int8Weights *p = &m->int8[I8_PER_LAYER * l + j];
            if ((s ? int8_weights_quantize_smoothed(p, W, s, N, K) : int8_weights_quantize(p, W, N, K)) != 0) {
                user_error("the model diverged; retrain it", "layer %d: a dense weight is NaN or infinite, "
                           "which int8 cannot represent", l);
                bert_use_int8(m, 0);
                return -1;
            }
        }
    bert_int8_attach(m);
    return 0;
}

/* The stored index (0..5) of an encoder tensor name that is int8 (its layer
 * in *layer), I8_STORED for the word embeddings, or -1. */
static int bert_int8_stored_index(const char *name, int *layer) {
    if (strcmp(name, BERT_WORD_EMB) == 0) return I8_STORED;
    int end = 0;
    if (sscanf(name, "bert.encoder.layer.%d.%n", layer, &end) != 1 || end == 0) return -1;
    for (int i = 0; i < I8_STORED; i++)
        if (strcmp(name + end, I8_SUFFIX[i]) == 0) return i;
    return -1;
}

/* The stored name of the smoothing factors of matrix j of layer l. */
static void bert_int8_smooth_name(char *out, size_t cap, int l, int j) {
    static const char *const WHERE[I8_PER_LAYER] = {"attention.self", "attention.output.dense", "intermediate.dense",
                                                    "output.dense"};
    snprintf(out, cap, "bert.encoder.layer.%d.%s.input_smooth", l, WHERE[j]);
}

static cJSON *bert_int8_description(const Bert *m) {
    cJSON *q = cJSON_CreateObject();
    cJSON_AddStringToObject(q, "format", "int8");
    cJSON_AddNumberToObject(q, "version", BERT_INT8_VERSION);
    cJSON_AddStringToObject(q, "weights", "encoder dense layers: int8, symmetric, a scale per output row; word "
                            "embeddings stored int8 per row, looked up in fp32");
    cJSON_AddStringToObject(q, "activations", "dynamic: 7-bit unsigned per row with a zero point, each input "
                            "channel k first divided by its smoothing factor s_k (*.input_smooth; the weights' "
                            "column k stored multiplied by it)");
    if (m->int8_calibrated > 0) {
        char what[200];
        snprintf(what, sizeof what, "SmoothQuant (alpha 0.5): s_k = max|x_k|^0.5 / max|W_k|^0.5 over the fp32 "
                 "inputs of %ld training examples, all four products of every layer", m->int8_calibrated);
        cJSON_AddStringToObject(q, "calibration", what);
        cJSON_AddNumberToObject(q, "calibration_examples", (double)m->int8_calibrated);
    } else {
        cJSON_AddStringToObject(q, "calibration", "none: every s_k is 1");
    }
    cJSON_AddStringToObject(q, "fp32", "embedding lookup, LayerNorm, attention scores and softmax, pooler, heads");
    return q;
}

/* W (N, K) times s (K, by column; NULL: 1) quantized per row into q, scale.
 * -1 if not finite. */
static int bert_int8_quantize_smoothed(int8_t *q, float *scale, const float *W, const float *s, int N, int K) {
    if (!s) return int8_quantize_rows(q, scale, W, N, K);
    float *Ws = xmalloc(sizeof(float) * ((size_t)N * (size_t)K + 1));
    for (long n = 0; n < N; n++)
        for (long k = 0; k < K; k++) Ws[n * K + k] = W[n * K + k] * s[k];
    int rc = int8_quantize_rows(q, scale, Ws, N, K);
    free(Ws);
    return rc;
}

/* Every layer's smoothing factors (1 where there are none). */
static int bert_write_smoothing(const Bert *m, CkptWriter *w) {
    float *ones = xmalloc(sizeof(float) * (size_t)(m->cfg.intermediate_size + m->cfg.hidden_size));
    for (int k = 0; k < m->cfg.intermediate_size + m->cfg.hidden_size; k++) ones[k] = 1.0f;
    int rc = 0;
    for (int l = 0; l < m->cfg.num_layers && rc == 0; l++)
        for (int j = 0; j < I8_PER_LAYER && rc == 0; j++) {
            int N, K;
            bert_int8_shape(m, j, &N, &K);
            const float *s = bert_int8_smooth(m, l, j);
            char name[PARAM_NAME_MAX + 32];
            bert_int8_smooth_name(name, sizeof name, l, j);
            rc = checkpoint_write_tensor(w, name, CKPT_F32, (const int[]){K}, 1, s ? s : ones);
        }
    free(ones);
    return rc;
}

/* Every tensor of m: the int8 ones quantized per row with their scales. */
static int bert_write_int8(const Bert *m, CkptWriter *w) {
    const Params *p = m->params;
    for (int h = 0; h < params_num_tensors(p); h++) {
        const ParamTensor *t = params_tensor(p, h);
        const float *data = params_data(p, h);
        int l = 0, i = bert_int8_stored_index(t->name, &l);
        if (i < 0 || t->ndim != 2) {
            if (checkpoint_write_tensor(w, t->name, CKPT_F32, t->shape, t->ndim, data)) return -1;
            continue;
        }
        int N = t->shape[0], K = t->shape[1];
        int8_t *q = xmalloc((size_t)N * (size_t)K + 1);
        float *scale = xmalloc(sizeof(float) * (size_t)N);
        int rc = bert_int8_quantize_smoothed(q, scale, data, i < I8_STORED ? bert_int8_smooth(m, l, I8_MATRIX[i]) : NULL,
                                             N, K);
        if (rc) user_error("the model diverged; retrain it", "%s is NaN or infinite somewhere: no int8 for it", t->name);
        char name[PARAM_NAME_MAX + 8];
        snprintf(name, sizeof name, "%s_scale", t->name);
        rc = rc || checkpoint_write_tensor_i8(w, t->name, t->shape, 2, q) ||
             checkpoint_write_tensor(w, name, CKPT_F32, (const int[]){N}, 1, scale);
        free(q);
        free(scale);
        if (rc) return -1;
    }
    return bert_write_smoothing(m, w);
}

int bert_save_int8(const Bert *m, const char *path, const cJSON *extra, const Vocab *vocab) {
    if (m->int8_stored) {
        user_error_usage("quantize the fp32 run it came from", "the model is already int8 (read from an int8 checkpoint)");
        return -1;
    }
    cJSON *cfg = bert_checkpoint_config(m);
    for (const cJSON *it = extra ? extra->child : NULL; it; it = it->next)
        cJSON_AddItemToObject(cfg, it->string, cJSON_Duplicate(it, 1));
    cJSON_AddItemToObject(cfg, "quantized", bert_int8_description(m));
    CkptWriter *w = checkpoint_writer_open(path, cfg, -1);
    cJSON_Delete(cfg);
    if (!w) return -1;
    size_t len = 0;
    char *text = vocab ? bert_vocab_text(vocab, &len) : NULL;
    int bad = bert_write_int8(m, w) || (text && checkpoint_write_blob(w, BERT_VOCAB_BLOB, text, len));
    free(text);
    return checkpoint_writer_finish(w, bad);
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
        user_error_data(BERT_INT8_HINT, "%s: int8 checkpoint without the int8 tensor %s", c->path, name);
        return NULL;
    }
    strcat(name, "_scale");
    const CkptTensor *s = checkpoint_find_tensor(c, name);
    if (!s || s->dtype != CKPT_F32 || s->ndim != 1 || s->shape[0] != rows) {
        user_error_data(BERT_INT8_HINT, "%s: %s is %s", c->path, name, s ? "malformed (want f32, one per row)" : "missing");
        return NULL;
    }
    if (t->ndim != 2 || t->shape[0] != rows) {
        user_error_data(BERT_INT8_HINT, "%s: %s has another shape than the model's", c->path, tensor);
        return NULL;
    }
    for (long r = 0; r < rows; r++)
        if (!isfinite(s->data[r]) || s->data[r] <= 0.0f) {
            user_error_data(BERT_INT8_HINT, "%s: %s[%ld] is %g: int8 scales are finite and positive", c->path, name, r,
                       (double)s->data[r]);
            return NULL;
        }
    *scale = s->data;
    return t;
}

/* The stored smoothing factors (K) of matrix j of layer l, checked; NULL
 * after a message. */
static const float *bert_int8_stored_smoothing(const Checkpoint *c, int l, int j, int K) {
    char name[PARAM_NAME_MAX + 32];
    bert_int8_smooth_name(name, sizeof name, l, j);
    const CkptTensor *t = checkpoint_find_tensor(c, name);
    if (!t || t->dtype != CKPT_F32 || t->ndim != 1 || t->shape[0] != K) {
        user_error_data(BERT_INT8_HINT, "%s: %s is %s", c->path, name,
                   t ? "malformed (want f32, one per input channel)" : "missing");
        return NULL;
    }
    for (int k = 0; k < K; k++)
        if (!isfinite(t->data[k]) || t->data[k] <= 0.0f || !isfinite(1.0f / t->data[k])) {
            user_error_data(BERT_INT8_HINT, "%s: %s[%d] is %g: smoothing factors are finite and positive", c->path, name,
                       k, (double)t->data[k]);
            return NULL;
        }
    return t->data;
}

/* Packed matrix j of layer l from the stored integers (and, version 2, its
 * smoothing factors, also kept in m->int8_smooth); its fp32 weights (which
 * hold the integers after bert_copy_tensors) become q * scale / s, the
 * model's own weights again. */
static int bert_int8_load_matrix(Bert *m, const Checkpoint *c, int l, int j, int version) {
    int N, K, C = m->cfg.hidden_size;
    float *W = (float *)bert_int8_weights(m, l, j, &N, &K);
    const float *sm = NULL;
    if (version >= 2) {
        if (!(sm = bert_int8_stored_smoothing(c, l, j, K))) return -1;
        if (!m->int8_smooth)
            m->int8_smooth = xmalloc(sizeof(float) * (size_t)m->cfg.num_layers * (3L * C + m->cfg.intermediate_size));
        memcpy(bert_int8_channels(m, m->int8_smooth, l, j), sm, sizeof(float) * (size_t)K);
    }
    int8_t *q = xmalloc((size_t)N * (size_t)K + 1);
    float *scale = xmalloc(sizeof(float) * (size_t)N);
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
            W[r * K + k] = sm ? v * scale[r] / sm[k] : v * scale[r];
        }
    int ones = 1;   /* factors of 1 (not calibrated): no multiply in the quantizer, the same bits */
    for (int k = 0; sm && k < K; k++) ones &= sm[k] == 1.0f;
    if (ones) sm = NULL;
    const char *why = NULL;
    Int8Weights *p = &m->int8[I8_PER_LAYER * l + j];
    if (rc == 0 && (int8_weights_pack(p, q, scale, N, K, &why) != 0 || (sm && int8_weights_set_smoothing(p, sm, &why) != 0))) {
        user_error_data(BERT_INT8_HINT, "%s: layer %d: %s", c->path, l, why);
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
            user_error_data(BERT_INT8_HINT, "%s: %s holds -128 (int8 weights are in [-127, 127])", c->path, BERT_WORD_EMB);
            return -1;
        }
    for (long r = 0; r < V; r++)
        for (long k = 0; k < E; k++) W[r * E + k] *= s[r];
    return 0;
}

int bert_int8_load(Bert *m, const Checkpoint *c) {
    const cJSON *qd = cJSON_GetObjectItemCaseSensitive(c->config, "quantized");
    for (int i = 0; i < c->n_tensors; i++)
        if (c->tensors[i].dtype == CKPT_I8 && (!qd || bert_int8_stored_index(c->tensors[i].name, &(int){0}) < 0)) {
            user_error_data(BERT_INT8_HINT, "%s: tensor %s is int8, which glue stores only for the encoder's dense "
                       "weights of an int8 checkpoint", c->path, c->tensors[i].name);
            return -1;
        }
    if (!qd) return 0;
    const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(qd, "format");
    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(qd, "version");
    if (!cJSON_IsString(fmt) || strcmp(fmt->valuestring, "int8") != 0 || !cJSON_IsNumber(ver)) {
        user_error_data(BERT_INT8_HINT, "%s: \"quantized\" in its config is not glue's int8 format", c->path);
        return -1;
    }
    /* Version 1 (no smoothing) is read as factors of 1, which is what it meant. */
    if (ver->valuedouble != 1 && ver->valuedouble != BERT_INT8_VERSION) {
        user_error_data("read it with the glue that wrote it", "%s: int8 format version %g; this glue reads versions 1 "
                   "to %d", c->path, ver->valuedouble, BERT_INT8_VERSION);
        return -1;
    }
    bert_use_int8(m, 0);
    free(m->int8_smooth);
    m->int8_smooth = NULL;
    if (bert_int8_load_embeddings(m, c) != 0) return -1;
    m->int8 = xcalloc((size_t)(I8_PER_LAYER * m->cfg.num_layers), sizeof *m->int8);
    for (int l = 0; l < m->cfg.num_layers; l++)
        for (int j = 0; j < I8_PER_LAYER; j++)
            if (bert_int8_load_matrix(m, c, l, j, (int)ver->valuedouble) != 0) {
                bert_use_int8(m, 0);
                return -1;
            }
    bert_int8_attach(m);
    m->int8_stored = 1;
    return 0;
}
