/* transformer.c — post-LN self-attention, cross-attention and FFN sublayers
 * (see transformer.h), composed from nn/linear, nn/attention, nn/dropout,
 * nn/activation and nn/layernorm.
 *
 * Every sublayer ends the same way — projection -> dropout -> + x -> LayerNorm —
 * so that tail (block_tail_forward/backward) is written once. The GEMMs go through
 * core/blas (the weight-gradient GEMMs accumulate with beta = 1, the input
 * gradients are written with beta = 0 where possible, so no buffer needs
 * clearing first); element-wise passes are OpenMP loops between them. */
#include "nn/transformer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/blas.h"
#include "core/gemm_bf16.h"
#include "core/gemm_int8.h"
#include "core/common.h"
#include "core/kernels.h"
#include "nn/dropout.h"
#include "nn/layernorm.h"
#include "nn/linear.h"

#define BLOCK_PARALLEL_MIN 32768   /* elements below which threads do not pay */
/* LayerNorm parameter gradients are summed in this many fixed row blocks,
 * reduced in order: the result is the same for any thread count. */
#define BLOCK_ROW_CHUNKS 16
#define BLOCK_STATS_FLOATS(C) (2L * BLOCK_ROW_CHUNKS * (C))

/* ---- the attention core: nn/attention unless BlockDims.core replaces it ---- */

static long block_core_scratch(const BlockDims *d, AttnDims ad) {
    return d->core ? d->core->scratch_size(d->core->ctx, ad) : attention_scratch_size(ad);
}

static void block_core_forward(const BlockDims *d, float *out, float *att, unsigned char *mask, const float *q,
                            const float *k, const float *v, AttnDims ad, Rng *rng, float *scratch) {
    if (d->core) d->core->forward(d->core->ctx, out, att, mask, q, k, v, ad, rng, scratch);
    else attention_forward(out, att, mask, q, k, v, ad, rng, scratch);
}

static void block_core_backward(const BlockDims *d, float *dq, float *dk, float *dv, const float *dout,
                             const float *att, const unsigned char *mask, const float *q, const float *k,
                             const float *v, AttnDims ad, float *scratch) {
    if (d->core) d->core->backward(d->core->ctx, dq, dk, dv, dout, att, mask, q, k, v, ad, scratch);
    else attention_backward(dq, dk, dv, dout, att, mask, q, k, v, ad, scratch);
}

/* AttnDims of a self- (cross = 0) or cross-attention call. */
static AttnDims block_attn_dims(const BlockDims *d, int cross, int train) {
    AttnDims ad = {.B = d->B, .Tq = d->T, .NH = d->NH, .HS = d->C / d->NH};
    if (cross) {
        ad.Tk = d->Tk;
        ad.ldq = d->C;
        ad.ldk = ad.ldv = 2 * d->C;
        ad.key_lengths = d->mem_lengths;
        ad.q_pos = d->q_pos;
        ad.alibi = d->q_pos ? d->alibi : NULL;
    } else {
        ad.Tk = d->T;
        ad.ldq = ad.ldk = ad.ldv = 3 * d->C;
        ad.key_lengths = d->lengths;
        ad.causal = d->causal;
        ad.alibi = d->alibi;
    }
    ad.dropout = train ? d->attn_dropout : 0.0f;
    return ad;
}

/* ---- memory ---- */

static float *block_floats(long n) { return xaligned_alloc(sizeof(float) * (size_t)(n > 0 ? n : 1)); }
static unsigned char *block_bytes(long n) { return xmalloc((size_t)(n > 0 ? n : 1)); }

static void block_tail_acts_init(BlockTailActs *t, long N, int C) {
    t->drop_mask = block_bytes(N * C);
    t->res = block_floats(N * C);
    t->mean = block_floats(N);
    t->rstd = block_floats(N);
}

static void block_tail_acts_free(BlockTailActs *t) {
    free(t->drop_mask); free(t->res); free(t->mean); free(t->rstd);
}

void block_attn_acts_init(BlockAttnActs *a, const BlockDims *max, int cross) {
    if (max->C % max->NH != 0) DIE("transformer: C %d is not a multiple of NH %d", max->C, max->NH);
    long Tk = cross ? max->Tk : max->T;
    block_attn_acts_init_sized(a, (long)max->B * max->T, (long)max->B * Tk, (long)max->B * max->NH * max->T * Tk,
                            max->C, cross);
}

void block_attn_acts_init_sized(BlockAttnActs *a, long N, long key_rows, long na, int C, int cross) {
    memset(a, 0, sizeof *a);
    a->qkv = block_floats(N * (cross ? C : 3 * C));
    if (cross) a->kv = block_floats(key_rows * 2 * C);
    a->att = block_floats(na);
    a->att_mask = block_bytes(na);
    a->ctx = block_floats(N * C);
    block_tail_acts_init(&a->tail, N, C);
    a->out = block_floats(N * C);
}

void block_attn_acts_free(BlockAttnActs *a) {
    free(a->qkv); free(a->kv); free(a->att); free(a->att_mask); free(a->ctx); free(a->out);
    block_tail_acts_free(&a->tail);
    memset(a, 0, sizeof *a);
}

void block_ffn_acts_init(BlockFfnActs *a, const BlockDims *max) {
    memset(a, 0, sizeof *a);
    long N = (long)max->B * max->T, C = max->C;
    a->pre = block_floats(N * max->FF);
    a->act = block_floats(N * max->FF);
    block_tail_acts_init(&a->tail, N, C);
    a->out = block_floats(N * C);
}

void block_ffn_acts_free(BlockFfnActs *a) {
    free(a->pre); free(a->act); free(a->out);
    int8_acts_free(&a->act_q);
    block_tail_acts_free(&a->tail);
    memset(a, 0, sizeof *a);
}

long block_scratch_floats(const BlockDims *max) {
    long N = (long)max->B * max->T, C = max->C;
    /* Size the attention core as if dropout were on: its scratch is larger then. */
    BlockDims m = *max;
    m.attn_dropout = 0.5f;
    long stats = BLOCK_STATS_FLOATS(C);
    long self = 5 * N * C + stats + block_core_scratch(max, block_attn_dims(&m, 0, 1));
    long need = self;
    if (max->Tk > 0) {
        long cross = 3 * N * C + (long)max->B * max->Tk * 2 * C + stats + block_core_scratch(max, block_attn_dims(&m, 1, 1));
        if (cross > need) need = cross;
    }
    long ffn = N * C + N * max->FF + stats;
    return ffn > need ? ffn : need;
}

/* ---- the shared tail: res = x + dropout(res); out = LN(res) ---- */

/* On entry res (N, C) holds the projection, or (x NULL) already the
 * projection + x. */
static void block_tail_forward(float *out, float *res, float *mean, float *rstd, unsigned char *mask,
                            const float *x, const float *ln_g, const float *ln_b, long N, int C,
                            float eps, float p, Rng *rng) {
    long n = N * C;
    if (rng && p > 0.0f) dropout_forward(res, mask, res, n, p, rng);
    const ElemKernels *k = kernels();
    if (x) {
        #pragma omp parallel for if (n > BLOCK_PARALLEL_MIN)
        for (long r = 0; r < N; r++) k->add(res + r * C, x + r * C, C);
    }
    layernorm_forward(out, mean, rstd, res, ln_g, ln_b, (int)N, C, eps);
}


/* Threaded over column chunks; each column's rows are added in order, so the
 * sum does not depend on the thread count. */
void block_bias_backward(float *db, const float *dy, long N, int OC) {
    enum { CHUNK = 64 };
    int nchunks = (OC + CHUNK - 1) / CHUNK;
    const ElemKernels *k = kernels();
    #pragma omp parallel for if (N * OC > BLOCK_PARALLEL_MIN)
    for (int ch = 0; ch < nchunks; ch++) {
        int lo = ch * CHUNK, hi = lo + CHUNK < OC ? lo + CHUNK : OC;
        float acc[CHUNK] = {0};
        k->add_rows(acc, dy + lo, N, OC, hi - lo);
        k->add(db + lo, acc, hi - lo);
    }
}

/* The tail's backward in one pass over the rows (LayerNorm, residual, dropout):
 *   dx (N, C) = dL/d(res) = rstd * (g - mean(g) - xhat * mean(g * xhat)),
 *               g = dy * gamma — the residual's share of dL/dx, WRITTEN;
 *   dproj = dx * mask * scale when the forward dropped (else dx itself);
 *   dln_g += sum over rows of dy * xhat, dln_b += sum of dy.
 * Returns dL/d(projection). stats (2 * BLOCK_ROW_CHUNKS * C floats) is scratch. */
static const float *block_tail_backward(float *dx, float *dproj, float *dln_g, float *dln_b,
                                     const float *dy, const float *res, const float *mean,
                                     const float *rstd, const unsigned char *mask, const float *ln_g,
                                     long N, int C, float p, int train, float *stats) {
    int drop = train && p > 0.0f;
    float scale = drop ? dropout_scale(p) : 1.0f;
    long per = (N + BLOCK_ROW_CHUNKS - 1) / BLOCK_ROW_CHUNKS;
    memset(stats, 0, sizeof(float) * 2 * BLOCK_ROW_CHUNKS * (size_t)C);
    const ElemKernels *k = kernels();
    #pragma omp parallel for if (N * C > BLOCK_PARALLEL_MIN)
    for (int blk = 0; blk < BLOCK_ROW_CHUNKS; blk++) {
        float *sg = stats + (long)blk * 2 * C, *sb = sg + C;
        long hi = (blk + 1) * per < N ? (blk + 1) * per : N;
        for (long n = blk * per; n < hi; n++) {
            k->layernorm_backward_row(dx + n * C, sg, sb, dy + n * C, res + n * C, ln_g, mean[n], rstd[n], C);
            if (drop) k->masked_scale(dproj + n * C, dx + n * C, mask + n * C, scale, C);
        }
    }
    for (int blk = 0; blk < BLOCK_ROW_CHUNKS; blk++)
        for (int c = 0; c < C; c++) {
            dln_g[c] += stats[(long)blk * 2 * C + c];
            dln_b[c] += stats[(long)blk * 2 * C + C + c];
        }
    return drop ? dproj : dx;
}

/* The backward of y = x W^T + b: dw (OC, C) and db (OC) added; dx (N, C)
 * WRITTEN for the output projections (dx_beta 0), ADDED for the input
 * projections (dx_beta 1: it already holds the residual's share). */
static void block_linear_backward(float dx_beta, float *dx, float *dw, float *db, const float *dy, const float *x,
                                  const float *w, long N, int C, int OC) {
    matmul(dx, dy, w, (int)N, C, OC, MAT_N, MAT_N, 1.0f, dx_beta);
    matmul(dw, dy, x, OC, C, (int)N, MAT_T, MAT_N, 1.0f, 1.0f);
    block_bias_backward(db, dy, N, OC);
}

/* ---- pre-LN: xn = LN(x) before the sublayer, y = x + dropout(proj) after ---- */

/* The pre-LN tail: out (N, C) = x + dropout(out), in place on out. */
static void block_pre_tail_forward(float *out, unsigned char *mask, const float *x, long N, int C, float p, Rng *rng) {
    if (rng && p > 0.0f) dropout_forward(out, mask, out, N * C, p, rng);
    const ElemKernels *k = kernels();
    #pragma omp parallel for if (N * C > BLOCK_PARALLEL_MIN)
    for (long r = 0; r < N; r++) k->add(out + r * C, x + r * C, C);
}

/* absmax[k] = max(absmax[k], |x[b][t][k]|) over the real positions of x
 * (B, T, K): t < lengths[b] (every t when lengths is NULL), so padding never
 * counts and the maxima do not depend on which rows share a batch.
 * Calibration only (BlockAttnParams' absmax_*), so no kernel of its own. */
static void block_observe(float *absmax, const float *x, int B, int T, const int *lengths, int K) {
    if (!absmax) return;
    for (int b = 0; b < B; b++) {
        int n = lengths && lengths[b] < T ? lengths[b] : T;
        for (int t = 0; t < n; t++) {
            const float *row = x + ((long)b * T + t) * K;
            for (int k = 0; k < K; k++) absmax[k] = fmaxf(absmax[k], fabsf(row[k]));
        }
    }
}

/* The end both sublayers share: the output projection of in (N, K) by W (C, K)
 * (its int8 or bf16 copy when there is one; in_q: in already quantized), then the residual with dropout, and
 * LayerNorm after it (post-LN) or not (pre-LN: the stream stays raw). */
static void block_output_forward(const BlockTailActs *o, float *out, const float *in, const Int8Acts *in_q, int K,
                                 const float *w, const struct Bf16Weights *w_bf16, const struct Int8Weights *w_int8,
                                 const float *b, const float *x, const float *ln_g, const float *ln_b,
                                 const BlockDims *d, Rng *rng) {
    long N = (long)d->B * d->T;
    int C = d->C;
    float *proj = d->pre_ln ? out : o->res;
    /* int8, post-LN, no dropout: the residual added in the product's epilogue */
    const float *fused = w_int8 && !d->pre_ln && !(rng && d->hidden_dropout > 0.0f) ? x : NULL;
    if (w_int8 && in_q) matmul_int8_acts(proj, in_q, w_int8, b, fused);
    else if (w_int8) matmul_int8_residual(proj, in, w_int8, (int)N, b, fused);
    else if (w_bf16) linear_forward_bf16(proj, in, w_bf16, b, (int)N);
    else linear_forward(proj, in, w, b, (int)N, K, C);
    if (d->pre_ln) block_pre_tail_forward(out, o->drop_mask, x, N, C, d->hidden_dropout, rng);
    else block_tail_forward(out, o->res, o->mean, o->rstd, o->drop_mask, fused ? NULL : x, ln_g, ln_b, N, C, d->eps,
                            d->hidden_dropout, rng);
}

/* dL/d(projection) of the pre-LN tail from dy: dropout's backward into dproj,
 * or dy itself. */
static const float *block_pre_tail_backward(float *dproj, const float *dy, const unsigned char *mask, long N, int C,
                                         float p, int train) {
    if (!(train && p > 0.0f)) return dy;
    memset(dproj, 0, sizeof(float) * (size_t)(N * C));
    dropout_backward(dproj, dy, mask, N * C, p);
    return dproj;
}

/* dx (N, C) = dy (the residual) + the LayerNorm's backward of dxn; dln_g/dln_b
 * added. tmp (N, C) and stats are scratch. */
static void block_pre_ln_backward(float *dx, float *dln_g, float *dln_b, const float *dxn, const float *dy,
                               const float *x, const float *mean, const float *rstd, const float *ln_g, long N,
                               int C, float *stats) {
    block_tail_backward(dx, NULL, dln_g, dln_b, dxn, x, mean, rstd, NULL, ln_g, N, C, 0.0f, 0, stats);
    const ElemKernels *k = kernels();
    #pragma omp parallel for if (N * C > BLOCK_PARALLEL_MIN)
    for (long r = 0; r < N; r++) k->add(dx + r * C, dy + r * C, C);
}

/* ---- self-attention ---- */

void block_self_attn_forward(BlockAttnActs *a, const float *x, const BlockAttnParams *w, const BlockDims *d,
                          Rng *rng, float *scratch) {
    long N = (long)d->B * d->T;
    int C = d->C;
    a->train = rng != NULL;
    AttnDims ad = block_attn_dims(d, 0, a->train);
    const float *in = x;
    if (d->pre_ln) {   /* the projections read LN(x), kept in res */
        layernorm_forward(a->tail.res, a->tail.mean, a->tail.rstd, x, w->ln_g, w->ln_b, (int)N, C, d->eps);
        in = a->tail.res;
    }
    block_observe(w->absmax_qkv, in, d->B, d->T, d->lengths, C);
    if (w->int8_qkv) matmul_int8(a->qkv, in, w->int8_qkv, (int)N, w->b_qkv, 0);
    else if (w->bf16_qkv) linear_forward_bf16(a->qkv, in, w->bf16_qkv, w->b_qkv, (int)N);
    else linear_forward(a->qkv, in, w->w_qkv, w->b_qkv, (int)N, C, 3 * C);   /* one fused GEMM */
    block_core_forward(d, a->ctx, a->att, a->att_mask, a->qkv, a->qkv + C, a->qkv + 2 * C, ad, rng, scratch);
    block_observe(w->absmax_o, a->ctx, d->B, d->T, d->lengths, C);
    block_output_forward(&a->tail, a->out, a->ctx, NULL, C, w->w_o, w->bf16_o, w->int8_o, w->b_o, x, w->ln_g, w->ln_b, d, rng);
}

void block_self_attn_backward(float *dx, BlockAttnParams *g, const float *dy, const BlockAttnActs *a,
                           const float *x, const BlockAttnParams *w, const BlockDims *d, float *scratch) {
    long N = (long)d->B * d->T;
    int C = d->C;
    float *dproj = scratch, *dctx = dproj + N * C, *dqkv = dctx + N * C, *stats = dqkv + 3 * N * C;
    float *core = stats + BLOCK_STATS_FLOATS(C);
    AttnDims ad = block_attn_dims(d, 0, a->train);
    const float *dp = d->pre_ln ? block_pre_tail_backward(dproj, dy, a->tail.drop_mask, N, C, d->hidden_dropout, a->train)
                                : block_tail_backward(dx, dproj, g->ln_g, g->ln_b, dy, a->tail.res, a->tail.mean, a->tail.rstd,
                                                   a->tail.drop_mask, w->ln_g, N, C, d->hidden_dropout, a->train, stats);
    block_linear_backward(0.0f, dctx, g->w_o, g->b_o, dp, a->ctx, w->w_o, N, C, C);
    memset(dqkv, 0, sizeof(float) * (size_t)(3 * N * C));   /* the core adds */
    block_core_backward(d, dqkv, dqkv + C, dqkv + 2 * C, dctx, a->att, a->att_mask, a->qkv, a->qkv + C,
                     a->qkv + 2 * C, ad, core);
    if (d->pre_ln) {
        /* d(LN(x)) into dproj (consumed), then dx = dy + the LayerNorm's backward. */
        block_linear_backward(0.0f, dproj, g->w_qkv, g->b_qkv, dqkv, a->tail.res, w->w_qkv, N, C, 3 * C);
        block_pre_ln_backward(dx, g->ln_g, g->ln_b, dproj, dy, x, a->tail.mean, a->tail.rstd, w->ln_g, N, C, stats);
        return;
    }
    /* dx (already the residual's share) += dqkv W_qkv. */
    block_linear_backward(1.0f, dx, g->w_qkv, g->b_qkv, dqkv, x, w->w_qkv, N, C, 3 * C);
}

/* ---- cross-attention ---- */

/* y (rows, n1 - n0) = x (rows, K) W[n0, n1)^T + b[n0, n1): through W's int8
 * copy when it has one (BERT's last layer at the rows its head reads), else fp32. */
static void block_project_rows(float *y, const float *x, int rows, const float *w, const struct Int8Weights *q,
                               const float *b, int n0, int n1, int K) {
    Int8Weights view;
    if (q && int8_weights_rows(q, n0, n1, &view) == 0) matmul_int8(y, x, &view, rows, b + n0, 0);
    else linear_forward(y, x, w + (long)n0 * K, b + n0, rows, K, n1 - n0);
}

void block_cross_attn_forward(BlockAttnActs *a, const float *x, const float *mem, const BlockAttnParams *w,
                           const BlockDims *d, Rng *rng, float *scratch) {
    long N = (long)d->B * d->T;
    int C = d->C;
    a->train = rng != NULL;
    if (d->pre_ln) DIE("block_cross_attn_forward: pre-LN cross-attention is not implemented");
    AttnDims ad = block_attn_dims(d, 1, a->train);
    block_observe(w->absmax_qkv, x, d->B, d->T, d->lengths, C);
    block_observe(w->absmax_qkv, mem, d->B, d->Tk, d->mem_lengths, C);
    block_project_rows(a->qkv, x, (int)N, w->w_qkv, w->int8_qkv, w->b_qkv, 0, C, C);
    block_project_rows(a->kv, mem, d->B * d->Tk, w->w_qkv, w->int8_qkv, w->b_qkv, C, 3 * C, C);
    block_core_forward(d, a->ctx, a->att, a->att_mask, a->qkv, a->kv, a->kv + C, ad, rng, scratch);
    block_observe(w->absmax_o, a->ctx, d->B, d->T, d->lengths, C);
    block_project_rows(a->tail.res, a->ctx, (int)N, w->w_o, w->int8_o, w->b_o, 0, C, C);
    block_tail_forward(a->out, a->tail.res, a->tail.mean, a->tail.rstd, a->tail.drop_mask, x, w->ln_g, w->ln_b, N, C, d->eps,
                    d->hidden_dropout, rng);
}

void block_cross_attn_backward(float *dx, float *dmem, BlockAttnParams *g, const float *dy,
                            const BlockAttnActs *a, const float *x, const float *mem,
                            const BlockAttnParams *w, const BlockDims *d, float *scratch) {
    long N = (long)d->B * d->T, NK = (long)d->B * d->Tk;
    int C = d->C;
    float *dproj = scratch, *dctx = dproj + N * C, *dq = dctx + N * C, *dkv = dq + N * C;
    float *stats = dkv + NK * 2 * C, *core = stats + BLOCK_STATS_FLOATS(C);
    AttnDims ad = block_attn_dims(d, 1, a->train);
    const float *dp = block_tail_backward(dx, dproj, g->ln_g, g->ln_b, dy, a->tail.res, a->tail.mean, a->tail.rstd,
                                       a->tail.drop_mask, w->ln_g, N, C, d->hidden_dropout, a->train, stats);
    block_linear_backward(0.0f, dctx, g->w_o, g->b_o, dp, a->ctx, w->w_o, N, C, C);
    memset(dq, 0, sizeof(float) * (size_t)(N * C));
    memset(dkv, 0, sizeof(float) * (size_t)(NK * 2 * C));
    block_core_backward(d, dq, dkv, dkv + C, dctx, a->att, a->att_mask, a->qkv, a->kv, a->kv + C, ad, core);
    block_linear_backward(1.0f, dx, g->w_qkv, g->b_qkv, dq, x, w->w_qkv, N, C, C);
    block_linear_backward(1.0f, dmem, g->w_qkv + (long)C * C, g->b_qkv + C, dkv, mem, w->w_qkv + (long)C * C, NK,
                          C, 2 * C);
}

/* ---- FFN ---- */

/* pre (N, FF) += b; act = gelu(pre) = pre * Phi(pre): bias and GELU in one pass
 * over the GEMM's output. */
static void block_bias_gelu_forward(float *pre, float *act, const float *b, long N, int FF) {
    const ElemKernels *k = kernels();
    #pragma omp parallel for if (N * FF > BLOCK_PARALLEL_MIN)
    for (long n = 0; n < N; n++) k->bias_gelu(pre + n * FF, act + n * FF, b, FF);
}

/* d (n) *= gelu'(pre) = Phi(pre) + pre * phi(pre), in place. */
static void block_gelu_backward_inplace(float *d, const float *pre, long n) {
    enum { CHUNK = 4096 };
    const ElemKernels *k = kernels();
    long chunks = (n + CHUNK - 1) / CHUNK;
    #pragma omp parallel for if (n > BLOCK_PARALLEL_MIN)
    for (long ch = 0; ch < chunks; ch++) {
        long lo = ch * CHUNK;
        k->gelu_backward_inplace(d + lo, pre + lo, lo + CHUNK < n ? CHUNK : n - lo);
    }
}

void block_ffn_forward(BlockFfnActs *a, const float *x, const BlockFfnParams *w, const BlockDims *d, Rng *rng,
                    float *scratch) {
    (void)scratch;
    long N = (long)d->B * d->T;
    int C = d->C, FF = d->FF;
    a->train = rng != NULL;
    const float *in = x;
    if (d->pre_ln) {   /* W_1 reads LN(x), kept in res */
        layernorm_forward(a->tail.res, a->tail.mean, a->tail.rstd, x, w->ln_g, w->ln_b, (int)N, C, d->eps);
        in = a->tail.res;
    }
    block_observe(w->absmax_in, in, d->B, d->T, d->lengths, C);
    const Int8Acts *act_q = NULL;
    if (w->int8_in && w->int8_out) {   /* inference only, as bf16 below: act straight to W_2's int8 inputs */
        matmul_int8_quantized(&a->act_q, a->act, in, w->int8_in, (int)N, w->b_in, 1, w->int8_out);
        act_q = &a->act_q;
    } else if (w->int8_in) {
        matmul_int8(a->act, in, w->int8_in, (int)N, w->b_in, 1);
    } else if (w->bf16_in) {   /* inference only: act straight from the GEMM's epilogue, pre not kept */
        matmul_bf16(a->act, in, w->bf16_in, (int)N, 0.0f, w->b_in, 1);
    } else {
        matmul(a->pre, in, w->w_in, (int)N, FF, C, MAT_N, MAT_T, 1.0f, 0.0f);
        block_bias_gelu_forward(a->pre, a->act, w->b_in, N, FF);
    }
    if (!act_q) block_observe(w->absmax_out, a->act, d->B, d->T, d->lengths, FF);
    block_output_forward(&a->tail, a->out, a->act, act_q, FF, w->w_out, w->bf16_out, w->int8_out, w->b_out, x, w->ln_g, w->ln_b, d, rng);
}

void block_ffn_backward(float *dx, BlockFfnParams *g, const float *dy, const BlockFfnActs *a,
                     const float *x, const BlockFfnParams *w, const BlockDims *d, float *scratch) {
    long N = (long)d->B * d->T;
    int C = d->C, FF = d->FF;
    float *dproj = scratch, *dact = dproj + N * C;   /* dact becomes dpre in place */
    float *stats = dact + N * FF;
    const float *dp = d->pre_ln ? block_pre_tail_backward(dproj, dy, a->tail.drop_mask, N, C, d->hidden_dropout, a->train)
                                : block_tail_backward(dx, dproj, g->ln_g, g->ln_b, dy, a->tail.res, a->tail.mean, a->tail.rstd,
                                                   a->tail.drop_mask, w->ln_g, N, C, d->hidden_dropout, a->train, stats);
    block_linear_backward(0.0f, dact, g->w_out, g->b_out, dp, a->act, w->w_out, N, FF, C);
    block_gelu_backward_inplace(dact, a->pre, N * FF);
    if (d->pre_ln) {   /* d(LN(x)) into dproj (consumed), then dx = dy + the LayerNorm's backward */
        block_linear_backward(0.0f, dproj, g->w_in, g->b_in, dact, a->tail.res, w->w_in, N, C, FF);
        block_pre_ln_backward(dx, g->ln_g, g->ln_b, dproj, dy, x, a->tail.mean, a->tail.rstd, w->ln_g, N, C, stats);
        return;
    }
    block_linear_backward(1.0f, dx, g->w_in, g->b_in, dact, x, w->w_in, N, C, FF);
}
