/* dmn_step.c — the DMN's computation over a batch (dmn.h): the input GRU over
 * every text of the batch, the facts and the question, the episodic memory
 * row by row, the answer layer; the backward in reverse; the update. */
#include "models/baselines/dmn.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "nn/dropout.h"
#include "nn/embedding.h"
#include "nn/episodic.h"
#include "nn/gru.h"
#include "nn/gru_cell.h"
#include "nn/linear.h"

/* ---- workspace ---- */

static void grow(float **p, long n) { *p = xrealloc(*p, sizeof(float) * (size_t)(n > 0 ? n : 1)); }
static void grow_int(int **p, long n) { *p = xrealloc(*p, sizeof(int) * (size_t)(n > 0 ? n : 1)); }

void dmn_work_free(DmnWork *w) {
    free(w->ids); free(w->lens); free(w->touched); free(w->seen); free(w->x); free(w->dx); free(w->hs);
    free(w->dhs); free(w->gates); free(w->hn); free(w->scratch); free(w->foff); free(w->fpos); free(w->c);
    free(w->dc); free(w->xpe); free(w->dxpe); free(w->z); free(w->t); free(w->g); free(w->dg); free(w->eh);
    free(w->ehc); free(w->egates); free(w->ehn); free(w->q); free(w->dq); free(w->m); free(w->mgates);
    free(w->mhn); free(w->xpm); free(w->feat); free(w->drop); free(w->dfeat); free(w->ddrop); free(w->mask);
    free(w->logits); free(w->dlogits); free(w->tmp);
    memset(w, 0, sizeof *w);
}

/* Buffers for n rows, R sequences of T steps and NF facts. */
static void dmn_reserve(Dmn *m, int n, int R, int T, long NF) {
    const DmnConfig *c = &m->cfg;
    DmnWork *w = &m->w;
    long H = c->hidden, D = c->dim, A = c->attention, P = c->passes, RT = (long)R * T;
    if (!w->seen) w->seen = xcalloc((size_t)word_vocab_size(&m->base.vocab), 1);
    /* Cells and sequences grow apart: an evaluation batch of more, shorter
     * texts than any training batch has more sequences in as many cells (lens
     * and the GRU's per-sequence scratch once overflowed there). */
    if (RT > w->cap_rt || R > w->cap_r) {
        w->cap_rt = RT > w->cap_rt ? RT : w->cap_rt;
        w->cap_r = R > w->cap_r ? R : w->cap_r;
        long cr = w->cap_r, ct = (w->cap_rt + cr - 1) / cr;   /* cr x ct covers every R x T within both caps */
        grow_int(&w->ids, w->cap_rt); grow_int(&w->touched, w->cap_rt); grow_int(&w->lens, cr);
        grow(&w->x, w->cap_rt * D); grow(&w->dx, w->cap_rt * D); grow(&w->hs, w->cap_rt * H);
        grow(&w->dhs, w->cap_rt * H); grow(&w->gates, w->cap_rt * 3 * H); grow(&w->hn, w->cap_rt * H);
        grow(&w->scratch, gru_scratch_size((GruDims){.B = (int)cr, .T = (int)ct, .C = (int)D, .H = (int)H}));
    }
    if (NF > w->cap_f) {
        w->cap_f = NF;
        grow_int(&w->fpos, NF);
        grow(&w->c, NF * H); grow(&w->dc, NF * H); grow(&w->xpe, NF * 3 * H); grow(&w->dxpe, NF * 3 * H);
        grow(&w->z, P * NF * 4 * H); grow(&w->t, P * NF * A); grow(&w->g, P * NF); grow(&w->dg, NF);
        grow(&w->eh, P * NF * H); grow(&w->ehc, P * NF * H); grow(&w->egates, P * NF * 3 * H);
        grow(&w->ehn, P * NF * H);
        grow(&w->tmp, 13 * H + episodic_gate_scratch((int)NF, (int)H, (int)A));
    }
    if (n > w->cap_n) {
        w->cap_n = n;
        grow_int(&w->foff, n + 1);
        grow(&w->q, n * H); grow(&w->dq, n * H); grow(&w->m, n * (P + 1) * H); grow(&w->mgates, n * P * 3 * H);
        grow(&w->mhn, n * P * H); grow(&w->xpm, n * P * 3 * H);
        grow(&w->feat, n * 2 * H); grow(&w->drop, n * 2 * H); grow(&w->dfeat, n * 2 * H); grow(&w->ddrop, n * 2 * H);
        w->mask = xrealloc(w->mask, (size_t)n * 2 * H);
        grow(&w->logits, (long)n * m->K); grow(&w->dlogits, (long)n * m->K);
    }
}

/* ---- layout: word ids, lengths and facts ---- */

/* Facts of row's text a: one per sentence when it has several, else one per
 * word (an empty text: its one padding word). */
static int dmn_row_facts(const HanSeqs *s, int row) {
    int la = s->w.len_a[row];
    return la == 0 ? 1 : s->ns_a[row] > 1 ? s->ns_a[row] : la;
}

static void dmn_layout(Dmn *m, const HanSeqs *s, const int *rows, int n) {
    DmnWork *w = &m->w;
    int R = m->base.pair ? 2 * n : n, T = 1;
    long NF = 0;
    for (int j = 0; j < n; j++) {
        int r = rows[j];
        if (s->w.len_a[r] > T) T = s->w.len_a[r];
        if (m->base.pair && s->w.len_b[r] > T) T = s->w.len_b[r];
        NF += dmn_row_facts(s, r);
    }
    dmn_reserve(m, n, R, T, NF);
    w->n = n; w->R = R; w->T = T;
    for (long i = 0; i < (long)R * T; i++) w->ids[i] = WF_PAD;
    w->foff[0] = 0;
    for (int j = 0; j < R; j++) {
        int r = rows[j % n], second = j >= n;
        int len = second ? s->w.len_b[r] : s->w.len_a[r];
        const int32_t *src = second ? word_seqs_b(&s->w, r) : word_seqs_a(&s->w, r);
        CHECK_OR_DIE(len <= m->cfg.max_len);
        for (int t = 0; t < len; t++) w->ids[(long)j * T + t] = src[t];
        w->lens[j] = second ? len : len > 0 ? len : 1;
        if (second) continue;
        int f = w->foff[j], ns = s->ns_a[r];
        if (len > 0 && ns > 1) {   /* each sentence's last word */
            const int32_t *sl = s->sents + s->soff[r];
            for (int i = 0, pos = 0; i < ns; i++) {
                pos += sl[i];
                w->fpos[f++] = j * T + pos - 1;
            }
        } else {
            for (int t = 0; t < w->lens[j]; t++) w->fpos[f++] = j * T + t;
        }
        w->foff[j + 1] = f;
    }
}

/* ---- forward ---- */

static GruWeights dmn_gru(const Dmn *m, const DmnGru *g) {
    Params *p = m->base.params;
    return (GruWeights){params_data(p, g->w_ih), params_data(p, g->w_hh), params_data(p, g->b_ih),
                        params_data(p, g->b_hh)};
}

static GruDims dmn_dims(const Dmn *m) {
    return (GruDims){.B = m->w.R, .T = m->w.T, .C = m->cfg.dim, .H = m->cfg.hidden};
}

/* The input module: facts c (NF, H) and questions q (n, H). */
static void dmn_input_forward(Dmn *m) {
    DmnWork *w = &m->w;
    Params *p = m->base.params;
    int H = m->cfg.hidden, n = w->n, NF = w->foff[n];
    embedding_forward(w->x, w->ids, params_data(p, m->h_emb), w->R * w->T, word_vocab_size(&m->base.vocab), m->cfg.dim);
    gru_forward(w->hs, w->gates, w->hn, w->x, w->lens, dmn_gru(m, &m->in), dmn_dims(m), w->scratch);
    for (int f = 0; f < NF; f++) memcpy(w->c + (long)f * H, w->hs + (long)w->fpos[f] * H, sizeof(float) * H);
    for (int r = 0; r < n; r++) {
        float *q = w->q + (long)r * H;
        if (!m->base.pair) {
            memcpy(q, params_data(p, m->h_query), sizeof(float) * H);
            continue;
        }
        int lb = w->lens[n + r];
        if (lb > 0) memcpy(q, w->hs + ((long)(n + r) * w->T + lb - 1) * H, sizeof(float) * H);
        else memset(q, 0, sizeof(float) * H);
    }
}

/* Pass p of row r: the gates, the episode, the memory update. */
static void dmn_pass_forward(Dmn *m, int r, int p) {
    DmnWork *w = &m->w;
    Params *pr = m->base.params;
    int H = m->cfg.hidden, A = m->cfg.attention, P = m->cfg.passes, NF = w->foff[w->n];
    int f0 = w->foff[r], N = w->foff[r + 1] - f0;
    long k = (long)p * NF + f0;   /* this pass's first fact in the per-pass caches */
    const float *c = w->c + (long)f0 * H, *q = w->q + (long)r * H;
    float *mprev = w->m + ((long)r * (P + 1) + p) * H, *zero = w->tmp, *scr = zero + H;
    memset(zero, 0, sizeof(float) * H);
    episodic_gate_forward(w->g + k, w->z + k * 4 * H, w->t + k * A, c, q, mprev, params_data(pr, m->h_w1),
                          params_data(pr, m->h_b1), params_data(pr, m->h_w2), params_data(pr, m->h_b2), N, H, A);
    GruWeights ep = dmn_gru(m, &m->ep), mem = dmn_gru(m, &m->mem);
    for (int t = 0; t < N; t++) {
        long i = k + t;
        episodic_step_forward(w->eh + i * H, w->ehc + i * H, w->egates + i * 3 * H, w->ehn + i * H,
                              w->xpe + (long)(f0 + t) * 3 * H, t > 0 ? w->eh + (i - 1) * H : zero, w->g[i],
                              ep.w_hh, ep.b_hh, H, scr);
    }
    long rp = (long)r * P + p;
    const float *e = w->eh + (k + N - 1) * H;
    linear_forward(w->xpm + rp * 3 * H, e, mem.w_ih, mem.b_ih, 1, H, 3 * H);
    gru_cell_forward(mprev + H, w->mgates + rp * 3 * H, w->mhn + rp * H, w->xpm + rp * 3 * H, mprev, mem.w_hh,
                     mem.b_hh, 1, H, scr);
}

static void dmn_forward(Dmn *m, int train) {
    const DmnConfig *c = &m->cfg;
    DmnWork *w = &m->w;
    Params *p = m->base.params;
    int H = c->hidden, P = c->passes, n = w->n;
    dmn_input_forward(m);
    GruWeights ep = dmn_gru(m, &m->ep);
    linear_forward(w->xpe, w->c, ep.w_ih, ep.b_ih, w->foff[n], H, 3 * H);
    for (int r = 0; r < n; r++) {
        memcpy(w->m + (long)r * (P + 1) * H, w->q + (long)r * H, sizeof(float) * H);   /* m_0 = q */
        for (int i = 0; i < P; i++) dmn_pass_forward(m, r, i);
        memcpy(w->feat + (long)r * 2 * H, w->m + ((long)r * (P + 1) + P) * H, sizeof(float) * H);
        memcpy(w->feat + (long)r * 2 * H + H, w->q + (long)r * H, sizeof(float) * H);
    }
    const float *in = w->feat;
    w->dropped = train && c->dropout > 0;
    if (w->dropped) {
        dropout_forward(w->drop, w->mask, w->feat, (long)n * 2 * H, c->dropout, &m->base.rng);
        in = w->drop;
    }
    linear_forward(w->logits, in, params_data(p, m->h_out_w), params_data(p, m->h_out_b), n, 2 * H, m->K);
}

/* ---- backward ---- */

typedef struct { float *w_ih, *w_hh, *b_ih, *b_hh; } DmnGruGrad;

static DmnGruGrad dmn_gru_grad(const Dmn *m, const DmnGru *g) {
    Params *p = m->base.params;
    return (DmnGruGrad){params_grad(p, g->w_ih), params_grad(p, g->w_hh), params_grad(p, g->b_ih),
                        params_grad(p, g->b_hh)};
}

/* Pass p of row r backwards: dm (H) holds d(m_p); on return d(m_{p-1}).
 * Adds the facts' dc, the row's dq and the episode's input projection dxpe. */
static void dmn_pass_backward(Dmn *m, int r, int p, float *dm) {
    DmnWork *w = &m->w;
    Params *pr = m->base.params;
    int H = m->cfg.hidden, A = m->cfg.attention, P = m->cfg.passes, NF = w->foff[w->n];
    int f0 = w->foff[r], N = w->foff[r + 1] - f0;
    long k = (long)p * NF + f0, rp = (long)r * P + p;
    float *zero = w->tmp, *scr = zero + H, *dh = scr + 4 * H, *dhp = dh + H, *dmp = dhp + H, *dxp = dmp + H;
    float *gscr = dxp + 4 * H;
    const float *mprev = w->m + ((long)r * (P + 1) + p) * H, *e = w->eh + (k + N - 1) * H;
    GruWeights ep = dmn_gru(m, &m->ep), mem = dmn_gru(m, &m->mem);
    DmnGruGrad gep = dmn_gru_grad(m, &m->ep), gmem = dmn_gru_grad(m, &m->mem);
    memset(zero, 0, sizeof(float) * H);
    memset(dmp, 0, sizeof(float) * H);
    gru_cell_backward(dxp, dmp, gmem.w_hh, gmem.b_hh, dm, mprev, w->mgates + rp * 3 * H, w->mhn + rp * H, mem.w_hh,
                      1, H, scr);
    memset(dh, 0, sizeof(float) * H);
    linear_backward(dh, gmem.w_ih, gmem.b_ih, dxp, e, mem.w_ih, 1, H, 3 * H);
    memset(w->dg, 0, sizeof(float) * (size_t)N);
    for (int t = N - 1; t >= 0; t--) {
        long i = k + t;
        memset(dhp, 0, sizeof(float) * H);
        episodic_step_backward(dxp, dhp, w->dg + t, gep.w_hh, gep.b_hh, dh, t > 0 ? w->eh + (i - 1) * H : zero,
                               w->ehc + i * H, w->egates + i * 3 * H, w->ehn + i * H, w->g[i], ep.w_hh, H, scr);
        float *dst = w->dxpe + (long)(f0 + t) * 3 * H;
        for (int j = 0; j < 3 * H; j++) dst[j] += dxp[j];
        memcpy(dh, dhp, sizeof(float) * H);
    }
    episodic_gate_backward(w->dc + (long)f0 * H, w->dq + (long)r * H, dmp, params_grad(pr, m->h_w1),
                           params_grad(pr, m->h_b1), params_grad(pr, m->h_w2), params_grad(pr, m->h_b2), w->dg,
                           w->g + k, w->z + k * 4 * H, w->t + k * A, w->c + (long)f0 * H, w->q + (long)r * H, mprev,
                           params_data(pr, m->h_w1), params_data(pr, m->h_w2), N, H, A, gscr);
    memcpy(dm, dmp, sizeof(float) * H);
}

/* The input module backwards from dc and dq: the input GRU and the embedding. */
static void dmn_input_backward(Dmn *m) {
    DmnWork *w = &m->w;
    Params *p = m->base.params;
    int H = m->cfg.hidden, D = m->cfg.dim, n = w->n, V = word_vocab_size(&m->base.vocab);
    long RT = (long)w->R * w->T;
    memset(w->dhs, 0, sizeof(float) * (size_t)RT * H);
    for (int f = 0; f < w->foff[n]; f++) {
        float *dst = w->dhs + (long)w->fpos[f] * H;
        for (int j = 0; j < H; j++) dst[j] += w->dc[(long)f * H + j];
    }
    for (int r = 0; r < n; r++) {
        const float *dq = w->dq + (long)r * H;
        float *dst = NULL;
        if (!m->base.pair) dst = params_grad(p, m->h_query);
        else if (w->lens[n + r] > 0) dst = w->dhs + ((long)(n + r) * w->T + w->lens[n + r] - 1) * H;
        if (dst)
            for (int j = 0; j < H; j++) dst[j] += dq[j];
    }
    memset(w->dx, 0, sizeof(float) * (size_t)RT * D);
    DmnGruGrad g = dmn_gru_grad(m, &m->in);
    gru_backward(w->dx, (GruGrads){g.w_ih, g.w_hh, g.b_ih, g.b_hh}, w->dhs, w->hs, w->gates, w->hn, w->x, w->lens,
                 dmn_gru(m, &m->in), dmn_dims(m), w->scratch);
    float *ge = params_grad(p, m->h_emb);
    int nt = embedding_backward(ge, w->touched, w->seen, w->dx, w->ids, (int)RT, V, D), kept = 0;
    for (int i = 0; i < nt; i++)
        if (w->touched[i] != WF_PAD) w->touched[kept++] = w->touched[i];
    memset(ge + (size_t)WF_PAD * D, 0, sizeof(float) * (size_t)D);   /* padding stays a zero vector */
    params_touch_rows(p, m->h_emb, w->touched, kept);
}

void dmn_batch_backward(Dmn *m) {
    const DmnConfig *c = &m->cfg;
    DmnWork *w = &m->w;
    Params *p = m->base.params;
    int H = c->hidden, P = c->passes, n = w->n, NF = w->foff[n];
    long nf = (long)n * 2 * H;
    float *dd = w->dropped ? w->ddrop : w->dfeat;
    memset(dd, 0, sizeof(float) * (size_t)nf);
    linear_backward(dd, params_grad(p, m->h_out_w), params_grad(p, m->h_out_b), w->dlogits,
                    w->dropped ? w->drop : w->feat, params_data(p, m->h_out_w), n, 2 * H, m->K);
    if (w->dropped) {
        memset(w->dfeat, 0, sizeof(float) * (size_t)nf);
        dropout_backward(w->dfeat, w->ddrop, w->mask, nf, c->dropout);
    }
    memset(w->dc, 0, sizeof(float) * (size_t)NF * H);
    memset(w->dxpe, 0, sizeof(float) * (size_t)NF * 3 * H);
    float *dm = w->tmp + 11 * H;   /* between the pass's scratch [0, 11H) and the gate's [12H, ..) */
    for (int r = 0; r < n; r++) {
        float *dq = w->dq + (long)r * H;
        memcpy(dm, w->dfeat + (long)r * 2 * H, sizeof(float) * H);
        memcpy(dq, w->dfeat + (long)r * 2 * H + H, sizeof(float) * H);
        for (int i = P - 1; i >= 0; i--) dmn_pass_backward(m, r, i, dm);
        for (int j = 0; j < H; j++) dq[j] += dm[j];   /* m_0 = q */
    }
    DmnGruGrad g = dmn_gru_grad(m, &m->ep);
    linear_backward(w->dc, g.w_ih, g.b_ih, w->dxpe, w->c, params_data(p, m->ep.w_ih), NF, H, 3 * H);
    dmn_input_backward(m);
}

void dmn_batch_forward(Dmn *m, const HanSeqs *s, const int *rows, int n, int train) {
    CHECK_OR_DIE(n >= 1);
    dmn_layout(m, s, rows, n);
    dmn_forward(m, train);
}

/* ---- logits for the harness's head ---- */

static const float *dmn_run(Model *model, const Encoded *e, const int *rows, int n, int train) {
    dmn_batch_forward((Dmn *)model, (const HanSeqs *)e, rows, n, train);
    return ((Dmn *)model)->w.logits;
}

void dmn_forward_ops(Model *model, const Encoded *e, const int *rows, int n, const TrainState *st, float *logits) {
    Dmn *m = (Dmn *)model;
    m->w.n = 0;
    word_model_forward(model, e, rows, n, st, logits, m->K, m->cfg.eval_batch, dmn_run);
    if (!st) m->w.n = 0;   /* nothing to back-propagate but a training batch */
}

void dmn_backward_ops(Model *model, const float *dlogits) {
    Dmn *m = (Dmn *)model;
    if (m->w.n == 0) return;
    memcpy(m->w.dlogits, dlogits, sizeof(float) * (size_t)m->w.n * m->K);
    dmn_batch_backward(m);
}

int dmn_update_ops(Model *model, const TrainState *st) {
    return word_model_step(model, ((Dmn *)model)->cfg.clip, st->lr);
}
