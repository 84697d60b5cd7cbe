/* textcnn_io.c — TextCNN checkpoints: the word models' layout
 * (word_model_io.h), with tensors emb, conv<k>.w, conv<k>.b, out.w, out.b.
 * The embedding is stored whole, so a model made from a vectors file loads
 * without that file. The state file holds the optimizer (Adadelta or AdamW)
 * and the dropout stream. */
#include "models/baselines/textcnn.h"

#include <cjson/cJSON.h>
#include <stdlib.h>

#include "core/common.h"
#include "models/baselines/word_model_io.h"

static const WordModelKind TC_KIND = {"textcnn", "TextCNN"};

int tc_save(const TextCnn *m, const char *path) {
    return word_model_save(&TC_KIND, m->task, m->pair, m->config, m->seed, &m->vocab, m->params, path);
}

TextCnn *tc_load(const char *path, const Task *task) {
    WordModelHead head;
    Checkpoint *c = word_model_read(&TC_KIND, task, path, &head);
    if (!c) return NULL;
    TextCnn *m = xcalloc(1, sizeof *m);
    m->config = cJSON_Duplicate(head.config, 1);
    m->task = task;
    m->K = task->num_labels;
    m->pair = head.pair;
    m->vocab = head.vocab;
    if (tc_config_parse(m->config, &m->cfg) != 0) {
        tc_free(m);
        checkpoint_free(c);
        return NULL;
    }
    tc_build(m, head.seed);
    if (checkpoint_load_params(c, m->params) != 0) {
        tc_free(m);
        m = NULL;
    }
    checkpoint_free(c);
    return m;
}

int tc_save_state(const TextCnn *m, const char *path) {
    return word_model_save_state(&TC_KIND, &m->opt, m->params, &m->rng, sizeof m->rng, path);
}

int tc_load_state(TextCnn *m, const char *path) {
    return word_model_load_state(&TC_KIND, &m->opt, m->params, &m->rng, sizeof m->rng, path);
}
