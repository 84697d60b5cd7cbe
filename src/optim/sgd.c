/* sgd.c — stochastic gradient descent with optional momentum and L2 weight
 * decay, PyTorch's rule (optim.h). Visits only the touched rows of
 * sparse-rows tensors, so a step costs what the batch touched, not V x C. */
#include "core/common.h"
#include "optim/optim.h"
#include "optim/optim_internal.h"

/* x, g, buf (n); buf NULL: plain SGD. */
static void sgd_update(float *x, const float *g, float *buf, long n, float lr, float wd, float momentum) {
    if (!buf) {
#pragma omp parallel for simd schedule(static) if (n >= OPTIM_PARALLEL_MIN)
        for (long i = 0; i < n; i++) x[i] -= lr * (g[i] + wd * x[i]);
        return;
    }
#pragma omp parallel for simd schedule(static) if (n >= OPTIM_PARALLEL_MIN)
    for (long i = 0; i < n; i++) {
        buf[i] = momentum * buf[i] + (g[i] + wd * x[i]);
        x[i] -= lr * buf[i];
    }
}

void sgd_step(const Optimizer *o, Params *p, float lr) {
    float *buf = o->momentum != 0.0 ? params_state(p, 0) : NULL;
    for (int h = 0; h < params_num_tensors(p); h++) {
        float wd = (float)OPTIM_DECAY(o, params_tensor(p, h)->flags);
        for (long s = 0, ns = params_span_count(p, h, 1); s < ns; s++) {
            ParamSpan sp = params_span(p, h, s, 1);
            if (!params_span_in_shard(p, &sp)) continue;
            sgd_update(p->data + sp.offset, p->grad + sp.offset, buf ? buf + (sp.offset - p->shard_lo) : NULL, sp.len, lr, wd,
                       (float)o->momentum);
        }
    }
}
