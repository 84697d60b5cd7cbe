/* bert_task_io.c — files of the fine-tuned BERT model (see bert_task.h):
 *   model:  BERT checkpoint (bert_io.c layout) + "task" and "run" (the run
 *           config) in its config record + the vocabulary blob, so
 *           `glue eval/predict` need nothing else;
 *   state:  AdamW moments and step (optim_save), the dropout RNG, and the model
 *           config it belongs to, so `glue finetune --resume` continues exactly. */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "models/bert/bert_task.h"

#define BERT_STATE_KIND "bert-state"
#define BERT_RNG_BLOB "dropout_rng"
#define BERT_MODEL_HINT "pass a model.ckpt written by `glue finetune TASK` (model bert)"

/* The config record's task and run config. */
static cJSON *bert_task_extra(const BertTaskModel *m) {
    cJSON *extra = cJSON_CreateObject();
    cJSON_AddStringToObject(extra, "task", m->task->name);
    cJSON_AddItemToObject(extra, "run", cJSON_Duplicate(m->config, 1));
    return extra;
}

int bert_task_save(const BertTaskModel *m, const char *path) {
    cJSON *extra = bert_task_extra(m);
    int rc = bert_save_with(m->bert, path, extra, m->vocab);
    cJSON_Delete(extra);
    return rc;
}

int bert_task_save_int8(const BertTaskModel *m, const char *path) {
    cJSON *extra = bert_task_extra(m);
    int rc = bert_save_int8(m->bert, path, extra, m->vocab);
    cJSON_Delete(extra);
    return rc;
}

BertTaskModel *bert_task_load(const char *path, const Task *task) {
    Checkpoint *c = checkpoint_read(path);
    if (!c) return NULL;
    BertTaskModel *m = NULL;
    const cJSON *run = cJSON_GetObjectItemCaseSensitive(c->config, "run");
    const cJSON *stored = cJSON_GetObjectItemCaseSensitive(c->config, "task");
    if (cJSON_IsString(stored) && strcmp(stored->valuestring, task->name) != 0 &&
        !(task->scored_with && strcmp(stored->valuestring, task->scored_with) == 0)) {
        user_error("evaluate it on its own task, or fine-tune one for this task",
                   "%s: a BERT model fine-tuned for %s, not %s", path, stored->valuestring, task->name);
        checkpoint_free(c);
        return NULL;
    }
    Bert *bert = bert_from_checkpoint(c, NULL, 1, 0);
    Vocab *vocab = bert ? bert_checkpoint_vocab(c) : NULL;
    if (bert && (!cJSON_IsObject(run) || !vocab)) {
        user_error_data(BERT_MODEL_HINT, "%s: a BERT checkpoint without a task head's %s", path,
                   vocab ? "run config" : "vocabulary");
    } else if (bert) {
        m = bert_task_model_new(bert, vocab, run, task, 0, 0);   /* load_state adds the training buffers */
        bert = NULL;   /* owned by m, or freed with it on failure */
        vocab = NULL;
    }
    bert_free(bert);
    vocab_free(vocab);
    checkpoint_free(c);
    return m;
}

/* The state belongs to one model: its architecture and heads, flat so that a
 * mismatch names the differing key ("hidden_size: 32 (checkpoint) vs 16"). */
static cJSON *bert_state_config(const BertTaskModel *m) {
    cJSON *j = bert_config_to_json(&m->bert->cfg);
    cJSON_AddStringToObject(j, "model", BERT_STATE_KIND);
    cJSON_AddNumberToObject(j, "mlm", m->bert->heads.mlm);
    cJSON_AddNumberToObject(j, "pooler", m->bert->heads.pooler);
    cJSON_AddNumberToObject(j, "num_labels", m->bert->heads.num_labels);
    return j;
}

int bert_task_save_state(const BertTaskModel *m, const char *path) {
    cJSON *cfg = bert_state_config(m);
    CkptWriter *w = checkpoint_writer_open(path, cfg, -1);
    cJSON_Delete(cfg);
    if (!w) return -1;
    return checkpoint_writer_finish(w, optim_save(&m->opt, m->bert->params, w) != 0 ||
                                           checkpoint_write_blob(w, BERT_RNG_BLOB, &m->rng, sizeof m->rng) != 0);
}

int bert_task_load_state(BertTaskModel *m, const char *path) {
    Checkpoint *c = checkpoint_read(path);
    if (!c) return -1;
    cJSON *expect = bert_state_config(m);
    int rc = checkpoint_check_config(c, expect, NULL, 0);
    cJSON_Delete(expect);
    const CkptBlob *rng = rc == 0 ? checkpoint_find_blob(c, BERT_RNG_BLOB) : NULL;
    if (rc == 0 && (!rng || rng->size != sizeof m->rng)) {
        user_error_data("resume needs the last.state written by the same run", "%s: no dropout RNG state in it", path);
        rc = -1;
    }
    if (rc == 0) {
        /* Gradients and the optimizer's slots must exist before its state is read. */
        bert_reserve(m->bert, m->maxB, m->max_len, 0, 1);
        rc = optim_load(&m->opt, m->bert->params, c);
    }
    if (rc == 0) memcpy(&m->rng, rng->data, sizeof m->rng);
    checkpoint_free(c);
    return rc;
}
