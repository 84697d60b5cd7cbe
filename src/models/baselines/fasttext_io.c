/* fasttext_io.c — fastText checkpoints through the checkpoint module
 * (core/checkpoint.h: compressed, CRC-checked, written atomically).
 *
 * Contents:
 *   config   {"model": "fasttext", "task": ..., "num_labels": K, "config": {...}}
 *   blobs    "seed" (u64: bucket rows unseen so far get their init from it),
 *            "words" (the vocabulary, NUL-terminated, id order), "counts" (i64, V),
 *            "label_count" (i64, K: rebuilds the Huffman tree), "bucket_rows"
 *            (i32: the hashed rows that were ever used, ascending)
 *   tensors  "wi_words" (V, C); "wi_buckets.<k>" (<= FT_SAVE_ROWS, C), the used
 *            bucket rows in the order of "bucket_rows"; "wo" (out_rows, C); "bias" (1)
 * Only used rows are stored: the 2M-row hash table of a bigram model costs what its
 * n-grams use, not 800 MB.
 * A product-quantized model (`glue quantize`) has "quantized" (its settings and
 * format version) in the config and codes instead of "wi_*" / "wo"
 * (fasttext_io_pq.c); its codes are int8 tensors, so the file is of version 2
 * and a glue from before int8 checkpoints refuses it by that version. */
#include "models/baselines/fasttext.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/checkpoint.h"
#include "core/common.h"

/* Bucket rows per stored tensor: bounds the gather buffer at save. */
#define FT_SAVE_ROWS 65536

static cJSON *ft_checkpoint_config(const FastText *m) {
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "model", FASTTEXT_OPS.name);
    cJSON_AddStringToObject(j, "task", m->task->name);
    cJSON_AddNumberToObject(j, "num_labels", m->K);
    cJSON_AddItemToObject(j, "config", cJSON_Duplicate(m->config, 1));
    if (m->quantized) cJSON_AddItemToObject(j, "quantized", ft_quant_config_json(&m->qcfg));
    return j;
}

static int ft_write_blobs(CkptWriter *w, const FastText *m, const int32_t *bucket_rows, long nb) {
    const StrMap *map = &m->dict.map;
    int V = word_dict_size(&m->dict), rc = 0;
    rc |= checkpoint_write_blob(w, "seed", &m->cfg.seed, sizeof m->cfg.seed);
    rc |= checkpoint_write_blob(w, "words", map->chars, map->chars_len);   /* ids in insertion order */
    rc |= checkpoint_write_blob(w, "counts", m->dict.count, (size_t)V * sizeof *m->dict.count);
    if (m->label_count)
        rc |= checkpoint_write_blob(w, "label_count", m->label_count, (size_t)m->K * sizeof *m->label_count);
    rc |= checkpoint_write_blob(w, "bucket_rows", bucket_rows, (size_t)nb * sizeof *bucket_rows);
    return rc ? -1 : 0;
}

static int ft_write_tensors(CkptWriter *w, const FastText *m, const int32_t *bucket_rows, long nb) {
    int C = m->cfg.dim, V = word_dict_size(&m->dict), rc = 0;
    rc |= checkpoint_write_tensor(w, "wi_words", CKPT_F32, (int[]){V, C}, 2, m->wi);
    float *buf = xmalloc((size_t)(nb < FT_SAVE_ROWS ? (nb ? nb : 1) : FT_SAVE_ROWS) * (size_t)C * sizeof *buf);
    for (long k = 0; k * FT_SAVE_ROWS < nb && rc == 0; k++) {
        long lo = k * FT_SAVE_ROWS, n = nb - lo < FT_SAVE_ROWS ? nb - lo : FT_SAVE_ROWS;
        for (long i = 0; i < n; i++)
            memcpy(buf + i * C, m->wi + (size_t)bucket_rows[lo + i] * C, (size_t)C * sizeof *buf);
        char name[64];
        snprintf(name, sizeof name, "wi_buckets.%ld", k);
        rc |= checkpoint_write_tensor(w, name, CKPT_F32, (int[]){(int)n, C}, 2, buf);
    }
    free(buf);
    rc |= checkpoint_write_tensor(w, "wo", CKPT_F32, (int[]){m->out_rows, C}, 2, m->wo);
    rc |= checkpoint_write_tensor(w, "bias", CKPT_F32, (int[]){1}, 1, &m->bias);
    return rc ? -1 : 0;
}

int ft_save(const FastText *m, const char *path) {
    int V = word_dict_size(&m->dict);
    long nb = 0;
    int32_t *bucket_rows = xmalloc((size_t)(m->rows - V + 1) * sizeof *bucket_rows);
    for (long r = V; r < m->rows; r++)
        if (m->wi_ready[r]) bucket_rows[nb++] = (int32_t)r;
    cJSON *config = ft_checkpoint_config(m);
    CkptWriter *w = checkpoint_writer_open(path, config, -1);
    cJSON_Delete(config);
    int rc = -1;
    if (w) {
        if (ft_write_blobs(w, m, bucket_rows, nb) == 0 &&
            (m->quantized ? ft_write_quantized(w, m) : ft_write_tensors(w, m, bucket_rows, nb)) == 0)
            rc = checkpoint_writer_commit(w);
        else
            checkpoint_writer_abort(w);
    }
    free(bucket_rows);
    return rc;
}

/* ---- loading ---- */

int ft_bad(const char *path, const char *what) {
    user_error_data("re-train the model (glue finetune TASK --model fasttext)", "%s: not a usable fastText checkpoint: %s",
               path, what);
    return -1;
}

/* A blob that must hold exactly `size` bytes (size < 0: any multiple of -size). */
const CkptBlob *ft_blob(const Checkpoint *c, const char *name, long size) {
    const CkptBlob *b = checkpoint_find_blob(c, name);
    if (!b) return NULL;
    if (size >= 0 ? b->size != (size_t)size : b->size % (size_t)(-size) != 0) return NULL;
    return b;
}

/* A tensor of exactly (rows, cols) (cols 0: 1-D of rows). */
const CkptTensor *ft_tensor(const Checkpoint *c, const char *name, long rows, long cols) {
    const CkptTensor *t = checkpoint_find_tensor(c, name);
    if (!t) return NULL;
    if (cols ? t->ndim != 2 || t->shape[0] != rows || t->shape[1] != cols : t->ndim != 1 || t->shape[0] != rows)
        return NULL;
    return t;
}

/* The vocabulary from "words" + "counts", ids as saved. */
static int ft_load_dict(FastText *m, const Checkpoint *c, const char *path) {
    const CkptBlob *w = ft_blob(c, "words", -1), *n = ft_blob(c, "counts", -(long)sizeof(int64_t));
    if (!w || !n || (w->size && w->data[w->size - 1] != '\0')) return ft_bad(path, "vocabulary missing or damaged");
    long V = (long)(n->size / sizeof(int64_t));
    strmap_init(&m->dict.map);
    const int64_t *count = (const int64_t *)n->data;
    size_t pos = 0;
    for (long i = 0; i < V; i++) {
        if (pos >= w->size) return ft_bad(path, "fewer words than counts");
        size_t len = strlen((const char *)w->data + pos);
        word_dict_add(&m->dict, (const char *)w->data + pos, len, count[i]);
        if (word_dict_size(&m->dict) != i + 1) return ft_bad(path, "a word appears twice");
        pos += len + 1;
    }
    if (pos != w->size || V == 0) return ft_bad(path, "words and counts disagree");
    return 0;
}

/* Everything but the weights: config, seed, vocabulary, label counts. */
static FastText *ft_load_head(const Checkpoint *c, const Task *task, const char *path) {
    const cJSON *j = c->config, *model = cJSON_GetObjectItem(j, "model"), *tname = cJSON_GetObjectItem(j, "task");
    const cJSON *K = cJSON_GetObjectItem(j, "num_labels"), *config = cJSON_GetObjectItem(j, "config");
    if (!cJSON_IsString(model) || strcmp(model->valuestring, FASTTEXT_OPS.name) != 0) {
        ft_bad(path, cJSON_IsString(model) ? model->valuestring : "no model name in its config");
        return NULL;
    }
    if (!cJSON_IsString(tname) || strcmp(tname->valuestring, task->name) != 0 || !cJSON_IsNumber(K) ||
        K->valueint != task->num_labels || !cJSON_IsObject(config)) {
        char what[256];
        snprintf(what, sizeof what, "trained for task %s, not %s", cJSON_IsString(tname) ? tname->valuestring : "?",
                 task->name);
        ft_bad(path, what);
        return NULL;
    }
    const CkptBlob *seed = ft_blob(c, "seed", sizeof(uint64_t));
    if (!seed) { ft_bad(path, "no seed"); return NULL; }
    uint64_t s;
    memcpy(&s, seed->data, sizeof s);
    FastText *m = ft_new(config, task, s);
    if (!m) return NULL;
    if (ft_load_dict(m, c, path) != 0) { ft_free(m); return NULL; }
    if (m->K > 1) {
        const CkptBlob *lc = ft_blob(c, "label_count", (long)m->K * (long)sizeof(int64_t));
        if (!lc) { ft_bad(path, "no label counts"); ft_free(m); return NULL; }
        m->label_count = xmalloc(lc->size);
        memcpy(m->label_count, lc->data, lc->size);
    }
    return m;
}

static int ft_finite(const CkptTensor *t) {
    for (long i = 0; i < t->numel; i++)
        if (!isfinite(t->data[i])) return 0;
    return 1;
}

/* The weights: word rows, used bucket rows, output layer. */
static int ft_load_weights(FastText *m, const Checkpoint *c, const char *path) {
    long V = word_dict_size(&m->dict), C = m->cfg.dim;
    const CkptTensor *words = ft_tensor(c, "wi_words", V, C), *wo = ft_tensor(c, "wo", m->out_rows, C);
    const CkptTensor *bias = ft_tensor(c, "bias", 1, 0);
    const CkptBlob *rows = ft_blob(c, "bucket_rows", -(long)sizeof(int32_t));
    if (!words || !wo || !bias || !rows) return ft_bad(path, "a weight tensor is missing or has the wrong shape");
    if (!ft_finite(words) || !ft_finite(wo) || !ft_finite(bias)) return ft_bad(path, "a weight is NaN or infinite");
    memcpy(m->wi, words->data, (size_t)(V * C) * sizeof *m->wi);
    memset(m->wi_ready, 1, (size_t)V);
    memcpy(m->wo, wo->data, (size_t)(m->out_rows * C) * sizeof *m->wo);
    m->bias = bias->data[0];
    long nb = (long)(rows->size / sizeof(int32_t));
    const int32_t *idx = (const int32_t *)rows->data;
    for (long k = 0; k * FT_SAVE_ROWS < nb; k++) {
        long lo = k * FT_SAVE_ROWS, n = nb - lo < FT_SAVE_ROWS ? nb - lo : FT_SAVE_ROWS;
        char name[64];
        snprintf(name, sizeof name, "wi_buckets.%ld", k);
        const CkptTensor *t = ft_tensor(c, name, n, C);
        if (!t) return ft_bad(path, "bucket rows missing or of the wrong shape");
        if (!ft_finite(t)) return ft_bad(path, "a weight is NaN or infinite");
        for (long i = 0; i < n; i++) {
            long r = idx[lo + i];
            if (r < V || r >= m->rows || (lo + i > 0 && r <= idx[lo + i - 1]))
                return ft_bad(path, "bad bucket row index");
            memcpy(m->wi + (size_t)r * C, t->data + i * C, (size_t)C * sizeof *m->wi);
            m->wi_ready[r] = 1;
        }
    }
    return 0;
}

FastText *ft_load(const char *path, const Task *task) {
    Checkpoint *c = checkpoint_read(path);
    if (!c) return NULL;
    FastText *m = ft_load_head(c, task, path);
    if (m) {
        ft_alloc(m);
        const cJSON *quantized = cJSON_GetObjectItemCaseSensitive(c->config, "quantized");
        if ((quantized ? ft_load_quantized(m, c, quantized, path) : ft_load_weights(m, c, path)) != 0) {
            ft_free(m);
            m = NULL;
        }
    }
    checkpoint_free(c);
    return m;
}

/* SGD keeps no state beyond the weights, so resuming from them is exact; the
 * state file only says so (and that it belongs to a fastText run). */
int ft_save_state(const FastText *m, const char *path) {
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "model", FASTTEXT_OPS.name);
    cJSON_AddStringToObject(j, "optimizer", "sgd (no state)");
    CkptWriter *w = checkpoint_writer_open(path, j, -1);
    cJSON_Delete(j);
    return w ? checkpoint_writer_commit(w) : -1;
}

int ft_load_state(FastText *m, const char *path) {
    Checkpoint *c = checkpoint_read(path);
    if (!c) return -1;
    const cJSON *model = cJSON_GetObjectItem(c->config, "model");
    int ok = cJSON_IsString(model) && strcmp(model->valuestring, FASTTEXT_OPS.name) == 0;
    int rc = ok ? 0 : ft_bad(path, "not a fastText state file");
    checkpoint_free(c);
    return rc;
}
