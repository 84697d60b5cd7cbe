/* checkpoint_load.c — putting a read checkpoint to use: does its config match
 * the model's (compared as JSON values, naming every differing key), and
 * copying its tensors into a Params arena by name with shape checks. */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "core/checkpoint.h"
#include "core/common.h"

/* Characters of a JSON value shown in a mismatch message. */
enum { CKPT_VALUE_SHOWN = 40 };

/* Appends "key: stored (checkpoint) vs expected (model)" to *msg. */
static void config_diff_append(char **msg, size_t *len, const char *key, const cJSON *stored,
                               const cJSON *expected) {
    char *a = stored ? cJSON_PrintUnformatted(stored) : NULL;
    char *b = expected ? cJSON_PrintUnformatted(expected) : NULL;
    char line[3 * CKPT_VALUE_SHOWN + 256];
    int n = snprintf(line, sizeof line, "%s%s: %.*s (checkpoint) vs %.*s (model)", *len ? "; " : "", key,
                     CKPT_VALUE_SHOWN, a ? a : "missing", CKPT_VALUE_SHOWN, b ? b : "missing");
    free(a);
    free(b);
    *msg = xrealloc(*msg, *len + (size_t)n + 1);
    memcpy(*msg + *len, line, (size_t)n + 1);
    *len += (size_t)n;
}

static int config_key_differs(const cJSON *stored, const cJSON *expected, const char *key) {
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(stored, key);
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(expected, key);
    if (!a && !b) return 0;
    return !a || !b || !cJSON_Compare(a, b, 1);
}

int checkpoint_check_config(const Checkpoint *c, const cJSON *expected, const char *const *keys, int n) {
    const cJSON *stored = c->config;
    char *msg = NULL;
    size_t len = 0;
    if (!cJSON_IsObject(stored) || !cJSON_IsObject(expected)) {
        if (!cJSON_Compare(stored, expected, 1)) config_diff_append(&msg, &len, "config", stored, expected);
    } else if (keys) {
        for (int i = 0; i < n; i++)
            if (config_key_differs(stored, expected, keys[i]))
                config_diff_append(&msg, &len, keys[i], cJSON_GetObjectItemCaseSensitive(stored, keys[i]),
                                   cJSON_GetObjectItemCaseSensitive(expected, keys[i]));
    } else {
        /* Every key of the checkpoint, then the model's keys it lacks. */
        const cJSON *it;
        cJSON_ArrayForEach(it, stored)
            if (config_key_differs(stored, expected, it->string))
                config_diff_append(&msg, &len, it->string, it, cJSON_GetObjectItemCaseSensitive(expected, it->string));
        cJSON_ArrayForEach(it, expected)
            if (!cJSON_GetObjectItemCaseSensitive(stored, it->string))
                config_diff_append(&msg, &len, it->string, NULL, it);
    }
    if (!msg) return 0;
    user_error_data("load it into a model built with the checkpoint's own config (config.json next to it), or retrain",
               "%s: the checkpoint's config differs from the model's: %s", c->path, msg);
    free(msg);
    return -1;
}

/* "(3, 4)" for a shape. */
static void shape_format(char *buf, size_t cap, const long *shape, int ndim) {
    size_t at = (size_t)snprintf(buf, cap, "(");
    for (int d = 0; d < ndim && at < cap; d++)
        at += (size_t)snprintf(buf + at, cap - at, d ? ", %ld" : "%ld", shape[d]);
    if (at < cap) snprintf(buf + at, cap - at, ")");
}

static int tensor_shape_matches(const CkptTensor *t, const ParamTensor *pt) {
    if (t->ndim != pt->ndim) return 0;
    for (int d = 0; d < t->ndim; d++)
        if (t->shape[d] != pt->shape[d]) return 0;
    return 1;
}

int checkpoint_load_params_mirror(const Checkpoint *c, const Params *p, const char *prefix, float *mirror) {
    if (!mirror) DIE("checkpoint: loading into a params mirror that was never allocated");
    for (int i = 0; i < params_num_tensors(p); i++) {
        const ParamTensor *pt = params_tensor(p, i);
        char name[PARAM_NAME_MAX + 256];
        snprintf(name, sizeof name, "%s%s", prefix, pt->name);
        const CkptTensor *t = checkpoint_find_tensor(c, name);
        if (!t) {
            user_error_data("the checkpoint is for another model or config; use the matching --model / config",
                       "%s: has no tensor '%s'", c->path, name);
            return -1;
        }
        if (!tensor_shape_matches(t, pt)) {
            char have[128], want[128];
            long shape[PARAM_MAX_DIMS];
            for (int d = 0; d < pt->ndim; d++) shape[d] = pt->shape[d];
            shape_format(have, sizeof have, t->shape, t->ndim);
            shape_format(want, sizeof want, shape, pt->ndim);
            user_error_data("the checkpoint is for another model size; use its config (config.json next to it)",
                       "%s: tensor '%s' has shape %s, the model expects %s", c->path, name, have, want);
            return -1;
        }
        memcpy(mirror + pt->offset, t->data, (size_t)t->numel * sizeof(float));
    }
    return 0;
}

int checkpoint_load_params(const Checkpoint *c, Params *p) {
    return checkpoint_load_params_mirror(c, p, "", p->data);
}
