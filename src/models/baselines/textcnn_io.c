/* textcnn_io.c — TextCNN checkpoints through the checkpoint module
 * (core/checkpoint.h: compressed, CRC-checked, written atomically).
 *
 * Model file:
 *   config   {"model": "textcnn", "task": ..., "num_labels": K, "pair": 0|1,
 *             "config": {the run's settings}}
 *   blobs    "seed" (u64), "vocab.words" + "vocab.counts" (word_features.h)
 *   tensors  the params by name: emb, conv<k>.w, conv<k>.b, out.w, out.b
 * The embedding is stored whole, so a model made from a vectors file loads
 * without that file.
 * State file (for --resume): the optimizer (optim_save: step count, Adadelta or
 * AdamW moments) and blob "rng" (the dropout stream). */
#include "models/baselines/textcnn.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "core/checkpoint.h"
#include "core/common.h"

#define TC_VOCAB_PREFIX "vocab."

int tc_save(const TextCnn *m, const char *path) {
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "model", TEXTCNN_OPS.name);
    cJSON_AddStringToObject(j, "task", m->task->name);
    cJSON_AddNumberToObject(j, "num_labels", m->K);
    cJSON_AddNumberToObject(j, "pair", m->pair);
    cJSON_AddItemToObject(j, "config", cJSON_Duplicate(m->config, 1));
    CkptWriter *w = checkpoint_writer_open(path, j, -1);
    cJSON_Delete(j);
    if (!w) return -1;
    int rc = checkpoint_write_blob(w, "seed", &m->seed, sizeof m->seed);
    rc |= word_vocab_save(&m->vocab, w, TC_VOCAB_PREFIX);
    rc |= checkpoint_write_params(w, m->params, CKPT_F32);
    if (rc) {
        checkpoint_writer_abort(w);
        return -1;
    }
    return checkpoint_writer_commit(w);
}

static void tc_bad(const char *path, const char *what) {
    user_error("re-train the model (glue finetune TASK --model textcnn)", "%s: not a usable TextCNN checkpoint: %s",
               path, what);
}

/* The model described by the checkpoint's config and vocabulary, weights not
 * yet loaded; NULL after a message. */
static TextCnn *tc_load_head(const Checkpoint *c, const Task *task, const char *path) {
    const cJSON *j = c->config, *model = cJSON_GetObjectItem(j, "model"), *tname = cJSON_GetObjectItem(j, "task");
    const cJSON *K = cJSON_GetObjectItem(j, "num_labels"), *pair = cJSON_GetObjectItem(j, "pair");
    const cJSON *config = cJSON_GetObjectItem(j, "config");
    if (!cJSON_IsString(model) || strcmp(model->valuestring, TEXTCNN_OPS.name) != 0) {
        tc_bad(path, cJSON_IsString(model) ? model->valuestring : "no model name in its config");
        return NULL;
    }
    if (!cJSON_IsString(tname) || strcmp(tname->valuestring, task->name) != 0 || !cJSON_IsNumber(K) ||
        K->valueint != task->num_labels || !cJSON_IsNumber(pair) || !cJSON_IsObject(config)) {
        char what[256];
        snprintf(what, sizeof what, "trained for task %s, not %s", cJSON_IsString(tname) ? tname->valuestring : "?",
                 task->name);
        tc_bad(path, what);
        return NULL;
    }
    const CkptBlob *seed = checkpoint_find_blob(c, "seed");
    if (!seed || seed->size != sizeof(uint64_t)) {
        tc_bad(path, "no seed");
        return NULL;
    }
    TextCnn *m = xcalloc(1, sizeof *m);
    m->config = cJSON_Duplicate(config, 1);
    m->task = task;
    m->K = task->num_labels;
    m->pair = pair->valueint != 0;
    if (tc_config_parse(m->config, &m->cfg) != 0 ||
        word_vocab_load(&m->vocab, c, TC_VOCAB_PREFIX, path) != 0) {
        tc_free(m);
        return NULL;
    }
    uint64_t s;
    memcpy(&s, seed->data, sizeof s);
    tc_build(m, s);
    return m;
}

TextCnn *tc_load(const char *path, const Task *task) {
    Checkpoint *c = checkpoint_read(path);
    if (!c) return NULL;
    TextCnn *m = tc_load_head(c, task, path);
    if (m && checkpoint_load_params(c, m->params) != 0) {
        tc_free(m);
        m = NULL;
    }
    checkpoint_free(c);
    return m;
}

int tc_save_state(const TextCnn *m, const char *path) {
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "model", TEXTCNN_OPS.name);
    CkptWriter *w = checkpoint_writer_open(path, j, -1);
    cJSON_Delete(j);
    if (!w) return -1;
    if (optim_save(&m->opt, m->params, w) != 0 || checkpoint_write_blob(w, "rng", &m->rng, sizeof m->rng) != 0) {
        checkpoint_writer_abort(w);
        return -1;
    }
    return checkpoint_writer_commit(w);
}

int tc_load_state(TextCnn *m, const char *path) {
    Checkpoint *c = checkpoint_read(path);
    if (!c) return -1;
    const cJSON *model = cJSON_GetObjectItem(c->config, "model");
    const CkptBlob *rng = checkpoint_find_blob(c, "rng");
    int rc = -1;
    if (!cJSON_IsString(model) || strcmp(model->valuestring, TEXTCNN_OPS.name) != 0 || !rng ||
        rng->size != sizeof m->rng)
        tc_bad(path, "not a TextCNN state file");
    else if (optim_load(&m->opt, m->params, c) == 0) {
        memcpy(&m->rng, rng->data, sizeof m->rng);
        rc = 0;
    }
    checkpoint_free(c);
    return rc;
}
