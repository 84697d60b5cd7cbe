/* clip.c — global-norm gradient clipping (see clip.h). */
#include "optim/clip.h"

#include <math.h>

#include "core/common.h"
#include "core/kernels.h"
#include "optim/optim_internal.h"

/* core/kernels' loops over chunks of a span, the chunks split over the threads. */
enum { CLIP_CHUNK = 8192 };

static double clip_span_sumsq(const float *g, long n) {
    const ElemKernels *k = kernels();
    long chunks = (n + CLIP_CHUNK - 1) / CLIP_CHUNK;
    double acc = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : acc) if (n >= OPTIM_PARALLEL_MIN)
    for (long ch = 0; ch < chunks; ch++) {
        long lo = ch * CLIP_CHUNK;
        acc += k->sumsq(g + lo, lo + CLIP_CHUNK < n ? CLIP_CHUNK : n - lo);
    }
    return acc;
}

static void clip_span_scale(float *g, long n, float scale) {
    const ElemKernels *k = kernels();
    long chunks = (n + CLIP_CHUNK - 1) / CLIP_CHUNK;
#pragma omp parallel for schedule(static) if (n >= OPTIM_PARALLEL_MIN)
    for (long ch = 0; ch < chunks; ch++) {
        long lo = ch * CLIP_CHUNK;
        k->scale(g + lo, lo + CLIP_CHUNK < n ? CLIP_CHUNK : n - lo, scale);
    }
}

/* Sum of squares of one arena's gradient (its shard). */
static double clip_sumsq(const Params *p) {
    if (!p->grad) DIE("clip: no gradient (params_grad_enable)");
    double sumsq = 0.0;
    for (int h = 0; h < params_num_tensors(p); h++)
        for (long s = 0, ns = params_span_count(p, h, 1); s < ns; s++) {
            ParamSpan sp = params_span(p, h, s, 1);
            if (params_span_in_shard(p, &sp)) sumsq += clip_span_sumsq(p->grad + sp.offset, sp.len);
        }
    return sumsq;
}

double clip_compute_norm(const Params *p) { return sqrt(clip_sumsq(p)); }

double clip_sumsq_many(Params *const *ps, int n) {
    double sumsq = 0.0;
    for (int i = 0; i < n; i++) sumsq += clip_sumsq(ps[i]);
    return sumsq;
}

void clip_scale_many(Params *const *ps, int n, float max_norm, double norm) {
    if (max_norm <= 0.0f || !isfinite(norm) || norm <= max_norm) return;
    float scale = (float)(max_norm / norm);
    for (int i = 0; i < n; i++) {
        const Params *p = ps[i];
        for (int h = 0; h < params_num_tensors(p); h++)
            for (long s = 0, ns = params_span_count(p, h, 1); s < ns; s++) {
                ParamSpan sp = params_span(p, h, s, 1);
                if (params_span_in_shard(p, &sp)) clip_span_scale(p->grad + sp.offset, sp.len, scale);
            }
    }
}

double clip_grad_norm_many(Params *const *ps, int n, float max_norm) {
    double norm = sqrt(clip_sumsq_many(ps, n));
    clip_scale_many(ps, n, max_norm, norm);
    return norm;
}

double clip_grad_norm(Params *p, float max_norm) { return clip_grad_norm_many(&p, 1, max_norm); }
