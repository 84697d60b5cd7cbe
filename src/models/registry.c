/* registry.c — the table of model kinds behind ModelOps (see model.h). */
#include "models/model.h"

#include "core/common.h"
#include "core/editdist.h"

#include <string.h>

/* Strong references: every model object file is pulled into any link, a
 * static archive (libglue.a) included. Weak ones let a static link drop every
 * model without a word; `make test` links such a binary and checks its list. */
extern const ModelOps BERT_OPS, FASTTEXT_OPS, TEXTCNN_OPS, BILSTM_OPS, TEXTRNN_OPS, RCNN_OPS, HAN_OPS, DPCNN_OPS,
    TRANSFORMER_OPS, DMN_OPS, ENTNET_OPS, SEQ2SEQ_ATTN_OPS;
/* Combinations of finished runs (models/ensemble/ensemble.h): found by name,
 * not listed by model_at (finetune does not train them). */
extern const ModelOps ENSEMBLE_OPS, BOOST_OPS;
static const ModelOps *const combinations[] = {&ENSEMBLE_OPS, &BOOST_OPS};
enum { COMBINATIONS = sizeof combinations / sizeof combinations[0] };

enum { MODELS_BUILT_IN = 12, MODELS_MAX = 16 };
static const ModelOps *models[MODELS_MAX] = {&BERT_OPS, &FASTTEXT_OPS, &TEXTCNN_OPS, &BILSTM_OPS,
                                             &TEXTRNN_OPS, &RCNN_OPS, &HAN_OPS, &DPCNN_OPS,
                                             &TRANSFORMER_OPS, &DMN_OPS, &ENTNET_OPS, &SEQ2SEQ_ATTN_OPS};
static int num_models = MODELS_BUILT_IN;

void model_register(const ModelOps *ops) {
    if (num_models == MODELS_MAX) DIE("model_register: more than %d models", MODELS_MAX);
    int logits = ops->forward && ops->backward && ops->update, own = ops->train_step && ops->predict;
    if (logits == own) DIE("model_register: %s needs forward, backward and update, or train_step and predict", ops->name);
    if (model_find(ops->name)) DIE("model_register: a model named '%s' exists", ops->name);
    models[num_models++] = ops;
}

int model_count(void) { return num_models; }

void model_names(char *out, size_t cap) {
    size_t n = 0;
    if (cap) out[0] = '\0';
    for (int i = 0; i < num_models && n < cap; i++) {
        int w = snprintf(out + n, cap - n, "%s%s", i ? ", " : "", models[i]->name);
        if (w < 0) break;
        n += (size_t)w;
    }
}

const ModelOps *model_at(int i) {
    if (i < 0 || i >= num_models) DIE("model_at: %d of %d", i, num_models);
    return models[i];
}

const ModelOps *model_find(const char *name) {
    for (int i = 0; i < num_models; i++)
        if (strcmp(models[i]->name, name) == 0) return models[i];
    for (int i = 0; i < COMBINATIONS; i++)
        if (strcmp(combinations[i]->name, name) == 0) return combinations[i];
    return NULL;
}

const char *model_suggest(const char *name) {
    const char *best = NULL;
    int best_d = 1 << 30;
    for (int i = 0; i < num_models; i++) {
        int d = str_edit_distance(name, models[i]->name);
        if (d < best_d) { best_d = d; best = models[i]->name; }
    }
    for (int i = 0; i < COMBINATIONS; i++) {
        int d = str_edit_distance(name, combinations[i]->name);
        if (d < best_d) { best_d = d; best = combinations[i]->name; }
    }
    return best && str_is_near(name, best_d) ? best : NULL;
}
