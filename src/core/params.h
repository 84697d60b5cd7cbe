/* params.h — every trainable tensor of a model in ONE 64-byte-aligned arena
 * (DESIGN §4.4).
 *
 * Why one arena: the gradient and the optimizer state (AdamW m and v, SGD
 * momentum, Adadelta accumulators) are mirrors of it at the same offsets, so
 * zero-grad, clipping, the optimizer and checkpoint I/O are each one loop over
 * a flat array instead of a walk over a model-specific struct.
 *
 * Two phases:
 *   1. declare: params_declare(p, "enc.qkvw", PARAM_SHAPE(L, 3 * C, C),
 *                              PARAM_INIT_NORMAL(0.02f), 0)  -> handle
 *   2. params_allocate(p, &rng): one aligned block, each tensor 64-byte aligned
 *      within it, initialised in declaration order from the given RNG (so the
 *      same seed gives the same weights).
 * Then models keep a struct of pointers: m->qkvw = params_data(p, h);   // (L, 3C, C)
 *
 * Memory is spent only on what is used: the data at allocate, the gradient at
 * params_grad_enable (inference never pays for it), each optimizer state slot
 * when the optimizer first asks for it (params_state).
 *
 * Sparse rows (fastText, large-vocabulary embeddings): a tensor declared with
 * PARAM_SPARSE_ROWS has rows = shape[0]. Whoever writes its gradient marks the
 * rows it wrote (params_touch_rows, e.g. with the list embedding_backward
 * returns); zero-grad and SGD then visit only those rows, and clipping counts
 * only those rows (the others are zero by construction). AdamW updates such a
 * tensor densely (what BERT does) unless its `lazy` option asks otherwise.
 * Contract: rows of a sparse tensor that were written but not touched are
 * neither updated nor zeroed.
 *
 * Sharded state (ZeRO-1, Rajbhandari et al. 2020): a data-parallel process
 * may update only a slice [shard_lo, shard_hi) of the arena (params_set_shard);
 * its state slots then hold that slice alone (slot[i] mirrors arena float
 * shard_lo + i), and the optimizer and clipping visit only it. Default: the
 * whole arena.
 *
 * Threads: declare/allocate/touch from one thread (the training loop's). */
#ifndef GLUE_PARAMS_H
#define GLUE_PARAMS_H

#include <stddef.h>
#include <stdint.h>

#include "core/rng.h"

enum { PARAM_MAX_DIMS = 4, PARAM_NAME_MAX = 96, PARAM_MAX_STATES = 2 };

/* Tensor flags. */
enum {
    PARAM_NO_DECAY = 1 << 0,    /* biases, LayerNorm: no weight decay */
    PARAM_SPARSE_ROWS = 1 << 1, /* row-sparse gradient (see above) */
};

typedef enum {
    PARAM_INIT_KIND_ZEROS,
    PARAM_INIT_KIND_ONES,
    PARAM_INIT_KIND_NORMAL,  /* N(0, scale^2) */
    PARAM_INIT_KIND_UNIFORM, /* U(-scale, scale) */
    PARAM_INIT_KIND_CALLER,  /* left zero; the caller fills it after allocate */
} ParamInitKind;

typedef struct {
    ParamInitKind kind;
    float scale; /* std (normal) or half-width a (uniform) */
} ParamInit;

#define PARAM_INIT_ZEROS ((ParamInit){PARAM_INIT_KIND_ZEROS, 0.0f})
#define PARAM_INIT_ONES ((ParamInit){PARAM_INIT_KIND_ONES, 0.0f})
#define PARAM_INIT_NORMAL(std) ((ParamInit){PARAM_INIT_KIND_NORMAL, (std)})
#define PARAM_INIT_UNIFORM(a) ((ParamInit){PARAM_INIT_KIND_UNIFORM, (a)})
#define PARAM_INIT_CALLER ((ParamInit){PARAM_INIT_KIND_CALLER, 0.0f})

/* PARAM_SHAPE(L, 3 * C, C) expands to the two arguments `shape, ndim`. */
#define PARAM_SHAPE(...) \
    (const int[]){__VA_ARGS__}, (int)(sizeof((const int[]){__VA_ARGS__}) / sizeof(int))

typedef struct ParamTensor {
    char name[PARAM_NAME_MAX];
    int ndim;
    int shape[PARAM_MAX_DIMS];
    long numel;
    size_t offset; /* in floats from the arena base; a multiple of 16 (64 bytes) */
    int flags;
    ParamInit init;
    float lr_scale; /* AdamW's learning rate for this tensor is lr * lr_scale (layer-wise
                     * decay when fine-tuning); 1 unless a model sets it */
    /* PARAM_SPARSE_ROWS only: rows = shape[0], row_size = numel / rows. */
    long rows, row_size;
    uint64_t *touched_bits; /* (ceil(rows / 64)) which rows are in touched_list */
    int *touched_list;      /* (rows) distinct touched rows, first-seen order */
    long n_touched;
} ParamTensor;

typedef struct Params {
    ParamTensor *t;
    int n, cap;
    size_t total;  /* floats in the arena, including alignment padding */
    float *data;   /* (total) */
    float *grad;   /* (total) or NULL before params_grad_enable */
    float *state[PARAM_MAX_STATES]; /* (shard_hi - shard_lo) each, or NULL until asked for */
    size_t shard_lo, shard_hi;      /* the slice the state covers: [0, total) unless sharded */
} Params;

/* A contiguous run of one tensor that an update must visit: the whole tensor, or
 * one touched row of a sparse-rows tensor. Offsets in floats from the arena base. */
typedef struct {
    size_t offset;
    long len;
} ParamSpan;

Params *params_create(void);
void params_free(Params *p);

/* Declares a tensor; returns its handle (0, 1, ... in order). Dies on a duplicate
 * name, a bad shape or a declare after allocate (programmer errors). */
int params_declare(Params *p, const char *name, const int *shape, int ndim, ParamInit init,
                   int flags);
/* Allocates the data arena and initialises every tensor from rng. */
void params_allocate(Params *p, Rng *rng);
/* Allocates the (zeroed) gradient mirror; idempotent. */
void params_grad_enable(Params *p);
/* Optimizer state slot k (0 <= k < PARAM_MAX_STATES), zeroed when first asked
 * for: shard_hi - shard_lo floats, slot[i] for arena float shard_lo + i. */
float *params_state(Params *p, int k);
/* Makes [lo, hi) (floats, lo <= hi <= total) the slice the state covers. The
 * state already there keeps its values where the old and new slices overlap
 * (zero elsewhere): sharding a fresh arena, widening one to the whole arena
 * to gather or load a complete state, narrowing it back, are all this call. */
void params_set_shard(Params *p, size_t lo, size_t hi);
/* Narrows sp to the shard; 0 when nothing of it is left. */
int params_span_in_shard(const Params *p, ParamSpan *sp);

float *params_data(const Params *p, int h);
float *params_grad(const Params *p, int h); /* NULL before params_grad_enable */
const ParamTensor *params_tensor(const Params *p, int h);
int params_num_tensors(const Params *p);
/* Handle of the tensor with this name, or -1. */
int params_find(const Params *p, const char *name);
/* Trainable scalars (padding excluded). */
long params_count(const Params *p);

/* Zeroes the gradient: dense tensors whole, sparse-rows tensors only their
 * touched rows, after which their touched sets are cleared. */
void params_zero_grad(Params *p);
/* Marks rows[0..n) of sparse-rows tensor h as having gradient this step
 * (duplicates are fine). Dies if h was not declared PARAM_SPARSE_ROWS. */
void params_touch_rows(Params *p, int h, const int *rows, int n);

/* The spans of tensor h an update visits: one span for a dense tensor, or when
 * !sparse_ok; otherwise one per touched row. Use as
 *   for (long s = 0, ns = params_span_count(p, h, ok); s < ns; s++) {
 *       ParamSpan sp = params_span(p, h, s, ok); ... } */
long params_span_count(const Params *p, int h, int sparse_ok);
ParamSpan params_span(const Params *p, int h, long s, int sparse_ok);

#endif
