/* run_config.h — a run's model config: the model's defaults for the task,
 * overridden by a JSON file and then by command-line settings, key by key.
 *
 * Only keys the defaults already have may be set, with a value of the same kind
 * (number, string, boolean), so `--set dropuot=0.1` or `--set lr=fast` is a
 * clear usage error instead of a silently ignored typo. */
#ifndef GLUE_RUN_CONFIG_H
#define GLUE_RUN_CONFIG_H

#include "core/blas.h"
#include "models/model.h"

/* defaults (taken over: freed on failure, returned on success), then the
 * object in config_file (may be NULL), then sets[i] = "key=value" (origin[i]
 * names where each came from, e.g. "--epochs", for messages; origin may be
 * NULL). Returns the config, or NULL after one clear message (a usage error).
 * A model's defaults for a task: ops->default_config(task). */
cJSON *run_config_build(cJSON *defaults, const char *config_file, const char *const *sets,
                        const char *const *origin, int nsets);
/* One setting "[TASK.]key=value" split into its parts: task is "" when the
 * setting is unqualified (a '.' after the '=' belongs to the value). Returns 0,
 * or -1 when there is no '=', the key is empty, or a part does not fit. */
typedef struct {
    char task[64];
    char key[128];
    const char *value; /* inside the setting's text */
} RunSetting;
int run_setting_split(const char *setting, RunSetting *out);
/* The settings of sets[0..n) that apply to the task named task: unqualified
 * "key=value" ones, and "TASK.key=value" with TASK = task (stored without the
 * prefix), in order, into out (room for n). Returns how many. */
int run_config_sets_for_task(const char *const *sets, int n, const char *task, const char **out);
/* A shorthand option and a --set of the same [TASK.]key among sets[0..n)
 * (origin[i]: where each came from, "--set", "--epochs", ...): the command
 * line contradicts itself and neither may silently win ("--epochs 3 --set
 * epochs=5"). A key --set twice is not one: the later wins, as the order on
 * the command line says (scripts append overrides so). 0, or -1 after one
 * message naming both (a usage error). */
int run_config_conflicts(const char *const *sets, const char *const *origin, int n);
/* Override one existing key from text; 0 ok, -1 after a message. */
int run_config_set(cJSON *config, const char *key, const char *value, const char *origin);
/* The keys whose values differ between a run's settings a (as it was) and b
 * (now), "key (run: X, now: Y), ..." into out (NULL: not wanted). A key absent
 * from one side counts as its value in `absent` (may be NULL): the default,
 * or the behaviour before the key existed, so that runs written before it
 * still match; keys in free_keys (NULL-terminated) change no result and are
 * skipped. Returns how many differ. */
int run_config_diff(const cJSON *a, const cJSON *b, const cJSON *absent, const char *const *free_keys, char *out,
                    size_t cap);
/* Typed reads with a fallback when the key is absent or of another kind. */
double run_config_number(const cJSON *config, const char *key, double fallback);
const char *run_config_string(const cJSON *config, const char *key, const char *fallback);

/* The setting that names a task to fine-tune on first, then on the run's
 * task from it (intermediate-task transfer, run by the commands:
 * experiments/intermediate.h); models that offer it (BERT) list it in their
 * settings with INTERMEDIATE_NONE, straight to the task, as the default. */
#define INTERMEDIATE_KEY  "intermediate"
#define INTERMEDIATE_NONE "none"

/* ---- reading settings into typed fields ----
 *
 * Every model and driver reads its settings through a SettingsReader: a
 * value is checked against its range (or choices) and a bad one is said in
 * one format, "<who>: <key> must be a whole number in [lo, hi], got <v>",
 * with the reader's hint. After the first bad value the rest read silently
 * (their fallbacks); check `failed` once at the end:
 *
 *   SettingsReader s = settings_reader(config, "textcnn", TC_HINT);
 *   c->dim = (int)settings_int(&s, "dim", 300, 1, 4096);
 *   c->dropout = settings_real_below(&s, "dropout", 0.5, 0, 1);
 *   if (s.failed) return -1;
 *
 * An absent key gives the fallback, or, when `required` is set (files that
 * must say everything, such as a model's config.json), an error. */
typedef struct SettingsReader {
    const cJSON *config;
    const char *who;    /* names the settings in messages: "bert", "pretrain", ... */
    const char *hint;   /* what to do, said with the message (may be NULL) */
    int required;       /* absent keys are errors, not fallbacks */
    int failed;         /* set by the first bad value (which was reported) */
} SettingsReader;

SettingsReader settings_reader(const cJSON *config, const char *who, const char *hint);
/* A whole number in [lo, hi]. */
long settings_int(SettingsReader *s, const char *key, double fallback, double lo, double hi);
/* A number in [lo, hi]; settings_real_below: in [lo, hi). */
double settings_real(SettingsReader *s, const char *key, double fallback, double lo, double hi);
double settings_real_below(SettingsReader *s, const char *key, double fallback, double lo, double hi);
/* One of names[0..n) (fallback names[0]): its index. */
int settings_choice(SettingsReader *s, const char *key, const char *const *names, int n);
const char *settings_string(SettingsReader *s, const char *key, const char *fallback);
int settings_bool(SettingsReader *s, const char *key, int fallback);

/* A struct's settings as a table: key, kind, where the field is, default and
 * range. One table gives both the defaults (settings_table_defaults) and the
 * checked read (settings_table_read), so the two cannot drift apart. */
typedef enum {
    SETTING_INT, SETTING_LONG, SETTING_U64,   /* whole numbers into int, long, uint64_t */
    SETTING_REAL, SETTING_FLOAT,              /* numbers into double, float */
    SETTING_REAL_BELOW, SETTING_FLOAT_BELOW,  /* in [lo, hi) into double, float */
    SETTING_BOOL,                             /* into int */
    SETTING_STRING,                           /* into const char * (points into the config) */
    SETTING_CHOICE,                           /* one of choices (default text): its index into int */
} SettingKind;
/* A key that has a default here but is read elsewhere (the trainer's epochs,
 * lr, batch, warmup, schedule): no field. */
#define SETTING_NO_FIELD ((size_t)-1)
typedef struct SettingSpec {
    const char *key;
    SettingKind kind;
    size_t offset;             /* offsetof(the struct, field), or SETTING_NO_FIELD */
    double def, lo, hi;        /* numbers and booleans */
    const char *text;          /* SETTING_STRING, SETTING_CHOICE: the default */
    const char *const *choices;/* SETTING_CHOICE: NULL-terminated; SETTING_STRING: NULL, or
                                * {what the text may be, NULL} for --help-settings */
} SettingSpec;
/* Adds every spec's default to config (in table order). */
void settings_table_defaults(cJSON *config, const SettingSpec *spec, int n);
/* What values key takes, as help text ("a whole number in [1, 4096]", "one
 * of: tanh relu"); "" when the table has no such key. */
void settings_describe(const SettingSpec *spec, int n, const char *key, char *out, size_t cap);
/* Reads every spec into out; the range checks of settings_int/_real. An
 * absent key gives the spec's default (unless the reader is `required`). */
void settings_table_read(SettingsReader *s, const SettingSpec *spec, int n, void *out);
/* The checks of settings_table_read without a struct to fill, the rows read
 * elsewhere (SETTING_NO_FIELD: the trainer's epochs, lr, batch, ...) included:
 * what a command runs before it writes anything, so a value outside the
 * printed range is refused up front (settings_describe prints these ranges).
 * 0, or -1 after the message (a usage error). */
int settings_table_check(const cJSON *config, const SettingSpec *spec, int n, const char *who, const char *hint);

/* ---- the harness's settings, as rows of a model's table ----
 *
 * Every model's defaults carry the keys the training loop (src/train) reads:
 * epochs, lr, batch, warm-up (a fraction of the steps) and the learning-rate
 * schedule; a model adds the rows of the others it supports. The rows live
 * here, beside the table type, so that a model names them without including
 * the harness. */
#define RUN_MAX_EPOCHS 100000
#define RUN_MAX_BATCH (1 << 20)
/* The learning rate's range, for the models that read lr into a field of
 * their own (fastText) too: one definition, so no table promises more. */
#define RUN_MIN_LR 1e-12
#define RUN_MAX_LR 10
extern const char *const RUN_SCHEDULES[];   /* "linear", "constant", "cosine" */
#define RUN_SETTING_EPOCHS(def) {"epochs", SETTING_INT, SETTING_NO_FIELD, def, 1, RUN_MAX_EPOCHS, NULL, NULL}
#define RUN_SETTING_LR(def) {"lr", SETTING_REAL, SETTING_NO_FIELD, def, RUN_MIN_LR, RUN_MAX_LR, NULL, NULL}
#define RUN_SETTING_WARMUP(def) {"warmup", SETTING_REAL_BELOW, SETTING_NO_FIELD, def, 0, 1, NULL, NULL}
#define RUN_SETTING_SCHEDULE(def) {"schedule", SETTING_CHOICE, SETTING_NO_FIELD, 0, 0, 0, def, RUN_SCHEDULES}
/* Data parallel (data-parallel models only): the gradient sum's bucket size
 * in MiB, as pretraining's bucket_mb (0 = one sum after the backward). It
 * changes no result beyond the order of sums (trainer_config_same ignores it). */
#define RUN_SETTING_BUCKET_MB(def) {"bucket_mb", SETTING_REAL, SETTING_NO_FIELD, def, 0, 1024, NULL, NULL}
/* Batches of rows of about one length (trainer_epoch_order), for models that
 * pad a batch to its longest row and report row lengths (ModelOps.length). */
#define RUN_SETTING_GROUP_BY_LENGTH(def) {"group_by_length", SETTING_BOOL, SETTING_NO_FIELD, def, 0, 1, NULL, NULL}
/* "bf16": the training steps' matmul products from bf16-rounded operands
 * with fp32 sums (core/blas.h's MATMUL_BF16, mixed precision) where the CPU
 * has a fast bf16 dot product, fp32 with one line elsewhere; evaluation
 * stays fp32. results.json names what ran. */
/* The head's loss (src/train/head.h), rows of every model whose logits the
 * harness's head takes: "ce" (softmax cross-entropy, or binary cross-entropy
 * per label for a multi-label task) or "focal" (Lin et al. 2017, focal_gamma);
 * class_weights (single-label: "none", "balanced" as scikit-learn's
 * n_samples / (K count), or "label:weight,..." by label name); pos_weight
 * (multi-label: "none", "balanced" = negatives / positives per label in
 * train, or one number for every label). */
extern const char *const RUN_LOSSES[];   /* "ce", "focal" */
/* boost=label_error (single-label): brightmart's label-error reweighting,
 * each class's cross-entropy weighted after every epoch by
 * min(1.5, 1 / (its accuracy on dev + 0.001)) (train/head.h). */
extern const char *const RUN_BOOSTS[];   /* "none", "label_error" */
/* What the string settings below may say, for --help-settings. */
extern const char *const RUN_CLASS_WEIGHTS_HELP[], *const RUN_POS_WEIGHT_HELP[], *const RUN_THRESHOLD_HELP[];
#define RUN_MAX_FOCAL_GAMMA 10
#define RUN_SETTINGS_LOSS                                                                        \
    {"loss", SETTING_CHOICE, SETTING_NO_FIELD, 0, 0, 0, "ce", RUN_LOSSES},                       \
    {"focal_gamma", SETTING_REAL, SETTING_NO_FIELD, 2, 0, RUN_MAX_FOCAL_GAMMA, NULL, NULL},      \
    {"class_weights", SETTING_STRING, SETTING_NO_FIELD, 0, 0, 0, "none", RUN_CLASS_WEIGHTS_HELP}, \
    {"pos_weight", SETTING_STRING, SETTING_NO_FIELD, 0, 0, 0, "none", RUN_POS_WEIGHT_HELP},        \
    {"boost", SETTING_CHOICE, SETTING_NO_FIELD, 0, 0, 0, "none", RUN_BOOSTS}
/* The prediction rule of a multi-label task (src/train/decision.h), rows of
 * every classifier: threshold (a probability in (0, 1), default 0.5, or
 * "tuned": one per label chosen on dev after training) or top_k (> 0: the k
 * most probable labels of each row, instead of a threshold). */
#define RUN_MAX_TOP_K 100
#define RUN_SETTINGS_DECISION                                                                    \
    {"threshold", SETTING_STRING, SETTING_NO_FIELD, 0, 0, 0, "0.5", RUN_THRESHOLD_HELP},         \
    {"top_k", SETTING_INT, SETTING_NO_FIELD, 0, 0, RUN_MAX_TOP_K, NULL, NULL}
#define RUN_SETTING_PRECISION {"precision", SETTING_CHOICE, SETTING_NO_FIELD, 0, 0, 0, "fp32", MATMUL_PRECISION_NAMES}
#endif
