/* params.c — the parameter arena and its mirrors (see params.h). */
#include "core/params.h"

#include <stdlib.h>
#include <string.h>

#include "core/common.h"

/* Tensors start on 64-byte boundaries: 16 floats. */
enum { PARAM_ALIGN_FLOATS = 64 / sizeof(float) };

Params *params_create(void) { return xcalloc(1, sizeof(Params)); }

void params_free(Params *p) {
    if (!p) return;
    for (int i = 0; i < p->n; i++) {
        free(p->t[i].touched_bits);
        free(p->t[i].touched_list);
    }
    free(p->t);
    free(p->data);
    free(p->grad);
    for (int k = 0; k < PARAM_MAX_STATES; k++) free(p->state[k]);
    free(p);
}

/* Elements of a shape (1 for ndim 0). */
static long params_shape_numel(const int *shape, int ndim) {
    long n = 1;
    for (int d = 0; d < ndim; d++) n *= shape[d];
    return n;
}

/* Sparse-rows bookkeeping, sized once at declare time. */
static void param_sparse_setup(ParamTensor *t) {
    if (t->ndim < 1 || t->shape[0] < 1) DIE("params: sparse-rows tensor '%s' needs rows", t->name);
    t->rows = t->shape[0];
    t->row_size = t->numel / t->rows;
    t->touched_bits = xcalloc((size_t)(t->rows + 63) / 64, sizeof(uint64_t));
    t->touched_list = xmalloc((size_t)t->rows * sizeof(int));
    t->n_touched = 0;
}

int params_declare(Params *p, const char *name, const int *shape, int ndim, ParamInit init,
                   int flags) {
    if (p->data) DIE("params: '%s' declared after params_allocate", name);
    if (ndim < 0 || ndim > PARAM_MAX_DIMS) DIE("params: '%s' has %d dims (max %d)", name, ndim, PARAM_MAX_DIMS);
    if (strlen(name) >= PARAM_NAME_MAX) DIE("params: name '%s' is too long", name);
    if (params_find(p, name) >= 0) DIE("params: '%s' declared twice", name);
    for (int d = 0; d < ndim; d++)
        if (shape[d] < 0) DIE("params: '%s' has a negative dimension", name);
    if (p->n == p->cap) {
        p->cap = p->cap ? 2 * p->cap : 16;
        p->t = xrealloc(p->t, (size_t)p->cap * sizeof *p->t);
    }
    ParamTensor *t = &p->t[p->n];
    memset(t, 0, sizeof *t);
    strcpy(t->name, name);
    t->ndim = ndim;
    if (ndim > 0) memcpy(t->shape, shape, (size_t)ndim * sizeof(int));
    t->numel = params_shape_numel(shape, ndim);
    t->flags = flags;
    t->init = init;
    t->lr_scale = 1.0f;
    t->offset = p->total;
    p->total += ((size_t)t->numel + PARAM_ALIGN_FLOATS - 1) / PARAM_ALIGN_FLOATS * PARAM_ALIGN_FLOATS;
    if (flags & PARAM_SPARSE_ROWS) param_sparse_setup(t);
    return p->n++;
}

/* A zeroed slice [lo, hi) of the arena's layout (a mirror: [0, total),
 * padding included, so it stays zero forever; optimizer state: the shard). */
static float *params_shard_alloc(size_t lo, size_t hi) {
    size_t bytes = (hi > lo ? hi - lo : PARAM_ALIGN_FLOATS) * sizeof(float);
    float *m = xaligned_alloc(bytes);
    memset(m, 0, bytes);
    return m;
}

static float *params_mirror_alloc(const Params *p) { return params_shard_alloc(0, p->total); }

static void param_init_tensor(float *x, long n, ParamInit init, Rng *rng) {
    switch (init.kind) {
    case PARAM_INIT_KIND_ZEROS:
    case PARAM_INIT_KIND_CALLER: memset(x, 0, (size_t)n * sizeof *x); break;
    case PARAM_INIT_KIND_ONES:
        for (long i = 0; i < n; i++) x[i] = 1.0f;
        break;
    case PARAM_INIT_KIND_NORMAL:
        for (long i = 0; i < n; i++) x[i] = init.scale * rng_normal(rng);
        break;
    case PARAM_INIT_KIND_UNIFORM:
        for (long i = 0; i < n; i++) x[i] = init.scale * (2.0f * rng_uniform(rng) - 1.0f);
        break;
    }
}

void params_allocate(Params *p, Rng *rng) {
    if (p->data) DIE("params: allocated twice");
    p->data = params_mirror_alloc(p);
    p->shard_lo = 0;
    p->shard_hi = p->total;
    for (int i = 0; i < p->n; i++)
        param_init_tensor(p->data + p->t[i].offset, p->t[i].numel, p->t[i].init, rng);
}

void params_grad_enable(Params *p) {
    if (!p->data) DIE("params: params_grad_enable before params_allocate");
    if (!p->grad) p->grad = params_mirror_alloc(p);
}

float *params_state(Params *p, int k) {
    if (k < 0 || k >= PARAM_MAX_STATES) DIE("params: no state slot %d", k);
    if (!p->data) DIE("params: params_state before params_allocate");
    if (!p->state[k]) p->state[k] = params_shard_alloc(p->shard_lo, p->shard_hi);
    return p->state[k];
}

void params_set_shard(Params *p, size_t lo, size_t hi) {
    if (!p->data) DIE("params: params_set_shard before params_allocate");
    if (lo > hi || hi > p->total) DIE("params: shard [%zu, %zu) outside the arena (%zu floats)", lo, hi, p->total);
    size_t keep_lo = lo > p->shard_lo ? lo : p->shard_lo, keep_hi = hi < p->shard_hi ? hi : p->shard_hi;
    for (int k = 0; k < PARAM_MAX_STATES; k++) {
        if (!p->state[k]) continue;
        float *s = params_shard_alloc(lo, hi);
        if (keep_lo < keep_hi)
            memcpy(s + (keep_lo - lo), p->state[k] + (keep_lo - p->shard_lo), (keep_hi - keep_lo) * sizeof(float));
        free(p->state[k]);
        p->state[k] = s;
    }
    p->shard_lo = lo;
    p->shard_hi = hi;
}

int params_span_in_shard(const Params *p, ParamSpan *sp) {
    size_t lo = sp->offset > p->shard_lo ? sp->offset : p->shard_lo;
    size_t end = sp->offset + (size_t)sp->len, hi = end < p->shard_hi ? end : p->shard_hi;
    if (lo >= hi) return 0;
    sp->offset = lo;
    sp->len = (long)(hi - lo);
    return 1;
}

static const ParamTensor *params_check_handle(const Params *p, int h) {
    if (h < 0 || h >= p->n) DIE("params: bad handle %d (have %d tensors)", h, p->n);
    return &p->t[h];
}

float *params_data(const Params *p, int h) {
    const ParamTensor *t = params_check_handle(p, h);
    if (!p->data) DIE("params: params_data('%s') before params_allocate", t->name);
    return p->data + t->offset;
}

float *params_grad(const Params *p, int h) {
    const ParamTensor *t = params_check_handle(p, h);
    return p->grad ? p->grad + t->offset : NULL;
}

const ParamTensor *params_tensor(const Params *p, int h) { return params_check_handle(p, h); }

int params_num_tensors(const Params *p) { return p->n; }

int params_find(const Params *p, const char *name) {
    for (int i = 0; i < p->n; i++)
        if (strcmp(p->t[i].name, name) == 0) return i;
    return -1;
}

long params_count(const Params *p) {
    long n = 0;
    for (int i = 0; i < p->n; i++) n += p->t[i].numel;
    return n;
}

void params_zero_grad(Params *p) {
    if (!p->grad) return;
    for (int i = 0; i < p->n; i++) {
        ParamTensor *t = &p->t[i];
        long ns = params_span_count(p, i, 1);
        for (long s = 0; s < ns; s++) {
            ParamSpan sp = params_span(p, i, s, 1);
            memset(p->grad + sp.offset, 0, (size_t)sp.len * sizeof(float));
        }
        if (t->flags & PARAM_SPARSE_ROWS) {
            for (long k = 0; k < t->n_touched; k++) {
                int r = t->touched_list[k];
                t->touched_bits[r / 64] &= ~(UINT64_C(1) << (r % 64));
            }
            t->n_touched = 0;
        }
    }
}

void params_touch_rows(Params *p, int h, const int *rows, int n) {
    params_check_handle(p, h);
    ParamTensor *t = &p->t[h];
    if (!(t->flags & PARAM_SPARSE_ROWS)) DIE("params: '%s' is not a sparse-rows tensor", t->name);
    for (int k = 0; k < n; k++) {
        int r = rows[k];
        if (r < 0 || r >= t->rows) DIE("params: row %d outside '%s' (%ld rows)", r, t->name, t->rows);
        uint64_t bit = UINT64_C(1) << (r % 64);
        if (t->touched_bits[r / 64] & bit) continue;
        t->touched_bits[r / 64] |= bit;
        t->touched_list[t->n_touched++] = r;
    }
}

long params_span_count(const Params *p, int h, int sparse_ok) {
    const ParamTensor *t = params_check_handle(p, h);
    if (sparse_ok && (t->flags & PARAM_SPARSE_ROWS)) return t->n_touched;
    return 1;
}

ParamSpan params_span(const Params *p, int h, long s, int sparse_ok) {
    const ParamTensor *t = &p->t[h];
    if (sparse_ok && (t->flags & PARAM_SPARSE_ROWS))
        return (ParamSpan){t->offset + (size_t)t->touched_list[s] * (size_t)t->row_size, t->row_size};
    return (ParamSpan){t->offset, t->numel};
}
