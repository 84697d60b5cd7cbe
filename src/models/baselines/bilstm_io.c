/* bilstm_io.c — BiLSTM checkpoints: the word models' layout
 * (word_model_io.h), tensors by their arena names ("emb", "lstm.w_ih", ...);
 * the state file holds Adam's moments and step count and the dropout stream. */
#include "models/baselines/bilstm.h"

#include <cjson/cJSON.h>
#include <stdlib.h>

#include "core/common.h"
#include "models/baselines/word_model_io.h"

static const WordModelKind BL_KIND = {"bilstm", "BiLSTM"};

int bl_save(const BiLstm *m, const char *path) {
    return word_model_save(&BL_KIND, m->task, m->pair, m->config, m->seed, &m->vocab, m->params, path);
}

BiLstm *bl_load(const char *path, const Task *task) {
    WordModelHead head;
    Checkpoint *c = word_model_read(&BL_KIND, task, path, &head);
    if (!c) return NULL;
    BiLstm *m = bl_new(head.config, task, &head.vocab, head.seed, head.pair);
    if (m && checkpoint_load_params(c, m->params) != 0) {
        bl_free(m);
        m = NULL;
    }
    checkpoint_free(c);
    return m;
}

int bl_save_state(const BiLstm *m, const char *path) {
    return word_model_save_state(&BL_KIND, &m->opt, m->params, &m->rng, sizeof m->rng, path);
}

int bl_load_state(BiLstm *m, const char *path) {
    bl_train_prepare(m);   /* the optimizer's slots exist before they are filled */
    return word_model_load_state(&BL_KIND, &m->opt, m->params, &m->rng, sizeof m->rng, path);
}
