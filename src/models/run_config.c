/* run_config.c — defaults + file + command-line settings (see run_config.h). */
#include "models/run_config.h"

#include "core/common.h"
#include "core/files.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

/* The keys of config, for "valid keys are ..." hints. */
static void config_key_list(const cJSON *config, char *out, size_t cap) {
    size_t n = 0;
    out[0] = '\0';
    for (const cJSON *it = config->child; it && n + 1 < cap; it = it->next) {
        int k = snprintf(out + n, cap - n, "%s%s", n ? ", " : "", it->string);
        if (k < 0) break;
        n += (size_t)k;
    }
}

static cJSON *config_find_key(cJSON *config, const char *key, const char *origin) {
    cJSON *old = cJSON_GetObjectItemCaseSensitive(config, key);
    if (old) return old;
    char keys[1024], hint[1100];
    config_key_list(config, keys, sizeof keys);
    snprintf(hint, sizeof hint, "this model's settings are: %s", keys);
    user_error(hint, "%s: unknown setting '%s'", origin ? origin : "--set", key);
    return NULL;
}

/* A new item of the same kind as `like` from text, or NULL if the text does not
 * fit that kind. */
static cJSON *config_parse_like(const cJSON *like, const char *value) {
    if (cJSON_IsNumber(like)) {
        char *end;
        double v = strtod(value, &end);
        return *value && *end == '\0' ? cJSON_CreateNumber(v) : NULL;
    }
    if (cJSON_IsBool(like)) {
        if (!strcmp(value, "true") || !strcmp(value, "1")) return cJSON_CreateTrue();
        if (!strcmp(value, "false") || !strcmp(value, "0")) return cJSON_CreateFalse();
        return NULL;
    }
    if (cJSON_IsString(like)) return cJSON_CreateString(value);
    /* Arrays, objects, null: the value is JSON text. */
    cJSON *v = cJSON_Parse(value);
    if (!v && cJSON_IsNull(like)) return cJSON_CreateString(value);
    if (v && !cJSON_IsNull(like) && (cJSON_IsArray(like) != cJSON_IsArray(v) ||
                                         cJSON_IsObject(like) != cJSON_IsObject(v))) {
        cJSON_Delete(v);
        return NULL;
    }
    return v;
}

static const char *config_kind(const cJSON *j) {
    return cJSON_IsNumber(j) ? "a number" : cJSON_IsBool(j) ? "true or false" : cJSON_IsString(j) ? "a string"
         : cJSON_IsArray(j) ? "a JSON array" : cJSON_IsObject(j) ? "a JSON object" : "JSON";
}

int run_config_set(cJSON *config, const char *key, const char *value, const char *origin) {
    cJSON *old = config_find_key(config, key, origin);
    if (!old) return -1;
    cJSON *v = config_parse_like(old, value);
    if (!v) {
        user_error(NULL, "%s: setting '%s' wants %s, got '%s'", origin ? origin : "--set", key,
                   config_kind(old), value);
        return -1;
    }
    cJSON_ReplaceItemInObjectCaseSensitive(config, key, v);
    return 0;
}

/* Keys of a JSON file replace the defaults; same rules as run_config_set. */
static int config_apply_file(cJSON *config, const char *path) {
    cJSON *file = json_file_read(path, 1);
    if (!file) return -1;
    int rc = 0;
    if (!cJSON_IsObject(file)) {
        user_error(NULL, "%s: the config must be a JSON object", path);
        rc = -1;
    }
    for (cJSON *it = rc ? NULL : file->child; it; it = it->next) {
        cJSON *old = config_find_key(config, it->string, path);
        if (!old) { rc = -1; break; }
        int same = (cJSON_IsNumber(old) && cJSON_IsNumber(it)) || (cJSON_IsBool(old) && cJSON_IsBool(it)) ||
                   (cJSON_IsString(old) && cJSON_IsString(it)) || (cJSON_IsArray(old) && cJSON_IsArray(it)) ||
                   (cJSON_IsObject(old) && cJSON_IsObject(it)) || cJSON_IsNull(old);
        if (!same) {
            user_error(NULL, "%s: setting '%s' wants %s", path, it->string, config_kind(old));
            rc = -1;
            break;
        }
        cJSON_ReplaceItemInObjectCaseSensitive(config, it->string, cJSON_Duplicate(it, 1));
    }
    cJSON_Delete(file);
    return rc;
}

cJSON *run_config_build(const ModelOps *ops, const Task *task, const char *config_file,
                        const char *const *sets, const char *const *origin, int nsets) {
    cJSON *config = ops->default_config(task);
    if (!config) DIE("model %s gave no default config", ops->name);
    if (config_file && config_apply_file(config, config_file) != 0) goto fail;
    for (int i = 0; i < nsets; i++) {
        const char *eq = strchr(sets[i], '=');
        const char *from = origin && origin[i] ? origin[i] : "--set";
        if (!eq || eq == sets[i]) {
            user_error("write --set key=value", "%s: expected key=value, got '%s'", from, sets[i]);
            goto fail;
        }
        char *key = xstrndup(sets[i], (size_t)(eq - sets[i]));
        int rc = run_config_set(config, key, eq + 1, from);
        free(key);
        if (rc) goto fail;
    }
    return config;
fail:
    cJSON_Delete(config);
    return NULL;
}

double run_config_number(const cJSON *config, const char *key, double fallback) {
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(config, key);
    return cJSON_IsNumber(j) ? j->valuedouble : fallback;
}

const char *run_config_string(const cJSON *config, const char *key, const char *fallback) {
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(config, key);
    return cJSON_IsString(j) ? j->valuestring : fallback;
}
