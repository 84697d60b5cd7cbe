/* optim.h — optimizers over a Params arena: SGD (+ momentum), AdamW, Adadelta.
 *
 * All three follow PyTorch's update rules to the letter (same operation order,
 * bias corrections in double), so a run can be checked against torch.optim:
 *   SGD       g += wd*p (L2); buf = momentum*buf + g; p -= lr*buf
 *             (no momentum: p -= lr*g)
 *   AdamW     p *= 1 - lr*wd (decoupled, skipped for PARAM_NO_DECAY tensors);
 *             m = b1*m + (1-b1)*g; v = b2*v + (1-b2)*g^2;
 *             p -= lr/(1-b1^t) * m / (sqrt(v)/sqrt(1-b2^t) + eps)
 *             (bias_correction = 0 drops both corrections, as Google's
 *             original BERT optimizer did)
 *   Adadelta  g += wd*p; s = rho*s + (1-rho)*g^2;
 *             d = sqrt(a + eps)/sqrt(s + eps) * g; a = rho*a + (1-rho)*d^2;
 *             p -= lr*d   (Zeiler 2012 is lr = 1; Kim's TextCNN used rho 0.95,
 *             eps 1e-6)
 * SGD and Adadelta's L2 weight decay also skips PARAM_NO_DECAY tensors.
 *
 * State lives in the arena's mirrors (params_state slots 0 and 1: SGD momentum;
 * AdamW m, v; Adadelta s, a), so optim_save writes it as ordinary checkpoint
 * tensors and a resumed run continues bit-identically.
 *
 * Sharded state (params_set_shard, ZeRO-1): every rule updates only the
 * arena's shard, from its gradient there; optim_save needs the whole state
 * (widen the shard and gather it first), optim_load fills the shard from a
 * whole state, so a checkpoint never depends on the number of processes.
 *
 * Sparse rows: SGD visits only the touched rows of PARAM_SPARSE_ROWS tensors
 * (fastText-style). AdamW and Adadelta update them densely, which is what BERT
 * does, unless `lazy` is set (then untouched rows keep stale moments).
 *
 * Elementwise work runs on the OpenMP threads (threads.h); each element's
 * update is independent, so results do not depend on the thread count. */
#ifndef GLUE_OPTIM_H
#define GLUE_OPTIM_H

#include "core/checkpoint.h"
#include "core/params.h"

typedef enum { OPTIM_SGD = 0, OPTIM_ADAMW = 1, OPTIM_ADADELTA = 2 } OptimKind;

/* Hyperparameters are doubles, as PyTorch's are Python floats: derived
 * constants (1 - beta2, the bias corrections, 1 - lr*wd) are computed in double
 * and rounded to float once, as its kernels do, so results match torch.optim to
 * float rounding rather than differing by 1e-5 through 1.0f - 0.999f. */
typedef struct Optimizer {
    OptimKind kind;
    double weight_decay;
    double momentum;      /* SGD */
    double beta1, beta2;  /* AdamW */
    double rho;           /* Adadelta */
    double eps;           /* AdamW, Adadelta */
    int bias_correction; /* AdamW, 1 by default */
    int lazy;            /* AdamW/Adadelta: touched rows only on sparse-rows tensors */
    long t;              /* steps taken so far */
} Optimizer;

/* Defaults: PyTorch's (AdamW b1 0.9, b2 0.999, eps 1e-8 — BERT uses 1e-6: set
 * .eps; Adadelta rho 0.95 as Kim, eps 1e-6). */
Optimizer optim_sgd(double momentum, double weight_decay);
Optimizer optim_adamw(double weight_decay);
Optimizer optim_adadelta(double weight_decay);

/* One update of every tensor from p->grad with learning rate lr; t += 1. */
void optim_step(Optimizer *o, Params *p, float lr);

/* The update rules (optim_step dispatches; t is the 1-based step). */
void sgd_step(const Optimizer *o, Params *p, float lr);
void adamw_step(const Optimizer *o, Params *p, float lr, long t);
void adadelta_step(const Optimizer *o, Params *p, float lr);

/* Checkpointing: blob "optim" (kind, t) plus tensors "optim.state<k>.<name>"
 * for each state slot the optimizer uses. 0 ok. optim_load prints a message
 * and returns -1 when the checkpoint has no state, or state of another kind. */
int optim_save(const Optimizer *o, const Params *p, CkptWriter *w);
int optim_load(Optimizer *o, Params *p, const Checkpoint *c);
/* The same under names starting with `scope` (e.g. "generator."), for a
 * checkpoint that holds the state of several arenas. */
int optim_save_scoped(const Optimizer *o, const Params *p, CkptWriter *w, const char *scope);
int optim_load_scoped(Optimizer *o, Params *p, const Checkpoint *c, const char *scope);

const char *optim_name(OptimKind kind);

#endif
