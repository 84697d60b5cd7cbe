/* entnet_step.c — the Recurrent Entity Network's computation over a batch
 * (entnet.h): the words' embeddings, each row's sentences through the
 * position-masked bag of words and the dynamic memory, the output module;
 * the backward in reverse; the update. */
#include "models/baselines/entnet.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/blas.h"
#include "core/common.h"
#include "nn/embedding.h"
#include "nn/entity_memory.h"
#include "nn/linear.h"
#include "nn/prelu.h"

/* ---- workspace ---- */

static void grow(float **p, long n) { *p = xrealloc(*p, sizeof(float) * (size_t)(n > 0 ? n : 1)); }
static void grow_int(int **p, long n) { *p = xrealloc(*p, sizeof(int) * (size_t)(n > 0 ? n : 1)); }

void ent_work_free(EntWork *w) {
    free(w->ids); free(w->touched); free(w->seen); free(w->woff); free(w->soff); free(w->sstart); free(w->slen);
    free(w->x); free(w->dx); free(w->s); free(w->ds); free(w->h); free(w->g); free(w->pre); free(w->norm);
    free(w->q); free(w->dq); free(w->p); free(w->u); free(w->opre); free(w->o); free(w->dout);
    free(w->logits); free(w->dlogits); free(w->tmp);
    memset(w, 0, sizeof *w);
}

static void ent_reserve(Entnet *m, int n, long NW, long NS) {
    EntWork *w = &m->w;
    long H = m->cfg.dim, M = m->cfg.blocks;
    if (!w->seen) w->seen = xcalloc((size_t)word_vocab_size(&m->base.vocab), 1);
    if (!w->tmp) grow(&w->tmp, entity_memory_scratch((int)M, (int)H) + 2 * M * H + 4 * H + 2 * M);
    if (NW > w->cap_w) {
        w->cap_w = NW;
        grow_int(&w->ids, NW); grow_int(&w->touched, NW);
        grow(&w->x, NW * H); grow(&w->dx, NW * H);
    }
    if (NS > w->cap_s) {
        w->cap_s = NS;
        grow_int(&w->sstart, NS); grow_int(&w->slen, NS);
        grow(&w->s, NS * H); grow(&w->ds, NS * H); grow(&w->h, NS * M * H); grow(&w->g, NS * M);
        grow(&w->pre, NS * M * H); grow(&w->norm, NS * M);
    }
    if (n > w->cap_n) {
        w->cap_n = n;
        grow_int(&w->woff, n + 1); grow_int(&w->soff, n + 1);
        grow(&w->q, n * H); grow(&w->dq, n * H); grow(&w->p, n * M); grow(&w->u, n * H); grow(&w->opre, n * H);
        grow(&w->o, n * H); grow(&w->dout, n * H);
        grow(&w->logits, (long)n * m->K); grow(&w->dlogits, (long)n * m->K);
    }
}

/* ---- layout: the batch's words and each row's sentences ---- */

static void ent_layout(Entnet *m, const HanSeqs *s, const int *rows, int n) {
    EntWork *w = &m->w;
    long NW = 0, NS = 0;
    for (int j = 0; j < n; j++) {
        int r = rows[j];
        NW += s->w.len_a[r] + (m->base.pair ? s->w.len_b[r] : 0);
        NS += s->ns_a[r];
    }
    ent_reserve(m, n, NW, NS);
    w->n = n;
    int pos = 0, st = 0;
    for (int j = 0; j < n; j++) {
        int r = rows[j], la = s->w.len_a[r], lb = m->base.pair ? s->w.len_b[r] : 0;
        CHECK_OR_DIE(la <= m->cfg.max_len && lb <= m->cfg.max_len);
        w->woff[j] = pos;
        w->soff[j] = st;
        memcpy(w->ids + pos, word_seqs_a(&s->w, r), sizeof(int) * (size_t)la);
        memcpy(w->ids + pos + la, word_seqs_b(&s->w, r), sizeof(int) * (size_t)lb);
        const int32_t *sl = s->sents + s->soff[r];
        for (int i = 0, at = pos; i < s->ns_a[r]; i++, st++) {
            w->sstart[st] = at;
            w->slen[st] = sl[i];
            at += sl[i];
        }
        pos += la + lb;
    }
    w->woff[n] = pos;
    w->soff[n] = st;
}

/* ---- forward ---- */

static EntMemWeights ent_mem(const Entnet *m) {
    Params *p = m->base.params;
    return (EntMemWeights){params_data(p, m->h_keys), params_data(p, m->h_U), params_data(p, m->h_V),
                           params_data(p, m->h_W), params_data(p, m->h_slope)};
}

/* out (H) = sum_i mask_i * x_i over len words from x (len, H). */
static void ent_bag(float *out, const float *x, const float *mask, int len, int H) {
    memset(out, 0, sizeof(float) * (size_t)H);
    for (int i = 0; i < len; i++)
        for (int k = 0; k < H; k++) out[k] += mask[(long)i * H + k] * x[(long)i * H + k];
}

static void ent_bag_backward(float *dx, float *dmask, const float *dout, const float *x, const float *mask, int len,
                             int H) {
    for (int i = 0; i < len; i++)
        for (int k = 0; k < H; k++) {
            dx[(long)i * H + k] += mask[(long)i * H + k] * dout[k];
            dmask[(long)i * H + k] += x[(long)i * H + k] * dout[k];
        }
}

/* Row j: its sentences through the memory, then the output module up to o. */
static void ent_row_forward(Entnet *m, int j) {
    EntWork *w = &m->w;
    Params *pr = m->base.params;
    int H = m->cfg.dim, M = m->cfg.blocks;
    const float *mask = params_data(pr, m->h_mask);
    EntMemWeights mw = ent_mem(m);
    const float *hp = mw.keys;
    for (int t = w->soff[j]; t < w->soff[j + 1]; t++) {
        float *s = w->s + (long)t * H, *h = w->h + (long)t * M * H;
        ent_bag(s, w->x + (long)w->sstart[t] * H, mask, w->slen[t], H);
        entity_memory_forward(h, w->g + (long)t * M, w->pre + (long)t * M * H, w->norm + (long)t * M, hp, s, mw, M, H,
                              w->tmp);
        hp = h;
    }
    float *q = w->q + (long)j * H, *p = w->p + (long)j * M, *u = w->u + (long)j * H, *opre = w->opre + (long)j * H;
    if (!m->base.pair) {
        memcpy(q, params_data(pr, m->h_query), sizeof(float) * (size_t)H);
    } else {
        int la = w->soff[j + 1] > w->soff[j] ? w->sstart[w->soff[j + 1] - 1] + w->slen[w->soff[j + 1] - 1] : w->woff[j];
        ent_bag(q, w->x + (long)la * H, mask, w->woff[j + 1] - la, H);
    }
    matmul(p, hp, q, M, 1, H, MAT_N, MAT_N, 1.0f, 0.0f);   /* q^T h_j */
    float mx = p[0], sum = 0;
    for (int b = 1; b < M; b++) mx = p[b] > mx ? p[b] : mx;
    for (int b = 0; b < M; b++) sum += p[b] = expf(p[b] - mx);
    for (int b = 0; b < M; b++) p[b] /= sum;
    matmul(u, p, hp, 1, H, M, MAT_N, MAT_N, 1.0f, 0.0f);   /* sum_j p_j h_j */
    memcpy(opre, q, sizeof(float) * (size_t)H);
    matmul(opre, u, params_data(pr, m->h_H), 1, H, H, MAT_N, MAT_T, 1.0f, 1.0f);
    prelu_forward(w->o + (long)j * H, opre, params_data(pr, m->h_oslope), 1, H);
}

/* The memory a row ended with: after its last sentence, or the keys. */
static const float *ent_final(const Entnet *m, int j) {
    const EntWork *w = &m->w;
    if (w->soff[j + 1] == w->soff[j]) return params_data(m->base.params, m->h_keys);
    return w->h + (long)(w->soff[j + 1] - 1) * m->cfg.blocks * m->cfg.dim;
}

void ent_batch_forward(Entnet *m, const HanSeqs *s, const int *rows, int n) {
    CHECK_OR_DIE(n >= 1);
    ent_layout(m, s, rows, n);
    EntWork *w = &m->w;
    Params *p = m->base.params;
    embedding_forward(w->x, w->ids, params_data(p, m->h_emb), w->woff[n], word_vocab_size(&m->base.vocab), m->cfg.dim);
    for (int j = 0; j < n; j++) ent_row_forward(m, j);
    linear_forward(w->logits, w->o, params_data(p, m->h_out_w), params_data(p, m->h_out_b), n, m->cfg.dim, m->K);
}

/* ---- backward ---- */

/* Row j backwards from d(o) in w->dout: the output module, the memory's
 * updates in reverse, the bags into dx and the mask's gradient. */
static void ent_row_backward(Entnet *m, int j) {
    EntWork *w = &m->w;
    Params *pr = m->base.params;
    int H = m->cfg.dim, M = m->cfg.blocks;
    EntMemWeights mw = ent_mem(m);
    EntMemGrads mg = {params_grad(pr, m->h_keys), params_grad(pr, m->h_U), params_grad(pr, m->h_V),
                      params_grad(pr, m->h_W), params_grad(pr, m->h_slope)};
    float *dmask = params_grad(pr, m->h_mask), *scr = w->tmp, *dh = scr + entity_memory_scratch(M, H);
    float *dhp = dh + (long)M * H, *dopre = dhp + (long)M * H, *du = dopre + H, *dp = du + H;
    const float *q = w->q + (long)j * H, *p = w->p + (long)j * M, *hf = ent_final(m, j);
    float *dq = w->dq + (long)j * H;
    memset(dopre, 0, sizeof(float) * (size_t)H);
    prelu_backward(dopre, params_grad(pr, m->h_oslope), w->dout + (long)j * H, w->opre + (long)j * H,
                   params_data(pr, m->h_oslope), 1, H);
    memcpy(dq, dopre, sizeof(float) * (size_t)H);
    matmul(params_grad(pr, m->h_H), dopre, w->u + (long)j * H, H, H, 1, MAT_T, MAT_N, 1.0f, 1.0f);
    matmul(du, dopre, params_data(pr, m->h_H), 1, H, H, MAT_N, MAT_N, 1.0f, 0.0f);
    matmul(dh, p, du, M, H, 1, MAT_T, MAT_N, 1.0f, 0.0f);   /* d h_j = p_j du */
    matmul(dp, hf, du, M, 1, H, MAT_N, MAT_N, 1.0f, 0.0f);  /* d p_j = h_j . du */
    float dot = 0;
    for (int b = 0; b < M; b++) dot += p[b] * dp[b];
    for (int b = 0; b < M; b++) dp[b] = p[b] * (dp[b] - dot);   /* the softmax's input gradient */
    matmul(dh, dp, q, M, H, 1, MAT_T, MAT_N, 1.0f, 1.0f);
    matmul(dq, dp, hf, 1, H, M, MAT_N, MAT_N, 1.0f, 1.0f);
    const float *mask = params_data(pr, m->h_mask);
    for (int t = w->soff[j + 1] - 1; t >= w->soff[j]; t--) {
        const float *hp = t > w->soff[j] ? w->h + (long)(t - 1) * M * H : mw.keys, *s = w->s + (long)t * H;
        float *ds = w->ds + (long)t * H;
        memset(dhp, 0, sizeof(float) * (size_t)M * H);
        memset(ds, 0, sizeof(float) * (size_t)H);
        entity_memory_backward(dhp, ds, mg, dh, w->h + (long)t * M * H, w->g + (long)t * M, w->pre + (long)t * M * H,
                               w->norm + (long)t * M, hp, s, mw, M, H, scr);
        long x0 = (long)w->sstart[t] * H;
        ent_bag_backward(w->dx + x0, dmask, ds, w->x + x0, mask, w->slen[t], H);
        memcpy(dh, dhp, sizeof(float) * (size_t)M * H);
    }
    for (long i = 0; i < (long)M * H; i++) mg.keys[i] += dh[i];   /* h_0 = the keys */
    if (!m->base.pair) {
        float *g = params_grad(pr, m->h_query);
        for (int k = 0; k < H; k++) g[k] += dq[k];
    } else {
        int t1 = w->soff[j + 1] - 1, b0 = t1 >= w->soff[j] ? w->sstart[t1] + w->slen[t1] : w->woff[j];
        ent_bag_backward(w->dx + (long)b0 * H, dmask, dq, w->x + (long)b0 * H, mask, w->woff[j + 1] - b0, H);
    }
}

void ent_batch_backward(Entnet *m) {
    EntWork *w = &m->w;
    Params *p = m->base.params;
    int H = m->cfg.dim, n = w->n, NW = w->woff[n], V = word_vocab_size(&m->base.vocab);
    memset(w->dout, 0, sizeof(float) * (size_t)n * H);
    linear_backward(w->dout, params_grad(p, m->h_out_w), params_grad(p, m->h_out_b), w->dlogits, w->o,
                    params_data(p, m->h_out_w), n, H, m->K);
    memset(w->dx, 0, sizeof(float) * (size_t)NW * H);
    for (int j = 0; j < n; j++) ent_row_backward(m, j);
    float *ge = params_grad(p, m->h_emb);
    int nt = embedding_backward(ge, w->touched, w->seen, w->dx, w->ids, NW, V, H), kept = 0;
    for (int i = 0; i < nt; i++)
        if (w->touched[i] != WF_PAD) w->touched[kept++] = w->touched[i];
    memset(ge + (size_t)WF_PAD * H, 0, sizeof(float) * (size_t)H);   /* padding stays a zero vector */
    params_touch_rows(p, m->h_emb, w->touched, kept);
}

/* ---- logits for the harness's head ---- */

static const float *ent_run(Model *model, const Encoded *e, const int *rows, int n, int train) {
    ent_batch_forward((Entnet *)model, (const HanSeqs *)e, rows, n);   /* no dropout: the same either way */
    return ((Entnet *)model)->w.logits;
}

void ent_forward_ops(Model *model, const Encoded *e, const int *rows, int n, const TrainState *st, float *logits) {
    Entnet *m = (Entnet *)model;
    m->w.n = 0;
    word_model_forward(model, e, rows, n, st, logits, m->K, m->cfg.eval_batch, ent_run);
    if (!st) m->w.n = 0;   /* nothing to back-propagate but a training batch */
}

void ent_backward_ops(Model *model, const float *dlogits) {
    Entnet *m = (Entnet *)model;
    if (m->w.n == 0) return;
    memcpy(m->w.dlogits, dlogits, sizeof(float) * (size_t)m->w.n * m->K);
    ent_batch_backward(m);
}

int ent_update_ops(Model *model, const TrainState *st) {
    return word_model_step(model, ((Entnet *)model)->cfg.clip, st->lr);
}
