/* bert_config.c — BertConfig: the built-in sizes, validation, and JSON with
 * Hugging Face's key names (so a HF config.json reads as is, and ours is one).
 * See bert.h. */
#include "models/bert/bert.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "models/run_config.h"
#include "core/files.h"

enum {
    BERT_DEFAULT_VOCAB = 30522,   /* bert-base-uncased's WordPiece vocabulary */
    BERT_DEFAULT_POSITIONS = 512,
    BERT_DEFAULT_TYPES = 2,
    BERT_FFN_MULT = 4,            /* intermediate_size = 4 * hidden_size */
    BERT_ARENA_ALIGN = 16,        /* floats per 64-byte arena alignment (params.h) */
    BERT_MAX_DIM = 1 << 16,       /* sanity bound on any size */
};
#define BERT_DEFAULT_DROPOUT 0.1
#define BERT_DEFAULT_EPS 1e-12

typedef struct {
    const char *name;
    int L, C, NH;
} BertNamed;

/* Turc et al. 2019 ("Well-Read Students Learn Better") miniatures, and base. */
static const BertNamed BERT_NAMED[] = {
    {"tiny", 2, 128, 2}, {"mini", 4, 256, 4}, {"small", 4, 512, 8}, {"medium", 8, 512, 8}, {"base", 12, 768, 12},
};

const char *const BERT_CONFIG_NAMES[] = {"tiny", "mini", "small", "medium", "base"};
const int BERT_NUM_CONFIG_NAMES = (int)(sizeof BERT_CONFIG_NAMES / sizeof BERT_CONFIG_NAMES[0]);

static BertConfig bert_config_default(int L, int C, int NH) {
    return (BertConfig){
        .vocab_size = BERT_DEFAULT_VOCAB,
        .hidden_size = C,
        .num_layers = L,
        .num_heads = NH,
        .intermediate_size = BERT_FFN_MULT * C,
        .max_position = BERT_DEFAULT_POSITIONS,
        .type_vocab_size = BERT_DEFAULT_TYPES,
        .hidden_dropout = (float)BERT_DEFAULT_DROPOUT,
        .attention_dropout = (float)BERT_DEFAULT_DROPOUT,
        .layer_norm_eps = (float)BERT_DEFAULT_EPS,
    };
}

int bert_config_named(const char *name, BertConfig *c) {
    for (size_t i = 0; i < sizeof BERT_NAMED / sizeof BERT_NAMED[0]; i++)
        if (strcmp(name, BERT_NAMED[i].name) == 0) {
            *c = bert_config_default(BERT_NAMED[i].L, BERT_NAMED[i].C, BERT_NAMED[i].NH);
            return 0;
        }
    return -1;
}

#define BERT_POSITIONS_ALIBI "absolute+alibi"   /* BertConfig.alibi */
#define BERT_CONFIG_HINT "see models/configs/*.json for valid BERT configs"

int bert_config_check(const BertConfig *c, const char *origin) {
    const char *o = origin ? origin : "BERT config";
    const struct { const char *key; int v; } sizes[] = {
        {"vocab_size", c->vocab_size}, {"hidden_size", c->hidden_size}, {"num_hidden_layers", c->num_layers},
        {"num_attention_heads", c->num_heads}, {"intermediate_size", c->intermediate_size},
        {"max_position_embeddings", c->max_position}, {"type_vocab_size", c->type_vocab_size},
    };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        if (sizes[i].v < 1 || (sizes[i].v > BERT_MAX_DIM && strcmp(sizes[i].key, "vocab_size") != 0)) {
            user_error(BERT_CONFIG_HINT, "%s: %s must be a positive size, got %d", o, sizes[i].key, sizes[i].v);
            return -1;
        }
    if (c->embedding_size < 0 || c->embedding_size > BERT_MAX_DIM) {
        user_error(BERT_CONFIG_HINT, "%s: embedding_size must be a positive size, got %d", o, c->embedding_size);
        return -1;
    }
    if (c->hidden_size % c->num_heads != 0) {
        user_error(BERT_CONFIG_HINT, "%s: hidden_size %d is not a multiple of num_attention_heads %d", o,
                   c->hidden_size, c->num_heads);
        return -1;
    }
    /* The fused query|key|value GEMM needs the three (C, C) weights and (C)
     * biases adjacent in the arena, which aligns every tensor to 16 floats. */
    if (c->hidden_size % BERT_ARENA_ALIGN != 0) {
        user_error(BERT_CONFIG_HINT, "%s: hidden_size %d must be a multiple of %d (fused QKV projection)", o,
                   c->hidden_size, BERT_ARENA_ALIGN);
        return -1;
    }
    const struct { const char *key; float v; } probs[] = {
        {"hidden_dropout_prob", c->hidden_dropout}, {"attention_probs_dropout_prob", c->attention_dropout},
    };
    for (size_t i = 0; i < sizeof probs / sizeof probs[0]; i++)
        if (!(probs[i].v >= 0.0f && probs[i].v < 1.0f)) {
            user_error(BERT_CONFIG_HINT, "%s: %s must be in [0, 1), got %g", o, probs[i].key, (double)probs[i].v);
            return -1;
        }
    if (!(c->layer_norm_eps > 0.0f && c->layer_norm_eps < 1.0f)) {
        user_error(BERT_CONFIG_HINT, "%s: layer_norm_eps must be in (0, 1), got %g", o, (double)c->layer_norm_eps);
        return -1;
    }
    return 0;
}

/* A string key that, if present, must be one of the values this model
 * computes (a NULL-terminated list, whose first entry is the default).
 * Returns the index of the value (0 when the key is absent), -1 after a message. */
static int bert_json_choice(const cJSON *j, const char *key, const char *const *choices, const char *o) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
    if (!v) return 0;
    for (int i = 0; choices[i] && cJSON_IsString(v); i++)
        if (strcmp(v->valuestring, choices[i]) == 0) return i;
    char allowed[128] = "";
    for (int i = 0; choices[i]; i++)
        snprintf(allowed + strlen(allowed), sizeof allowed - strlen(allowed), "%s\"%s\"", i ? " or " : "", choices[i]);
    user_error("glue's BERT computes exactly BERT (GELU erf, absolute positions), optionally with ALiBi",
               "%s: \"%s\" %s%s%s is not supported (only %s)", o, key, cJSON_IsString(v) ? "\"" : "",
               cJSON_IsString(v) ? v->valuestring : "(not a string)", cJSON_IsString(v) ? "\"" : "", allowed);
    return -1;
}

int bert_config_from_json(const cJSON *j, const char *origin, BertConfig *c) {
    const char *o = origin ? origin : "BERT config";
    if (!cJSON_IsObject(j)) {
        user_error(BERT_CONFIG_HINT, "%s: expected a JSON object", o);
        return -1;
    }
    /* The shape must be said; the rest defaults to BERT's. */
    SettingsReader r = settings_reader(j, o, BERT_CONFIG_HINT);
    r.required = 1;
    int C = (int)settings_int(&r, "hidden_size", 0, 1, 1e9), L = (int)settings_int(&r, "num_hidden_layers", 0, 1, 1e9);
    int NH = (int)settings_int(&r, "num_attention_heads", 0, 1, 1e9), V = (int)settings_int(&r, "vocab_size", 0, 1, 1e9);
    if (r.failed) return -1;
    *c = bert_config_default(L, C, NH);
    c->vocab_size = V;
    r.required = 0;
    c->intermediate_size = (int)settings_int(&r, "intermediate_size", c->intermediate_size, 1, 1e9);
    c->max_position = (int)settings_int(&r, "max_position_embeddings", c->max_position, 1, 1e9);
    c->type_vocab_size = (int)settings_int(&r, "type_vocab_size", c->type_vocab_size, 1, 1e9);
    c->embedding_size = (int)settings_int(&r, "embedding_size", c->embedding_size, 0, 1e9);
    c->hidden_dropout = (float)settings_real(&r, "hidden_dropout_prob", c->hidden_dropout, -1e30, 1e30);
    c->attention_dropout = (float)settings_real(&r, "attention_probs_dropout_prob", c->attention_dropout, -1e30, 1e30);
    c->layer_norm_eps = (float)settings_real(&r, "layer_norm_eps", c->layer_norm_eps, -1e30, 1e30);
    if (r.failed || bert_json_choice(j, "hidden_act", (const char *const[]){"gelu", NULL}, o) < 0)
        return -1;
    int ln = bert_json_choice(j, "layer_norm_position", (const char *const[]){"post", "pre", NULL}, o);
    if (ln < 0) return -1;
    int pos = bert_json_choice(j, "position_embedding_type",
                               (const char *const[]){"absolute", BERT_POSITIONS_ALIBI, NULL}, o);
    if (pos < 0) return -1;
    c->alibi = pos == 1;
    c->pre_ln = ln == 1;
    return bert_config_check(c, o);
}

/* Floats go out as their shortest decimal (0.1, 1e-12), not as the double
 * nearest the float (0.10000000149011612), so configs read naturally and
 * compare equal after a round trip. */
static void bert_json_add_float(cJSON *j, const char *key, float v) {
    char buf[32];
    for (int p = 1; p <= 9; p++) {
        snprintf(buf, sizeof buf, "%.*g", p, (double)v);
        if (strtof(buf, NULL) == v) break;
    }
    cJSON_AddNumberToObject(j, key, strtod(buf, NULL));
}

cJSON *bert_config_to_json(const BertConfig *c) {
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "model_type", "bert");
    cJSON_AddNumberToObject(j, "vocab_size", c->vocab_size);
    cJSON_AddNumberToObject(j, "hidden_size", c->hidden_size);
    cJSON_AddNumberToObject(j, "num_hidden_layers", c->num_layers);
    cJSON_AddNumberToObject(j, "num_attention_heads", c->num_heads);
    cJSON_AddNumberToObject(j, "intermediate_size", c->intermediate_size);
    cJSON_AddStringToObject(j, "hidden_act", "gelu");
    bert_json_add_float(j, "hidden_dropout_prob", c->hidden_dropout);
    bert_json_add_float(j, "attention_probs_dropout_prob", c->attention_dropout);
    cJSON_AddNumberToObject(j, "max_position_embeddings", c->max_position);
    cJSON_AddNumberToObject(j, "type_vocab_size", c->type_vocab_size);
    if (bert_embedding_size(c) != c->hidden_size) cJSON_AddNumberToObject(j, "embedding_size", c->embedding_size);
    bert_json_add_float(j, "layer_norm_eps", c->layer_norm_eps);
    cJSON_AddStringToObject(j, "position_embedding_type", c->alibi ? BERT_POSITIONS_ALIBI : "absolute");
    if (c->pre_ln) cJSON_AddStringToObject(j, "layer_norm_position", "pre");
    return j;
}

int bert_embedding_size(const BertConfig *c) { return c->embedding_size > 0 ? c->embedding_size : c->hidden_size; }

int bert_config_resolve(const char *name_or_path, BertConfig *c) {
    if (bert_config_named(name_or_path, c) == 0) return 0;
    if (!file_exists(name_or_path)) {
        user_error_usage("use tiny, mini, small, medium, base or a JSON file with Hugging Face's BERT keys",
                   "unknown BERT config '%s' (not a built-in name, and no such file)", name_or_path);
        return -1;
    }
    cJSON *j = json_file_read(name_or_path, 1);
    if (!j) return -1;
    int rc = bert_config_from_json(j, name_or_path, c);
    cJSON_Delete(j);
    return rc;
}
