/* bilstm_io.c — loading BiLSTM checkpoints (the word models' layout,
 * word_model_io.h: saving is shared); tensors by their arena names ("emb",
 * "lstm.w_ih", ...), the state file Adam's moments, step count and the
 * dropout stream. */
#include "models/baselines/bilstm.h"

#include <cjson/cJSON.h>
#include <stdlib.h>

#include "core/common.h"
#include "models/baselines/word_model_io.h"

Model *bl_load(const char *path, const Task *task) {
    WordModelHead head;
    Checkpoint *c = word_model_read(&BL_KIND, task, path, &head);
    if (!c) return NULL;
    BiLstm *m = bl_new(head.config, task, &head.vocab, head.seed, head.pair);
    if (m && checkpoint_load_params(c, m->base.params) != 0) {
        bl_free(m);
        m = NULL;
    }
    checkpoint_free(c);
    return (Model *)m;
}

int bl_load_state(Model *m, const char *path) {
    bl_train_prepare((BiLstm *)m);   /* the optimizer's slots exist before they are filled */
    return word_model_load_state_ops(m, path);
}
