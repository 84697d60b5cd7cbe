/* optim.c — optimizer defaults, the step dispatch and state checkpointing
 * (see optim.h). The update rules are in sgd.c, adamw.c, adadelta.c. */
#include "optim/optim.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/common.h"

/* What blob "optim" holds. */
typedef struct {
    uint32_t kind, reserved;
    int64_t t;
} OptimBlob;

Optimizer optim_sgd(double momentum, double weight_decay) {
    return (Optimizer){.kind = OPTIM_SGD, .momentum = momentum, .weight_decay = weight_decay};
}

Optimizer optim_adamw(double weight_decay) {
    return (Optimizer){.kind = OPTIM_ADAMW, .weight_decay = weight_decay, .beta1 = 0.9, .beta2 = 0.999,
                       .eps = 1e-8, .bias_correction = 1};
}

Optimizer optim_adadelta(double weight_decay) {
    return (Optimizer){.kind = OPTIM_ADADELTA, .weight_decay = weight_decay, .rho = 0.95, .eps = 1e-6};
}

const char *optim_name(OptimKind kind) {
    switch (kind) {
    case OPTIM_SGD: return "sgd";
    case OPTIM_ADAMW: return "adamw";
    case OPTIM_ADADELTA: return "adadelta";
    }
    return "unknown";
}

void optim_step(Optimizer *o, Params *p, float lr) {
    if (!p->grad) DIE("optim: step before params_grad_enable");
    o->t++;
    switch (o->kind) {
    case OPTIM_SGD: sgd_step(o, p, lr); break;
    case OPTIM_ADAMW: adamw_step(o, p, lr, o->t); break;
    case OPTIM_ADADELTA: adadelta_step(o, p, lr); break;
    default: DIE("optim: unknown kind %d", (int)o->kind);
    }
}

/* State slots the optimizer keeps. */
static int optim_num_states(const Optimizer *o) {
    if (o->kind == OPTIM_SGD) return o->momentum != 0.0;
    return 2;
}

static void optim_state_prefix(char *buf, size_t cap, const char *scope, int k) {
    snprintf(buf, cap, "%soptim.state%d.", scope, k);
}

int optim_save_scoped(const Optimizer *o, const Params *p, CkptWriter *w, const char *scope) {
    if (p->shard_lo != 0 || p->shard_hi != p->total) DIE("optim: saving a sharded state (gather it first)");
    OptimBlob b = {.kind = (uint32_t)o->kind, .t = o->t};
    char blob_name[PARAM_NAME_MAX];
    snprintf(blob_name, sizeof blob_name, "%soptim", scope);
    if (checkpoint_write_blob(w, blob_name, &b, sizeof b)) return -1;
    for (int k = 0; k < optim_num_states(o); k++) {
        char prefix[PARAM_NAME_MAX];
        optim_state_prefix(prefix, sizeof prefix, scope, k);
        /* A slot not allocated yet (no step taken) is all zeros. */
        if (p->state[k] && checkpoint_write_params_mirror(w, p, prefix, p->state[k], CKPT_F32)) return -1;
    }
    return 0;
}

int optim_load_scoped(Optimizer *o, Params *p, const Checkpoint *c, const char *scope) {
    char blob_name[PARAM_NAME_MAX];
    snprintf(blob_name, sizeof blob_name, "%soptim", scope);
    const CkptBlob *blob = checkpoint_find_blob(c, blob_name);
    OptimBlob b;
    if (!blob || blob->size != sizeof b) {
        user_error_data("resume from a checkpoint saved with its optimizer state, or start afresh",
                   "%s: has no optimizer state", c->path);
        return -1;
    }
    memcpy(&b, blob->data, sizeof b);
    if (b.kind != (uint32_t)o->kind || b.t < 0) {
        user_error("resume with the optimizer the run was started with",
                   "%s: optimizer state is for %s, this model uses %s", c->path,
                   optim_name((OptimKind)b.kind), optim_name(o->kind));
        return -1;
    }
    /* A sharded arena reads the whole state, then keeps its shard. */
    size_t lo = p->shard_lo, hi = p->shard_hi;
    params_set_shard(p, 0, p->total);
    int rc = 0;
    for (int k = 0; k < optim_num_states(o) && rc == 0; k++) {
        char prefix[PARAM_NAME_MAX];
        optim_state_prefix(prefix, sizeof prefix, scope, k);
        if (b.t == 0) continue; /* nothing was saved: the slots stay zero */
        rc = checkpoint_load_params_mirror(c, p, prefix, params_state(p, k));
    }
    params_set_shard(p, lo, hi);
    if (rc) return -1;
    o->t = b.t;
    return 0;
}

int optim_save(const Optimizer *o, const Params *p, CkptWriter *w) { return optim_save_scoped(o, p, w, ""); }

int optim_load(Optimizer *o, Params *p, const Checkpoint *c) { return optim_load_scoped(o, p, c, ""); }
