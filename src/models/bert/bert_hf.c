/* bert_hf.c — reading a Hugging Face BERT directory into a glue BERT
 * checkpoint (what is accepted and how names map: bert_hf.h). The work is all
 * about names: normalise every style to glue's (= HF BertFor* with "bert."),
 * fold the tied decoder back, work out the heads from what is present, then
 * compare with the names a BERT of that config needs, reporting every missing
 * name at once and every unused one in a single warning. */
#include "models/bert/bert_hf.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/common.h"
#include "core/files.h"

/* Names shown in one missing/unused message before "... and N more". */
enum { HF_NAMES_SHOWN = 8, HF_NAME_MAX = PARAM_NAME_MAX };

static const char *const HINT_NOT_BERT =
    "glue reads Hugging Face BertModel, BertForMaskedLM, BertForPreTraining and BertForSequenceClassification "
    "directories whose config.json describes the weights' size";

/* A needed tensor: its name and shape as dimension codes, resolved against
 * the config (V vocab, P positions, TV token types, C hidden, FF intermediate,
 * K labels); a 0 code ends the shape. */
typedef enum { HF_END, HF_V, HF_P, HF_TV, HF_C, HF_FF, HF_K } HfDim;
typedef struct {
    const char *name;
    HfDim dims[2];
} HfNeed;

static const HfNeed HF_LAYER_PARTS[] = {
    {"attention.self.query.weight", {HF_C, HF_C}},        {"attention.self.query.bias", {HF_C}},
    {"attention.self.key.weight", {HF_C, HF_C}},          {"attention.self.key.bias", {HF_C}},
    {"attention.self.value.weight", {HF_C, HF_C}},        {"attention.self.value.bias", {HF_C}},
    {"attention.output.dense.weight", {HF_C, HF_C}},      {"attention.output.dense.bias", {HF_C}},
    {"attention.output.LayerNorm.weight", {HF_C}},        {"attention.output.LayerNorm.bias", {HF_C}},
    {"intermediate.dense.weight", {HF_FF, HF_C}},         {"intermediate.dense.bias", {HF_FF}},
    {"output.dense.weight", {HF_C, HF_FF}},               {"output.dense.bias", {HF_C}},
    {"output.LayerNorm.weight", {HF_C}},                  {"output.LayerNorm.bias", {HF_C}},
};
static const HfNeed HF_EMBEDDINGS[] = {
    {"bert.embeddings.word_embeddings.weight", {HF_V, HF_C}},
    {"bert.embeddings.position_embeddings.weight", {HF_P, HF_C}},
    {"bert.embeddings.token_type_embeddings.weight", {HF_TV, HF_C}},
    {"bert.embeddings.LayerNorm.weight", {HF_C}},
    {"bert.embeddings.LayerNorm.bias", {HF_C}},
};
static const HfNeed HF_POOLER[] = {{"bert.pooler.dense.weight", {HF_C, HF_C}}, {"bert.pooler.dense.bias", {HF_C}}};
static const HfNeed HF_MLM[] = {
    {"cls.predictions.transform.dense.weight", {HF_C, HF_C}},
    {"cls.predictions.transform.dense.bias", {HF_C}},
    {"cls.predictions.transform.LayerNorm.weight", {HF_C}},
    {"cls.predictions.transform.LayerNorm.bias", {HF_C}},
    {"cls.predictions.bias", {HF_V}},
};
static const HfNeed HF_CLASSIFIER[] = {{"classifier.weight", {HF_K, HF_C}}, {"classifier.bias", {HF_K}}};
#define HF_COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

#define HF_WORD_EMB "bert.embeddings.word_embeddings.weight"
#define HF_DECODER_W "cls.predictions.decoder.weight"
#define HF_DECODER_B "cls.predictions.decoder.bias"
#define HF_MLM_BIAS "cls.predictions.bias"

int bert_hf_is_dir(const char *path) {
    /* Not config.json alone: glue's run directories have one too. */
    static const char *const WEIGHTS[] = {BERT_HF_WEIGHTS, BERT_HF_WEIGHTS_INDEX, BERT_HF_PICKLE};
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode)) return 0;
    for (int i = 0; i < 3; i++) {
        char f[4096];
        file_join(path, WEIGHTS[i], f, sizeof f);
        if (file_exists(f)) return 1;
    }
    return 0;
}

int bert_hf_vocab_path(const char *dir, char *out, size_t cap) {
    file_join(dir, BERT_HF_VOCAB, out, cap);
    return file_exists(out) ? 0 : -1;
}

/* ---- names ---- */

static int hf_starts(const char *s, const char *prefix) { return strncmp(s, prefix, strlen(prefix)) == 0; }

static int hf_ends(const char *s, const char *suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* glue's name for a HF name: "bert." before a bare BertModel name, and
 * LayerNorm "gamma"/"beta" (TensorFlow-era exports) as "weight"/"bias". */
static char *hf_glue_name(const char *hf) {
    int bare = hf_starts(hf, "embeddings.") || hf_starts(hf, "encoder.") || hf_starts(hf, "pooler.");
    size_t cap = strlen(hf) + 8;
    char *g = xmalloc(cap);
    snprintf(g, cap, "%s%s", bare ? "bert." : "", hf);
    size_t n = strlen(g);
    if (hf_ends(g, "LayerNorm.gamma")) strcpy(g + n - 5, "weight");   /* "gamma" -> "weight": cap has room */
    else if (hf_ends(g, "LayerNorm.beta")) strcpy(g + n - 4, "bias");
    return g;
}

/* ---- tensor list edits ---- */

static int hf_find(const Checkpoint *c, const char *name) {
    for (int i = 0; i < c->n_tensors; i++)
        if (strcmp(c->tensors[i].name, name) == 0) return i;
    return -1;
}

static void hf_drop(Checkpoint *c, int i) {
    free(c->tensors[i].name);
    free(c->tensors[i].data);
    c->tensors[i] = c->tensors[--c->n_tensors];
}

static int hf_same_tensor(const CkptTensor *a, const CkptTensor *b) {
    if (a->ndim != b->ndim || a->numel != b->numel) return 0;
    for (int d = 0; d < a->ndim; d++)
        if (a->shape[d] != b->shape[d]) return 0;
    return memcmp(a->data, b->data, (size_t)a->numel * sizeof(float)) == 0;
}

/* A list of names for one message: "a, b, c ... and 4 more". */
typedef struct {
    char text[HF_NAMES_SHOWN * (HF_NAME_MAX + 2) + 64];
    int n;
} HfNames;

static void hf_names_add(HfNames *l, const char *name) {
    size_t at = strlen(l->text);
    if (l->n < HF_NAMES_SHOWN)
        snprintf(l->text + at, sizeof l->text - at, "%s%s", l->n ? ", " : "", name);
    l->n++;
}

static const char *hf_names_text(HfNames *l) {
    if (l->n > HF_NAMES_SHOWN) {
        size_t at = strlen(l->text);
        snprintf(l->text + at, sizeof l->text - at, " ... and %d more", l->n - HF_NAMES_SHOWN);
    }
    return l->text;
}

static int hf_cmp_name(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Renames every tensor to glue's name; two names mapping to one is an error
 * (e.g. both "embeddings.x" and "bert.embeddings.x"). */
static int hf_rename_all(Checkpoint *c) {
    char **names = xmalloc(((size_t)c->n_tensors + 1) * sizeof *names);
    for (int i = 0; i < c->n_tensors; i++) {
        char *g = hf_glue_name(c->tensors[i].name);
        free(c->tensors[i].name);
        c->tensors[i].name = names[i] = g;
    }
    qsort(names, (size_t)c->n_tensors, sizeof *names, hf_cmp_name);
    int rc = 0;
    for (int i = 1; i < c->n_tensors && !rc; i++)
        if (strcmp(names[i - 1], names[i]) == 0) {
            user_error_data(HINT_NOT_BERT, "%s: two tensors map to '%s' (with and without \"bert.\", or gamma/beta "
                       "and weight/bias)", c->path, names[i]);
            rc = -1;
        }
    free(names);
    return rc;
}

/* Folds the tied decoder (weight = word embeddings, bias = cls.predictions.bias)
 * back; an untied one is added to `unused` and dropped. */
static void hf_fold_decoder(Checkpoint *c, HfNames *unused) {
    int dw = hf_find(c, HF_DECODER_W), we = hf_find(c, HF_WORD_EMB);
    if (dw >= 0) {
        if (we < 0 || !hf_same_tensor(&c->tensors[dw], &c->tensors[we])) hf_names_add(unused, HF_DECODER_W " (untied)");
        hf_drop(c, dw);
    }
    int db = hf_find(c, HF_DECODER_B), mb = hf_find(c, HF_MLM_BIAS);
    if (db >= 0 && mb < 0) {
        free(c->tensors[db].name);
        c->tensors[db].name = xstrdup(HF_MLM_BIAS);
    } else if (db >= 0) {
        if (!hf_same_tensor(&c->tensors[db], &c->tensors[mb])) hf_names_add(unused, HF_DECODER_B " (untied)");
        hf_drop(c, db);
    }
}

/* ---- heads and the names they need ---- */

static int hf_has_prefix(const Checkpoint *c, const char *prefix) {
    for (int i = 0; i < c->n_tensors; i++)
        if (hf_starts(c->tensors[i].name, prefix)) return 1;
    return 0;
}

static BertHeads hf_detect_heads(const Checkpoint *c) {
    BertHeads h = {0};
    h.mlm = hf_has_prefix(c, "cls.predictions.");
    h.pooler = hf_has_prefix(c, "bert.pooler.");
    int cw = hf_find(c, "classifier.weight"), cb = hf_find(c, "classifier.bias");
    if (cw >= 0 && c->tensors[cw].ndim >= 1) h.num_labels = (int)c->tensors[cw].shape[0];
    else if (cb >= 0 && c->tensors[cb].ndim >= 1) h.num_labels = (int)c->tensors[cb].shape[0];
    if (h.num_labels > 0) h.pooler = 1;   /* the classifier reads the pooled vector */
    return h;
}

/* The shape config.json implies for a needed tensor. */
static int hf_need_shape(const HfNeed *need, const BertConfig *cfg, const BertHeads *h, long shape[2]) {
    int nd = 0;
    for (; nd < 2 && need->dims[nd] != HF_END; nd++) {
        switch (need->dims[nd]) {
        case HF_V: shape[nd] = cfg->vocab_size; break;
        case HF_P: shape[nd] = cfg->max_position; break;
        case HF_TV: shape[nd] = cfg->type_vocab_size; break;
        case HF_C: shape[nd] = cfg->hidden_size; break;
        case HF_FF: shape[nd] = cfg->intermediate_size; break;
        default: shape[nd] = h->num_labels; break;
        }
    }
    return nd;
}

typedef struct {
    const Checkpoint *c;
    const BertConfig *cfg;
    const BertHeads *heads;
    unsigned char *used;      /* (n_tensors) */
    HfNames missing;
    char bad_shape[HF_NAME_MAX + 256];  /* the first shape mismatch, "" when none */
} HfCheck;

/* "(3, 4)" */
static void hf_shape_text(char *buf, size_t cap, const long *shape, int nd) {
    size_t at = (size_t)snprintf(buf, cap, "(");
    for (int d = 0; d < nd && at < cap; d++) at += (size_t)snprintf(buf + at, cap - at, d ? ", %ld" : "%ld", shape[d]);
    if (at < cap) snprintf(buf + at, cap - at, ")");
}

static void hf_check_one(HfCheck *k, const HfNeed *need, const char *name) {
    int i = hf_find(k->c, name);
    if (i < 0) { hf_names_add(&k->missing, name); return; }
    k->used[i] = 1;
    const CkptTensor *t = &k->c->tensors[i];
    long want[2];
    int nd = hf_need_shape(need, k->cfg, k->heads, want), same = t->ndim == nd;
    for (int d = 0; same && d < nd; d++) same = t->shape[d] == want[d];
    if (same || k->bad_shape[0]) return;
    char have_s[160], want_s[64];
    hf_shape_text(have_s, sizeof have_s, t->shape, t->ndim);
    hf_shape_text(want_s, sizeof want_s, want, nd);
    snprintf(k->bad_shape, sizeof k->bad_shape, "tensor '%s' has shape %s, config.json implies %s", name, have_s,
             want_s);
}

static void hf_check_group(HfCheck *k, const HfNeed *needs, int n) {
    for (int i = 0; i < n; i++) hf_check_one(k, &needs[i], needs[i].name);
}

/* Checks every tensor a BERT of this config with these heads has, marking
 * those found in k->used. */
static void hf_check_needed(HfCheck *k) {
    hf_check_group(k, HF_EMBEDDINGS, HF_COUNT(HF_EMBEDDINGS));
    for (int l = 0; l < k->cfg->num_layers; l++)
        for (int i = 0; i < HF_COUNT(HF_LAYER_PARTS); i++) {
            char name[HF_NAME_MAX];
            snprintf(name, sizeof name, "bert.encoder.layer.%d.%s", l, HF_LAYER_PARTS[i].name);
            hf_check_one(k, &HF_LAYER_PARTS[i], name);
        }
    if (k->heads->pooler) hf_check_group(k, HF_POOLER, HF_COUNT(HF_POOLER));
    if (k->heads->mlm) hf_check_group(k, HF_MLM, HF_COUNT(HF_MLM));
    if (k->heads->num_labels > 0) hf_check_group(k, HF_CLASSIFIER, HF_COUNT(HF_CLASSIFIER));
}

/* Every needed name present with the shape config.json implies (else one
 * error listing the missing ones, or naming the first bad shape); every other
 * tensor and non-float buffer named in one warning and dropped. */
static int hf_check_names(Checkpoint *c, const BertConfig *cfg, const BertHeads *h, HfNames *unused) {
    HfCheck k = {.c = c, .cfg = cfg, .heads = h, .used = xcalloc((size_t)c->n_tensors + 1, 1)};
    hf_check_needed(&k);
    if (k.missing.n) {
        user_error_data(HINT_NOT_BERT, "%s: missing %d tensor%s that a %d-layer BERT needs: %s", c->path, k.missing.n,
                   k.missing.n == 1 ? "" : "s", cfg->num_layers, hf_names_text(&k.missing));
        free(k.used);
        return -1;
    }
    if (k.bad_shape[0]) {
        user_error_data("config.json must describe the same model size as the weights", "%s: %s", c->path, k.bad_shape);
        free(k.used);
        return -1;
    }
    for (int i = c->n_tensors - 1; i >= 0; i--)
        if (!k.used[i]) {
            hf_names_add(unused, c->tensors[i].name);
            hf_drop(c, i);
        }
    free(k.used);
    /* Integer buffers: position_ids is arange(P), which glue computes itself. */
    for (int i = 0; i < c->n_blobs; i++) {
        if (!hf_ends(c->blobs[i].name, "position_ids")) hf_names_add(unused, c->blobs[i].name);
        free(c->blobs[i].name);
        free(c->blobs[i].data);
    }
    c->n_blobs = 0;
    if (unused->n)
        user_warning("%s: ignoring %d tensor%s glue's BERT does not use: %s", c->path, unused->n,
                     unused->n == 1 ? "" : "s", hf_names_text(unused));
    return 0;
}

/* ---- config ---- */

/* config.json -> BertConfig, refusing other model types by name. */
static int hf_read_config(const char *dir, BertConfig *cfg) {
    char path[4096];
    file_join(dir, BERT_HF_CONFIG, path, sizeof path);
    cJSON *j = json_file_read(path, 1);
    if (!j) return -1;
    const cJSON *mt = cJSON_GetObjectItemCaseSensitive(j, "model_type");
    int rc = 0;
    if (!cJSON_IsObject(j)) {
        user_error_data(HINT_NOT_BERT, "%s: not a JSON object", path);
        rc = -1;
    } else if (mt && (!cJSON_IsString(mt) || strcmp(mt->valuestring, "bert") != 0)) {
        user_error_data(HINT_NOT_BERT, "%s: model_type is %s, not \"bert\"", path,
                   cJSON_IsString(mt) ? mt->valuestring : "not a string");
        rc = -1;
    } else {
        rc = bert_config_from_json(j, path, cfg) || bert_config_check(cfg, path) ? -1 : 0;
    }
    cJSON_Delete(j);
    return rc;
}

/* The config record bert_from_checkpoint reads (bert_checkpoint_config's). */
static cJSON *hf_glue_record(const BertConfig *cfg, const BertHeads *h) {
    cJSON *r = cJSON_CreateObject();
    cJSON_AddStringToObject(r, "model", "bert");
    cJSON_AddItemToObject(r, "bert", bert_config_to_json(cfg));
    cJSON *heads = cJSON_AddObjectToObject(r, "heads");
    cJSON_AddNumberToObject(heads, "mlm", h->mlm);
    cJSON_AddNumberToObject(heads, "pooler", h->pooler);
    cJSON_AddNumberToObject(heads, "num_labels", h->num_labels);
    return r;
}

/* DIR/vocab.txt becomes the checkpoint's vocabulary blob (as glue's own BERT
 * checkpoints carry one), so the model is used with the tokens it was trained
 * on. glue's tokenizer lowercases: a cased model (do_lower_case false) gets a warning. */
static int hf_attach_vocab(Checkpoint *c, const char *dir) {
    char path[4096];
    if (bert_hf_vocab_path(dir, path, sizeof path) != 0) return 0;
    size_t len = 0;
    char *text = file_read(path, &len);
    if (!text) {
        user_error_io(NULL, "cannot read %s: %s", path, strerror(errno));
        return -1;
    }
    c->blobs = xrealloc(c->blobs, ((size_t)c->n_blobs + 1) * sizeof *c->blobs);
    c->blobs[c->n_blobs++] = (CkptBlob){xstrdup(BERT_VOCAB_BLOB), len, (unsigned char *)text};
    file_join(dir, BERT_HF_TOKENIZER_CONFIG, path, sizeof path);
    cJSON *tc = file_exists(path) ? json_file_read(path, 0) : NULL;
    const cJSON *lower = cJSON_GetObjectItemCaseSensitive(tc, "do_lower_case");
    if (cJSON_IsFalse(lower))
        user_warning("%s: a cased model (do_lower_case false), but glue's BERT tokenizer lowercases: expect "
                     "worse results", path);
    cJSON_Delete(tc);
    return 0;
}

Checkpoint *bert_hf_read(const char *dir) {
    BertConfig cfg;
    if (hf_read_config(dir, &cfg)) return NULL;
    Checkpoint *c = bert_hf_read_weights(dir);
    if (!c) return NULL;
    HfNames unused = {{0}, 0};
    if (hf_rename_all(c)) { checkpoint_free(c); return NULL; }
    hf_fold_decoder(c, &unused);
    BertHeads heads = hf_detect_heads(c);
    if (hf_check_names(c, &cfg, &heads, &unused)) { checkpoint_free(c); return NULL; }
    cJSON_Delete(c->config);
    c->config = hf_glue_record(&cfg, &heads);
    if (hf_attach_vocab(c, dir)) { checkpoint_free(c); return NULL; }
    return c;
}
