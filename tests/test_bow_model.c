/* test_bow_model.c — a tiny model for testing the trainer and the model commands:
 * multinomial logistic regression (or linear regression for STS-B) over hashed
 * bag-of-words features — logits for the harness's head (softmax
 * cross-entropy, or MSE) — trained with SGD + momentum. It trains in milliseconds,
 * so the whole finetune → eval → predict path can be tested end to end.
 *
 * Linked only into the test binary, which registers it (model_register) at load
 * time. Its momentum buffers and step count are its optimizer
 * state (save_state), so it also exercises exact resuming. */
#include "core/checkpoint.h"
#include "core/common.h"
#include "core/rng.h"
#include "models/model.h"
#include "models/run_config.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Words of the second text hash into other buckets than the same words of the first. */
#define BOW_PAIR_SALT 0x9E3779B9u
#define BOW_INIT_STD 0.01f

struct Model {
    const Task *task;
    cJSON *config;
    int K, D, max_len;   /* outputs (classes, or 1 score), hash buckets, words kept per text */
    float momentum;
    float *w;            /* (K, D) */
    float *b;            /* (K) */
    float *vw, *vb;      /* momentum buffers, like w and b */
    float *gw, *gb;      /* gradients, like w and b */
    long steps;
    const Encoded *last_e;   /* the last training forward's features and rows, for backward */
    int *last_rows, last_n, cap_rows;
};

struct Encoded {
    int n;
    int *off;            /* (n + 1) row r's features are ids[off[r] .. off[r+1]) */
    int *ids;            /* bucket ids */
};

/* The harness's head and prediction-rule settings (class weights, focal loss, thresholds). */
static const SettingSpec BOW_HEAD_SETTINGS[] = {RUN_SETTINGS_LOSS, RUN_SETTINGS_DECISION};

static cJSON *bow_default_config(const Task *task) {
    cJSON *c = cJSON_CreateObject();
    cJSON_AddNumberToObject(c, "epochs", 6);
    cJSON_AddNumberToObject(c, "lr", 0.5);
    cJSON_AddNumberToObject(c, "batch", 16);
    cJSON_AddNumberToObject(c, "warmup", 0.0);
    cJSON_AddStringToObject(c, "schedule", "linear");
    cJSON_AddNumberToObject(c, "dim", 1024);
    cJSON_AddNumberToObject(c, "max_len", 64);
    cJSON_AddNumberToObject(c, "momentum", 0.9);
    cJSON_AddNumberToObject(c, "eval_batch", 32);
    settings_table_defaults(c, BOW_HEAD_SETTINGS, (int)(sizeof BOW_HEAD_SETTINGS / sizeof BOW_HEAD_SETTINGS[0]));
    (void)task;
    return c;
}

static Model *bow_alloc(const cJSON *config, const Task *task) {
    Model *m = xcalloc(1, sizeof *m);
    m->task = task;
    m->config = cJSON_Duplicate(config, 1);
    m->K = task->num_labels == 1 ? 1 : task->num_labels;
    m->D = (int)run_config_number(config, "dim", 1024);
    m->max_len = (int)run_config_number(config, "max_len", 64);
    m->momentum = (float)run_config_number(config, "momentum", 0.9);
    size_t kd = (size_t)m->K * (size_t)m->D;
    m->w = xcalloc(kd, sizeof(float));
    m->vw = xcalloc(kd, sizeof(float));
    m->gw = xcalloc(kd, sizeof(float));
    m->b = xcalloc((size_t)m->K, sizeof(float));
    m->vb = xcalloc((size_t)m->K, sizeof(float));
    m->gb = xcalloc((size_t)m->K, sizeof(float));
    return m;
}

static Model *bow_create(const cJSON *config, const Task *task, const Dataset *train, uint64_t seed) {
    (void)train;
    Model *m = bow_alloc(config, task);
    Rng rng;
    rng_seed(&rng, seed);
    for (size_t i = 0; i < (size_t)m->K * (size_t)m->D; i++) m->w[i] = BOW_INIT_STD * rng_normal(&rng);
    return m;
}

/* Lowercased alphanumeric words of s, hashed (FNV-1a) into buckets, appended to ids. */
static int bow_words(const Model *m, const char *s, uint32_t salt, int *ids, int n) {
    int kept = 0;
    while (s && *s && kept < m->max_len) {
        while (*s && !isalnum((unsigned char)*s)) s++;
        if (!*s) break;
        uint32_t h = 2166136261u ^ salt;
        for (; isalnum((unsigned char)*s); s++) h = (h ^ (uint32_t)tolower((unsigned char)*s)) * 16777619u;
        ids[n + kept++] = (int)(h % (uint32_t)m->D);
    }
    return kept;
}

static Encoded *bow_encode(Model *m, const Dataset *d) {
    Encoded *e = xcalloc(1, sizeof *e);
    e->n = d->n;
    e->off = xmalloc(sizeof(int) * (size_t)(d->n + 1));
    e->ids = xmalloc(sizeof(int) * (size_t)(2 * m->max_len * (d->n ? d->n : 1)));
    int n = 0;
    for (int r = 0; r < d->n; r++) {
        e->off[r] = n;
        n += bow_words(m, d->ex[r].a, 0, e->ids, n);
        n += bow_words(m, d->ex[r].b, BOW_PAIR_SALT, e->ids, n);
    }
    e->off[d->n] = n;
    return e;
}

static void bow_encoded_free(Encoded *e) {
    if (!e) return;
    free(e->off); free(e->ids);
    free(e);
}

static int bow_length(const Encoded *e, int row) { return e->off[row + 1] - e->off[row]; }

/* z (K): scores of one row — b + mean of the rows' weight columns. */
static void bow_forward(const Model *m, const Encoded *e, int r, float *z) {
    int len = bow_length(e, r);
    for (int k = 0; k < m->K; k++) {
        float s = 0;
        for (int j = e->off[r]; j < e->off[r + 1]; j++) s += m->w[(size_t)k * (size_t)m->D + (size_t)e->ids[j]];
        z[k] = m->b[k] + (len ? s / (float)len : 0.0f);
    }
}

/* ---- logits for the harness's head ---- */

static void bow_forward_ops(Model *m, const Encoded *e, const int *rows, int n, const TrainState *st, float *logits) {
    for (int i = 0; i < n; i++) bow_forward(m, e, rows[i], logits + (size_t)i * (size_t)m->K);
    if (!st) return;
    memset(m->gw, 0, sizeof(float) * (size_t)m->K * (size_t)m->D);
    memset(m->gb, 0, sizeof(float) * (size_t)m->K);
    if (n > m->cap_rows) {
        m->last_rows = xrealloc(m->last_rows, sizeof(int) * (size_t)n);
        m->cap_rows = n;
    }
    memcpy(m->last_rows, rows, sizeof(int) * (size_t)n);
    m->last_e = e;
    m->last_n = n;
}

/* z = b + mean of the row's weight columns: each column gets dz / len. */
static void bow_backward_ops(Model *m, const float *dlogits) {
    const Encoded *e = m->last_e;
    for (int i = 0; i < m->last_n; i++) {
        int r = m->last_rows[i], len = bow_length(e, r);
        for (int k = 0; k < m->K; k++) {
            float dz = dlogits[(size_t)i * (size_t)m->K + (size_t)k];
            m->gb[k] += dz;
            for (int j = e->off[r]; j < e->off[r + 1]; j++) m->gw[(size_t)k * (size_t)m->D + (size_t)e->ids[j]] += dz / (float)len;
        }
    }
}

/* SGD with momentum. */
static int bow_update_ops(Model *m, const TrainState *st) {
    size_t kd = (size_t)m->K * (size_t)m->D;
    for (size_t i = 0; i < kd; i++) {
        m->vw[i] = m->momentum * m->vw[i] + m->gw[i];
        m->w[i] -= st->lr * m->vw[i];
    }
    for (int k = 0; k < m->K; k++) {
        m->vb[k] = m->momentum * m->vb[k] + m->gb[k];
        m->b[k] -= st->lr * m->vb[k];
    }
    m->steps++;
    /* Simulated kill -9 for the resume test: die without any cleanup. */
    const char *crash = getenv("TEST_BOW_CRASH_AT_STEP");
    if (crash && m->steps == atol(crash)) _exit(77);
    return 0;
}

static long bow_num_params(const Model *m) { return (long)m->K * m->D + m->K; }

static void bow_free(Model *m) {
    if (!m) return;
    cJSON_Delete(m->config);
    free(m->w); free(m->b); free(m->vw); free(m->vb); free(m->gw); free(m->gb); free(m->last_rows);
    free(m);
}


/* ---- files, through the checkpoint module ---- */

static int bow_save(const Model *m, const char *path) {
    cJSON *config = cJSON_Duplicate(m->config, 1);   /* + the model's name, as models/model.h asks */
    cJSON_DeleteItemFromObjectCaseSensitive(config, "model");
    cJSON_AddStringToObject(config, "model", "testbow");
    CkptWriter *w = checkpoint_writer_open(path, config, -1);
    cJSON_Delete(config);
    if (!w) return -1;
    const int wshape[2] = {m->K, m->D}, bshape[1] = {m->K};
    if (checkpoint_write_tensor(w, "w", CKPT_F32, wshape, 2, m->w) != 0 ||
        checkpoint_write_tensor(w, "b", CKPT_F32, bshape, 1, m->b) != 0) {
        checkpoint_writer_abort(w);
        return -1;
    }
    return checkpoint_writer_commit(w);
}

/* Copies tensor `name` of c into out (n floats); -1 after a message if absent or of another size. */
static int bow_take(const Checkpoint *c, const char *name, float *out, long n) {
    const CkptTensor *t = checkpoint_find_tensor(c, name);
    if (!t || t->numel != n) {
        user_error(NULL, "%s: tensor '%s' missing or not of %ld numbers", c->path, name, n);
        return -1;
    }
    memcpy(out, t->data, sizeof(float) * (size_t)n);
    return 0;
}

static Model *bow_load(const char *path, const Task *task) {
    Checkpoint *c = checkpoint_read(path);
    if (!c) return NULL;
    Model *m = bow_alloc(c->config, task);
    if (bow_take(c, "w", m->w, (long)m->K * m->D) != 0 || bow_take(c, "b", m->b, m->K) != 0) {
        bow_free(m);
        m = NULL;
    }
    checkpoint_free(c);
    return m;
}

/* Optimizer state: the momentum buffers and the step count. */
static int bow_save_state(const Model *m, const char *path) {
    CkptWriter *w = checkpoint_writer_open(path, NULL, -1);
    if (!w) return -1;
    const int wshape[2] = {m->K, m->D}, bshape[1] = {m->K};
    if (checkpoint_write_tensor(w, "vw", CKPT_F32, wshape, 2, m->vw) != 0 ||
        checkpoint_write_tensor(w, "vb", CKPT_F32, bshape, 1, m->vb) != 0 ||
        checkpoint_write_blob(w, "steps", &m->steps, sizeof m->steps) != 0) {
        checkpoint_writer_abort(w);
        return -1;
    }
    return checkpoint_writer_commit(w);
}

static int bow_load_state(Model *m, const char *path) {
    Checkpoint *c = checkpoint_read(path);
    if (!c) return -1;
    const CkptBlob *steps = checkpoint_find_blob(c, "steps");
    int rc = bow_take(c, "vw", m->vw, (long)m->K * m->D) || bow_take(c, "vb", m->vb, m->K) ? -1 : 0;
    if (rc == 0 && (!steps || steps->size != sizeof m->steps)) {
        user_error(NULL, "%s: no step count", path);
        rc = -1;
    }
    if (rc == 0) memcpy(&m->steps, steps->data, sizeof m->steps);
    checkpoint_free(c);
    return rc;
}

static const ModelOps TEST_BOW_OPS = {
    .name = "testbow",
    .default_config = bow_default_config,
    .create = bow_create,
    .encode = bow_encode,
    .encoded_free = bow_encoded_free,
    .forward = bow_forward_ops,
    .backward = bow_backward_ops,
    .update = bow_update_ops,
    .save = bow_save,
    .load = bow_load,
    .num_params = bow_num_params,
    .free = bow_free,
    .length = bow_length,
    .save_state = bow_save_state,
    .load_state = bow_load_state,
};

__attribute__((constructor)) static void bow_register(void) { model_register(&TEST_BOW_OPS); }
