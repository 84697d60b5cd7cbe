/* test_registry.c — the model registry: the built-in models are found by
 * name in this binary and in a glue linked from the library as a static archive
 * (make builds $GLUE_STATIC_BIN that way; weak references used to drop every
 * model there), and the test binary's own model is added by model_register. */
#include "models/model.h"
#include "tests/test.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BUILT_IN "bert, fasttext, textcnn, bilstm, textrnn, rcnn, han, dpcnn, transformer, dmn, entnet, seq2seq_attn"

TEST(registry_has_every_model) {
    static const char *const names[] = {"bert", "fasttext", "textcnn", "bilstm", "textrnn", "rcnn", "han", "dpcnn", "transformer",
                                        "dmn", "entnet", "seq2seq_attn", "testbow"};
    enum { N = sizeof names / sizeof names[0] };
    for (int i = 0; i < N; i++) {
        const ModelOps *ops = model_find(names[i]);
        CHECK_MSG(ops && strcmp(ops->name, names[i]) == 0, "model %s missing", names[i]);
    }
    CHECK_EQ_INT(model_count(), N);
    CHECK(strcmp(model_suggest("bertt"), "bert") == 0);
    CHECK_MSG(model_suggest("nosuch") == NULL, "'nosuch' is no misspelling of any model (it suggested 'boost')");
}

/* model.h's contract: logits for the harness's head (forward, backward,
 * update), or, only where the output layer is the loss (fastText; the label
 * decoder, whose loss is over label sequences), a step of its own
 * (train_step, predict) — one or the other, whole. */
TEST(registry_models_compute_logits_or_own_their_step) {
    for (int i = 0; i < model_count(); i++) {
        const ModelOps *ops = model_at(i);
        int logits = ops->forward && ops->backward && ops->update, own = ops->train_step && ops->predict;
        int any_logits = ops->forward || ops->backward || ops->update, any_own = ops->train_step || ops->predict;
        CHECK_MSG(logits ? !any_own : own && !any_logits, "%s: forward/backward/update or train_step/predict",
                  ops->name);
        CHECK_MSG(own == (strcmp(ops->name, "fasttext") == 0 || strcmp(ops->name, "seq2seq_attn") == 0), "%s: %s its own step", ops->name,
                  own ? "takes" : "does not take");
    }
}

TEST(registry_static_archive_link_keeps_models) {
    const char *bin = getenv("GLUE_STATIC_BIN");   /* make test sets it; build/ is the default build */
    if (!bin || !*bin) bin = "build/glue-static";
    if (!CHECK_MSG(access(bin, X_OK) == 0, "%s is missing: run through 'make test' (it links it)", bin)) return;
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s eval sst2 --model nosuch 2>&1", bin);
    int status;
    char *out = test_run(cmd, &status);
    CHECK_MSG(status != 0 && strstr(out, "models built into this binary: " BUILT_IN), "status %d: %s", status, out);
    free(out);
}
