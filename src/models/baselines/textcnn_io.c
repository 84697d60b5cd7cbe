/* textcnn_io.c — loading TextCNN checkpoints (the word models' layout,
 * word_model_io.h: saving and the state file are shared), tensors emb,
 * conv<k>.w, conv<k>.b, out.w, out.b. The embedding is stored whole, so a
 * model made from a vectors file loads without that file. */
#include "models/baselines/textcnn.h"

#include <cjson/cJSON.h>
#include <stdlib.h>

#include "core/common.h"
#include "models/baselines/word_model_io.h"

Model *tc_load(const char *path, const Task *task) {
    WordModelHead head;
    Checkpoint *c = word_model_read(&TC_KIND, task, path, &head);
    if (!c) return NULL;
    TextCnn *m = tc_new(head.config, task);
    if (m) {
        m->base.pair = head.pair;
        m->base.vocab = head.vocab;
        tc_build(m, head.seed);
    } else {
        word_vocab_free(&head.vocab);
    }
    if (m && checkpoint_load_params(c, m->base.params) != 0) {
        tc_free(m);
        m = NULL;
    }
    checkpoint_free(c);
    return (Model *)m;
}
