/* registry.c — the table of model kinds behind ModelOps (see model.h). */
#include "models/model.h"

#include "core/editdist.h"

#include <string.h>

/* DEVELOPMENT ONLY (removed before landing): weak so the table links while models
 * are being written; a missing model is skipped. */
extern const ModelOps FASTTEXT_OPS __attribute__((weak));
extern const ModelOps TEXTCNN_OPS __attribute__((weak));
extern const ModelOps BILSTM_OPS __attribute__((weak));
extern const ModelOps BERT_OPS __attribute__((weak));

/* Defined only by the test binary (tests/test_bow_model.c): a bag-of-words
 * logistic regression that trains in milliseconds, so the trainer and the
 * commands can be tested end to end without a real model's cost. Weak, hence
 * absent (NULL) from the `glue` binary. */
extern const ModelOps TEST_BOW_OPS __attribute__((weak));

const ModelOps *const MODELS[] = {&BERT_OPS, &FASTTEXT_OPS, &TEXTCNN_OPS, &BILSTM_OPS, &TEST_BOW_OPS};
const int NUM_MODELS = (int)(sizeof MODELS / sizeof MODELS[0]);

const ModelOps *model_find(const char *name) {
    for (int i = 0; i < NUM_MODELS; i++)
        if (MODELS[i] && strcmp(MODELS[i]->name, name) == 0) return MODELS[i];
    return NULL;
}

const char *model_suggest(const char *name) {
    const char *best = NULL;
    int best_d = 1 << 30;
    for (int i = 0; i < NUM_MODELS; i++) {
        if (!MODELS[i]) continue;
        int d = str_edit_distance(name, MODELS[i]->name);
        if (d < best_d) { best_d = d; best = MODELS[i]->name; }
    }
    return best ? best : "bert";
}
