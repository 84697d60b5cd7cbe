/* seq2seq_step.c — the translation model's training step: embeddings, the
 * encoder and decoder stacks of nn/transformer sublayers, the tied output
 * projection with label-smoothed cross-entropy, and the whole backward.
 *
 * Memory: everything is sized once by s2s_reserve for a token budget M (source
 * tokens and target tokens per batch, padding included) and a longest
 * sequence Lmax: row buffers hold M rows, attention probabilities NH * M * Lmax
 * floats (B * T * Tk <= M * Lmax). The (rows, V) logits are never whole: the
 * target rows that carry a label are gathered and projected S2S_CHUNK rows at
 * a time, the loss gradient written in place of the logits and sent back
 * through the projection at once, so the largest tensor of the step costs
 * S2S_CHUNK x V floats. */
#include "models/seq2seq/seq2seq.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/blas.h"
#include "core/common.h"
#include "nn/dropout.h"
#include "nn/embedding.h"
#include "nn/label_smoothing.h"
#include "nn/positions.h"

#define S2S_CHUNK 256   /* rows of logits per projection block */

struct S2sWork {
    int M, Lmax;
    int enc_layers, dec_layers;
    float *src_x, *tgt_x;                 /* (M, C) embeddings after dropout: layer 0 inputs */
    unsigned char *src_mask, *tgt_mask;   /* (M, C) their dropout masks */
    BlockAttnActs *enc_self, *dec_self, *dec_cross;
    BlockFfnActs *enc_ffn, *dec_ffn;
    float *h, *dh;                        /* (M, C) decoder outputs at labelled rows, their gradient */
    int *rows, *labels;                   /* (M) */
    float *logits;                        /* (S2S_CHUNK, V) */
    float *ga, *gb, *gc, *dmem;           /* (M, C) running gradients, encoder-output gradient */
    float *scratch;
};

static float *s2s_floats(long n) { return xaligned_alloc(sizeof(float) * (size_t)(n > 0 ? n : 1)); }
static unsigned char *s2s_bytes(long n) { return xmalloc((size_t)(n > 0 ? n : 1)); }

void s2s_attn_acts(BlockAttnActs *a, long M, long Lmax, int C, int NH, int cross) {
    /* B*T <= M rows and B*Tk <= M keys, so B*NH*T*Tk <= NH*M*Lmax scores. */
    block_attn_acts_init_sized(a, M, M, (long)NH * M * Lmax, C, cross);
}

BlockDims s2s_dims(const Seq2Seq *m, int B, int T, int Tk, int train) {
    const S2sConfig *c = &m->cfg;
    return (BlockDims){.B = B, .T = T, .Tk = Tk, .C = c->d_model, .NH = c->heads, .FF = c->ffn,
                    .eps = c->layer_norm_eps, .hidden_dropout = train ? c->dropout : 0.0f,
                    .attn_dropout = train ? c->attention_dropout : 0.0f};
}

/* The largest scratch any call within the budget needs: every T up to Lmax
 * with as many sequences as fit, with and without the LPR core. */
static long s2s_scratch_need(const Seq2Seq *m, int M, int Lmax) {
    long need = 0;
    for (int T = 1; T <= Lmax; T++) {
        BlockDims d = s2s_dims(m, M / T > 0 ? M / T : 1, T, Lmax, 1);
        long n = block_scratch_floats(&d);
        if (m->dec_core) {
            d.core = &m->dec_core[0];
            long r = block_scratch_floats(&d);
            n = r > n ? r : n;
        }
        need = n > need ? n : need;
    }
    return need;
}

void s2s_reserve(Seq2Seq *m, int max_tokens, int max_len) {
    const S2sConfig *c = &m->cfg;
    if (max_len > c->max_len) DIE("s2s_reserve: max_len %d > config max_len %d", max_len, c->max_len);
    if (m->work && m->work->M >= max_tokens && m->work->Lmax >= max_len) return;
    s2s_work_free(m->work);
    params_grad_enable(m->params);
    s2s_bind_grads(m);
    S2sWork *w = xcalloc(1, sizeof *w);
    long M = max_tokens, C = c->d_model;
    w->M = max_tokens;
    w->Lmax = max_len;
    w->enc_layers = c->encoder_layers;
    w->dec_layers = c->decoder_layers;
    w->src_x = s2s_floats(M * C); w->tgt_x = s2s_floats(M * C);
    w->src_mask = s2s_bytes(M * C); w->tgt_mask = s2s_bytes(M * C);
    w->enc_self = xcalloc((size_t)c->encoder_layers, sizeof(BlockAttnActs));
    w->enc_ffn = xcalloc((size_t)c->encoder_layers, sizeof(BlockFfnActs));
    w->dec_self = xcalloc((size_t)c->decoder_layers, sizeof(BlockAttnActs));
    w->dec_cross = xcalloc((size_t)c->decoder_layers, sizeof(BlockAttnActs));
    w->dec_ffn = xcalloc((size_t)c->decoder_layers, sizeof(BlockFfnActs));
    for (int l = 0; l < c->encoder_layers; l++) {
        s2s_attn_acts(&w->enc_self[l], M, max_len, (int)C, c->heads, 0);
        s2s_ffn_acts(&w->enc_ffn[l], M, (int)C, c->ffn);
    }
    for (int l = 0; l < c->decoder_layers; l++) {
        s2s_attn_acts(&w->dec_self[l], M, max_len, (int)C, c->heads, 0);
        s2s_attn_acts(&w->dec_cross[l], M, max_len, (int)C, c->heads, 1);
        s2s_ffn_acts(&w->dec_ffn[l], M, (int)C, c->ffn);
    }
    w->h = s2s_floats(M * C); w->dh = s2s_floats(M * C);
    w->rows = xmalloc(sizeof(int) * (size_t)M);
    w->labels = xmalloc(sizeof(int) * (size_t)M);
    w->logits = s2s_floats((long)S2S_CHUNK * c->vocab_size);
    w->ga = s2s_floats(M * C); w->gb = s2s_floats(M * C); w->gc = s2s_floats(M * C);
    w->dmem = s2s_floats(M * C);
    w->scratch = s2s_floats(s2s_scratch_need(m, max_tokens, max_len));
    m->work = w;
}

void s2s_work_free(S2sWork *w) {
    if (!w) return;
    free(w->src_x); free(w->tgt_x); free(w->src_mask); free(w->tgt_mask);
    for (int l = 0; l < w->enc_layers; l++) {
        block_attn_acts_free(&w->enc_self[l]);
        block_ffn_acts_free(&w->enc_ffn[l]);
    }
    for (int l = 0; l < w->dec_layers; l++) {
        block_attn_acts_free(&w->dec_self[l]);
        block_attn_acts_free(&w->dec_cross[l]);
        block_ffn_acts_free(&w->dec_ffn[l]);
    }
    free(w->enc_self); free(w->enc_ffn); free(w->dec_self); free(w->dec_cross); free(w->dec_ffn);
    free(w->h); free(w->dh); free(w->rows); free(w->labels); free(w->logits);
    free(w->ga); free(w->gb); free(w->gc); free(w->dmem); free(w->scratch);
    free(w);
}

/* ---- embeddings ---- */

void s2s_embed(const Seq2Seq *m, float *out, const int *ids, int B, int T, int offset) {
    int C = m->cfg.d_model, V = m->cfg.vocab_size;
    long n = (long)B * T * C;
    embedding_forward(out, ids, m->w.embed, B * T, V, C);
    float scale = sqrtf((float)C);
    #pragma omp parallel for if (n > 32768)
    for (long i = 0; i < n; i++) out[i] *= scale;
    const float *table = m->w.pos ? m->w.pos : m->sinusoid;
    if (table) positions_add(out, table, B, T, C, offset);
}

/* Backward of dropout(s2s_embed(ids)) given dx (B, T, C); tmp (B*T*C) scratch. */
static void s2s_embed_backward(Seq2Seq *m, float *tmp, const float *dx, const unsigned char *mask, const int *ids,
                               int B, int T, int train) {
    int C = m->cfg.d_model;
    long n = (long)B * T * C;
    const float *d = dx;
    if (train && m->cfg.dropout > 0.0f) {
        memset(tmp, 0, sizeof(float) * (size_t)n);
        dropout_backward(tmp, dx, mask, n, m->cfg.dropout);
        d = tmp;
    }
    if (m->g.pos) positions_backward(m->g.pos, d, B, T, C, 0);
    /* d(sqrt(C) E[id]) / dE = sqrt(C): scale a copy, then scatter into the rows. */
    float scale = sqrtf((float)C);
    if (d != tmp) memcpy(tmp, d, sizeof(float) * (size_t)n);
    #pragma omp parallel for if (n > 32768)
    for (long i = 0; i < n; i++) tmp[i] *= scale;
    embedding_backward(m->g.embed, NULL, NULL, tmp, ids, B * T, m->cfg.vocab_size, C);
}

/* ---- forward ---- */

static const BlockAttnCore *s2s_core(const BlockAttnCore *cores, int l) { return cores ? &cores[l] : NULL; }

/* Encoder over the batch's sources; returns the output (B, S, C). */
static const float *s2s_encode(Seq2Seq *m, const S2sBatch *b, Rng *rng) {
    S2sWork *w = m->work;
    s2s_embed(m, w->src_x, b->src, b->B, b->S, 0);
    if (rng) dropout_forward(w->src_x, w->src_mask, w->src_x, (long)b->B * b->S * m->cfg.d_model, m->cfg.dropout, rng);
    const float *x = w->src_x;
    for (int l = 0; l < m->cfg.encoder_layers; l++) {
        BlockDims d = s2s_dims(m, b->B, b->S, 0, rng != NULL);
        d.lengths = b->src_len;
        d.core = s2s_core(m->enc_core, l);
        block_self_attn_forward(&w->enc_self[l], x, &m->w.enc[l].self, &d, rng, w->scratch);
        block_ffn_forward(&w->enc_ffn[l], w->enc_self[l].out, &m->w.enc[l].ffn, &d, rng, w->scratch);
        x = w->enc_ffn[l].out;
    }
    return x;
}

/* The dims of decoder layer l's sublayers for a batch: self-attention (causal,
 * with the layer's LPR core if any) and the cross-attention / FFN dims. */
static void s2s_dec_dims(const Seq2Seq *m, int l, const S2sBatch *b, int train, BlockDims *self, BlockDims *rest) {
    *rest = s2s_dims(m, b->B, b->T, b->S, train);
    rest->lengths = b->tgt_len;
    rest->mem_lengths = b->src_len;
    rest->causal = 1;
    *self = *rest;
    self->core = s2s_core(m->dec_core, l);
}

const float *s2s_dec_layer_forward(Seq2Seq *m, int l, const float *y, const float *mem, const S2sBatch *b, Rng *rng) {
    S2sWork *w = m->work;
    BlockDims ds, d;
    s2s_dec_dims(m, l, b, rng != NULL, &ds, &d);
    block_self_attn_forward(&w->dec_self[l], y, &m->w.dec[l].self, &ds, rng, w->scratch);
    block_cross_attn_forward(&w->dec_cross[l], w->dec_self[l].out, mem, &m->w.dec[l].cross, &d, rng, w->scratch);
    block_ffn_forward(&w->dec_ffn[l], w->dec_cross[l].out, &m->w.dec[l].ffn, &d, rng, w->scratch);
    return w->dec_ffn[l].out;
}

void s2s_dec_layer_backward(Seq2Seq *m, int l, float *dx, const float *dy, const float *y, const float *mem,
                            const S2sBatch *b, int train) {
    S2sWork *w = m->work;
    BlockDims ds, d;
    s2s_dec_dims(m, l, b, train, &ds, &d);
    float *t1 = w->gb, *t2 = w->gc;
    block_ffn_backward(t1, &m->g.dec[l].ffn, dy, &w->dec_ffn[l], w->dec_cross[l].out, &m->w.dec[l].ffn, &d, w->scratch);
    block_cross_attn_backward(t2, w->dmem, &m->g.dec[l].cross, t1, &w->dec_cross[l], w->dec_self[l].out, mem,
                           &m->w.dec[l].cross, &d, w->scratch);
    block_self_attn_backward(dx, &m->g.dec[l].self, t2, &w->dec_self[l], y, &m->w.dec[l].self, &ds, w->scratch);
}

/* Decoder over the batch's target inputs; returns the output (B, T, C). */
static const float *s2s_decode_train(Seq2Seq *m, const S2sBatch *b, const float *mem, Rng *rng) {
    S2sWork *w = m->work;
    s2s_embed(m, w->tgt_x, b->tgt_in, b->B, b->T, 0);
    if (rng) dropout_forward(w->tgt_x, w->tgt_mask, w->tgt_x, (long)b->B * b->T * m->cfg.d_model, m->cfg.dropout, rng);
    const float *y = w->tgt_x;
    for (int l = 0; l < m->cfg.decoder_layers; l++) y = s2s_dec_layer_forward(m, l, y, mem, b, rng);
    return y;
}

/* Gathers the labelled rows of y into w->h; returns their number. */
static int s2s_gather_targets(S2sWork *w, const S2sBatch *b, const float *y, int C) {
    int n = 0;
    for (int r = 0; r < b->B * b->T; r++) {
        if (b->tgt_out[r] < 0) continue;
        w->rows[n] = r;
        w->labels[n] = b->tgt_out[r];
        n++;
    }
    #pragma omp parallel for if ((long)n * C > 32768)
    for (int i = 0; i < n; i++) memcpy(w->h + (long)i * C, y + (long)w->rows[i] * C, sizeof(float) * (size_t)C);
    return n;
}

/* Output projection + loss over the n gathered rows, chunk by chunk; with
 * grad, dh (n, C) and the embedding gradient get their shares. */
static S2sLoss s2s_project_loss(Seq2Seq *m, int n, int grad) {
    S2sWork *w = m->work;
    int C = m->cfg.d_model, V = m->cfg.vocab_size;
    S2sLoss loss = {.tokens = n};
    float gscale = n > 0 ? 1.0f / (float)n : 0.0f;
    for (int lo = 0; lo < n; lo += S2S_CHUNK) {
        int rows = n - lo < S2S_CHUNK ? n - lo : S2S_CHUNK;
        const float *hc = w->h + (long)lo * C;
        matmul(w->logits, hc, m->w.embed, rows, V, C, MAT_N, MAT_T, 1.0f, 0.0f);   /* (rows, V) */
        loss.smoothed += label_smoothing_xent(grad ? w->logits : NULL, w->logits, w->labels + lo, rows, V,
                                              m->cfg.label_smoothing, -1, gscale, &loss.nll);
        if (!grad) continue;
        matmul(w->dh + (long)lo * C, w->logits, m->w.embed, rows, C, V, MAT_N, MAT_N, 1.0f, 0.0f);
        matmul(m->g.embed, w->logits, hc, V, C, rows, MAT_T, MAT_N, 1.0f, 1.0f);
    }
    return loss;
}

/* ---- backward ---- */

/* Decoder backward from gy (B, T, C) (the gradient of its output); leaves the
 * gradient of the target embeddings (after dropout) in the returned buffer
 * and the encoder output's in w->dmem. */
static float *s2s_decoder_backward(Seq2Seq *m, const S2sBatch *b, const float *mem, float *gy, int train) {
    S2sWork *w = m->work;
    memset(w->dmem, 0, sizeof(float) * (size_t)b->B * b->S * m->cfg.d_model);
    for (int l = m->cfg.decoder_layers - 1; l >= 0; l--) {
        const float *x_in = l > 0 ? w->dec_ffn[l - 1].out : w->tgt_x;
        s2s_dec_layer_backward(m, l, gy, gy, x_in, mem, b, train);   /* in place: see seq2seq.h */
    }
    return gy;
}

/* Encoder backward from w->dmem; returns the gradient of the source
 * embeddings (after dropout). */
static float *s2s_encoder_backward(Seq2Seq *m, const S2sBatch *b, int train) {
    S2sWork *w = m->work;
    float *g = w->dmem, *t1 = w->ga;
    for (int l = m->cfg.encoder_layers - 1; l >= 0; l--) {
        BlockDims d = s2s_dims(m, b->B, b->S, 0, train);
        d.lengths = b->src_len;
        d.core = s2s_core(m->enc_core, l);
        const float *x_in = l > 0 ? w->enc_ffn[l - 1].out : w->src_x;
        block_ffn_backward(t1, &m->g.enc[l].ffn, g, &w->enc_ffn[l], w->enc_self[l].out, &m->w.enc[l].ffn, &d, w->scratch);
        block_self_attn_backward(g, &m->g.enc[l].self, t1, &w->enc_self[l], x_in, &m->w.enc[l].self, &d, w->scratch);
    }
    return g;
}

static void s2s_check_batch(const S2sWork *w, const S2sBatch *b) {
    if (!w) DIE("s2s_forward_backward before s2s_reserve");
    if (b->S > w->Lmax || b->T > w->Lmax || (long)b->B * b->S > w->M || (long)b->B * b->T > w->M)
        DIE("batch B=%d S=%d T=%d exceeds the reserved budget (%d tokens, length %d)", b->B, b->S, b->T, w->M, w->Lmax);
}

S2sLoss s2s_forward_backward(Seq2Seq *m, const S2sBatch *b, Rng *rng, int grad) {
    S2sWork *w = m->work;
    s2s_check_batch(w, b);
    int C = m->cfg.d_model, train = rng != NULL;
    const float *mem = s2s_encode(m, b, rng);
    const float *y = s2s_decode_train(m, b, mem, rng);
    int n = s2s_gather_targets(w, b, y, C);
    S2sLoss loss = s2s_project_loss(m, n, grad);
    if (!grad || n == 0) return loss;
    /* Scatter the gathered rows' gradient back into (B, T, C). */
    float *gy = w->ga;
    memset(gy, 0, sizeof(float) * (size_t)b->B * b->T * C);
    for (int i = 0; i < n; i++) memcpy(gy + (long)w->rows[i] * C, w->dh + (long)i * C, sizeof(float) * (size_t)C);
    float *gt = s2s_decoder_backward(m, b, mem, gy, train);
    s2s_embed_backward(m, w->gb, gt, w->tgt_mask, b->tgt_in, b->B, b->T, train);
    float *gs = s2s_encoder_backward(m, b, train);
    s2s_embed_backward(m, w->gb, gs, w->src_mask, b->src, b->B, b->S, train);
    return loss;
}

float *s2s_work_dmem(S2sWork *w) { return w->dmem; }

const float *s2s_forward_hidden(Seq2Seq *m, const S2sBatch *b) {
    s2s_check_batch(m->work, b);
    return s2s_decode_train(m, b, s2s_encode(m, b, NULL), NULL);
}

int s2s_reserved_len(const Seq2Seq *m) { return m->work ? m->work->Lmax : 0; }

void s2s_ffn_acts(BlockFfnActs *a, long M, int C, int FF) {
    /* FFN activations are per row only: (B, T) = (1, M) sizes them exactly. */
    BlockDims d = {.B = 1, .T = (int)M, .C = C, .NH = 1, .FF = FF};
    block_ffn_acts_init(a, &d);
}
