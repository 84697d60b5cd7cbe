/* textrnn_io.c — loading TextRNN and BiLSTM checkpoints (the word models'
 * layout, word_model_io.h: saving is shared); tensors by their arena names
 * ("emb", "lstm.w_ih", ...), the state file Adam's moments, step count and the
 * dropout stream. A bilstm file from before the cell and pool settings reads
 * as cell=lstm pool=max, which it was. */
#include "models/baselines/textrnn.h"

#include <cjson/cJSON.h>
#include <stdlib.h>

#include "core/common.h"
#include "models/baselines/word_model_io.h"

static Model *tr_load(const WordModelKind *kind, const char *path, const Task *task) {
    WordModelHead head;
    Checkpoint *c = word_model_read(kind, task, path, &head);
    if (!c) return NULL;
    TextRnn *m = tr_new(kind, head.config, task, &head.vocab, head.seed, head.pair, NULL);
    if (m && checkpoint_load_params(c, m->base.params) != 0) {
        tr_free(m);
        m = NULL;
    }
    checkpoint_free(c);
    return (Model *)m;
}

Model *tr_load_textrnn(const char *path, const Task *task) { return tr_load(&TEXTRNN_KIND, path, task); }
Model *tr_load_bilstm(const char *path, const Task *task) { return tr_load(&BILSTM_KIND, path, task); }
Model *tr_load_rcnn(const char *path, const Task *task) { return tr_load(&RCNN_KIND, path, task); }
Model *tr_load_han(const char *path, const Task *task) { return tr_load(&HAN_KIND, path, task); }

int tr_load_state(Model *m, const char *path) {
    tr_train_prepare((TextRnn *)m);   /* the optimizer's slots exist before they are filled */
    return word_model_load_state_ops(m, path);
}
