/* bert_hf_classifier.c — a Hugging Face BertForSequenceClassification
 * directory (config.json with id2label, model.safetensors, vocab.txt) as a
 * GLUE task model, scored as it is (`glue eval/predict TASK --init DIR`), so
 * published GLUE models are measured on the same footing as glue's own.
 *
 * The classifier must fit the task: K outputs for a K-class task, one output
 * (a regression head) for STS-B only. Its classes are mapped to the task's
 * labels by id2label: names that are the task's label strings (in any order:
 * the classifier's rows are permuted to the task's order), or the generic
 * LABEL_0, LABEL_1, ... (taken in the task's order, which is what a model
 * fine-tuned on the GLUE files learnt). Anything else is one clear error. The
 * pair goes in as "[CLS] a [SEP] b [SEP]" through [CLS] (HF's encoding). */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "core/files.h"
#include "models/bert/bert_hf.h"
#include "models/bert/bert_task.h"
#include "models/run_config.h"

#define HF_CLS_HINT "pass a BertForSequenceClassification directory fine-tuned for this task"

/* perm[i] = the task label of the classifier's output i, from config.json's
 * id2label. 0 ok, -1 after a message. */
static int hf_label_map(const char *dir, const Task *t, int K, int *perm) {
    char path[4200];
    file_join(dir, BERT_HF_CONFIG, path, sizeof path);
    cJSON *cfg = json_file_read(path, 1);
    if (!cfg) return -1;
    const cJSON *map = cJSON_GetObjectItemCaseSensitive(cfg, "id2label");
    int generic = 1, rc = 0;
    /* Names for outputs the classifier does not have (or outputs without a
     * name) say the files are not one model: its labels cannot be trusted. */
    if (cJSON_IsObject(map) && cJSON_GetArraySize(map) != K) {
        user_error_data(HF_CLS_HINT, "%s: id2label names %d labels but the classifier has %d outputs", path,
                        cJSON_GetArraySize(map), K);
        cJSON_Delete(cfg);
        return -1;
    }
    for (int i = 0; i < K; i++) {
        char key[16], want[32];
        snprintf(key, sizeof key, "%d", i);
        snprintf(want, sizeof want, "LABEL_%d", i);
        const cJSON *name = map ? cJSON_GetObjectItemCaseSensitive(map, key) : NULL;
        perm[i] = i;
        if (!name) continue;   /* no id2label: HF's default LABEL_i */
        if (!cJSON_IsString(name)) generic = 0, perm[i] = -1;
        else if (strcmp(name->valuestring, want) != 0) generic = 0, perm[i] = task_label_index(t, name->valuestring);
    }
    if (!generic) {
        unsigned seen = 0;
        for (int i = 0; i < K && rc == 0; i++) {
            if (perm[i] < 0 || (seen & (1u << perm[i]))) rc = -1;
            else seen |= 1u << perm[i];
        }
    }
    if (rc) {
        char labels[128] = "", names[256] = "";
        for (int i = 0; i < t->num_labels; i++)
            snprintf(labels + strlen(labels), sizeof labels - strlen(labels), "%s%s", i ? ", " : "", t->labels[i]);
        char *s = cJSON_PrintUnformatted(map);
        snprintf(names, sizeof names, "%s", s ? s : "?");
        free(s);
        user_error_data(HF_CLS_HINT, "%s: id2label %s does not match %s's labels (%s, or LABEL_0 .. LABEL_%d)", path,
                   names, t->display, labels, K - 1);
    }
    cJSON_Delete(cfg);
    return rc;
}

/* Rows of the classifier reordered so that output perm[i] is the old output i. */
static void hf_permute_classifier(Bert *b, const int *perm) {
    int K = b->heads.num_labels, C = b->cfg.hidden_size;
    float *w = xmalloc(sizeof(float) * (size_t)K * (size_t)C), bias[TASK_MAX_LABELS];
    memcpy(w, b->w.cls_w, sizeof(float) * (size_t)K * (size_t)C);
    memcpy(bias, b->w.cls_b, sizeof(float) * (size_t)K);
    for (int i = 0; i < K; i++) {
        memcpy(b->w.cls_w + (long)perm[i] * C, w + (long)i * C, sizeof(float) * (size_t)C);
        b->w.cls_b[perm[i]] = bias[i];
    }
    free(w);
}

Model *bert_hf_classifier_load(const char *dir, const Task *task) {
    Checkpoint *c = bert_hf_read(dir);
    if (!c) return NULL;
    BertConfig cfg;
    BertHeads heads;
    int K = task->num_labels, perm[TASK_MAX_LABELS];
    Bert *bert = NULL;
    Vocab *vocab = NULL;
    if (bert_checkpoint_read_config(c, &cfg, &heads) != 0) goto fail;
    if (heads.num_labels == 0) {
        user_error_data(HF_CLS_HINT, "%s: a BERT without a classification head (no classifier.weight)", dir);
        goto fail;
    }
    if (heads.num_labels != K) {
        user_error_data(HF_CLS_HINT, "%s: %s head with %d output%s; %s needs %s", dir,
                   heads.num_labels == 1 ? "a regression" : "a classification", heads.num_labels,
                   heads.num_labels == 1 ? "" : "s", task->display,
                   K == 1 ? "one (regression)" : K == 2 ? "2 classes" : "3 classes");
        goto fail;
    }
    if (K > 1 && hf_label_map(dir, task, K, perm) != 0) goto fail;
    char vpath[4200];
    if (bert_hf_vocab_path(dir, vpath, sizeof vpath) != 0) {
        user_error_io("put the model's vocab.txt beside it", "%s: no vocab.txt (the vocabulary the model was trained with)",
                   dir);
        goto fail;
    }
    if (!(vocab = vocab_load(vpath)) || !(bert = bert_from_checkpoint(c, NULL, 1, 0))) goto fail;
    if (K > 1) hf_permute_classifier(bert, perm);
    /* Scored as HF computes it: the joined pair through [CLS], at most 128 tokens. */
    cJSON *config = BERT_OPS.default_config(task);
    run_config_set(config, "pair_encoding", "cross", "the Hugging Face classifier");
    if (cfg.max_position < 128) {
        char len[16];
        snprintf(len, sizeof len, "%d", cfg.max_position);
        run_config_set(config, "max_len", len, "the model's max_position_embeddings");
    }
    BertTaskModel *m = bert_task_model_new(bert, vocab, config, task, 0, 0);
    cJSON_Delete(config);
    checkpoint_free(c);
    return (Model *)m;   /* bert and vocab owned by m (freed with it on failure) */
fail:
    bert_free(bert);
    vocab_free(vocab);
    checkpoint_free(c);
    return NULL;
}
