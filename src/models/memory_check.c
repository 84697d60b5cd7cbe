/* memory_check.c — a model's settings against the machine's memory, before
 * anything is allocated (model.h memory_bytes): a run that cannot fit is
 * refused with the number and the setting to lower, never aborted halfway
 * on an allocation. */
#include "models/model.h"

#include "core/checkpoint.h"
#include "core/common.h"
#include "core/memory.h"

#include <stdio.h>

#define GIB (1024.0 * 1024.0 * 1024.0)

/* GiB, or MiB under one GiB (a test's small limit). */
static void memory_format(double bytes, char *out, size_t cap) {
    if (bytes >= GIB) snprintf(out, cap, "%.1f GiB", bytes / GIB);
    else snprintf(out, cap, "%.1f MiB", bytes / (1024.0 * 1024.0));
}

int model_check_memory(const ModelOps *ops, const cJSON *config, const Task *task, const Dataset *train) {
    if (!ops->memory_bytes) return 0;
    const char *setting = NULL;
    double need = ops->memory_bytes(config, task, train, &setting);
    double have = memory_available_bytes();
    if (have <= 0 || need <= have) return 0;
    char need_s[32], have_s[32], hint[160];
    memory_format(need, need_s, sizeof need_s);
    memory_format(have, have_s, sizeof have_s);
    snprintf(hint, sizeof hint, "lower %s (--set %s=...)", setting ? setting : "the model's sizes",
             setting ? setting : "key");
    user_error_usage(hint, "%s: these settings need about %s of memory, and %s is available (%s dominates)",
                     ops->name, need_s, have_s, setting ? setting : "no one setting");
    return -1;
}

int model_check_memory_load(const ModelOps *ops, const char *ckpt) {
    /* The file's tensors as read, and the model's weights made from them:
     * both are held until the load ends. */
    double loaded = checkpoint_peek_loaded_bytes(ckpt), need = 2 * loaded, have = memory_available_bytes();
    if (loaded < 0 || have <= 0 || need <= have) return 0;
    char need_s[32], have_s[32];
    memory_format(need, need_s, sizeof need_s);
    memory_format(have, have_s, sizeof have_s);
    user_error_usage("free memory, or score it on a machine with more",
                     "%s: loading %s needs about %s of memory, and %s is available (its weights dominate)", ops->name,
                     ckpt, need_s, have_s);
    return -1;
}
