/* adamw.c — Adam with decoupled weight decay (Loshchilov & Hutter), in
 * PyTorch's exact operation order (optim.h) so it can be checked against
 * torch.optim.AdamW. */
#include <math.h>

#include "core/common.h"
#include "core/kernels.h"
#include "optim/optim.h"
#include "optim/optim_internal.h"

/* x, g, m, v (n): core/kernels' update, in chunks over the threads (every
 * element is independent: the result does not depend on the split). */
static void adamw_update(float *x, const float *g, float *m, float *v, long n, AdamwCoef c) {
    enum { CHUNK = 8192 };
    const ElemKernels *k = kernels();
    long chunks = (n + CHUNK - 1) / CHUNK;
#pragma omp parallel for schedule(static) if (n >= OPTIM_PARALLEL_MIN)
    for (long ch = 0; ch < chunks; ch++) {
        long lo = ch * CHUNK, len = lo + CHUNK < n ? CHUNK : n - lo;
        k->adamw(x + lo, g + lo, m + lo, v + lo, len, c);
    }
}

void adamw_step(const Optimizer *o, Params *p, float lr, long t) {
    float *m = params_state(p, 0), *v = params_state(p, 1);
    /* Constants in double, rounded once (optim.h: matches PyTorch). */
    double bc1 = o->bias_correction ? 1.0 - pow(o->beta1, (double)t) : 1.0;
    double bc2 = o->bias_correction ? 1.0 - pow(o->beta2, (double)t) : 1.0;
    AdamwCoef c = {.beta1 = (float)o->beta1, .one_beta1 = (float)(1.0 - o->beta1), .beta2 = (float)o->beta2,
                   .one_beta2 = (float)(1.0 - o->beta2), .bc2_sqrt = (float)sqrt(bc2), .eps = (float)o->eps};
    for (int h = 0; h < params_num_tensors(p); h++) {
        /* A tensor's own rate (PyTorch: a parameter group with lr * lr_scale). */
        double lr_t = (double)lr * params_tensor(p, h)->lr_scale;
        c.step_size = (float)(lr_t / bc1);
        c.decay_mul = (float)(1.0 - lr_t * OPTIM_DECAY(o, params_tensor(p, h)->flags));
        for (long s = 0, ns = params_span_count(p, h, o->lazy); s < ns; s++) {
            ParamSpan sp = params_span(p, h, s, o->lazy);
            if (!params_span_in_shard(p, &sp)) continue;
            size_t at = sp.offset, st = at - p->shard_lo;   /* the state holds the shard only */
            adamw_update(p->data + at, p->grad + at, m + st, v + st, sp.len, c);
        }
    }
}
