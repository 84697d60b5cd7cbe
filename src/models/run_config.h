/* run_config.h — a run's model config: the model's defaults for the task,
 * overridden by a JSON file and then by command-line settings, key by key.
 *
 * Only keys the defaults already have may be set, with a value of the same kind
 * (number, string, boolean), so `--set dropuot=0.1` or `--set lr=fast` is a
 * clear usage error instead of a silently ignored typo. */
#ifndef GLUE_RUN_CONFIG_H
#define GLUE_RUN_CONFIG_H

#include "models/model.h"

/* Defaults of ops for task, then the object in config_file (may be NULL), then
 * sets[i] = "key=value" (origin[i] names where each came from, e.g. "--epochs",
 * for messages; origin may be NULL). Returns the config, or NULL after one clear
 * message (a usage error). */
cJSON *run_config_build(const ModelOps *ops, const Task *task, const char *config_file,
                        const char *const *sets, const char *const *origin, int nsets);
/* Override one existing key from text; 0 ok, -1 after a message. */
int run_config_set(cJSON *config, const char *key, const char *value, const char *origin);
/* Typed reads with a fallback when the key is absent or of another kind. */
double run_config_number(const cJSON *config, const char *key, double fallback);
const char *run_config_string(const cJSON *config, const char *key, const char *fallback);

#endif
