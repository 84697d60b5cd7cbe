/* word_model_io.c — the word models' shared construction steps, model and
 * state files (see word_model_io.h). */
#include "models/baselines/word_model_io.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "optim/clip.h"

#define WORD_MODEL_VOCAB_PREFIX "vocab."

void word_model_bad(const WordModelKind *kind, const char *path, const char *what) {
    char hint[128];
    snprintf(hint, sizeof hint, "re-train the model (glue finetune TASK --model %s)", kind->name);
    user_error_data(hint, "%s: not a usable %s checkpoint: %s", path, kind->display, what);
}

int word_model_save(const WordModelKind *kind, const Task *task, int pair, const cJSON *config, uint64_t seed,
                    const WordVocab *vocab, const Params *params, const char *path) {
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "model", kind->name);
    cJSON_AddStringToObject(j, "task", task->name);
    cJSON_AddNumberToObject(j, "num_labels", task->num_labels);
    cJSON_AddBoolToObject(j, "pair", pair);
    cJSON_AddItemToObject(j, "config", cJSON_Duplicate(config, 1));
    CkptWriter *w = checkpoint_writer_open(path, j, -1);
    cJSON_Delete(j);
    if (!w) return -1;
    int rc = checkpoint_write_blob(w, "seed", &seed, sizeof seed);
    rc |= word_vocab_save(vocab, w, WORD_MODEL_VOCAB_PREFIX);
    rc |= checkpoint_write_params(w, params, CKPT_F32);
    if (rc) {
        checkpoint_writer_abort(w);
        return -1;
    }
    return checkpoint_writer_commit(w);
}

/* The model's kind and task from a checkpoint's config; 0 when they match. */
static int word_model_check_head(const WordModelKind *kind, const Checkpoint *c, const Task *task,
                                 const char *path) {
    const cJSON *j = c->config, *model = cJSON_GetObjectItem(j, "model"), *tname = cJSON_GetObjectItem(j, "task");
    const cJSON *K = cJSON_GetObjectItem(j, "num_labels"), *config = cJSON_GetObjectItem(j, "config");
    const cJSON *pair = cJSON_GetObjectItem(j, "pair");
    if (!cJSON_IsString(model) || strcmp(model->valuestring, kind->name) != 0) {
        word_model_bad(kind, path, cJSON_IsString(model) ? model->valuestring : "no model name in its config");
        return -1;
    }
    if (!cJSON_IsString(tname) || strcmp(tname->valuestring, task->name) != 0 || !cJSON_IsNumber(K) ||
        K->valueint != task->num_labels || !cJSON_IsObject(config)) {
        char what[256];
        snprintf(what, sizeof what, "trained for task %s, not %s", cJSON_IsString(tname) ? tname->valuestring : "?",
                 task->name);
        word_model_bad(kind, path, what);
        return -1;
    }
    /* true/false; TextCNN files before the shared layout wrote 0/1 */
    if (!cJSON_IsBool(pair) && !cJSON_IsNumber(pair)) {
        word_model_bad(kind, path, "no pair flag in its config");
        return -1;
    }
    return 0;
}

Checkpoint *word_model_read(const WordModelKind *kind, const Task *task, const char *path, WordModelHead *head) {
    memset(head, 0, sizeof *head);
    Checkpoint *c = checkpoint_read(path);
    if (!c) return NULL;
    const CkptBlob *seed = checkpoint_find_blob(c, "seed");
    if (word_model_check_head(kind, c, task, path) != 0) goto fail;
    if (!seed || seed->size != sizeof(uint64_t)) {
        word_model_bad(kind, path, "no seed");
        goto fail;
    }
    if (word_vocab_load(&head->vocab, c, WORD_MODEL_VOCAB_PREFIX, path) != 0) goto fail;
    memcpy(&head->seed, seed->data, sizeof head->seed);
    const cJSON *pair = cJSON_GetObjectItem(c->config, "pair");
    head->pair = cJSON_IsBool(pair) ? cJSON_IsTrue(pair) : pair->valueint != 0;
    head->config = cJSON_GetObjectItem(c->config, "config");
    return c;
fail:
    checkpoint_free(c);
    return NULL;
}

Model *word_model_load(const WordModelKind *kind, const Task *task, const char *path,
                       Model *(*make_model)(const cJSON *config, const Task *task),
                       void (*build)(Model *m, uint64_t seed), void (*free_model)(Model *m)) {
    WordModelHead head;
    Checkpoint *c = word_model_read(kind, task, path, &head);
    if (!c) return NULL;
    Model *m = make_model(head.config, task);
    if (m) {
        WordModelBase *b = (WordModelBase *)m;
        b->pair = head.pair;
        b->vocab = head.vocab;
        build(m, head.seed);
    } else {
        word_vocab_free(&head.vocab);
    }
    if (m && checkpoint_load_params(c, ((WordModelBase *)m)->params) != 0) {
        free_model(m);
        m = NULL;
    }
    checkpoint_free(c);
    return m;
}

int word_model_save_state(const WordModelKind *kind, const Optimizer *opt, const Params *params, const void *rng,
                          size_t rng_size, const char *path) {
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "model", kind->name);
    CkptWriter *w = checkpoint_writer_open(path, j, -1);
    cJSON_Delete(j);
    if (!w) return -1;
    if (optim_save(opt, params, w) != 0 || checkpoint_write_blob(w, "rng", rng, rng_size) != 0) {
        checkpoint_writer_abort(w);
        return -1;
    }
    return checkpoint_writer_commit(w);
}

int word_model_load_state(const WordModelKind *kind, Optimizer *opt, Params *params, void *rng, size_t rng_size,
                          const char *path) {
    Checkpoint *c = checkpoint_read(path);
    if (!c) return -1;
    int rc = -1;
    const cJSON *model = cJSON_GetObjectItem(c->config, "model");
    const CkptBlob *r = checkpoint_find_blob(c, "rng");
    char what[96];
    snprintf(what, sizeof what, "not a %s state file", kind->display);
    if (!cJSON_IsString(model) || strcmp(model->valuestring, kind->name) != 0) {
        word_model_bad(kind, path, what);
    } else if (!r || r->size != rng_size) {
        word_model_bad(kind, path, "no dropout RNG state");
    } else if (optim_load(opt, params, c) == 0) {
        memcpy(rng, r->data, rng_size);
        rc = 0;
    }
    checkpoint_free(c);
    return rc;
}

int word_model_init(WordModelBase *b, const WordModelKind *kind, const cJSON *config, const Task *task,
                    const SettingSpec *spec, int n, void *cfg) {
    b->kind = kind;
    b->task = task;
    b->config = cJSON_Duplicate(config, 1);
    SettingsReader s = settings_reader(b->config, kind->name, "fix the setting (glue finetune ... --set key=value)");
    settings_table_read(&s, spec, n, cfg);
    return s.failed ? -1 : 0;
}

void word_model_release(WordModelBase *b) {
    params_free(b->params);
    word_vocab_free(&b->vocab);
    cJSON_Delete(b->config);
}

cJSON *word_model_defaults(const SettingSpec *spec, int n, const Task *task, int sst2_epochs) {
    cJSON *c = cJSON_CreateObject();
    settings_table_defaults(c, spec, n);
    if (sst2_epochs && task && strcmp(task->name, "sst2") == 0)
        cJSON_ReplaceItemInObjectCaseSensitive(c, "epochs", cJSON_CreateNumber(sst2_epochs));
    return c;
}

float *word_model_allocate(WordModelBase *b, int emb, int D, Optimizer opt) {
    Rng init;
    rng_seed(&init, b->seed);
    params_allocate(b->params, &init);
    params_grad_enable(b->params);
    float *e = params_data(b->params, emb);
    memset(e + (size_t)WF_PAD * D, 0, (size_t)D * sizeof *e);   /* padding is a zero vector */
    b->opt = opt;
    b->opt.lazy = 1;
    rng_seed_stream(&b->rng, b->seed, 1);   /* dropout: a stream apart from the init's */
    return e;
}

void word_model_declare_rnn(Params *p, const char *prefix, const char *suffix, int G, int C, int H, int *w_ih,
                            int *w_hh, int *b_ih, int *b_hh) {
    float a = 1.0f / sqrtf((float)H);
    char name[96];
    snprintf(name, sizeof name, "%s.w_ih%s", prefix, suffix);
    *w_ih = params_declare(p, name, PARAM_SHAPE(G * H, C), PARAM_INIT_UNIFORM(a), 0);
    snprintf(name, sizeof name, "%s.w_hh%s", prefix, suffix);
    *w_hh = params_declare(p, name, PARAM_SHAPE(G * H, H), PARAM_INIT_UNIFORM(a), 0);
    snprintf(name, sizeof name, "%s.b_ih%s", prefix, suffix);
    *b_ih = params_declare(p, name, PARAM_SHAPE(G * H), PARAM_INIT_UNIFORM(a), PARAM_NO_DECAY);
    snprintf(name, sizeof name, "%s.b_hh%s", prefix, suffix);
    *b_hh = params_declare(p, name, PARAM_SHAPE(G * H), PARAM_INIT_UNIFORM(a), PARAM_NO_DECAY);
}

void word_model_forward(Model *m, const Encoded *e, const int *rows, int n, const TrainState *st, float *logits, int K,
                        int cap, WordBatchForward run) {
    if (st) {
        params_zero_grad(((WordModelBase *)m)->params);
        if (n > 0) memcpy(logits, run(m, e, rows, n, 1), (size_t)n * K * sizeof *logits);
        return;
    }
    for (int lo = 0; lo < n; lo += cap) {   /* in workspace-sized chunks */
        int k = n - lo < cap ? n - lo : cap;
        memcpy(logits + (long)lo * K, run(m, e, rows + lo, k, 0), (size_t)k * K * sizeof *logits);
    }
}

int word_model_step(Model *m, float clip, float lr) {
    WordModelBase *b = (WordModelBase *)m;
    if (!isfinite(clip_grad_norm(b->params, clip))) return -1;
    optim_step(&b->opt, b->params, lr);
    return 0;
}

int word_model_update_ops(Model *m, const TrainState *st) { return word_model_step(m, 0, st->lr); }

Encoded *word_model_encode(Model *m, const Dataset *d) {
    const WordModelBase *b = (const WordModelBase *)m;
    return (Encoded *)word_seqs_encode(&b->vocab, d, b->max_len);
}

void word_model_encoded_free(Encoded *e) { word_seqs_free((WordSeqs *)e); }

int word_model_length(const Encoded *e, int row) {
    const WordSeqs *s = (const WordSeqs *)e;
    return s->len_a[row] > s->len_b[row] ? s->len_a[row] : s->len_b[row];
}

int word_model_save_ops(const Model *m, const char *path) {
    const WordModelBase *b = (const WordModelBase *)m;
    return word_model_save(b->kind, b->task, b->pair, b->config, b->seed, &b->vocab, b->params, path);
}

int word_model_save_state_ops(const Model *m, const char *path) {
    const WordModelBase *b = (const WordModelBase *)m;
    return word_model_save_state(b->kind, &b->opt, b->params, &b->rng, sizeof b->rng, path);
}

int word_model_load_state_ops(Model *m, const char *path) {
    WordModelBase *b = (WordModelBase *)m;
    return word_model_load_state(b->kind, &b->opt, b->params, &b->rng, sizeof b->rng, path);
}

long word_model_num_params(const Model *m) { return params_count(((const WordModelBase *)m)->params); }
