/* textcnn_io.c — loading TextCNN checkpoints (the word models' layout,
 * word_model_io.h: saving and the state file are shared), tensors emb,
 * conv<k>.w, conv<k>.b, out.w, out.b. The embedding is stored whole, so a
 * model made from a vectors file loads without that file. */
#include "models/baselines/textcnn.h"

#include <cjson/cJSON.h>
#include <stdlib.h>

#include "core/common.h"
#include "models/baselines/word_model_io.h"

static Model *tc_new_ops(const cJSON *config, const Task *task) { return (Model *)tc_new(config, task); }
static void tc_build_ops(Model *m, uint64_t seed) { tc_build((TextCnn *)m, seed); }
static void tc_free_ops(Model *m) { tc_free((TextCnn *)m); }
Model *tc_load(const char *path, const Task *task) {
    return word_model_load(&TC_KIND, task, path, tc_new_ops, tc_build_ops, tc_free_ops);
}
