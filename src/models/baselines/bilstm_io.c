/* bilstm_io.c — BiLSTM checkpoints through the checkpoint module
 * (core/checkpoint.h: compressed, CRC-checked, written atomically).
 *
 * Model file:
 *   config   {"model": "bilstm", "task": ..., "num_labels": K, "config": {...}}
 *   blobs    "seed" (u64), "vocab.words" / "vocab.counts" (word_features.h)
 *   tensors  every parameter by its arena name ("emb", "lstm.w_ih", ...)
 * State file (what --resume needs beyond the weights):
 *   config   {"model": "bilstm"}
 *   blobs    "optim" + tensors "optim.state<k>.<name>" (optim.h: Adam's moments
 *            and step count), "rng" (the dropout stream) */
#include "models/baselines/bilstm.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "core/checkpoint.h"
#include "core/common.h"

#define BL_VOCAB_PREFIX "vocab."

int bl_save(const Model *m, const char *path) {
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "model", BILSTM_OPS.name);
    cJSON_AddStringToObject(j, "task", m->task->name);
    cJSON_AddNumberToObject(j, "num_labels", m->K);
    cJSON_AddBoolToObject(j, "pair", m->pair);
    cJSON_AddItemToObject(j, "config", cJSON_Duplicate(m->config, 1));
    CkptWriter *w = checkpoint_writer_open(path, j, -1);
    cJSON_Delete(j);
    if (!w) return -1;
    int rc = checkpoint_write_blob(w, "seed", &m->seed, sizeof m->seed);
    rc |= word_vocab_save(&m->vocab, w, BL_VOCAB_PREFIX);
    rc |= checkpoint_write_params(w, m->params, CKPT_F32);
    if (rc) {
        checkpoint_writer_abort(w);
        return -1;
    }
    return checkpoint_writer_commit(w);
}

static int bl_bad(const char *path, const char *what) {
    user_error("re-train the model (glue finetune TASK --model bilstm)", "%s: not a usable BiLSTM checkpoint: %s",
               path, what);
    return -1;
}

/* The model's kind and task from a checkpoint's config; 0 when they match. */
static int bl_check_head(const Checkpoint *c, const Task *task, const char *path) {
    const cJSON *j = c->config, *model = cJSON_GetObjectItem(j, "model"), *tname = cJSON_GetObjectItem(j, "task");
    const cJSON *K = cJSON_GetObjectItem(j, "num_labels"), *config = cJSON_GetObjectItem(j, "config");
    if (!cJSON_IsString(model) || strcmp(model->valuestring, BILSTM_OPS.name) != 0)
        return bl_bad(path, cJSON_IsString(model) ? model->valuestring : "no model name in its config");
    if (!cJSON_IsString(tname) || strcmp(tname->valuestring, task->name) != 0 || !cJSON_IsNumber(K) ||
        K->valueint != task->num_labels || !cJSON_IsObject(config)) {
        char what[256];
        snprintf(what, sizeof what, "trained for task %s, not %s", cJSON_IsString(tname) ? tname->valuestring : "?",
                 task->name);
        return bl_bad(path, what);
    }
    if (!cJSON_IsBool(cJSON_GetObjectItem(j, "pair"))) return bl_bad(path, "no pair flag in its config");
    return 0;
}

Model *bl_load(const char *path, const Task *task) {
    Checkpoint *c = checkpoint_read(path);
    if (!c) return NULL;
    Model *m = NULL;
    const CkptBlob *seed = checkpoint_find_blob(c, "seed");
    WordVocab vocab;
    if (bl_check_head(c, task, path) != 0) goto out;
    if (!seed || seed->size != sizeof(uint64_t)) {
        bl_bad(path, "no seed");
        goto out;
    }
    if (word_vocab_load(&vocab, c, BL_VOCAB_PREFIX, path) != 0) goto out;
    uint64_t s;
    memcpy(&s, seed->data, sizeof s);
    m = bl_new(cJSON_GetObjectItem(c->config, "config"), task, &vocab, s,
               cJSON_IsTrue(cJSON_GetObjectItem(c->config, "pair")));
    if (m && checkpoint_load_params(c, m->params) != 0) {
        bl_free(m);
        m = NULL;
    }
out:
    checkpoint_free(c);
    return m;
}

int bl_save_state(const Model *m, const char *path) {
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "model", BILSTM_OPS.name);
    CkptWriter *w = checkpoint_writer_open(path, j, -1);
    cJSON_Delete(j);
    if (!w) return -1;
    int rc = optim_save(&m->opt, m->params, w);
    rc |= checkpoint_write_blob(w, "rng", &m->rng, sizeof m->rng);
    if (rc) {
        checkpoint_writer_abort(w);
        return -1;
    }
    return checkpoint_writer_commit(w);
}

int bl_load_state(Model *m, const char *path) {
    Checkpoint *c = checkpoint_read(path);
    if (!c) return -1;
    int rc = -1;
    const cJSON *model = cJSON_GetObjectItem(c->config, "model");
    const CkptBlob *rng = checkpoint_find_blob(c, "rng");
    if (!cJSON_IsString(model) || strcmp(model->valuestring, BILSTM_OPS.name) != 0) {
        bl_bad(path, "not a BiLSTM state file");
    } else if (!rng || rng->size != sizeof m->rng) {
        bl_bad(path, "no dropout RNG state");
    } else {
        bl_train_prepare(m);
        if (optim_load(&m->opt, m->params, c) == 0) {
            memcpy(&m->rng, rng->data, sizeof m->rng);
            rc = 0;
        }
    }
    checkpoint_free(c);
    return rc;
}
