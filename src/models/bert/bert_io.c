/* bert_io.c — BERT checkpoints through core/checkpoint.h: the config record
 * ({"model": "bert", "bert": HF config, "heads": ...}) plus every parameter by
 * its Hugging Face name; loading builds the model from the stored config, so a
 * checkpoint can never be read into a model of another shape. See bert.h. */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "models/bert/bert.h"
#include "text/vocab.h"

#define BERT_CKPT_HINT "pass a checkpoint written by glue (glue finetune / pretrain) for a BERT model"

cJSON *bert_checkpoint_config(const Bert *m) {
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "model", "bert");
    cJSON_AddItemToObject(j, "bert", bert_config_to_json(&m->cfg));
    cJSON *h = cJSON_AddObjectToObject(j, "heads");
    cJSON_AddNumberToObject(h, "mlm", m->heads.mlm);
    cJSON_AddNumberToObject(h, "pooler", m->heads.pooler);
    cJSON_AddNumberToObject(h, "num_labels", m->heads.num_labels);
    if (m->heads.rtd) cJSON_AddNumberToObject(h, "rtd", m->heads.rtd);
    if (m->heads.pair_features) cJSON_AddNumberToObject(h, "pair_features", m->heads.pair_features);
    return j;
}

int bert_save_with(const Bert *m, const char *path, const cJSON *extra, const Vocab *vocab) {
    cJSON *cfg = bert_checkpoint_config(m);
    for (const cJSON *it = extra ? extra->child : NULL; it; it = it->next)
        cJSON_AddItemToObject(cfg, it->string, cJSON_Duplicate(it, 1));
    CkptWriter *w = checkpoint_writer_open(path, cfg, -1);
    cJSON_Delete(cfg);
    if (!w) return -1;
    return checkpoint_writer_finish(w, bert_write(m, w, vocab, CKPT_F32));
}

int bert_write(const Bert *m, CkptWriter *w, const Vocab *vocab, CkptDtype dtype) {
    size_t len = 0;
    char *text = vocab ? bert_vocab_text(vocab, &len) : NULL;
    int bad = checkpoint_write_params(w, m->params, dtype) ||
              (text && checkpoint_write_blob(w, BERT_VOCAB_BLOB, text, len));
    free(text);
    return bad ? -1 : 0;
}

int bert_save(const Bert *m, const char *path) { return bert_save_with(m, path, NULL, NULL); }

/* A non-negative whole number under heads.<key>; -1 when malformed. */
static int bert_head_value(const cJSON *h, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(h, key);
    if (!v) return 0;
    if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble > 1e6) return -1;
    return (int)v->valuedouble;
}

int bert_checkpoint_read_config(const Checkpoint *c, BertConfig *cfg, BertHeads *heads) {
    const cJSON *model = cJSON_GetObjectItemCaseSensitive(c->config, "model");
    const cJSON *bert = cJSON_GetObjectItemCaseSensitive(c->config, "bert");
    if (!cJSON_IsString(model) || strcmp(model->valuestring, "bert") != 0 || !bert) {
        user_error_data(BERT_CKPT_HINT, "%s: not a BERT checkpoint (its config says model %s)", c->path,
                   cJSON_IsString(model) ? model->valuestring : "(none)");
        return -1;
    }
    if (bert_config_from_json(bert, c->path, cfg) != 0) return -1;
    const cJSON *h = cJSON_GetObjectItemCaseSensitive(c->config, "heads");
    BertHeads hd = {.mlm = bert_head_value(h, "mlm"), .rtd = bert_head_value(h, "rtd"),
                    .pooler = bert_head_value(h, "pooler"), .num_labels = bert_head_value(h, "num_labels"),
                    .pair_features = bert_head_value(h, "pair_features")};
    if (hd.mlm < 0 || hd.rtd < 0 || hd.pooler < 0 || hd.num_labels < 0 ||
        (hd.pair_features && (hd.pair_features < 4 || hd.pair_features > 5 || hd.num_labels < 2))) {
        user_error_data(BERT_CKPT_HINT, "%s: malformed \"heads\" in the checkpoint's config", c->path);
        return -1;
    }
    if (heads) *heads = hd;
    return 0;
}

/* Which tensors a load requires, may take, or must leave fresh. */
typedef enum { BERT_TAKE_REQUIRED, BERT_TAKE_IF_PRESENT, BERT_TAKE_NEVER } BertTake;

static BertTake bert_take_rule(const char *name, int all_required, int copy_classifier) {
    if (all_required) return BERT_TAKE_REQUIRED;
    if (strncmp(name, "bert.embeddings.", 16) == 0 || strncmp(name, "bert.encoder.", 13) == 0)
        return BERT_TAKE_REQUIRED;
    if (strncmp(name, "classifier.", 11) == 0) return copy_classifier ? BERT_TAKE_IF_PRESENT : BERT_TAKE_NEVER;
    return BERT_TAKE_IF_PRESENT;   /* pooler, MLM head */
}

static int bert_shape_equal(const CkptTensor *t, const ParamTensor *p) {
    if (t->ndim != p->ndim) return 0;
    for (int d = 0; d < t->ndim; d++)
        if (t->shape[d] != p->shape[d]) return 0;
    return 1;
}

/* The name of the stored tensor that m's tensor `name` takes: itself, or,
 * when the checkpoint holds fewer layers (stored_layers > 0) than m, encoder
 * layer l takes stored layer l mod stored_layers. */
static const char *bert_source_name(const char *name, int stored_layers, char *buf, size_t cap) {
    int layer, rest = 0;
    if (stored_layers <= 0 || sscanf(name, "bert.encoder.layer.%d.%n", &layer, &rest) != 1 || rest == 0 ||
        layer < stored_layers)
        return name;
    snprintf(buf, cap, "bert.encoder.layer.%d.%s", layer % stored_layers, name + rest);
    return buf;
}

/* Copies the tensors of c into m by the rules above (all_required: the model
 * exactly as saved; stored_layers: see bert_source_name); -1 after a message. */
static int bert_copy_tensors(Bert *m, const Checkpoint *c, int all_required, int copy_classifier, int stored_layers) {
    const Params *p = m->params;
    for (int h = 0; h < params_num_tensors(p); h++) {
        const ParamTensor *pt = params_tensor(p, h);
        BertTake rule = bert_take_rule(pt->name, all_required, copy_classifier);
        if (rule == BERT_TAKE_NEVER) continue;
        char buf[256];
        const CkptTensor *t = checkpoint_find_tensor(c, bert_source_name(pt->name, stored_layers, buf, sizeof buf));
        if (!t) {
            if (rule == BERT_TAKE_IF_PRESENT) continue;
            user_error_data(BERT_CKPT_HINT, "%s: tensor %s is missing", c->path, pt->name);
            return -1;
        }
        if (!bert_shape_equal(t, pt)) {
            /* A classifier for another number of labels is simply not reused. */
            if (!all_required && strncmp(pt->name, "classifier.", 11) == 0) continue;
            user_error_data(BERT_CKPT_HINT, "%s: tensor %s has a shape that does not match the stored config", c->path,
                       pt->name);
            return -1;
        }
        memcpy(params_data(p, h), t->data, sizeof(float) * (size_t)pt->numel);
    }
    return 0;
}

int bert_init_from(Bert *m, const Checkpoint *c, int stack) {
    BertConfig cfg;
    if (bert_checkpoint_read_config(c, &cfg, NULL) != 0) return -1;
    if (bert_checkpoint_is_int8(c)) {
        user_error("start from the fp32 run it was quantized from", "%s: an int8 checkpoint is for inference only; "
                   "glue does not train from it", c->path);
        return -1;
    }
    const BertConfig *a = &m->cfg;
    int layers_fit = stack ? cfg.num_layers < a->num_layers : cfg.num_layers == a->num_layers;
    if (cfg.vocab_size != a->vocab_size || cfg.hidden_size != a->hidden_size || !layers_fit ||
        cfg.num_heads != a->num_heads || cfg.intermediate_size != a->intermediate_size ||
        cfg.max_position != a->max_position || cfg.type_vocab_size != a->type_vocab_size ||
        bert_embedding_size(&cfg) != bert_embedding_size(a) || cfg.alibi != a->alibi || cfg.pre_ln != a->pre_ln) {
        user_error(stack ? "stack a checkpoint of the same widths and fewer layers than the model config"
                         : "continue with the model config the checkpoint was trained with (its config.json)",
                   "%s: another architecture (hidden %d, layers %d, heads %d, embeddings %d%s%s) than this run's "
                   "(hidden %d, layers %d, heads %d, embeddings %d%s%s)%s",
                   c->path, cfg.hidden_size, cfg.num_layers, cfg.num_heads, bert_embedding_size(&cfg),
                   cfg.alibi ? ", ALiBi" : "", cfg.pre_ln ? ", pre-LN" : "", a->hidden_size, a->num_layers,
                   a->num_heads, bert_embedding_size(a), a->alibi ? ", ALiBi" : "", a->pre_ln ? ", pre-LN" : "",
                   stack ? " for stacking" : "");
        return -1;
    }
    return bert_copy_tensors(m, c, 0, 0, stack ? cfg.num_layers : 0);
}

Bert *bert_from_checkpoint(const Checkpoint *c, const BertHeads *heads, int copy_classifier, uint64_t seed) {
    BertConfig cfg;
    BertHeads stored;
    if (bert_checkpoint_read_config(c, &cfg, &stored) != 0) return NULL;
    if (bert_checkpoint_is_int8(c) && (heads || !copy_classifier)) {   /* a model to train from it */
        user_error("start from the fp32 run it was quantized from", "%s: an int8 checkpoint is for inference only; "
                   "glue does not train from it", c->path);
        return NULL;
    }
    Bert *m = bert_create(&cfg, heads ? heads : &stored, seed);
    /* An int8 checkpoint: its dense weights packed from the stored integers. */
    if (bert_copy_tensors(m, c, heads == NULL, copy_classifier, 0) != 0 || bert_int8_load(m, c) != 0) {
        bert_free(m);
        return NULL;
    }
    return m;
}

Bert *bert_load(const char *path) {
    Checkpoint *c = checkpoint_read(path);
    if (!c) return NULL;
    Bert *m = bert_from_checkpoint(c, NULL, 1, 0);
    checkpoint_free(c);
    return m;
}

char *bert_vocab_text(const Vocab *v, size_t *len) {
    size_t n = 0, cap = 1;
    for (int i = 0; i < vocab_size(v); i++) cap += strlen(vocab_token(v, i)) + 1;
    char *text = xmalloc(cap);
    for (int i = 0; i < vocab_size(v); i++) {
        size_t l = strlen(vocab_token(v, i));
        memcpy(text + n, vocab_token(v, i), l);
        n += l;
        text[n++] = '\n';
    }
    text[n] = '\0';
    if (len) *len = n;
    return text;
}

Vocab *bert_checkpoint_vocab(const Checkpoint *c) {
    const CkptBlob *b = checkpoint_find_blob(c, BERT_VOCAB_BLOB);
    if (!b || b->size == 0) return NULL;
    /* Split a copy in place: one token per line. */
    char *text = xmalloc(b->size + 1);
    memcpy(text, b->data, b->size);
    text[b->size] = '\0';
    int n = 0;
    for (size_t i = 0; i < b->size; i++) n += text[i] == '\n';
    n += text[b->size - 1] != '\n';
    const char **tokens = xmalloc(sizeof *tokens * (size_t)n);
    int k = 0;
    for (char *p = text; k < n; k++) {
        char *e = strchr(p, '\n');
        if (e) *e = '\0';
        tokens[k] = p;
        p = e ? e + 1 : p + strlen(p);
    }
    Vocab *v = vocab_from_tokens(tokens, n);
    free(tokens);
    free(text);
    return v;
}
