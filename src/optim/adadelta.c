/* adadelta.c — Adadelta (Zeiler 2012), PyTorch's rule with its lr multiplier
 * (optim.h); Kim (2014) trained TextCNN with it (rho 0.95, eps 1e-6). */
#include <math.h>

#include "core/common.h"
#include "optim/optim.h"
#include "optim/optim_internal.h"

/* x, g, s (running E[g^2]), a (running E[dx^2]) all (n). */
static void adadelta_update(float *x, const float *g, float *s, float *a, long n, float lr, float wd,
                            float rho, float one_rho, float eps) {
#pragma omp parallel for simd schedule(static) if (n >= OPTIM_PARALLEL_MIN)
    for (long i = 0; i < n; i++) {
        float gi = g[i] + wd * x[i];
        s[i] = s[i] * rho + one_rho * gi * gi;
        float d = sqrtf(a[i] + eps) / sqrtf(s[i] + eps) * gi;
        a[i] = a[i] * rho + one_rho * d * d;
        x[i] -= lr * d;
    }
}

void adadelta_step(const Optimizer *o, Params *p, float lr) {
    float *s = params_state(p, 0), *a = params_state(p, 1);
    float rho = (float)o->rho, one_rho = (float)(1.0 - o->rho), eps = (float)o->eps;
    for (int h = 0; h < params_num_tensors(p); h++) {
        float wd = (float)OPTIM_DECAY(o, params_tensor(p, h)->flags);
        for (long k = 0, ns = params_span_count(p, h, o->lazy); k < ns; k++) {
            ParamSpan sp = params_span(p, h, k, o->lazy);
            if (!params_span_in_shard(p, &sp)) continue;
            size_t at = sp.offset, st = at - p->shard_lo;
            adadelta_update(p->data + at, p->grad + at, s + st, a + st, sp.len, lr, wd, rho, one_rho, eps);
        }
    }
}
