/* bert_hf_export.c — writing a glue BERT as a Hugging Face model directory
 * (config.json, model.safetensors, vocab.txt, tokenizer_config.json) that
 * transformers' from_pretrained loads with no missing or unexpected weights
 * (layout and naming: bert_hf.h). glue's parameter names already are HF's,
 * so the weights go out 1:1; only a BertModel export drops the "bert." prefix. */
#include "models/bert/bert_hf.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "core/files.h"
#include "core/safetensors.h"

/* The class transformers instantiates from config.json's "architectures". */
static const char *hf_architecture(const BertHeads *h) {
    if (h->num_labels > 0) return "BertForSequenceClassification";
    if (h->mlm) return "BertForMaskedLM";
    return "BertModel";
}

static int hf_write_weights(const Bert *m, const char *dir) {
    const Params *p = m->params;
    int n = params_num_tensors(p);
    int base_model = strcmp(hf_architecture(&m->heads), "BertModel") == 0;
    SafeTensorOut *t = xcalloc((size_t)n + 1, sizeof *t);
    for (int i = 0; i < n; i++) {
        const ParamTensor *pt = params_tensor(p, i);
        /* BertModel's own names have no "bert." (save_pretrained writes them so). */
        t[i].name = base_model && strncmp(pt->name, "bert.", 5) == 0 ? pt->name + 5 : pt->name;
        t[i].ndim = pt->ndim;
        for (int d = 0; d < pt->ndim; d++) t[i].shape[d] = pt->shape[d];
        t[i].data = params_data(p, i);
    }
    /* transformers refuses a safetensors file whose metadata lacks format "pt". */
    cJSON *meta = cJSON_CreateObject();
    cJSON_AddStringToObject(meta, "format", "pt");
    char path[4096];
    file_join(dir, BERT_HF_WEIGHTS, path, sizeof path);
    int rc = safetensors_write(path, t, n, meta);
    cJSON_Delete(meta);
    free(t);
    return rc;
}

static int hf_write_config(const Bert *m, const char *dir, const char *const *labels) {
    cJSON *j = bert_config_to_json(&m->cfg);
    cJSON *arch = cJSON_AddArrayToObject(j, "architectures");
    cJSON_AddItemToArray(arch, cJSON_CreateString(hf_architecture(&m->heads)));
    int K = m->heads.num_labels;
    if (K > 0) {
        /* HF keys id2label by the label index as a string. */
        cJSON *id2label = cJSON_AddObjectToObject(j, "id2label");
        cJSON *label2id = cJSON_AddObjectToObject(j, "label2id");
        for (int k = 0; k < K; k++) {
            char key[16], fallback[32];
            snprintf(key, sizeof key, "%d", k);
            snprintf(fallback, sizeof fallback, "LABEL_%d", k);
            const char *name = labels && labels[k] ? labels[k] : fallback;
            cJSON_AddStringToObject(id2label, key, name);
            if (!cJSON_GetObjectItemCaseSensitive(label2id, name)) cJSON_AddNumberToObject(label2id, name, k);
        }
        if (K == 1) cJSON_AddStringToObject(j, "problem_type", "regression");
    }
    if (!cJSON_GetObjectItemCaseSensitive(j, "pad_token_id")) cJSON_AddNumberToObject(j, "pad_token_id", 0);
    cJSON_AddStringToObject(j, "torch_dtype", "float32");
    char path[4096];
    file_join(dir, BERT_HF_CONFIG, path, sizeof path);
    int rc = json_file_write(path, j);
    cJSON_Delete(j);
    return rc;
}

/* vocab.txt (through a temporary file) and the tokenizer's description. */
static int hf_write_vocab(const Bert *m, const char *dir, const Vocab *vocab) {
    size_t len = 0;
    char *text = bert_vocab_text(vocab, &len);
    char path[4096];
    file_join(dir, BERT_HF_VOCAB, path, sizeof path);
    int rc = atomic_write(path, text, len);
    free(text);
    if (rc) return -1;
    cJSON *t = cJSON_CreateObject();
    cJSON_AddStringToObject(t, "tokenizer_class", "BertTokenizer");
    cJSON_AddBoolToObject(t, "do_lower_case", 1);
    cJSON_AddNumberToObject(t, "model_max_length", m->cfg.max_position);
    file_join(dir, BERT_HF_TOKENIZER_CONFIG, path, sizeof path);
    rc = json_file_write(path, t);
    cJSON_Delete(t);
    return rc;
}

int bert_hf_export(const Bert *m, const char *dir, const Vocab *vocab, const char *const *labels) {
    if (m->cfg.alibi) {
        user_error("export a model with \"position_embedding_type\": \"absolute\", or use it with glue itself",
                   "this model uses ALiBi attention (\"position_embedding_type\": \"absolute+alibi\"), which Hugging "
                   "Face's BertModel does not compute: an export would load and give different outputs");
        return -1;
    }
    if (bert_embedding_size(&m->cfg) != m->cfg.hidden_size) {
        user_error("export a model whose embeddings are as wide as its hidden layers, or use it with glue itself",
                   "this model's embeddings (%d) are projected to its hidden size (%d), which Hugging Face's "
                   "BertModel does not compute", bert_embedding_size(&m->cfg), m->cfg.hidden_size);
        return -1;
    }
    if (m->cfg.pre_ln) {
        user_error("export a post-LN model (\"layer_norm_position\": \"post\"), or use it with glue itself",
                   "this model normalises before each sublayer (pre-LN), which Hugging Face's BertModel does not "
                   "compute");
        return -1;
    }
    if (m->heads.pair_features) {
        user_error("export a model fine-tuned with pair_encoding \"cross\", or use it with glue itself",
                   "this model classifies pairs from features of the two texts encoded apart, which Hugging Face's "
                   "BertForSequenceClassification does not compute");
        return -1;
    }
    if (file_make_dir(dir)) return -1;
    if (hf_write_weights(m, dir) || hf_write_config(m, dir, labels)) return -1;
    return vocab ? hf_write_vocab(m, dir, vocab) : 0;
}
