/* seq2seq_decode.c — translation by incremental decoding: greedy and beam
 * search over a batch of sources, with cached keys and values.
 *
 * The encoder runs once. Each decoder step feeds ONE token per hypothesis
 * through the same nn/transformer sublayers as training, with T = 1: their
 * attention core (BlockDims.core) is replaced by
 *   self-attention: append this step's key/value to the layer's cache and
 *     attend over positions 0..t (the query sits at position t, so LPR buckets
 *     are those of the full sequence);
 *   cross-attention: attend over the memory's keys/values, projected once
 *     per layer at the start (the projection the sublayer would do each step).
 * So a step costs O(C^2 + t C) per hypothesis instead of recomputing the
 * prefix, and gives the same numbers as the full computation (tested).
 *
 * Beam search (batched, n sentences x beam rows): every live hypothesis
 * proposes its 2*beam best next tokens; candidates are taken best first
 * (ties: lower row, then lower token id); an end-of-sentence ([SEP])
 * candidate among the first `beam` finishes a hypothesis, scored
 * log P / lp with GNMT's lp = ((5 + |Y|) / 6)^alpha (|Y| counts the [SEP]);
 * the other candidates fill the next beam. A sentence stops when no live
 * hypothesis can still beat its best finished one — log-probabilities only
 * fall, so a live score s can at best become s / lp(maximum length) — or at
 * its maximum length (source length + extra_len, capped by the model's
 * positions), where every live hypothesis is finished with [SEP]. (Stopping
 * after `beam` finished hypotheses, fairseq's rule, can return a hypothesis
 * worse than greedy's; measured on a trained toy model.) The best finished
 * hypothesis is the translation. With beam 1 this is exactly greedy decoding. */
#include "models/seq2seq/seq2seq.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/blas.h"
#include "core/common.h"
#include "nn/linear.h"

typedef struct DecState DecState;

typedef struct {
    DecState *st;
    int layer;
} DecCoreCtx;

struct DecState {
    Seq2Seq *m;
    int n, beam, R;          /* sentences, beam size, rows R = n * beam */
    int S;                   /* padded source length (with [SEP]) */
    int Tmax;                /* positions a hypothesis may use */
    int t;                   /* position of the token being fed */
    int *src_len;            /* (R) source length of each row's sentence */
    float **kc, **vc;        /* (L) (R, Tmax, C) self-attention key / value caches */
    float *spare;            /* (R, Tmax, C) for reordering a cache */
    float **xkv;             /* (L) (R, S, 2C) cross-attention keys | values */
    float *kpack, *vpack;    /* (R, t+1, C) a cache packed for one attention call */
    BlockAttnActs sa, ca;
    BlockFfnActs ff;
    DecCoreCtx *ctx;         /* (L) */
    BlockAttnCore *self_core, *cross_core;   /* (L) */
    float *x, *dummy_mem;    /* (R, C) step input; a zero "memory" row per hypothesis */
    float *logp;             /* (R, V) log-probabilities of the next token */
    float *scratch;
};

/* ---- the attention cores of a decoding step ---- */

static long dec_self_scratch(void *ctx, AttnDims d) {
    const DecCoreCtx *c = ctx;
    const Seq2Seq *m = c->st->m;
    AttnDims a = {.B = c->st->R, .Tq = 1, .Tk = c->st->Tmax, .NH = d.NH, .HS = d.HS, .causal = 1,
                  .rel = m->dec_rel ? &m->dec_rel[c->layer] : NULL};
    return attention_scratch_size(a);
}

static void dec_self_forward(void *ctx, float *out, float *att, unsigned char *mask, const float *q, const float *k,
                             const float *v, AttnDims d, Rng *rng, float *scratch) {
    (void)mask; (void)rng;
    DecCoreCtx *c = ctx;
    DecState *st = c->st;
    int l = c->layer, t = st->t, C = d.NH * d.HS, Tk = t + 1;
    float *kc = st->kc[l], *vc = st->vc[l];
    #pragma omp parallel for if ((long)st->R * Tk * C > 32768)
    for (int r = 0; r < st->R; r++) {
        long at = ((long)r * st->Tmax + t) * C;
        memcpy(kc + at, k + (long)r * d.ldk, sizeof(float) * (size_t)C);
        memcpy(vc + at, v + (long)r * d.ldv, sizeof(float) * (size_t)C);
        memcpy(st->kpack + (long)r * Tk * C, kc + (long)r * st->Tmax * C, sizeof(float) * (size_t)Tk * C);
        memcpy(st->vpack + (long)r * Tk * C, vc + (long)r * st->Tmax * C, sizeof(float) * (size_t)Tk * C);
    }
    AttnDims a = {.B = st->R, .Tq = 1, .Tk = Tk, .NH = d.NH, .HS = d.HS, .ldq = d.ldq, .causal = 1,
                  .rel = st->m->dec_rel ? &st->m->dec_rel[l] : NULL};
    attention_forward(out, att, NULL, q, st->kpack, st->vpack, a, NULL, scratch);
}

static long dec_cross_scratch(void *ctx, AttnDims d) {
    const DecCoreCtx *c = ctx;
    AttnDims a = {.B = c->st->R, .Tq = 1, .Tk = c->st->S, .NH = d.NH, .HS = d.HS};
    return attention_scratch_size(a);
}

static void dec_cross_forward(void *ctx, float *out, float *att, unsigned char *mask, const float *q, const float *k,
                              const float *v, AttnDims d, Rng *rng, float *scratch) {
    (void)mask; (void)rng; (void)k; (void)v;   /* the memory's keys/values are cached */
    DecCoreCtx *c = ctx;
    DecState *st = c->st;
    int C = d.NH * d.HS;
    AttnDims a = {.B = st->R, .Tq = 1, .Tk = st->S, .NH = d.NH, .HS = d.HS, .ldq = d.ldq, .ldk = 2 * C,
                  .ldv = 2 * C, .key_lengths = st->src_len};
    attention_forward(out, att, NULL, q, st->xkv[c->layer], st->xkv[c->layer] + C, a, NULL, scratch);
}

static void dec_no_backward(void *ctx, float *dq, float *dk, float *dv, const float *dout, const float *att,
                            const unsigned char *mask, const float *q, const float *k, const float *v, AttnDims d,
                            float *scratch) {
    (void)ctx; (void)dq; (void)dk; (void)dv; (void)dout; (void)att; (void)mask; (void)q; (void)k; (void)v; (void)d;
    (void)scratch;
    DIE("decoding has no backward");
}

/* ---- state ---- */

static float *dec_floats(long n) { return xaligned_alloc(sizeof(float) * (size_t)(n > 0 ? n : 1)); }

static DecState *dec_create(Seq2Seq *m, int n, int beam, int S, int Tmax) {
    const S2sConfig *c = &m->cfg;
    int L = c->decoder_layers, C = c->d_model;
    DecState *st = xcalloc(1, sizeof *st);
    st->m = m;
    st->n = n;
    st->beam = beam;
    st->R = n * beam;
    st->S = S;
    st->Tmax = Tmax;
    long R = st->R;
    st->src_len = xmalloc(sizeof(int) * (size_t)R);
    st->kc = xcalloc((size_t)L, sizeof(float *));
    st->vc = xcalloc((size_t)L, sizeof(float *));
    st->xkv = xcalloc((size_t)L, sizeof(float *));
    for (int l = 0; l < L; l++) {
        st->kc[l] = dec_floats(R * Tmax * C);
        st->vc[l] = dec_floats(R * Tmax * C);
        st->xkv[l] = dec_floats(R * S * 2 * C);
    }
    st->spare = dec_floats(R * Tmax * C);
    st->kpack = dec_floats(R * Tmax * C);
    st->vpack = dec_floats(R * Tmax * C);
    s2s_attn_acts(&st->sa, R, Tmax, C, c->heads, 0);
    s2s_attn_acts(&st->ca, R, S, C, c->heads, 1);
    s2s_ffn_acts(&st->ff, R, C, c->ffn);
    st->ctx = xcalloc((size_t)L, sizeof(DecCoreCtx));
    st->self_core = xcalloc((size_t)L, sizeof(BlockAttnCore));
    st->cross_core = xcalloc((size_t)L, sizeof(BlockAttnCore));
    for (int l = 0; l < L; l++) {
        st->ctx[l] = (DecCoreCtx){st, l};
        st->self_core[l] = (BlockAttnCore){&st->ctx[l], dec_self_scratch, dec_self_forward, dec_no_backward};
        st->cross_core[l] = (BlockAttnCore){&st->ctx[l], dec_cross_scratch, dec_cross_forward, dec_no_backward};
    }
    st->x = dec_floats(R * C);
    st->dummy_mem = dec_floats(R * C);
    memset(st->dummy_mem, 0, sizeof(float) * (size_t)R * C);
    st->logp = dec_floats(R * c->vocab_size);
    BlockDims d = s2s_dims(m, (int)R, 1, 1, 0);
    d.core = &st->self_core[0];
    long need = block_scratch_floats(&d);
    d.core = &st->cross_core[0];
    long need2 = block_scratch_floats(&d);
    st->scratch = dec_floats(need > need2 ? need : need2);
    return st;
}

static void dec_free(DecState *st) {
    for (int l = 0; l < st->m->cfg.decoder_layers; l++) { free(st->kc[l]); free(st->vc[l]); free(st->xkv[l]); }
    free(st->kc); free(st->vc); free(st->xkv); free(st->spare); free(st->kpack); free(st->vpack);
    block_attn_acts_free(&st->sa); block_attn_acts_free(&st->ca); block_ffn_acts_free(&st->ff);
    free(st->ctx); free(st->self_core); free(st->cross_core);
    free(st->x); free(st->dummy_mem); free(st->logp); free(st->scratch); free(st->src_len);
    free(st);
}

/* ---- encoder and memory ---- */

/* Runs the encoder on src (n, S) and fills every layer's cross-attention
 * keys/values, each sentence's block repeated for its beam rows. */
static void dec_encode(DecState *st, const int *src, const int *len) {
    Seq2Seq *m = st->m;
    const S2sConfig *c = &m->cfg;
    int n = st->n, S = st->S, C = c->d_model;
    long N = (long)n * S;
    BlockAttnActs ea;
    BlockFfnActs ef;
    s2s_attn_acts(&ea, N, S, C, c->heads, 0);
    s2s_ffn_acts(&ef, N, C, c->ffn);
    BlockDims d = s2s_dims(m, n, S, 0, 0);
    d.lengths = len;
    d.core = m->enc_core ? &m->enc_core[0] : NULL;
    float *scratch = dec_floats(block_scratch_floats(&d));
    float *x0 = dec_floats(N * C), *kv = dec_floats(N * 2 * C);
    s2s_embed(m, x0, src, n, S, 0);
    const float *x = x0;
    for (int l = 0; l < c->encoder_layers; l++) {
        d.core = m->enc_core ? &m->enc_core[l] : NULL;
        block_self_attn_forward(&ea, x, &m->w.enc[l].self, &d, NULL, scratch);
        block_ffn_forward(&ef, ea.out, &m->w.enc[l].ffn, &d, NULL, scratch);
        x = ef.out;
    }
    for (int l = 0; l < c->decoder_layers; l++) {
        const BlockAttnParams *w = &m->w.dec[l].cross;
        linear_forward(kv, x, w->w_qkv + (long)C * C, w->b_qkv + C, (int)N, C, 2 * C);   /* rows [C, 3C) */
        for (int r = 0; r < st->R; r++)
            memcpy(st->xkv[l] + (long)r * S * 2 * C, kv + (long)(r / st->beam) * S * 2 * C,
                   sizeof(float) * (size_t)S * 2 * C);
    }
    for (int r = 0; r < st->R; r++) st->src_len[r] = len[r / st->beam];
    block_attn_acts_free(&ea);
    block_ffn_acts_free(&ef);
    free(scratch); free(x0); free(kv);
}

/* ---- one step ---- */

/* Feeds tokens (R) at position st->t; st->logp gets log softmax of the next. */
static void dec_step(DecState *st, const int *tokens) {
    Seq2Seq *m = st->m;
    const S2sConfig *c = &m->cfg;
    int R = st->R, C = c->d_model, V = c->vocab_size;
    s2s_embed(m, st->x, tokens, R, 1, st->t);
    const float *x = st->x;
    for (int l = 0; l < c->decoder_layers; l++) {
        BlockDims d = s2s_dims(m, R, 1, 1, 0);
        d.causal = 1;
        d.core = &st->self_core[l];
        block_self_attn_forward(&st->sa, x, &m->w.dec[l].self, &d, NULL, st->scratch);
        /* Memory of length 1 (zeros): the sublayer's own key/value projection
         * is then one row per hypothesis; the core uses the cached ones. */
        d.causal = 0;
        d.core = &st->cross_core[l];
        block_cross_attn_forward(&st->ca, st->sa.out, st->dummy_mem, &m->w.dec[l].cross, &d, NULL, st->scratch);
        block_ffn_forward(&st->ff, st->ca.out, &m->w.dec[l].ffn, &d, NULL, st->scratch);
        x = st->ff.out;
    }
    matmul(st->logp, x, m->w.embed, R, V, C, MAT_N, MAT_T, 1.0f, 0.0f);
    #pragma omp parallel for if ((long)R * V > 32768)
    for (int r = 0; r < R; r++) {
        float *z = st->logp + (long)r * V, mx = z[0];
        for (int v = 1; v < V; v++) mx = z[v] > mx ? z[v] : mx;
        double sum = 0;
        for (int v = 0; v < V; v++) sum += expf(z[v] - mx);
        float lse = mx + (float)log(sum);
        for (int v = 0; v < V; v++) z[v] -= lse;
    }
}

/* Gathers the rows of every layer's self-attention cache (positions 0..t) by
 * parent[r]: the hypotheses of the next step continue those rows. */
static void dec_reorder(DecState *st, const int *parent) {
    int C = st->m->cfg.d_model, T = st->t + 1;
    for (int l = 0; l < st->m->cfg.decoder_layers; l++)
        for (int which = 0; which < 2; which++) {
            float **cache = which ? &st->vc[l] : &st->kc[l];
            #pragma omp parallel for if ((long)st->R * T * C > 32768)
            for (int r = 0; r < st->R; r++)
                memcpy(st->spare + (long)r * st->Tmax * C, *cache + (long)parent[r] * st->Tmax * C,
                       sizeof(float) * (size_t)T * C);
            float *old = *cache;
            *cache = st->spare;
            st->spare = old;
        }
}

/* ---- search ---- */

/* Output tokens sentence i may have, [SEP] included. */
static int dec_max_out(const Seq2Seq *m, int src_len, int extra) {
    int cap = m->cfg.max_len - 1, want = src_len + extra;
    return want < cap ? (want > 1 ? want : 1) : cap;
}

static void dec_greedy(DecState *st, const int *maxout, int **out, int *out_len) {
    const VocabSpecials *sp = vocab_specials(st->m->vocab);
    int n = st->n, V = st->m->cfg.vocab_size, live = n;
    int *tok = xmalloc(sizeof(int) * (size_t)n), *done = xcalloc((size_t)n, sizeof(int));
    for (int i = 0; i < n; i++) { tok[i] = sp->cls; out[i] = xmalloc(sizeof(int) * (size_t)st->Tmax); out_len[i] = 0; }
    for (st->t = 0; st->t < st->Tmax && live > 0; st->t++) {
        dec_step(st, tok);
        for (int i = 0; i < n; i++) {
            if (done[i]) { tok[i] = sp->pad; continue; }
            const float *z = st->logp + (long)i * V;
            int best = 0;
            for (int v = 1; v < V; v++) best = z[v] > z[best] ? v : best;
            if (best == sp->sep || st->t + 1 >= maxout[i]) { done[i] = 1; live--; tok[i] = sp->pad; continue; }
            out[i][out_len[i]++] = best;
            tok[i] = best;
        }
    }
    free(tok);
    free(done);
}

typedef struct { double score; int row, tok; } Cand;

static int cand_cmp(const void *a, const void *b) {
    const Cand *x = a, *y = b;
    if (x->score != y->score) return x->score > y->score ? -1 : 1;
    if (x->row != y->row) return x->row - y->row;
    return x->tok - y->tok;
}

/* The k best tokens of one row of log-probabilities, best first (ties: lower id). */
static int dec_topk(const float *z, int V, int k, int *ids) {
    int n = 0;
    for (int v = 0; v < V; v++) {
        if (n == k && !(z[v] > z[ids[n - 1]])) continue;
        int at = n < k ? n++ : k - 1;
        while (at > 0 && z[v] > z[ids[at - 1]]) { ids[at] = ids[at - 1]; at--; }
        ids[at] = v;
    }
    return n;
}

typedef struct {
    int *hyp, *next_hyp;   /* (R, Tmax) tokens of each live hypothesis */
    double *score, *next_score;
    int *tok, *parent;     /* (R) */
    int *done;             /* (n) */
    double *best;          /* (n) best finished normalised score */
    Cand *cand;            /* (beam * 2 * beam) */
    int *top;              /* (2 * beam) */
} Beam;

static double dec_lp(int len, float alpha) { return alpha > 0 ? pow((5.0 + len) / 6.0, alpha) : 1.0; }

/* Chooses sentence i's next beam from its live rows; returns 1 if it is done. */
static int dec_beam_sentence(DecState *st, Beam *b, int i, int maxout, float alpha, int **out, int *out_len) {
    const VocabSpecials *sp = vocab_specials(st->m->vocab);
    int K = st->beam, V = st->m->cfg.vocab_size, t = st->t, last = t + 1 >= maxout, nc = 0;
    for (int k = 0; k < K; k++) {
        int r = i * K + k;
        if (!isfinite(b->score[r])) continue;
        const float *z = st->logp + (long)r * V;
        if (last) { b->cand[nc++] = (Cand){b->score[r] + z[sp->sep], r, sp->sep}; continue; }
        int nt = dec_topk(z, V, 2 * K, b->top);
        for (int j = 0; j < nt; j++) b->cand[nc++] = (Cand){b->score[r] + z[b->top[j]], r, b->top[j]};
    }
    qsort(b->cand, (size_t)nc, sizeof(Cand), cand_cmp);
    int nb = 0;
    for (int j = 0; j < nc && nb < K; j++) {
        const Cand *c = &b->cand[j];
        if (c->tok == sp->sep) {
            if (j >= K) continue;   /* an end only counts among the best K */
            double norm = c->score / dec_lp(t + 1, alpha);
            if (norm > b->best[i]) {
                b->best[i] = norm;
                memcpy(out[i], b->hyp + (long)c->row * st->Tmax, sizeof(int) * (size_t)t);
                out_len[i] = t;
            }
            continue;
        }
        int r = i * K + nb++;
        b->parent[r] = c->row;
        b->tok[r] = c->tok;
        b->next_score[r] = c->score;
    }
    for (int k = nb; k < K; k++) {
        int r = i * K + k;
        b->parent[r] = i * K;
        b->tok[r] = sp->pad;
        b->next_score[r] = -INFINITY;
    }
    if (last || nb == 0) return 1;
    /* The best live hypothesis (filled first) against the best finished. */
    return b->best[i] >= b->next_score[i * K] / dec_lp(maxout, alpha);
}

static void dec_beam(DecState *st, const int *maxout, float alpha, int **out, int *out_len) {
    const VocabSpecials *sp = vocab_specials(st->m->vocab);
    int n = st->n, K = st->beam, R = st->R, T = st->Tmax, live = n;
    Beam b;
    b.hyp = xcalloc((size_t)R * T, sizeof(int));
    b.next_hyp = xcalloc((size_t)R * T, sizeof(int));
    b.score = xmalloc(sizeof(double) * (size_t)R);
    b.next_score = xmalloc(sizeof(double) * (size_t)R);
    b.tok = xmalloc(sizeof(int) * (size_t)R);
    b.parent = xmalloc(sizeof(int) * (size_t)R);
    b.done = xcalloc((size_t)n, sizeof(int));
    b.best = xmalloc(sizeof(double) * (size_t)n);
    b.cand = xmalloc(sizeof(Cand) * (size_t)(2 * K * K + K));
    b.top = xmalloc(sizeof(int) * (size_t)(2 * K));
    for (int r = 0; r < R; r++) { b.score[r] = r % K == 0 ? 0.0 : -INFINITY; b.tok[r] = sp->cls; }
    for (int i = 0; i < n; i++) { b.best[i] = -INFINITY; out[i] = xmalloc(sizeof(int) * (size_t)T); out_len[i] = 0; }
    for (st->t = 0; st->t < T && live > 0; st->t++) {
        dec_step(st, b.tok);
        for (int i = 0; i < n; i++) {
            if (b.done[i]) {
                for (int k = 0; k < K; k++) { b.parent[i * K + k] = i * K + k; b.tok[i * K + k] = sp->pad; }
                continue;
            }
            if (dec_beam_sentence(st, &b, i, maxout[i], alpha, out, out_len)) { b.done[i] = 1; live--; }
        }
        /* Continue each row from its parent: tokens so far plus the new one. */
        for (int r = 0; r < R; r++) {
            memcpy(b.next_hyp + (long)r * T, b.hyp + (long)b.parent[r] * T, sizeof(int) * (size_t)st->t);
            b.next_hyp[(long)r * T + st->t] = b.tok[r];
        }
        int *th = b.hyp; b.hyp = b.next_hyp; b.next_hyp = th;
        for (int r = 0; r < R; r++) b.score[r] = b.done[r / K] ? -INFINITY : b.next_score[r];
        if (live > 0) dec_reorder(st, b.parent);
    }
    free(b.hyp); free(b.next_hyp); free(b.score); free(b.next_score); free(b.tok); free(b.parent);
    free(b.done); free(b.best); free(b.cand); free(b.top);
}

void s2s_translate_batch(Seq2Seq *m, const int *const *src, const int *src_len, int n,
                         const S2sDecodeOptions *o, int **out, int *out_len) {
    if (n <= 0) return;
    const VocabSpecials *sp = vocab_specials(m->vocab);
    int beam = o->beam > 0 ? o->beam : 1, S = 1, Tmax = 1;
    int *len = xmalloc(sizeof(int) * (size_t)n), *maxout = xmalloc(sizeof(int) * (size_t)n);
    for (int i = 0; i < n; i++) {
        /* Sources longer than the positions allow keep their first max_len - 1 pieces. */
        len[i] = (src_len[i] < m->cfg.max_len - 1 ? src_len[i] : m->cfg.max_len - 1) + 1;
        S = len[i] > S ? len[i] : S;
        maxout[i] = dec_max_out(m, src_len[i], o->extra_len);
        Tmax = maxout[i] > Tmax ? maxout[i] : Tmax;
    }
    int *ids = xmalloc(sizeof(int) * (size_t)n * S);
    for (int i = 0; i < n; i++)
        for (int s = 0; s < S; s++)
            ids[(long)i * S + s] = s < len[i] - 1 ? src[i][s] : s == len[i] - 1 ? sp->sep : sp->pad;
    DecState *st = dec_create(m, n, beam, S, Tmax);
    dec_encode(st, ids, len);
    if (beam == 1 && !o->force_beam) dec_greedy(st, maxout, out, out_len);
    else dec_beam(st, maxout, o->alpha, out, out_len);
    dec_free(st);
    free(ids); free(len); free(maxout);
}
