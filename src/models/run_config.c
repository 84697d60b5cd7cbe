/* run_config.c — defaults + file + command-line settings (see run_config.h). */
#include "models/run_config.h"

#include "core/common.h"
#include "core/editdist.h"
#include "core/files.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

const char *const RUN_SCHEDULES[] = {"linear", "constant", "cosine", NULL};
const char *const RUN_LOSSES[] = {"ce", "focal", NULL};
const char *const RUN_BOOSTS[] = {"none", "label_error", NULL};
const char *const RUN_CLASS_WEIGHTS_HELP[] = {"none, balanced, or label:weight,... (single-label)", NULL};
const char *const RUN_POS_WEIGHT_HELP[] = {"none, balanced, or a number > 0 (multi-label)", NULL};
const char *const RUN_THRESHOLD_HELP[] = {"a probability in (0, 1), or tuned (multi-label)", NULL};

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

/* Keys that were renamed so that one setting has one name everywhere (the
 * optimizer's betas were adam_beta1/2 in BERT fine-tuning, beta1/2 in
 * pretraining and translation). Saved runs and scripts use the old names:
 * they still work, with a warning. */
static const struct { const char *old_name, *name; } RENAMED[] = {
    {"adam_beta1", "beta1"},
    {"adam_beta2", "beta2"},
};

/* The current name of key (itself unless it is an old one). */
static const char *config_current_name(const char *key, const char *origin) {
    for (size_t i = 0; i < sizeof RENAMED / sizeof RENAMED[0]; i++)
        if (strcmp(key, RENAMED[i].old_name) == 0) {
            user_warning("%s: setting '%s' is now called '%s'", origin ? origin : "--set", key, RENAMED[i].name);
            return RENAMED[i].name;
        }
    return key;
}

static cJSON *config_find_key(cJSON *config, const char *key, const char *origin) {
    cJSON *old = cJSON_GetObjectItemCaseSensitive(config, key);
    if (old) return old;
    const char *name = config_current_name(key, origin);
    if (name != key && (old = cJSON_GetObjectItemCaseSensitive(config, name)) != NULL) return old;
    char keys[1024], hint[1100], tail[96];
    config_key_list(config, keys, sizeof keys);
    snprintf(hint, sizeof hint, "this model's settings are: %s", keys);
    const char *guess = NULL;   /* the nearest key, when near enough: "dropuot" -> "dropout" */
    int best = 1 << 30;
    for (const cJSON *c = config ? config->child : NULL; c; c = c->next) {
        int d = c->string ? str_edit_distance(key, c->string) : best;
        if (d < best) best = d, guess = c->string;
    }
    user_error_usage(hint, "%s: unknown setting '%s'%s", origin ? origin : "--set", key,
                     str_did_you_mean(str_is_near(key, best) ? guess : NULL, tail, sizeof tail));
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
        user_error_usage(NULL, "%s: setting '%s' wants %s, got '%s'", origin ? origin : "--set", key,
                   config_kind(old), value);
        return -1;
    }
    cJSON_ReplaceItemInObjectCaseSensitive(config, old->string, v);
    return 0;
}

/* Keys of a JSON file replace the defaults; same rules as run_config_set. */
static int config_apply_file(cJSON *config, const char *path) {
    cJSON *file = json_file_read(path, 1);
    if (!file) return -1;
    int rc = 0;
    if (!cJSON_IsObject(file)) {
        user_error_usage(NULL, "%s: the config must be a JSON object", path);
        rc = -1;
    }
    for (cJSON *it = rc ? NULL : file->child; it; it = it->next) {
        cJSON *old = config_find_key(config, it->string, path);
        if (!old) { rc = -1; break; }
        int same = (cJSON_IsNumber(old) && cJSON_IsNumber(it)) || (cJSON_IsBool(old) && cJSON_IsBool(it)) ||
                   (cJSON_IsString(old) && cJSON_IsString(it)) || (cJSON_IsArray(old) && cJSON_IsArray(it)) ||
                   (cJSON_IsObject(old) && cJSON_IsObject(it)) || cJSON_IsNull(old);
        if (!same) {
            user_error_usage(NULL, "%s: setting '%s' wants %s", path, it->string, config_kind(old));
            rc = -1;
            break;
        }
        cJSON_ReplaceItemInObjectCaseSensitive(config, old->string, cJSON_Duplicate(it, 1));
    }
    cJSON_Delete(file);
    return rc;
}

int run_setting_split(const char *setting, RunSetting *out) {
    const char *eq = strchr(setting, '='), *dot = strchr(setting, '.');
    if (!eq) return -1;
    if (!dot || dot > eq) dot = NULL;
    const char *key = dot ? dot + 1 : setting;
    size_t tl = dot ? (size_t)(dot - setting) : 0, kl = (size_t)(eq - key);
    if (kl == 0 || kl >= sizeof out->key || tl >= sizeof out->task || (dot && tl == 0)) return -1;
    memcpy(out->task, setting, tl);
    out->task[tl] = 0;
    memcpy(out->key, key, kl);
    out->key[kl] = 0;
    out->value = eq + 1;
    return 0;
}

int run_config_sets_for_task(const char *const *sets, int n, const char *task, const char **out) {
    int k = 0;
    for (int i = 0; i < n; i++) {
        RunSetting rs;
        if (run_setting_split(sets[i], &rs) != 0 || !rs.task[0]) out[k++] = sets[i]; /* bad ones: run_config_build says so */
        else if (strcmp(rs.task, task) == 0) out[k++] = strchr(sets[i], '.') + 1;
    }
    return k;
}

static int setting_from_set(const char *origin) { return !origin || strcmp(origin, "--set") == 0; }

/* "--set key=value", or "--epochs value" for a shorthand option. */
static void setting_as_given(const char *set, const char *origin, char *out, size_t cap) {
    const char *eq = strchr(set, '=');
    if (setting_from_set(origin) || !eq) snprintf(out, cap, "--set %s", set);
    else snprintf(out, cap, "%s %s", origin, eq + 1);
}

/* The current name of a (possibly renamed) key, without the warning. */
static const char *setting_canonical(const char *key) {
    for (size_t i = 0; i < sizeof RENAMED / sizeof RENAMED[0]; i++)
        if (strcmp(key, RENAMED[i].old_name) == 0) return RENAMED[i].name;
    return key;
}

int run_config_conflicts(const char *const *sets, const char *const *origin, int n) {
    for (int j = 1; j < n; j++) {
        RunSetting b;
        if (run_setting_split(sets[j], &b) != 0) continue;   /* run_config_build says what is wrong */
        for (int i = 0; i < j; i++) {
            RunSetting a;
            const char *from_i = origin ? origin[i] : NULL, *from_j = origin ? origin[j] : NULL;
            if ((setting_from_set(from_i) && setting_from_set(from_j)) ||
                run_setting_split(sets[i], &a) != 0 || strcmp(a.task, b.task) != 0 ||
                strcmp(setting_canonical(a.key), setting_canonical(b.key)) != 0)
                continue;
            char first[512], second[512];
            setting_as_given(sets[i], from_i, first, sizeof first);
            setting_as_given(sets[j], from_j, second, sizeof second);
            user_error_usage("give one of them", "%s and %s both set %s%s%s", first, second, a.task,
                             a.task[0] ? "." : "", setting_canonical(b.key));
            return -1;
        }
    }
    return 0;
}

cJSON *run_config_build(cJSON *defaults, const char *config_file, const char *const *sets,
                        const char *const *origin, int nsets) {
    cJSON *config = defaults;
    if (!config) DIE("run_config_build: no defaults");
    if (config_file && config_apply_file(config, config_file) != 0) goto fail;
    for (int i = 0; i < nsets; i++) {
        const char *eq = strchr(sets[i], '=');
        const char *from = origin && origin[i] ? origin[i] : "--set";
        if (!eq || eq == sets[i]) {
            user_error_usage("write --set key=value", "%s: expected key=value, got '%s'", from, sets[i]);
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

static int run_config_key_in(const char *const *keys, const char *key) {
    for (; keys && *keys; keys++)
        if (strcmp(key, *keys) == 0) return 1;
    return 0;
}

/* Pass 0 the keys of b, pass 1 those of a alone; either side's absent key
 * is its value in `absent`. */
int run_config_diff(const cJSON *a, const cJSON *b, const cJSON *absent, const char *const *free_keys, char *out,
                    size_t cap) {
    size_t n = 0;
    int count = 0;
    if (out && cap) out[0] = '\0';
    for (int pass = 0; pass < 2; pass++)
        for (const cJSON *it = (pass ? a : b)->child; it; it = it->next) {
            if (run_config_key_in(free_keys, it->string)) continue;
            if (pass && cJSON_GetObjectItemCaseSensitive(b, it->string)) continue;   /* seen in pass 0 */
            const cJSON *x = cJSON_GetObjectItemCaseSensitive(a, it->string);
            const cJSON *y = cJSON_GetObjectItemCaseSensitive(b, it->string);
            if (!x) x = cJSON_GetObjectItemCaseSensitive(absent, it->string);
            if (!y) y = cJSON_GetObjectItemCaseSensitive(absent, it->string);
            if (x && y && cJSON_Compare(x, y, 1)) continue;
            count++;
            if (!out) continue;
            char *sx = x ? cJSON_PrintUnformatted(x) : NULL, *sy = y ? cJSON_PrintUnformatted(y) : NULL;
            int k = snprintf(out + n, n < cap ? cap - n : 0, "%s%s (run: %.60s, now: %.60s)", n ? ", " : "",
                             it->string, sx ? sx : "unset", sy ? sy : "unset");
            free(sx);
            free(sy);
            if (k > 0) n += (size_t)k;
        }
    return count;
}

double run_config_number(const cJSON *config, const char *key, double fallback) {
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(config, key);
    return cJSON_IsNumber(j) ? j->valuedouble : fallback;
}

const char *run_config_string(const cJSON *config, const char *key, const char *fallback) {
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(config, key);
    return cJSON_IsString(j) ? j->valuestring : fallback;
}

/* ---- the settings reader ---- */

SettingsReader settings_reader(const cJSON *config, const char *who, const char *hint) {
    SettingsReader s = {.config = config, .who = who, .hint = hint};
    return s;
}

/* The value of key as a number: 1 found (booleans count as 0/1), 0 absent
 * (fallback, or an error when required), -1 after a message. */
static int settings_number(SettingsReader *s, const char *key, double fallback, double *out) {
    *out = fallback;
    if (s->failed) return -1;
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(s->config, key);
    for (size_t i = 0; !j && i < sizeof RENAMED / sizeof RENAMED[0]; i++)   /* a saved run's config */
        if (strcmp(key, RENAMED[i].name) == 0) j = cJSON_GetObjectItemCaseSensitive(s->config, RENAMED[i].old_name);
    if (!j && !s->required) return 0;
    if (!j) {
        user_error_data(s->hint, "%s: missing \"%s\"", s->who, key);
    } else if (cJSON_IsNumber(j) || cJSON_IsBool(j)) {
        *out = cJSON_IsNumber(j) ? j->valuedouble : cJSON_IsTrue(j);
        return 1;
    } else {
        user_error_usage(s->hint, "%s: %s must be a number", s->who, key);
    }
    s->failed = 1;
    *out = fallback;
    return -1;
}

long settings_int(SettingsReader *s, const char *key, double fallback, double lo, double hi) {
    double v;
    if (settings_number(s, key, fallback, &v) < 0) return (long)fallback;
    if (v >= lo && v <= hi && v == floor(v)) return (long)v;
    user_error_usage(s->hint, "%s: %s must be a whole number in [%.0f, %.0f], got %.15g", s->who, key, lo, hi, v);
    s->failed = 1;
    return (long)fallback;
}

static double settings_real_in(SettingsReader *s, const char *key, double fallback, double lo, double hi,
                               int below) {
    double v;
    if (settings_number(s, key, fallback, &v) < 0) return fallback;
    if (v >= lo && (below ? v < hi : v <= hi)) return v;
    user_error_usage(s->hint, "%s: %s must be a number in [%.15g, %.15g%s, got %.15g", s->who, key, lo, hi,
                     below ? ")" : "]", v);
    s->failed = 1;
    return fallback;
}

double settings_real(SettingsReader *s, const char *key, double fallback, double lo, double hi) {
    return settings_real_in(s, key, fallback, lo, hi, 0);
}

double settings_real_below(SettingsReader *s, const char *key, double fallback, double lo, double hi) {
    return settings_real_in(s, key, fallback, lo, hi, 1);
}

/* In [lo, hi) once stored in a float: 0.999999999 passes the check in double
 * but is 1.0f, and a dropout probability of 1 kills every unit (the op dies
 * on it), so the float's value is what is held to the range. */
static float settings_float_below(SettingsReader *s, const char *key, double fallback, double lo, double hi) {
    double v = settings_real_below(s, key, fallback, lo, hi);
    if (s->failed || (float)v < hi) return (float)v;
    user_error_usage(s->hint, "%s: %s must be a number in [%.15g, %.15g), got %.15g, which is %.15g as a float", s->who,
                     key, lo, hi, v, (double)(float)v);
    s->failed = 1;
    return (float)fallback;
}

const char *settings_string(SettingsReader *s, const char *key, const char *fallback) {
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(s->config, key);
    if (s->failed || (!j && !s->required)) return fallback;
    if (cJSON_IsString(j)) return j->valuestring;
    if (!j) user_error_data(s->hint, "%s: missing \"%s\"", s->who, key);
    else user_error_usage(s->hint, "%s: %s must be a string", s->who, key);
    s->failed = 1;
    return fallback;
}

int settings_choice(SettingsReader *s, const char *key, const char *const *names, int n) {
    const char *v = settings_string(s, key, names[0]);
    for (int i = 0; i < n; i++)
        if (strcmp(v, names[i]) == 0) return i;
    char hint[512];
    int used = snprintf(hint, sizeof hint, "%s is one of:", key);
    for (int i = 0; i < n && used > 0 && (size_t)used < sizeof hint; i++)
        used += snprintf(hint + used, sizeof hint - (size_t)used, " %s", names[i]);
    user_error_usage(hint, "%s: unknown %s '%s'", s->who, key, v);
    s->failed = 1;
    return 0;
}

int settings_bool(SettingsReader *s, const char *key, int fallback) {
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(s->config, key);
    if (s->failed || (!j && !s->required)) return fallback;
    if (cJSON_IsBool(j)) return cJSON_IsTrue(j);
    if (cJSON_IsNumber(j) && (j->valuedouble == 0 || j->valuedouble == 1)) return j->valuedouble != 0;
    if (!j) user_error_data(s->hint, "%s: missing \"%s\"", s->who, key);
    else user_error_usage(s->hint, "%s: %s must be true or false", s->who, key);
    s->failed = 1;
    return fallback;
}

void settings_table_defaults(cJSON *config, const SettingSpec *spec, int n) {
    for (int i = 0; i < n; i++) {
        const SettingSpec *p = &spec[i];
        if (p->kind == SETTING_STRING || p->kind == SETTING_CHOICE) cJSON_AddStringToObject(config, p->key, p->text);
        else if (p->kind == SETTING_BOOL) cJSON_AddBoolToObject(config, p->key, p->def != 0);
        else cJSON_AddNumberToObject(config, p->key, p->def);
    }
}

void settings_table_read(SettingsReader *s, const SettingSpec *spec, int n, void *out) {
    for (int i = 0; i < n; i++) {
        const SettingSpec *p = &spec[i];
        if (p->offset == SETTING_NO_FIELD) continue;
        char *field = (char *)out + p->offset;
        switch (p->kind) {
        case SETTING_INT: *(int *)field = (int)settings_int(s, p->key, p->def, p->lo, p->hi); break;
        case SETTING_LONG: *(long *)field = settings_int(s, p->key, p->def, p->lo, p->hi); break;
        case SETTING_U64: *(uint64_t *)field = (uint64_t)settings_int(s, p->key, p->def, p->lo, p->hi); break;
        case SETTING_REAL: *(double *)field = settings_real(s, p->key, p->def, p->lo, p->hi); break;
        case SETTING_FLOAT: *(float *)field = (float)settings_real(s, p->key, p->def, p->lo, p->hi); break;
        case SETTING_REAL_BELOW: *(double *)field = settings_real_below(s, p->key, p->def, p->lo, p->hi); break;
        case SETTING_FLOAT_BELOW: *(float *)field = settings_float_below(s, p->key, p->def, p->lo, p->hi); break;
        case SETTING_BOOL: *(int *)field = settings_bool(s, p->key, p->def != 0); break;
        case SETTING_STRING: *(const char **)field = settings_string(s, p->key, p->text); break;
        case SETTING_CHOICE: {
            int n_choices = 0;
            while (p->choices[n_choices]) n_choices++;
            *(int *)field = settings_choice(s, p->key, p->choices, n_choices);
            break;
        }
        }
    }
}

int settings_table_check(const cJSON *config, const SettingSpec *spec, int n, const char *who, const char *hint) {
    SettingsReader s = settings_reader(config, who, hint);
    for (int i = 0; i < n && !s.failed; i++) {
        const SettingSpec *p = &spec[i];
        switch (p->kind) {
        case SETTING_INT: case SETTING_LONG: case SETTING_U64:
            settings_int(&s, p->key, p->def, p->lo, p->hi);
            break;
        case SETTING_REAL: case SETTING_FLOAT:
            settings_real(&s, p->key, p->def, p->lo, p->hi);
            break;
        case SETTING_REAL_BELOW:
            settings_real_below(&s, p->key, p->def, p->lo, p->hi);
            break;
        case SETTING_FLOAT_BELOW:
            settings_float_below(&s, p->key, p->def, p->lo, p->hi);
            break;
        case SETTING_BOOL:
            settings_bool(&s, p->key, p->def != 0);
            break;
        case SETTING_STRING:
            settings_string(&s, p->key, p->text);
            break;
        case SETTING_CHOICE: {
            int n_choices = 0;
            while (p->choices[n_choices]) n_choices++;
            settings_choice(&s, p->key, p->choices, n_choices);
            break;
        }
        }
    }
    return s.failed ? -1 : 0;
}

void settings_describe(const SettingSpec *spec, int n, const char *key, char *out, size_t cap) {
    out[0] = '\0';
    for (int i = 0; i < n; i++) {
        const SettingSpec *p = &spec[i];
        if (strcmp(p->key, key) != 0) continue;
        switch (p->kind) {
        case SETTING_INT: case SETTING_LONG: case SETTING_U64:
            snprintf(out, cap, "a whole number in [%.0f, %.0f]", p->lo, p->hi);
            break;
        case SETTING_REAL: case SETTING_FLOAT:   /* %.15g: what is enforced, to the digit (0.999999999 is not 1) */
            snprintf(out, cap, "a number in [%.15g, %.15g]", p->lo, p->hi);
            break;
        case SETTING_REAL_BELOW: case SETTING_FLOAT_BELOW:
            snprintf(out, cap, "a number in [%.15g, %.15g)", p->lo, p->hi);
            break;
        case SETTING_BOOL:
            snprintf(out, cap, "true or false");
            break;
        case SETTING_STRING:   /* choices, when given, holds what the text may say */
            snprintf(out, cap, "%s", p->choices ? p->choices[0] : "text");
            break;
        case SETTING_CHOICE: {
            size_t used = (size_t)snprintf(out, cap, "one of:");
            for (int k = 0; p->choices[k] && used < cap; k++)
                used += (size_t)snprintf(out + used, cap - used, " %s", p->choices[k]);
            break;
        }
        }
        return;
    }
}
