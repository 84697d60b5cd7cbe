/* seq2seq_attn_step.c — the label decoder's computation over a batch (see
 * seq2seq_attn.h): the encoder (embedding, BiGRU, the memory, its attention
 * keys, s_0), the teacher-forced decoder over the target tokens, the
 * cross-entropy of its logits, the backward through all of it, and the
 * training step. The same decoder step for beam search is sa_decode_step. */
#include "models/baselines/seq2seq_attn.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "nn/additive_attention.h"
#include "nn/dropout.h"
#include "nn/embedding.h"
#include "nn/gru.h"
#include "nn/gru_cell.h"
#include "nn/linear.h"
#include "nn/softmax_xent.h"

/* ---- workspace ---- */

/* Buffer `slot` of the workspace holding at least n elements of elt bytes. */
static void *sa_grow(SaWork *w, int slot, void *p, long n, size_t elt) {
    if (n <= w->cap[slot] && p) return p;
    free(p);
    w->cap[slot] = n;
    return xcalloc((size_t)(n > 0 ? n : 1), elt);
}

void sa_work_free(SaWork *w) {
    void *all[] = {w->ids, w->lens, w->mem_len, w->y_in, w->y_out, w->touched, w->seen, w->x, w->dx, w->h, w->dh,
                   w->gates, w->hn, w->rnn_scratch, w->mem, w->dmem, w->keys, w->dkeys, w->s, w->ds, w->pre0,
                   w->q, w->dq, w->alpha, w->in, w->din, w->dgates, w->dhn, w->drop, w->mask, w->ctx, w->dctx,
                   w->dpre0, w->ddrop, w->logits, w->dlogits, w->scratch};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) free(all[i]);
    memset(w, 0, sizeof *w);
}

static GruDims sa_enc_dims(const Seq2SeqAttn *m) {
    return (GruDims){.B = m->w.Rs, .T = m->w.T, .C = m->cfg.dim, .H = m->cfg.hidden};
}

/* The encoder's buffers for the batch's (Rs, T, Tm); the decoder's for Td. */
static void sa_work_encoder(Seq2SeqAttn *m) {
    SaWork *w = &m->w;
    long RT = (long)w->Rs * w->T, H = m->cfg.hidden, D = m->cfg.dim, A = m->cfg.attention;
    long nm = (long)w->n * w->Tm;
    w->ids = sa_grow(w, 0, w->ids, RT, sizeof(int));
    w->lens = sa_grow(w, 1, w->lens, w->Rs, sizeof(int));
    w->mem_len = sa_grow(w, 2, w->mem_len, w->n, sizeof(int));
    w->touched = sa_grow(w, 3, w->touched, RT, sizeof(int));
    w->x = sa_grow(w, 4, w->x, RT * D, sizeof(float));
    w->h = sa_grow(w, 5, w->h, RT * 2 * H, sizeof(float));
    w->gates = sa_grow(w, 6, w->gates, 2 * RT * 3 * H, sizeof(float));
    w->hn = sa_grow(w, 7, w->hn, 2 * RT * H, sizeof(float));
    w->rnn_scratch = sa_grow(w, 8, w->rnn_scratch, gru_scratch_size(sa_enc_dims(m)), sizeof(float));
    w->mem = sa_grow(w, 9, w->mem, nm * 2 * H, sizeof(float));
    w->keys = sa_grow(w, 10, w->keys, nm * A, sizeof(float));
    w->pre0 = sa_grow(w, 11, w->pre0, (long)w->n * H, sizeof(float));
    w->ctx = sa_grow(w, 12, w->ctx, (long)w->n * 2 * H, sizeof(float));
    if (!w->seen) w->seen = xcalloc((size_t)word_vocab_size(&m->base.vocab), 1);
}

static void sa_work_decoder(Seq2SeqAttn *m) {
    SaWork *w = &m->w;
    long n = w->n, Td = w->Td, S = m->S, A = m->cfg.attention, H = m->cfg.hidden, I = m->cfg.label_dim + 2 * H;
    w->y_in = sa_grow(w, 13, w->y_in, Td * n, sizeof(int));
    w->y_out = sa_grow(w, 14, w->y_out, Td * n, sizeof(int));
    w->s = sa_grow(w, 15, w->s, (Td + 1) * n * S, sizeof(float));
    w->q = sa_grow(w, 16, w->q, Td * n * A, sizeof(float));
    w->alpha = sa_grow(w, 17, w->alpha, Td * n * w->Tm, sizeof(float));
    w->in = sa_grow(w, 18, w->in, Td * n * I, sizeof(float));
    w->dgates = sa_grow(w, 19, w->dgates, Td * n * 3 * S, sizeof(float));
    w->dhn = sa_grow(w, 20, w->dhn, Td * n * S, sizeof(float));
    w->drop = sa_grow(w, 21, w->drop, Td * n * S, sizeof(float));
    w->mask = sa_grow(w, 22, w->mask, Td * n * S, 1);
    w->logits = sa_grow(w, 23, w->logits, Td * n * m->Vo, sizeof(float));
    long sc = 3 * n * S + gru_cell_scratch_size((int)n, (int)S);   /* the backward's dxp, then the cell's */
    AddAttnDims ad = {.R = (int)n, .Tk = w->Tm, .A = (int)A, .E = (int)(2 * H)};
    if (addattn_scratch_size(ad) > sc) sc = addattn_scratch_size(ad);
    w->scratch = sa_grow(w, 24, w->scratch, sc, sizeof(float));
}

/* The gradients' buffers, once the forward's sizes are known. */
static void sa_work_backward(Seq2SeqAttn *m) {
    SaWork *w = &m->w;
    long RT = (long)w->Rs * w->T, n = w->n, Td = w->Td, S = m->S, H = m->cfg.hidden, A = m->cfg.attention;
    long nm = n * w->Tm, I = m->cfg.label_dim + 2 * H;
    w->dx = sa_grow(w, 25, w->dx, RT * m->cfg.dim, sizeof(float));
    w->dh = sa_grow(w, 26, w->dh, RT * 2 * H, sizeof(float));
    w->dmem = sa_grow(w, 27, w->dmem, nm * 2 * H, sizeof(float));
    w->dkeys = sa_grow(w, 28, w->dkeys, nm * A, sizeof(float));
    w->ds = sa_grow(w, 29, w->ds, (Td + 1) * n * S, sizeof(float));
    w->dq = sa_grow(w, 30, w->dq, n * A, sizeof(float));
    w->din = sa_grow(w, 31, w->din, n * I, sizeof(float));
    w->dctx = sa_grow(w, 32, w->dctx, n * 2 * H, sizeof(float));
    w->dpre0 = sa_grow(w, 33, w->dpre0, n * H, sizeof(float));
    w->ddrop = sa_grow(w, 34, w->ddrop, Td * n * S, sizeof(float));
    w->dlogits = sa_grow(w, 35, w->dlogits, Td * n * m->Vo, sizeof(float));
}

/* ---- encoder ---- */

static float *P(const Seq2SeqAttn *m, int h) { return params_data(m->base.params, h); }
static float *G(const Seq2SeqAttn *m, int h) { return params_grad(m->base.params, h); }

static void sa_enc_weights(const Seq2SeqAttn *m, GruWeights w[2]) {
    for (int d = 0; d < 2; d++)
        w[d] = (GruWeights){P(m, m->p.w_ih[d]), P(m, m->p.w_hh[d]), P(m, m->p.b_ih[d]), P(m, m->p.b_hh[d])};
}

/* Text j of the batch: a of rows[j] (j < n), b of rows[j - n]; an empty one is
 * one padding word. */
static int sa_text(const WordSeqs *s, const int *rows, int n, int j, const int32_t **ids) {
    int r = rows[j % n], second = j >= n;
    *ids = second ? word_seqs_b(s, r) : word_seqs_a(s, r);
    return second ? s->len_b[r] : s->len_a[r];
}

static void sa_layout(Seq2SeqAttn *m, const WordSeqs *s, const int *rows, int n) {
    SaWork *w = &m->w;
    const int32_t *ids;
    w->n = n;
    w->Rs = m->base.pair ? 2 * n : n;
    w->T = 1;
    w->Tm = 1;
    for (int j = 0; j < w->Rs; j++) {
        int len = sa_text(s, rows, n, j, &ids);
        if (len > w->T) w->T = len;
    }
    for (int j = 0; j < n; j++) {
        int la = sa_text(s, rows, n, j, &ids), lb = m->base.pair ? sa_text(s, rows, n, n + j, &ids) : 0;
        int len = (la > 0 ? la : 1) + (m->base.pair ? (lb > 0 ? lb : 1) : 0);
        if (len > w->Tm) w->Tm = len;
    }
    sa_work_encoder(m);
    for (int j = 0; j < w->Rs; j++) {
        int len = sa_text(s, rows, n, j, &ids);
        CHECK_OR_DIE(len <= m->cfg.max_len);
        w->lens[j] = len > 0 ? len : 1;
        for (int t = 0; t < w->T; t++) w->ids[(long)j * w->T + t] = t < len ? ids[t] : WF_PAD;
    }
}

/* mem (n, Tm, 2H): row j's text a states, then its text b's. */
static void sa_memory(Seq2SeqAttn *m) {
    SaWork *w = &m->w;
    int n = w->n, H2 = 2 * m->cfg.hidden;
    memset(w->mem, 0, sizeof(float) * (size_t)n * w->Tm * H2);
    for (int j = 0; j < n; j++) {
        int at = 0;
        for (int part = 0; part < (m->base.pair ? 2 : 1); part++) {
            int src = j + part * n, len = w->lens[src];
            memcpy(w->mem + ((long)j * w->Tm + at) * H2, w->h + (long)src * w->T * H2, sizeof(float) * (size_t)len * H2);
            at += len;
        }
        w->mem_len[j] = at;
    }
}

void sa_encode_batch(Seq2SeqAttn *m, const WordSeqs *s, const int *rows, int n) {
    SaWork *w = &m->w;
    int H = m->cfg.hidden, D = m->cfg.dim, A = m->cfg.attention, V = word_vocab_size(&m->base.vocab);
    sa_layout(m, s, rows, n);
    embedding_forward(w->x, w->ids, P(m, m->p.emb), w->Rs * w->T, V, D);
    GruWeights gw[2];
    sa_enc_weights(m, gw);
    bigru_forward(w->h, w->gates, w->hn, w->x, w->lens, gw, sa_enc_dims(m), w->rnn_scratch);
    sa_memory(m);
    linear_forward(w->keys, w->mem, P(m, m->p.att_k), P(m, m->p.att_b), n * w->Tm, 2 * H, A);
    for (int j = 0; j < n; j++)   /* h<-_1: the backward direction's state at text a's first word */
        memcpy(w->pre0 + (long)j * H, w->h + (long)j * w->T * 2 * H + H, sizeof(float) * (size_t)H);
}

void sa_initial_state(Seq2SeqAttn *m, float *dst) {
    int n = m->w.n;
    linear_forward(dst, m->w.pre0, P(m, m->p.init_w), P(m, m->p.init_b), n, m->cfg.hidden, m->S);
    for (long i = 0; i < (long)n * m->S; i++) dst[i] = tanhf(dst[i]);
}

/* ---- one decoder step (beam search) ---- */

long sa_decode_work_size(const Seq2SeqAttn *m, int R) {
    long A = m->cfg.attention, H2 = 2L * m->cfg.hidden, S = m->S, I = m->cfg.label_dim + H2;
    return R * (A + H2 + I + 4 * S + m->w.Tm) + gru_cell_scratch_size(R, (int)S) + 1;
}

static void sa_gru_decoder(const Seq2SeqAttn *m, GruWeights *w, GruGrads *g) {
    *w = (GruWeights){P(m, m->p.d_ih), P(m, m->p.d_hh), P(m, m->p.d_bih), P(m, m->p.d_bhh)};
    if (g) *g = (GruGrads){G(m, m->p.d_ih), G(m, m->p.d_hh), G(m, m->p.d_bih), G(m, m->p.d_bhh)};
}

/* in (R, E + 2H) = [E_y y; ctx]. */
static void sa_decoder_input(const Seq2SeqAttn *m, float *in, const int *y, const float *ctx, int R) {
    int E = m->cfg.label_dim, H2 = 2 * m->cfg.hidden;
    const float *lab = P(m, m->p.lab_emb);
    for (int r = 0; r < R; r++) {
        memcpy(in + (long)r * (E + H2), lab + (long)y[r] * E, sizeof(float) * (size_t)E);
        memcpy(in + (long)r * (E + H2) + E, ctx + (long)r * H2, sizeof(float) * (size_t)H2);
    }
}

void sa_decode_step(Seq2SeqAttn *m, int R, const int *mem, const float *s_prev, const int *y, float *s_next,
                    float *logits, float *work) {
    const SaWork *w = &m->w;
    long A = m->cfg.attention, H2 = 2L * m->cfg.hidden, S = m->S, I = m->cfg.label_dim + H2;
    float *q = work, *ctx = q + R * A, *in = ctx + R * H2, *gates = in + R * I, *hn = gates + 3 * R * S;
    float *alpha = hn + R * S, *scratch = alpha + R * w->Tm;
    linear_forward(q, s_prev, P(m, m->p.att_q), NULL, R, (int)S, (int)A);
    AddAttnDims ad = {.R = R, .Tk = w->Tm, .A = (int)A, .E = (int)H2};
    addattn_forward(ctx, alpha, q, w->keys, w->mem, P(m, m->p.att_v), w->mem_len, mem, ad);
    sa_decoder_input(m, in, y, ctx, R);
    GruWeights dw;
    sa_gru_decoder(m, &dw, NULL);
    linear_forward(gates, in, dw.w_ih, dw.b_ih, R, (int)I, (int)(3 * S));   /* xp, overwritten by the gates */
    gru_cell_forward(s_next, gates, hn, gates, s_prev, dw.w_hh, dw.b_hh, R, (int)S, scratch);
    linear_forward(logits, s_next, P(m, m->p.out_w), P(m, m->p.out_b), R, (int)S, m->Vo);
}

/* ---- teacher-forced decoder ---- */

/* y_in / y_out (Td, n) of the targets: _GO then the tokens; -1 past the end. */
static void sa_targets(Seq2SeqAttn *m, const int *tgt, int ld, const int *tgt_len) {
    SaWork *w = &m->w;
    int n = w->n, GO = m->K;
    w->Td = 1;
    for (int i = 0; i < n; i++)
        if (tgt_len[i] > w->Td) w->Td = tgt_len[i];
    sa_work_decoder(m);
    for (int t = 0; t < w->Td; t++)
        for (int i = 0; i < n; i++) {
            int valid = t < tgt_len[i];
            w->y_out[t * n + i] = valid ? tgt[(long)i * ld + t] : -1;
            w->y_in[t * n + i] = t == 0 || !valid ? GO : tgt[(long)i * ld + t - 1];
        }
}

static void sa_decoder_forward(Seq2SeqAttn *m, int train) {
    SaWork *w = &m->w;
    long n = w->n, A = m->cfg.attention, H2 = 2L * m->cfg.hidden, S = m->S, I = m->cfg.label_dim + H2;
    GruWeights dw;
    sa_gru_decoder(m, &dw, NULL);
    AddAttnDims ad = {.R = (int)n, .Tk = w->Tm, .A = (int)A, .E = (int)H2};
    sa_initial_state(m, w->s);
    for (int t = 0; t < w->Td; t++) {
        float *s_prev = w->s + t * n * S, *s_next = s_prev + n * S, *q = w->q + t * n * A, *in = w->in + t * n * I;
        linear_forward(q, s_prev, P(m, m->p.att_q), NULL, (int)n, (int)S, (int)A);
        addattn_forward(w->ctx, w->alpha + t * n * w->Tm, q, w->keys, w->mem, P(m, m->p.att_v), w->mem_len, NULL, ad);
        sa_decoder_input(m, in, w->y_in + t * n, w->ctx, (int)n);
        float *gates = w->dgates + t * n * 3 * S;
        linear_forward(gates, in, dw.w_ih, dw.b_ih, (int)n, (int)I, (int)(3 * S));   /* xp, overwritten */
        gru_cell_forward(s_next, gates, w->dhn + t * n * S, gates, s_prev, dw.w_hh, dw.b_hh, (int)n, (int)S,
                         w->scratch);
        float *drop = w->drop + t * n * S;
        if (train) dropout_forward(drop, w->mask + t * n * S, s_next, n * S, m->cfg.dropout, &m->base.rng);
        else memcpy(drop, s_next, sizeof(float) * (size_t)(n * S));
    }
    linear_forward(w->logits, w->drop, P(m, m->p.out_w), P(m, m->p.out_b), (int)(w->Td * n), (int)S, m->Vo);
}

/* From w->dlogits: every decoder parameter's gradient, and dmem, dkeys, dpre0. */
static void sa_decoder_backward(Seq2SeqAttn *m) {
    SaWork *w = &m->w;
    long n = w->n, A = m->cfg.attention, H = m->cfg.hidden, H2 = 2 * H, S = m->S, E = m->cfg.label_dim, I = E + H2;
    GruWeights dw;
    GruGrads dg;
    sa_gru_decoder(m, &dw, &dg);
    memset(w->ddrop, 0, sizeof(float) * (size_t)(w->Td * n * S));
    linear_backward(w->ddrop, G(m, m->p.out_w), G(m, m->p.out_b), w->dlogits, w->drop, P(m, m->p.out_w),
                    (int)(w->Td * n), (int)S, m->Vo);
    memset(w->ds, 0, sizeof(float) * (size_t)((w->Td + 1) * n * S));
    if (w->train) dropout_backward(w->ds + n * S, w->ddrop, w->mask, w->Td * n * S, m->cfg.dropout);
    else for (long i = 0; i < w->Td * n * S; i++) w->ds[n * S + i] += w->ddrop[i];
    memset(w->dmem, 0, sizeof(float) * (size_t)(n * w->Tm * H2));
    memset(w->dkeys, 0, sizeof(float) * (size_t)(n * w->Tm * A));
    AddAttnDims ad = {.R = (int)n, .Tk = w->Tm, .A = (int)A, .E = (int)H2};
    float *glab = G(m, m->p.lab_emb);
    for (int t = w->Td - 1; t >= 0; t--) {
        float *s_prev = w->s + t * n * S, *ds_prev = w->ds + t * n * S, *q = w->q + t * n * A, *in = w->in + t * n * I;
        float *dxp = w->scratch;   /* (n, 3S); the cell's scratch after it */
        gru_cell_backward(dxp, ds_prev, dg.w_hh, dg.b_hh, ds_prev + n * S, s_prev, w->dgates + t * n * 3 * S,
                          w->dhn + t * n * S, dw.w_hh, (int)n, (int)S, dxp + n * 3 * S);
        memset(w->din, 0, sizeof(float) * (size_t)(n * I));
        linear_backward(w->din, dg.w_ih, dg.b_ih, dxp, in, dw.w_ih, (int)n, (int)I, (int)(3 * S));
        for (long i = 0; i < n; i++) {
            const float *d = w->din + i * I;
            float *g = glab + (long)w->y_in[t * n + i] * E;
            for (long k = 0; k < E; k++) g[k] += d[k];
            memcpy(w->dctx + i * H2, d + E, sizeof(float) * (size_t)H2);
        }
        memset(w->dq, 0, sizeof(float) * (size_t)(n * A));
        addattn_backward(w->dq, w->dkeys, w->dmem, G(m, m->p.att_v), w->dctx, w->alpha + t * n * w->Tm, q, w->keys,
                         w->mem, P(m, m->p.att_v), w->mem_len, NULL, ad, w->scratch);
        linear_backward(ds_prev, G(m, m->p.att_q), NULL, w->dq, s_prev, P(m, m->p.att_q), (int)n, (int)S, (int)A);
    }
    for (long i = 0; i < n * S; i++) w->ds[i] *= 1.0f - w->s[i] * w->s[i];   /* through s_0's tanh */
    memset(w->dpre0, 0, sizeof(float) * (size_t)(n * H));
    linear_backward(w->dpre0, G(m, m->p.init_w), G(m, m->p.init_b), w->ds, w->pre0, P(m, m->p.init_w), (int)n,
                    (int)H, (int)S);
    linear_backward(w->dmem, G(m, m->p.att_k), G(m, m->p.att_b), w->dkeys, w->mem, P(m, m->p.att_k),
                    (int)(n * w->Tm), (int)H2, (int)A);
}

/* dmem and dpre0 back into the BiGRU's outputs, then through it and the embedding. */
static void sa_encoder_backward(Seq2SeqAttn *m) {
    SaWork *w = &m->w;
    int n = w->n, H = m->cfg.hidden, H2 = 2 * H, D = m->cfg.dim, V = word_vocab_size(&m->base.vocab);
    long RT = (long)w->Rs * w->T;
    memset(w->dh, 0, sizeof(float) * (size_t)(RT * H2));
    for (int j = 0; j < n; j++) {
        int at = 0;
        for (int part = 0; part < (m->base.pair ? 2 : 1); part++) {
            int src = j + part * n, len = w->lens[src];
            memcpy(w->dh + (long)src * w->T * H2, w->dmem + ((long)j * w->Tm + at) * H2, sizeof(float) * (size_t)len * H2);
            at += len;
        }
        float *d = w->dh + (long)j * w->T * H2 + H;
        for (int k = 0; k < H; k++) d[k] += w->dpre0[(long)j * H + k];
    }
    GruWeights gw[2];
    GruGrads gg[2];
    sa_enc_weights(m, gw);
    for (int d = 0; d < 2; d++)
        gg[d] = (GruGrads){G(m, m->p.w_ih[d]), G(m, m->p.w_hh[d]), G(m, m->p.b_ih[d]), G(m, m->p.b_hh[d])};
    memset(w->dx, 0, sizeof(float) * (size_t)(RT * D));
    bigru_backward(w->dx, gg, w->dh, w->h, w->gates, w->hn, w->x, w->lens, gw, sa_enc_dims(m), w->rnn_scratch);
    float *g = G(m, m->p.emb);
    int nt = embedding_backward(g, w->touched, w->seen, w->dx, w->ids, (int)RT, V, D), kept = 0;
    for (int i = 0; i < nt; i++)
        if (w->touched[i] != WF_PAD) w->touched[kept++] = w->touched[i];
    memset(g + (size_t)WF_PAD * D, 0, (size_t)D * sizeof *g);   /* padding stays a zero vector */
    params_touch_rows(m->base.params, m->p.emb, w->touched, kept);
}

float sa_forward_backward(Seq2SeqAttn *m, const WordSeqs *s, const int *rows, int n, const int *tgt, int ld,
                          const int *tgt_len, int train, int grad) {
    SaWork *w = &m->w;
    sa_encode_batch(m, s, rows, n);
    sa_targets(m, tgt, ld, tgt_len);
    w->train = train;
    sa_decoder_forward(m, train);
    if (!grad) return softmax_xent_forward_backward(NULL, w->logits, w->y_out, NULL, w->Td * n, m->Vo, -1);
    sa_work_backward(m);
    memset(w->dlogits, 0, sizeof(float) * (size_t)w->Td * n * m->Vo);
    float loss = softmax_xent_forward_backward(w->dlogits, w->logits, w->y_out, NULL, w->Td * n, m->Vo, -1);
    sa_decoder_backward(m);
    sa_encoder_backward(m);
    return loss;
}

float sa_train_step_ops(Model *model, const Encoded *e, const int *rows, int n, const TrainState *st) {
    Seq2SeqAttn *m = (Seq2SeqAttn *)model;
    const SaEncoded *enc = (const SaEncoded *)e;
    params_zero_grad(m->base.params);
    if (n == 0) return 0;
    int ld = m->cfg.max_labels + 1, *tl = xmalloc(sizeof(int) * (size_t)n), *tg = xmalloc(sizeof(int) * (size_t)n * ld);
    for (int i = 0; i < n; i++) {   /* the batch's targets, in its order */
        tl[i] = enc->tgt_len[rows[i]];
        memcpy(tg + (long)i * ld, enc->tgt + (long)rows[i] * ld, sizeof(int) * (size_t)ld);
    }
    float loss = sa_forward_backward(m, enc->words, rows, n, tg, ld, tl, 1, 1);
    free(tl);
    free(tg);
    return word_model_step(model, m->cfg.clip, st->lr) == 0 ? loss : NAN;   /* NaN: diverged, nothing changed */
}
