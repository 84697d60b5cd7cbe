/* ensemble.c — finished runs combined and scored as one model (see ensemble.h). */
#include "models/ensemble/ensemble.h"

#include "core/checkpoint.h"
#include "core/common.h"
#include "core/crc32.h"
#include "core/files.h"
#include "nn/sigmoid_bce.h"
#include "nn/softmax_xent.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const ENSEMBLE_COMBINES[3] = {"probs", "logits", "vote"};
/* log(p) of a probability 0 (a fastText member under combine=logits): finite. */
#define ENSEMBLE_MIN_PROB 1e-30f
#define ENSEMBLE_HINT "rebuild it: glue ensemble TASK --runs DIR,DIR,... (or glue boost)"

struct Model {
    const ModelOps *self;        /* ENSEMBLE_OPS or BOOST_OPS */
    cJSON *config;               /* what save writes (weights kept in step) */
    int M, K, multi;
    EnsembleCombine how;
    const ModelOps *ops[ENSEMBLE_MAX_MEMBERS];
    Model *m[ENSEMBLE_MAX_MEMBERS];
    double w[ENSEMBLE_MAX_MEMBERS];
};

struct Encoded {
    int M;
    Encoded *e[ENSEMBLE_MAX_MEMBERS];   /* each member's own features */
    const ModelOps *ops[ENSEMBLE_MAX_MEMBERS];
};

int ensemble_is(const ModelOps *ops) { return ops == &ENSEMBLE_OPS || ops == &BOOST_OPS; }

int ensemble_size(const Model *m) { return m->M; }

EnsembleCombine ensemble_combine_of(const Model *m) { return m->how; }

const cJSON *ensemble_config_of(const Model *m) { return m->config; }

void ensemble_weights(const Model *m, double *w) { memcpy(w, m->w, sizeof(double) * (size_t)m->M); }

void ensemble_set_weights(Model *m, const double *w) {
    cJSON *members = cJSON_GetObjectItemCaseSensitive(m->config, "members");
    int i = 0;
    for (cJSON *it = members->child; it; it = it->next, i++) {
        m->w[i] = w[i];
        cJSON_ReplaceItemInObjectCaseSensitive(it, "weight", cJSON_CreateNumber(w[i]));
    }
}

static void ensemble_free(Model *m) {
    if (!m) return;
    for (int i = 0; i < m->M; i++)
        if (m->m[i]) m->ops[i]->free(m->m[i]);
    cJSON_Delete(m->config);
    free(m);
}

/* "%08x" of the CRC of run's results.json into out ("" when unreadable). */
static void ensemble_results_crc(const char *run, char *out, size_t cap) {
    char path[4200];
    uint32_t crc = 0;
    file_join(run, "results.json", path, sizeof path);
    if (crc32_file(path, 0, -1, &crc) != 0) out[0] = '\0';
    else snprintf(out, cap, "%08x", (unsigned)crc);
}

/* Member i from its entry {"run", "model", "weight", "results_crc"}. 0, or -1 after a message. */
static int ensemble_load_member(Model *E, int i, const cJSON *it, const Task *t) {
    const cJSON *run = cJSON_GetObjectItemCaseSensitive(it, "run");
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(it, "model");
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(it, "weight");
    const cJSON *crc = cJSON_GetObjectItemCaseSensitive(it, "results_crc");
    if (!cJSON_IsString(run) || !cJSON_IsString(kind) || !cJSON_IsNumber(w) || !(w->valuedouble >= 0) ||
        !isfinite(w->valuedouble)) {
        user_error_data(ENSEMBLE_HINT, "member %d of the ensemble is not {\"run\", \"model\", \"weight\" >= 0}", i + 1);
        return -1;
    }
    if (!(E->ops[i] = model_find(kind->valuestring))) {
        user_error_data("read it with the glue that built it", "member %s: no model '%s' in this glue",
                        run->valuestring, kind->valuestring);
        return -1;
    }
    char now[16];
    ensemble_results_crc(run->valuestring, now, sizeof now);
    if (cJSON_IsString(crc) && strcmp(crc->valuestring, now) != 0) {
        user_error_data(ENSEMBLE_HINT, "member %s was %s since the ensemble was built", run->valuestring,
                        now[0] ? "trained again" : "removed");
        return -1;
    }
    char ckpt[4200];
    file_join(run->valuestring, MODEL_CKPT, ckpt, sizeof ckpt);
    E->w[i] = w->valuedouble;
    return (E->m[i] = E->ops[i]->load(ckpt, t)) ? 0 : -1;
}

/* The combination's settings: 0, or -1 after a message. */
static int ensemble_read(Model *E, const cJSON *config, const Task *t) {
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(config, "model");
    const cJSON *combine = cJSON_GetObjectItemCaseSensitive(config, "combine");
    const cJSON *members = cJSON_GetObjectItemCaseSensitive(config, "members");
    E->self = cJSON_IsString(kind) && strcmp(kind->valuestring, BOOST_MODEL) == 0 ? &BOOST_OPS : &ENSEMBLE_OPS;
    int how = -1;
    for (int c = 0; c < 3 && cJSON_IsString(combine); c++)
        if (strcmp(combine->valuestring, ENSEMBLE_COMBINES[c]) == 0) how = c;
    int n = cJSON_GetArraySize(members);
    if (how < 0 || !cJSON_IsArray(members) || n < 1 || n > ENSEMBLE_MAX_MEMBERS) {
        user_error_data(ENSEMBLE_HINT, "an ensemble needs combine probs|logits|vote and 1 to %d members",
                        ENSEMBLE_MAX_MEMBERS);
        return -1;
    }
    E->how = (EnsembleCombine)how;
    E->K = t->num_labels == 1 ? 1 : t->num_labels;
    E->multi = t->multi_label;
    if (E->how == ENSEMBLE_VOTE && (E->multi || E->K == 1)) {
        user_error_usage("use combine=probs", "combine=vote counts one label per row; %s is %s", t->display,
                         E->multi ? "multi-label" : "regression");
        return -1;
    }
    return 0;
}

Model *ensemble_from_config(const cJSON *config, const Task *t) {
    Model *E = xcalloc(1, sizeof *E);
    E->config = cJSON_Duplicate(config, 1);
    if (ensemble_read(E, config, t) != 0) {
        ensemble_free(E);
        return NULL;
    }
    double sum = 0;
    for (const cJSON *it = cJSON_GetObjectItemCaseSensitive(config, "members")->child; it; it = it->next) {
        if (ensemble_load_member(E, E->M++, it, t) != 0) {
            ensemble_free(E);
            return NULL;
        }
        sum += E->w[E->M - 1];
    }
    if (!(sum > 0)) {
        user_error_data(ENSEMBLE_HINT, "the ensemble's weights sum to 0");
        ensemble_free(E);
        return NULL;
    }
    return E;
}

void ensemble_member_outputs(Model *E, int i, const Encoded *e, const int *rows, int n, float *out) {
    const ModelOps *ops = E->ops[i];
    Model *m = E->m[i];
    int K = E->K;
    long count = (long)n * K;
    if (ops->forward) {   /* logits, then as the harness's head reports them (train/head.c) */
        ops->forward(m, e->e[i], rows, n, NULL, out);
        if (K == 1) {
            float scale = ops->score_scale ? ops->score_scale(m) : 1.0f;
            for (long j = 0; j < count; j++) out[j] *= scale;
        } else if (E->how != ENSEMBLE_LOGITS) {
            if (E->multi) sigmoid_forward(out, out, n, K);
            else softmax_forward(out, out, n, K);
        }
        return;
    }
    ops->predict(m, e->e[i], rows, n, out);
    if (E->how != ENSEMBLE_LOGITS || K == 1) return;
    for (long j = 0; j < count; j++) {   /* logits that give back these probabilities */
        float p = fmaxf(out[j], ENSEMBLE_MIN_PROB);
        out[j] = E->multi ? logf(p) - logf(fmaxf(1.0f - out[j], ENSEMBLE_MIN_PROB)) : logf(p);
    }
}

static int ensemble_argmax(const float *p, int K) {
    int best = 0;
    for (int k = 1; k < K; k++)
        if (p[k] > p[best]) best = k;
    return best;
}

void ensemble_combine(EnsembleCombine how, int multi, const float *const *outs, const double *w, int M, long n,
                      int K, float *out) {
    double sum = 0;
    for (int i = 0; i < M; i++) sum += w[i];
    for (long r = 0; r < n; r++) {
        float *o = out + r * K;
        if (how == ENSEMBLE_VOTE) {
            double votes[TASK_MAX_LABELS] = {0};
            for (int i = 0; i < M; i++) votes[ensemble_argmax(outs[i] + r * K, K)] += w[i] / sum;
            for (int k = 0; k < K; k++) o[k] = (float)votes[k];
            continue;
        }
        for (int k = 0; k < K; k++) {
            double acc = 0;   /* two equal members at weight 1/2 each give the member's value exactly */
            for (int i = 0; i < M; i++) acc += w[i] / sum * outs[i][r * K + k];
            o[k] = (float)acc;
        }
    }
    if (how != ENSEMBLE_LOGITS || K == 1) return;
    if (multi) sigmoid_forward(out, out, (int)n, K);
    else softmax_forward(out, out, (int)n, K);
}

static void ensemble_predict(Model *E, const Encoded *e, const int *rows, int n, float *out) {
    const float *outs[ENSEMBLE_MAX_MEMBERS];
    float *buf = xmalloc(sizeof(float) * (size_t)E->M * (size_t)(n ? n : 1) * (size_t)E->K);
    for (int i = 0; i < E->M; i++) {
        float *o = buf + (size_t)i * (size_t)(n ? n : 1) * (size_t)E->K;
        ensemble_member_outputs(E, i, e, rows, n, o);
        outs[i] = o;
    }
    ensemble_combine(E->how, E->multi, outs, E->w, E->M, n, E->K, out);
    free(buf);
}

static Encoded *ensemble_encode(Model *E, const Dataset *d) {
    Encoded *e = xcalloc(1, sizeof *e);
    for (int i = 0; i < E->M; i++) {
        e->ops[i] = E->ops[i];
        if (!(e->e[i] = E->ops[i]->encode(E->m[i], d))) {
            for (int j = 0; j < i; j++) E->ops[j]->encoded_free(e->e[j]);
            free(e);
            return NULL;
        }
        e->M++;
    }
    return e;
}

static void ensemble_encoded_free(Encoded *e) {
    if (!e) return;
    for (int i = 0; i < e->M; i++) e->ops[i]->encoded_free(e->e[i]);
    free(e);
}

static int ensemble_save(const Model *E, const char *path) {
    CkptWriter *w = checkpoint_writer_open(path, E->config, -1);
    return w ? checkpoint_writer_commit(w) : -1;
}

static Model *ensemble_load(const char *path, const Task *t) {
    Checkpoint *c = checkpoint_read(path);
    if (!c) return NULL;
    Model *E = ensemble_from_config(c->config, t);
    checkpoint_free(c);
    return E;
}

static long ensemble_num_params(const Model *E) {
    long n = 0;
    for (int i = 0; i < E->M; i++) n += E->ops[i]->num_params(E->m[i]);
    return n;
}

/* The settings the trainer reads, so that `glue finetune --model ensemble`
 * reaches create, which says how an ensemble is made. */
static cJSON *ensemble_default_config(const Task *t) {
    (void)t;
    return cJSON_Parse("{\"epochs\": 1, \"lr\": 0.001, \"batch\": 1, \"combine\": \"probs\"}");
}

static Model *ensemble_create(const cJSON *config, const Task *t, const Dataset *train, uint64_t seed) {
    (void)config, (void)train, (void)seed;
    user_error_usage("glue ensemble TASK --runs DIR,DIR,... or glue boost TASK --model M --rounds R",
                     "an ensemble is built from finished runs of %s, not trained by finetune", t->display);
    return NULL;
}

#define ENSEMBLE_OPS_BODY                                                                              \
    .default_config = ensemble_default_config, .create = ensemble_create, .encode = ensemble_encode,  \
    .encoded_free = ensemble_encoded_free, .train_step = NULL, .predict = ensemble_predict,           \
    .save = ensemble_save, .load = ensemble_load, .num_params = ensemble_num_params, .free = ensemble_free

const ModelOps ENSEMBLE_OPS = {.name = ENSEMBLE_MODEL, ENSEMBLE_OPS_BODY};
const ModelOps BOOST_OPS = {.name = BOOST_MODEL, ENSEMBLE_OPS_BODY};
