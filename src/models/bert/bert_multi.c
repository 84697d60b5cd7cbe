/* bert_multi.c — one BERT encoder, a head per task (see bert_multi.h). */
#include "models/bert/bert_multi.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "models/bert/bert_task.h"

#define BERT_MULTI_KEY "multitask"
#define BERT_MULTI_STATE_KIND "bert-multi-state"
#define BERT_MULTI_ENCODER_SCOPE "encoder."
#define BERT_MULTI_RNG_BLOB "dropout_rng."
#define BERT_MULTI_HINT "resume with the command that started the run, or start over without --resume"
/* Mixed into the seed for head i's initialisation (the encoder's fresh
 * tensors, if any, draw from the seed itself). */
#define BERT_MULTI_HEAD_SALT 0x4845414473ull

struct BertMulti {
    int n;
    Bert *bert;                  /* the encoder and pooler, no classifier of its own */
    Vocab *vocab;
    Optimizer opt;               /* the encoder's AdamW */
    BertTaskHead **heads;        /* (n) */
    BertTaskModel **tasks;       /* (n) each over bert, with heads[i] */
};

void bert_multi_free(BertMulti *mm) {
    if (!mm) return;
    for (int i = 0; i < mm->n; i++) {
        bert_task_model_free(mm->tasks[i]);
        bert_task_head_free(mm->heads[i]);
    }
    free(mm->tasks);
    free(mm->heads);
    bert_free(mm->bert);
    vocab_free(mm->vocab);
    free(mm);
}

BertMulti *bert_multi_create(const cJSON *const *configs, const Task *const *tasks, int n, uint64_t seed) {
    if (n < 1) DIE("bert_multi_create: %d tasks", n);
    BertMulti *mm = xcalloc(1, sizeof *mm);
    mm->heads = xcalloc((size_t)n, sizeof *mm->heads);
    mm->tasks = xcalloc((size_t)n, sizeof *mm->tasks);
    mm->bert = bert_task_encoder(configs[0], &(BertHeads){.pooler = 1}, seed, &mm->vocab);
    if (!mm->bert) {
        free(mm->tasks), free(mm->heads), free(mm);
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        int features = bert_task_pair_features(configs[i]);
        if (features < 0) break;
        if (tasks[i]->num_labels < 2 && features) {   /* bert_task_model_new says why */
            features = 0;
        }
        mm->heads[i] = bert_task_head_create(mm->bert, tasks[i]->num_labels, features,
                                             seed ^ (BERT_MULTI_HEAD_SALT + (uint64_t)i));
        mm->tasks[i] = bert_task_model_shared(mm->bert, mm->vocab, mm->heads[i], &mm->opt, configs[i], tasks[i],
                                              seed + (uint64_t)i);
        mm->n = i + 1;
        if (!mm->tasks[i]) break;
        if (i == 0) mm->opt = mm->tasks[0]->opt;   /* the run's AdamW settings, at step 0 */
    }
    if (mm->n < n || !mm->tasks[n - 1]) {
        bert_multi_free(mm);
        return NULL;
    }
    return mm;
}

Model *bert_multi_task(BertMulti *mm, int i) { return (Model *)mm->tasks[i]; }

long bert_multi_num_params(const BertMulti *mm) {
    long total = bert_num_params(mm->bert);
    for (int i = 0; i < mm->n; i++) total += params_count(mm->heads[i]->params);
    return total;
}

/* "tasks.<task>." into out. */
static const char *bert_multi_scope(const BertMulti *mm, int i, char *out, size_t cap) {
    snprintf(out, cap, "tasks.%s.", mm->tasks[i]->task->name);
    return out;
}

/* The tasks, for the checkpoint's config: [{"task", "num_labels",
 * "pair_features", "run"}]. */
static cJSON *bert_multi_tasks_json(const BertMulti *mm) {
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < mm->n; i++) {
        cJSON *t = cJSON_CreateObject();
        cJSON_AddStringToObject(t, "task", mm->tasks[i]->task->name);
        cJSON_AddNumberToObject(t, "num_labels", mm->heads[i]->num_labels);
        cJSON_AddNumberToObject(t, "pair_features", mm->heads[i]->pair_features);
        cJSON_AddItemToObject(t, "run", cJSON_Duplicate(mm->tasks[i]->config, 1));
        cJSON_AddItemToArray(a, t);
    }
    return a;
}

int bert_multi_save(const BertMulti *mm, const char *path) {
    bert_attach_head(mm->bert, NULL);   /* the encoder's checkpoint has no classifier; a forward attaches again */
    cJSON *cfg = bert_checkpoint_config(mm->bert);
    cJSON_AddItemToObject(cfg, BERT_MULTI_KEY, bert_multi_tasks_json(mm));
    CkptWriter *w = checkpoint_writer_open(path, cfg, -1);
    cJSON_Delete(cfg);
    if (!w) return -1;
    int rc = bert_write(mm->bert, w, mm->vocab, CKPT_F32);
    for (int i = 0; i < mm->n && rc == 0; i++) {
        char scope[128];
        const Params *p = mm->heads[i]->params;
        rc = checkpoint_write_params_mirror(w, p, bert_multi_scope(mm, i, scope, sizeof scope), p->data, CKPT_F32);
    }
    return checkpoint_writer_finish(w, rc);
}

/* The checkpoint c holds these tasks, in this order. 0, or -1 after a message. */
static int bert_multi_check_tasks(const BertMulti *mm, const Checkpoint *c) {
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(c->config, BERT_MULTI_KEY);
    int same = cJSON_IsArray(a) && cJSON_GetArraySize(a) == mm->n;
    for (int i = 0; same && i < mm->n; i++) {
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(a, i), "task");
        same = cJSON_IsString(t) && strcmp(t->valuestring, mm->tasks[i]->task->name) == 0;
    }
    if (same) return 0;
    user_error(BERT_MULTI_HINT, "%s: not a multi-task model of these tasks", c->path);
    return -1;
}

int bert_multi_load(BertMulti *mm, const char *path) {
    Checkpoint *c = checkpoint_read(path);
    if (!c) return -1;
    int rc = bert_multi_check_tasks(mm, c);
    bert_attach_head(mm->bert, NULL);
    if (rc == 0) rc = bert_init_from(mm->bert, c, 0);
    for (int i = 0; i < mm->n && rc == 0; i++) {
        char scope[128];
        const Params *p = mm->heads[i]->params;
        rc = checkpoint_load_params_mirror(c, p, bert_multi_scope(mm, i, scope, sizeof scope), p->data);
    }
    checkpoint_free(c);
    return rc;
}

static cJSON *bert_multi_state_config(const BertMulti *mm) {
    cJSON *j = bert_config_to_json(&mm->bert->cfg);
    cJSON_AddStringToObject(j, "model", BERT_MULTI_STATE_KIND);
    cJSON *names = cJSON_AddArrayToObject(j, "tasks");
    for (int i = 0; i < mm->n; i++) cJSON_AddItemToArray(names, cJSON_CreateString(mm->tasks[i]->task->name));
    return j;
}

int bert_multi_save_state(const BertMulti *mm, const char *path) {
    cJSON *cfg = bert_multi_state_config(mm);
    CkptWriter *w = checkpoint_writer_open(path, cfg, -1);
    cJSON_Delete(cfg);
    if (!w) return -1;
    int rc = optim_save_scoped(&mm->opt, mm->bert->params, w, BERT_MULTI_ENCODER_SCOPE);
    for (int i = 0; i < mm->n && rc == 0; i++) {
        const BertTaskModel *t = mm->tasks[i];
        char scope[128], blob[160];
        bert_multi_scope(mm, i, scope, sizeof scope);
        snprintf(blob, sizeof blob, BERT_MULTI_RNG_BLOB "%s", t->task->name);
        rc = optim_save_scoped(&t->opt, mm->heads[i]->params, w, scope) ||
             checkpoint_write_blob(w, blob, &t->rng, sizeof t->rng);
    }
    return checkpoint_writer_finish(w, rc);
}

int bert_multi_load_state(BertMulti *mm, const char *path) {
    Checkpoint *c = checkpoint_read(path);
    if (!c) return -1;
    cJSON *expect = bert_multi_state_config(mm);
    int rc = checkpoint_check_config(c, expect, NULL, 0);
    cJSON_Delete(expect);
    if (rc == 0) rc = optim_load_scoped(&mm->opt, mm->bert->params, c, BERT_MULTI_ENCODER_SCOPE);
    for (int i = 0; i < mm->n && rc == 0; i++) {
        BertTaskModel *t = mm->tasks[i];
        char scope[128], blob[160];
        bert_multi_scope(mm, i, scope, sizeof scope);
        snprintf(blob, sizeof blob, BERT_MULTI_RNG_BLOB "%s", t->task->name);
        const CkptBlob *rng = checkpoint_find_blob(c, blob);
        if (!rng || rng->size != sizeof t->rng) {
            user_error_data(BERT_MULTI_HINT, "%s: no dropout RNG state of %s in it", path, t->task->name);
            rc = -1;
            break;
        }
        rc = optim_load_scoped(&t->opt, mm->heads[i]->params, c, scope);
        if (rc == 0) memcpy(&t->rng, rng->data, sizeof t->rng);
    }
    checkpoint_free(c);
    return rc;
}
