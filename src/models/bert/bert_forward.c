/* bert_forward.c — the BERT encoder's forward and backward passes: embeddings
 * (word + position + token type -> LayerNorm -> dropout), L post-LN layers
 * (nn/transformer: self-attention + FFN), and the tanh pooler on [CLS].
 * The heads (bert_heads.c) sit on top and add their gradients into
 * work->dhidden / work->dpooled; bert_backward carries them down.
 * When the loss reads the last hidden state at a few rows only (the MLM's
 * masked rows, the pooler's [CLS]), bert_forward_rows / bert_forward_pooled
 * compute the last layer at those rows alone (the "rows path", bert_work.h):
 * the heads then add into work->drows, and the backward starts from there. */
#include <string.h>

#include "core/blas.h"
#include "core/common.h"
#include "core/kernels.h"
#include "models/bert/bert.h"
#include "models/bert/bert_work.h"
#include "nn/activation.h"
#include "nn/dropout.h"
#include "nn/embedding.h"
#include "nn/layernorm.h"
#include "nn/linear.h"

void bert_gather_rows(float *dst, const float *src, const int *rows, int n, int C) {
    for (int i = 0; i < n; i++) memcpy(dst + (long)i * C, src + (long)rows[i] * C, sizeof(float) * (size_t)C);
}

void bert_scatter_add_rows(float *dst, const float *src, const int *rows, int n, int C) {
    const ElemKernels *k = kernels();
    for (int i = 0; i < n; i++) k->add(dst + (long)rows[i] * C, src + (long)i * C, C);
}

/* Copies the batch into the workspace (the backward needs ids after the
 * caller's buffers may be gone) and checks it. */
static void bert_take_batch(Bert *m, const BertBatch *b) {
    BertWork *k = m->work;
    if (!k) DIE("bert_forward before bert_reserve");
    if (b->B < 1 || b->T < 1 || b->B > k->maxB || b->T > k->maxT)
        DIE("bert_forward: batch (%d, %d) outside the reserved (%d, %d)", b->B, b->T, k->maxB, k->maxT);
    long N = (long)b->B * b->T;
    k->B = b->B;
    k->T = b->T;
    memcpy(k->ids, b->ids, sizeof(int) * (size_t)N);
    if (b->segments) memcpy(k->segments, b->segments, sizeof(int) * (size_t)N);
    else memset(k->segments, 0, sizeof(int) * (size_t)N);
    for (int i = 0; i < b->B; i++) {
        int len = b->lengths ? b->lengths[i] : b->T;
        if (len < 1 || len > b->T) DIE("bert_forward: length %d of row %d outside [1, %d]", len, i, b->T);
        k->lengths[i] = len;
        for (int t = 0; t < b->T; t++) k->pos_ids[(long)i * b->T + t] = t;
    }
    /* Ids and segments are range-checked by the embedding lookups. */
}

/* e = word[ids] + position[t] + type[segments]; h0 = dropout(LN(e)), then the
 * E -> C projection when the tables are narrower than the encoder. */
static void bert_embed_forward(Bert *m, Rng *rng) {
    BertWork *k = m->work;
    const BertConfig *c = &m->cfg;
    int N = k->B * k->T, C = c->hidden_size, E = bert_embedding_size(c);
    float *ln = E != C ? k->emb_ln : k->h0;
    embedding_forward(k->emb, k->ids, m->w.word_emb, N, c->vocab_size, E);
    embedding_forward_add(k->emb, k->pos_ids, m->w.pos_emb, N, c->max_position, E);
    embedding_forward_add(k->emb, k->segments, m->w.type_emb, N, c->type_vocab_size, E);
    layernorm_forward(ln, k->emb_mean, k->emb_rstd, k->emb, m->w.emb_ln_g, m->w.emb_ln_b, N, E, c->layer_norm_eps);
    if (rng && c->hidden_dropout > 0.0f) dropout_forward(ln, k->emb_mask, ln, (long)N * E, c->hidden_dropout, rng);
    if (E != C) linear_forward(k->h0, ln, m->w.emb_proj_w, m->w.emb_proj_b, N, E, C);
}

/* dh0 (N, C) = dL/dh0 -> gradients of the projection (E != C), the three
 * tables and the LayerNorm. */
static void bert_embed_backward(Bert *m, const float *dh0) {
    BertWork *k = m->work;
    const BertConfig *c = &m->cfg;
    int N = k->B * k->T, C = c->hidden_size, E = bert_embedding_size(c);
    long n = (long)N * E;
    float *dln = k->scratch, *de = k->dbuf == dh0 ? k->dhidden : k->dbuf;
    if (E != C) {
        /* dL/d(emb_ln) = dh0 W_p; W_p and b_p get dh0^T emb_ln and sum(dh0). */
        float *dproj = k->demb1;
        matmul(dproj, dh0, m->w.emb_proj_w, N, E, C, MAT_N, MAT_N, 1.0f, 0.0f);
        matmul(m->g.emb_proj_w, dh0, k->emb_ln, C, E, N, MAT_T, MAT_N, 1.0f, 1.0f);
        linear_bias_backward(m->g.emb_proj_b, dh0, N, C);
        dh0 = dproj;
        de = k->demb2;
    }
    const float *d = dh0;
    if (k->dropout_on && c->hidden_dropout > 0.0f) {
        memset(dln, 0, sizeof(float) * (size_t)n);
        dropout_backward(dln, dh0, k->emb_mask, n, c->hidden_dropout);
        d = dln;
    }
    memset(de, 0, sizeof(float) * (size_t)n);
    layernorm_backward(de, m->g.emb_ln_g, m->g.emb_ln_b, d, k->emb, k->emb_mean, k->emb_rstd, m->w.emb_ln_g, N, E);
    embedding_backward(m->g.word_emb, NULL, NULL, de, k->ids, N, c->vocab_size, E);
    embedding_backward(m->g.pos_emb, NULL, NULL, de, k->pos_ids, N, c->max_position, E);
    embedding_backward(m->g.type_emb, NULL, NULL, de, k->segments, N, c->type_vocab_size, E);
}

const float *bert_hidden(const Bert *m) {
    if (m->work->rows_only)
        DIE("bert_hidden after bert_forward_rows / bert_forward_pooled (the last layer ran at chosen rows only)");
    return m->cfg.pre_ln ? m->work->final_out : m->work->ffn[m->cfg.num_layers - 1].out;
}

const float *bert_pooled(const Bert *m) {
    if (!m->heads.pooler) DIE("bert_pooled: the model has no pooler");
    if (!m->work->pooled_ok) DIE("bert_pooled: the last forward did not run the pooler (bert_forward_rows)");
    return m->work->pooled;
}

/* pooled = tanh(cls_x W_p^T + b_p), cls_x (B, C) already gathered. */
static void bert_pooler_forward(Bert *m) {
    BertWork *k = m->work;
    int B = k->B, C = m->cfg.hidden_size;
    linear_forward(k->pooled, k->cls_x, m->w.pool_w, m->w.pool_b, B, C, C);
    tanh_forward(k->pooled, k->pooled, (long)B * C);
    k->pooled_ok = 1;
}

/* The batch, the dims and the embeddings: what every forward begins with. */
static void bert_forward_begin(Bert *m, const BertBatch *batch, Rng *rng) {
    bert_take_batch(m, batch);
    BertWork *k = m->work;
    const BertConfig *c = &m->cfg;
    k->dropout_on = rng != NULL;
    k->rows_only = 0;
    k->pooled_ok = 0;
    k->mlm_n = 0;
    k->rtd_done = 0;
    k->dims = (BlockDims){.B = k->B, .T = k->T, .C = c->hidden_size, .NH = c->num_heads, .FF = c->intermediate_size,
                       .eps = c->layer_norm_eps, .hidden_dropout = c->hidden_dropout,
                       .attn_dropout = c->attention_dropout, .lengths = k->lengths,
                       .alibi = m->alibi_slopes, .pre_ln = c->pre_ln};
    bert_embed_forward(m, rng);
}

/* Encoder layers [0, layers) from h0; returns the last one's output. */
static const float *bert_layers_forward(Bert *m, int layers, Rng *rng) {
    BertWork *k = m->work;
    const float *x = k->h0;
    for (int l = 0; l < layers; l++) {
        block_self_attn_forward(&k->attn[l], x, &m->w.layers[l].attn, &k->dims, rng, k->scratch);
        block_ffn_forward(&k->ffn[l], k->attn[l].out, &m->w.layers[l].ffn, &k->dims, rng, k->scratch);
        x = k->ffn[l].out;
    }
    return x;
}

/* Zeroes the gradients the heads add into (training models). */
static void bert_forward_end(Bert *m) {
    BertWork *k = m->work;
    int C = m->cfg.hidden_size;
    if (!k->train) return;
    memset(k->dhidden, 0, sizeof(float) * (size_t)k->B * k->T * C);
    if (m->heads.pooler) memset(k->dpooled, 0, sizeof(float) * (size_t)k->B * C);
    if (k->rows_only) memset(k->drows, 0, sizeof(float) * (size_t)k->B * k->rows_T * C);
    k->pooled_grad = 0;
}

/* Every layer at every position, then the final LayerNorm (pre-LN) and the pooler. */
static void bert_forward_all(Bert *m, Rng *rng) {
    BertWork *k = m->work;
    int C = m->cfg.hidden_size, B = k->B, T = k->T;
    const float *x = bert_layers_forward(m, m->cfg.num_layers, rng);
    if (m->cfg.pre_ln) {   /* the residual stream is normalised once, at the end */
        layernorm_forward(k->final_out, k->final_mean, k->final_rstd, x, m->w.final_ln_g, m->w.final_ln_b,
                          B * T, C, m->cfg.layer_norm_eps);
        x = k->final_out;
    }
    if (m->heads.pooler) {
        /* [CLS] is row b*T of the hidden states. */
        for (int b = 0; b < B; b++) memcpy(k->cls_x + (long)b * C, x + (long)b * T * C, sizeof(float) * (size_t)C);
        bert_pooler_forward(m);
    }
    bert_forward_end(m);
}

/* Lays the n flat positions out in slots, sequence by sequence (bert_work.h):
 * rows_T = the most any sequence has. 0 when there is no rows path or they do
 * not fit its reserved slots (the caller then runs the full last layer). */
static int bert_rows_layout(BertWork *k, const int *positions, int n) {
    int B = k->B, T = k->T, most = 0;
    long N = (long)B * T, cap = B > k->max_masked ? B : k->max_masked;
    for (int i = 0; i < n; i++)
        if (positions[i] < 0 || positions[i] >= N)
            DIE("bert_forward_rows: position %d outside [0, %ld)", positions[i], N);
    if (!k->rows_max || n < 1 || n > cap) return 0;
    int *count = k->rows_pos;   /* per-sequence counts first, then the slots' positions */
    memset(count, 0, sizeof(int) * (size_t)B);
    for (int i = 0; i < n; i++) {
        int c = ++count[positions[i] / T];
        most = c > most ? c : most;
    }
    if (most > k->rows_max) return 0;
    memset(count, 0, sizeof(int) * (size_t)B);
    for (int i = 0; i < n; i++) k->rows_slot[i] = count[positions[i] / T]++;   /* rank within its sequence */
    memset(k->rows_pos, 0, sizeof(int) * (size_t)B * (size_t)most);   /* unused slots: position 0 */
    for (int i = 0; i < n; i++) {
        int b = positions[i] / T;
        k->rows_slot[i] += b * most;
        k->rows_pos[k->rows_slot[i]] = positions[i] % T;
        k->rows_asked[i] = positions[i];
    }
    k->rows_T = most;
    for (int s = 0; s < B * most; s++) k->rows_flat[s] = s / most * T + k->rows_pos[s];   /* b * T + t */
    k->rows_n = n;
    return 1;
}

/* The sublayer dims of the rows path: rows_T queries per sequence over the
 * T positions of the previous layer, ALiBi at the queries' own positions. */
static BlockDims bert_rows_dims(const BertWork *k) {
    BlockDims cd = k->dims;
    cd.T = k->rows_T;
    cd.Tk = k->T;
    cd.mem_lengths = k->lengths;
    cd.lengths = NULL;
    cd.q_pos = k->rows_pos;
    return cd;
}

/* The layers below the last, then the last one at the laid-out slots only:
 * keys and values of every position, queries, attention output, FFN and
 * LayerNorms of the slots (the same math, as cross-attention from the slots'
 * rows of x to all of x; the fused (3C, C) QKV block is also cross-attention's
 * layout). */
static void bert_forward_rows_last(Bert *m, Rng *rng) {
    BertWork *k = m->work;
    int L = m->cfg.num_layers, C = m->cfg.hidden_size;
    const float *x = bert_layers_forward(m, L - 1, rng);
    bert_gather_rows(k->rows_in, x, k->rows_flat, k->B * k->rows_T, C);
    BlockDims cd = bert_rows_dims(k);
    block_cross_attn_forward(&k->rows_attn, k->rows_in, x, &m->w.layers[L - 1].attn, &cd, rng, k->scratch);
    block_ffn_forward(&k->rows_ffn, k->rows_attn.out, &m->w.layers[L - 1].ffn, &cd, rng, k->scratch);
    k->rows_only = 1;
}

void bert_forward_rows(Bert *m, const BertBatch *batch, const int *positions, int n, Rng *rng) {
    bert_forward_begin(m, batch, rng);
    if (!bert_rows_layout(m->work, positions, n)) {
        bert_forward_all(m, rng);
        return;
    }
    bert_forward_rows_last(m, rng);
    bert_forward_end(m);
}

void bert_forward_pooled(Bert *m, const BertBatch *batch, Rng *rng) {
    if (!m->heads.pooler) DIE("bert_forward_pooled: the model has no pooler");
    bert_forward_begin(m, batch, rng);
    BertWork *k = m->work;
    int B = k->B, C = m->cfg.hidden_size;
    /* One slot per sequence, at [CLS] (t = 0); no rows path (pre-LN: the
     * cross-attention sublayer is post-LN only): the full forward. */
    if (k->rows_max)
        for (int b = 0; b < B; b++) k->rows_asked[b] = b * k->T;
    if (!k->rows_max || !bert_rows_layout(k, k->rows_asked, B)) {
        bert_forward_all(m, rng);
        return;
    }
    bert_forward_rows_last(m, rng);
    memcpy(k->cls_x, k->rows_ffn.out, sizeof(float) * (size_t)B * C);
    bert_pooler_forward(m);
    bert_forward_end(m);
}

void bert_forward(Bert *m, const BertBatch *batch, Rng *rng) {
    bert_forward_begin(m, batch, rng);
    bert_forward_all(m, rng);
}

/* dpooled -> pooler weights, and the [CLS] rows of dhidden (of drows, one
 * slot per sequence, after bert_forward_pooled). */
static void bert_pooler_backward(Bert *m) {
    BertWork *k = m->work;
    int B = k->B, T = k->T, C = m->cfg.hidden_size;
    float *dpre = k->dhead;   /* (B, C) dL/d(pre-tanh) */
    memset(dpre, 0, sizeof(float) * (size_t)B * C);
    tanh_backward(dpre, k->dpooled, k->pooled, (long)B * C);
    float *dx = k->scratch;   /* (B, C) dL/d(cls_x); no sublayer is using the scratch now */
    matmul(dx, dpre, m->w.pool_w, B, C, C, MAT_N, MAT_N, 1.0f, 0.0f);
    matmul(m->g.pool_w, dpre, k->cls_x, C, C, B, MAT_T, MAT_N, 1.0f, 1.0f);
    linear_bias_backward(m->g.pool_b, dpre, B, C);
    const ElemKernels *ek = kernels();
    for (int b = 0; b < B; b++)   /* after bert_forward_pooled, slot b is sequence b's [CLS] */
        ek->add(k->rows_only ? k->drows + (long)b * C : k->dhidden + (long)b * T * C, dx + (long)b * C, C);
}

/* The last layer of the rows path: drows (the heads' gradient at the slots)
 * -> its weights, and dhidden = dL/d(the previous layer's output), through
 * the keys and values (every position) and the slots' own residual rows. */
static void bert_rows_backward(Bert *m) {
    BertWork *k = m->work;
    int L = m->cfg.num_layers, C = m->cfg.hidden_size;
    const float *x = L > 1 ? k->ffn[L - 2].out : k->h0;
    BlockDims cd = bert_rows_dims(k);
    block_ffn_backward(k->drows2, &m->g.layers[L - 1].ffn, k->drows, &k->rows_ffn, k->rows_attn.out,
                       &m->w.layers[L - 1].ffn, &cd, k->scratch);
    /* dhidden is zero here (bert_forward_end; no head adds into it on this path). */
    block_cross_attn_backward(k->drows, k->dhidden, &m->g.layers[L - 1].attn, k->drows2, &k->rows_attn, k->rows_in,
                              x, &m->w.layers[L - 1].attn, &cd, k->scratch);
    bert_scatter_add_rows(k->dhidden, k->drows, k->rows_flat, k->B * k->rows_T, C);
    if (m->grad_ready) m->grad_ready(m->grad_ready_ctx, (long)(m->g.layers[L - 1].attn.w_qkv - m->params->grad));
}

void bert_backward(Bert *m) {
    BertWork *k = m->work;
    if (!k || !k->train) DIE("bert_backward without bert_reserve(..., train = 1)");
    if (m->bf16) DIE("bert_backward with bf16 inference weights on (bert_use_bf16(m, 0) first)");
    if (m->int8) DIE("bert_backward with int8 inference weights on (bert_use_int8(m, 0) first)");
    int L = m->cfg.num_layers;
    if (k->pooled_grad) bert_pooler_backward(m);
    /* Ping-pong between dhidden and dbuf: each sublayer reads dy from one and
     * writes dx into the other. */
    float *dy = k->dhidden, *dx = k->dbuf;
    int top = L;   /* the layers below it run over every position */
    if (k->rows_only) {
        bert_rows_backward(m);
        top = L - 1;
    } else if (m->cfg.pre_ln) {   /* through the final LayerNorm into the last layer's output */
        int N = k->B * k->T, C = m->cfg.hidden_size;
        memset(dx, 0, sizeof(float) * (size_t)N * C);
        layernorm_backward(dx, m->g.final_ln_g, m->g.final_ln_b, dy, k->ffn[L - 1].out, k->final_mean,
                           k->final_rstd, m->w.final_ln_g, N, C);
        float *t = dy;
        dy = dx;
        dx = t;
    }
    for (int l = top - 1; l >= 0; l--) {
        const float *x = l > 0 ? k->ffn[l - 1].out : k->h0;
        block_ffn_backward(dx, &m->g.layers[l].ffn, dy, &k->ffn[l], k->attn[l].out, &m->w.layers[l].ffn, &k->dims,
                        k->scratch);
        block_self_attn_backward(dy, &m->g.layers[l].attn, dx, &k->attn[l], x, &m->w.layers[l].attn, &k->dims,
                              k->scratch);
        if (m->grad_ready) m->grad_ready(m->grad_ready_ctx, (long)(m->g.layers[l].attn.w_qkv - m->params->grad));
    }
    bert_embed_backward(m, dy);
    if (m->grad_ready) m->grad_ready(m->grad_ready_ctx, 0);
}
