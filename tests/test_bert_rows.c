/* test_bert_rows.c — the last layer computed only where the loss reads it.
 * bert_forward_rows (the MLM's masked rows, pretraining's step) gives the MLM
 * loss, logits, accuracy and every parameter's gradient of the full forward
 * (which test_bert.c checks against PyTorch): one and several layers, learned
 * positions and ALiBi, a narrower embedding (E != C), padded rows, positions
 * out of order, a sequence with none; falls back to the full forward when a
 * sequence has more masked rows than half its length; and with dropout on,
 * its gradient passes finite differences. bert_forward_pooled in training
 * (fine-tuning's classification and regression step, [CLS] only) likewise. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/rng.h"
#include "models/bert/bert.h"
#include "tests/gradcheck.h"
#include "tests/test.h"

enum { TR_B = 4, TR_T = 12, TR_MAX = 12 };

typedef struct {
    Bert *m;
    int ids[TR_B * TR_T], lengths[TR_B];
    int positions[TR_MAX], labels[TR_MAX], n;
    uint64_t drop_seed;   /* dropout on (its masks redrawn alike every call) when nonzero */
    float loss;
} RowsCase;

static Bert *tr_model(int L, int alibi, int E, float dropout) {
    BertConfig c = {.vocab_size = 61, .hidden_size = 32, .embedding_size = E, .num_layers = L, .num_heads = 4,
                    .intermediate_size = 64, .max_position = 16, .type_vocab_size = 2,
                    .hidden_dropout = dropout, .attention_dropout = dropout, .layer_norm_eps = 1e-12f,
                    .alibi = alibi};
    Bert *m = bert_create(&c, &(BertHeads){.mlm = 1}, 7);
    /* Weights well away from the init, so every path carries signal. */
    for (int h = 0; h < params_num_tensors(m->params); h++) {
        const ParamTensor *t = params_tensor(m->params, h);
        float a = strstr(t->name, "LayerNorm.weight") ? 0.0f : t->ndim == 1 ? 0.1f : 0.3f;
        if (a == 0.0f) gradcheck_fill(params_data(m->params, h), t->numel, 0.8f, 1.2f, 40 + (uint64_t)h);
        else gradcheck_fill(params_data(m->params, h), t->numel, -a, a, 40 + (uint64_t)h);
    }
    bert_reserve(m, TR_B, TR_T, TR_MAX, 1);
    return m;
}

/* Positions out of order within and across rows; row 2 has none. */
static void tr_batch(RowsCase *c, const int *pos, int n) {
    const int lengths[TR_B] = {12, 7, 3, 10};
    Rng r;
    rng_seed(&r, 13);
    for (int i = 0; i < TR_B * TR_T; i++) c->ids[i] = 1 + (int)rng_below(&r, 60);
    memcpy(c->lengths, lengths, sizeof lengths);
    c->n = n;
    for (int i = 0; i < n; i++) {
        c->positions[i] = pos[i];
        c->labels[i] = (int)rng_below(&r, 61);
    }
}

static float tr_step(RowsCase *c, int rows, int backward, float *acc) {
    Rng drop;
    rng_seed(&drop, c->drop_seed);
    BertBatch b = {TR_B, TR_T, c->ids, NULL, c->lengths};
    if (backward) params_zero_grad(c->m->params);
    if (rows) bert_forward_rows(c->m, &b, c->positions, c->n, c->drop_seed ? &drop : NULL);
    else bert_forward(c->m, &b, c->drop_seed ? &drop : NULL);
    float loss = bert_mlm_loss(c->m, c->positions, c->labels, c->n, backward, acc);
    if (backward) bert_backward(c->m);
    return loss;
}

static double tr_rel(const float *a, const float *b, long n) {
    double d = 0, s = 0;
    for (long i = 0; i < n; i++) {
        d = fmax(d, fabs((double)a[i] - b[i]));
        s = fmax(s, fabs((double)b[i]));
    }
    return d / (s > 0 ? s : 1e-30);
}

/* The rows path against the full forward: loss, accuracy, logits, gradients. */
static void tr_compare(int L, int alibi, int E, const int *pos, int n) {
    RowsCase c = {.m = tr_model(L, alibi, E, 0.0f)};
    tr_batch(&c, pos, n);
    Bert *m = c.m;
    int np = params_num_tensors(m->params), V = m->cfg.vocab_size;
    float acc_full, acc_rows;
    float loss_full = tr_step(&c, 0, 1, &acc_full);
    float *logits = malloc(sizeof(float) * (size_t)n * V);
    memcpy(logits, bert_mlm_logits(m), sizeof(float) * (size_t)n * V);
    float **grads = malloc(sizeof(float *) * (size_t)np);
    for (int h = 0; h < np; h++) {
        long k = params_tensor(m->params, h)->numel;
        grads[h] = malloc(sizeof(float) * (size_t)k);
        memcpy(grads[h], params_grad(m->params, h), sizeof(float) * (size_t)k);
    }
    float loss_rows = tr_step(&c, 1, 1, &acc_rows);
    CHECK_MSG(fabs(loss_rows - loss_full) <= 1e-5 * fabs(loss_full), "L%d alibi %d E %d: loss %.7f vs full %.7f", L,
              alibi, E, loss_rows, loss_full);
    CHECK_MSG(acc_rows == acc_full, "accuracy %g vs %g", acc_rows, acc_full);
    double e = tr_rel(bert_mlm_logits(m), logits, (long)n * V);
    CHECK_MSG(e < 1e-5, "L%d alibi %d: logits rel err %g", L, alibi, e);
    double worst = 0;
    for (int h = 0; h < np; h++) {
        const ParamTensor *t = params_tensor(m->params, h);
        if (strstr(t->name, "key.bias")) continue;   /* 0 in exact arithmetic: rounding on both sides */
        e = tr_rel(params_grad(m->params, h), grads[h], t->numel);
        CHECK_MSG(e < 1e-4, "L%d alibi %d E %d: gradient of %s rel err %g", L, alibi, E, t->name, e);
        worst = fmax(worst, e);
    }
    printf("  L%d alibi %d E %d, %d rows: loss %.5f, worst gradient rel err %.2g\n", L, alibi, E, n, loss_rows,
           worst);
    for (int h = 0; h < np; h++) free(grads[h]);
    free(grads);
    free(logits);
    bert_free(m);
}

/* Row 0: 5, 1, 11 ;
 * row 1: 2, 6; row 2: none; row 3: 8, 0, 4 (in that order). */
static const int tr_pos[] = {5, 1, 11, TR_T + 2, 3 * TR_T + 8, TR_T + 6, 3 * TR_T + 0, 3 * TR_T + 4};

TEST(bert_forward_rows_matches_full_forward) {
    int n = (int)(sizeof tr_pos / sizeof tr_pos[0]);
    tr_compare(1, 0, 0, tr_pos, n);    /* the last layer reads the embeddings */
    tr_compare(2, 1, 0, tr_pos, n);    /* ALiBi at the rows' own positions */
    tr_compare(3, 1, 16, tr_pos, n);   /* a narrower embedding, three layers */
    tr_compare(2, 0, 16, tr_pos, 1);   /* one row in the whole batch */
}

/* Seven rows in one sequence of 12 (more than half): the full forward runs,
 * so bert_hidden is available, and the results are the same. */
TEST(bert_forward_rows_falls_back_past_half) {
    int pos[9] = {0, 1, 2, 3, 4, 5, 6, TR_T + 1, 2 * TR_T + 2};
    tr_compare(2, 1, 0, pos, 9);
    RowsCase c = {.m = tr_model(2, 1, 0, 0.0f)};
    tr_batch(&c, pos, 9);
    tr_step(&c, 1, 0, NULL);
    CHECK(bert_hidden(c.m) != NULL);
    bert_free(c.m);
}

static GradCheck *tr_check;
static void tr_forward(void *ctx) {
    RowsCase *c = ctx;
    c->loss = tr_step(c, 1, 0, NULL);
}
static void tr_backward(void *ctx, const float *dout) {
    RowsCase *c = ctx;
    tr_step(c, 1, 1, NULL);
    for (int k = 0; k < tr_check->n_tensors; k++)
        for (long i = 0; i < tr_check->tensors[k].n; i++) tr_check->tensors[k].grad[i] *= dout[0];
}

/* Finite differences through the rows path with dropout (hidden and attention)
 * on: the masks are drawn from the same seed in every evaluation. */
TEST(bert_forward_rows_gradcheck_with_dropout) {
    RowsCase c = {.m = tr_model(2, 1, 0, 0.1f), .drop_seed = 77};
    tr_batch(&c, tr_pos, (int)(sizeof tr_pos / sizeof tr_pos[0]));
    Bert *m = c.m;
    int C = m->cfg.hidden_size, FF = m->cfg.intermediate_size;
    GradCheck g;
    gradcheck_init(&g, &c, tr_forward, tr_backward, &c.loss, 1);
    tr_check = &g;
    gradcheck_add(&g, "word_embeddings", m->w.word_emb, m->g.word_emb, (long)m->cfg.vocab_size * C);
    gradcheck_add(&g, "layer.0.qkv", m->w.layers[0].attn.w_qkv, m->g.layers[0].attn.w_qkv, 3L * C * C);
    gradcheck_add(&g, "layer.1.qkv", m->w.layers[1].attn.w_qkv, m->g.layers[1].attn.w_qkv, 3L * C * C);
    gradcheck_add(&g, "layer.1.attention.output.LayerNorm.weight", m->w.layers[1].attn.ln_g,
                  m->g.layers[1].attn.ln_g, C);
    gradcheck_add(&g, "layer.1.intermediate.dense", m->w.layers[1].ffn.w_in, m->g.layers[1].ffn.w_in, (long)FF * C);
    gradcheck_add(&g, "layer.1.output.LayerNorm.bias", m->w.layers[1].ffn.ln_b, m->g.layers[1].ffn.ln_b, C);
    gradcheck_expect(&g, "MLM loss through the rows path with dropout");
    bert_free(m);
}

/* ---- bert_forward_pooled in training: classification and regression ---- */

typedef struct {
    Bert *m;
    int ids[TR_B * TR_T], lengths[TR_B], labels[TR_B];
    float targets[TR_B];
    uint64_t drop_seed;
    float loss;
} PooledCase;

static Bert *tp_model(int L, int alibi, int K, float dropout) {
    BertConfig c = {.vocab_size = 61, .hidden_size = 32, .num_layers = L, .num_heads = 4, .intermediate_size = 64,
                    .max_position = 16, .type_vocab_size = 2, .hidden_dropout = dropout,
                    .attention_dropout = dropout, .layer_norm_eps = 1e-12f, .alibi = alibi};
    Bert *m = bert_create(&c, &(BertHeads){.pooler = 1, .num_labels = K}, 8);
    for (int h = 0; h < params_num_tensors(m->params); h++) {
        const ParamTensor *t = params_tensor(m->params, h);
        float a = t->ndim == 1 ? 0.1f : 0.3f;
        if (strstr(t->name, "LayerNorm.weight")) gradcheck_fill(params_data(m->params, h), t->numel, 0.8f, 1.2f, 60 + (uint64_t)h);
        else gradcheck_fill(params_data(m->params, h), t->numel, -a, a, 60 + (uint64_t)h);
    }
    bert_reserve(m, TR_B, TR_T, 0, 1);
    return m;
}

static void tp_batch(PooledCase *c) {
    const int lengths[TR_B] = {12, 7, 3, 10};
    Rng r;
    rng_seed(&r, 17);
    for (int i = 0; i < TR_B * TR_T; i++) c->ids[i] = 1 + (int)rng_below(&r, 60);
    memcpy(c->lengths, lengths, sizeof lengths);
    for (int i = 0; i < TR_B; i++) {
        c->labels[i] = i % 3;
        c->targets[i] = 0.3f * (float)i - 0.4f;
    }
}

static float tp_step(PooledCase *c, int pooled, int backward) {
    Rng drop;
    rng_seed(&drop, c->drop_seed);
    Rng *rng = c->drop_seed ? &drop : NULL;
    BertBatch b = {TR_B, TR_T, c->ids, NULL, c->lengths};
    if (backward) params_zero_grad(c->m->params);
    if (pooled) bert_forward_pooled(c->m, &b, rng);
    else bert_forward(c->m, &b, rng);
    float loss = c->m->heads.num_labels == 1 ? bert_regress_loss(c->m, c->targets, rng, backward)
                                              : bert_classify_loss(c->m, c->labels, rng, backward);
    if (backward) bert_backward(c->m);
    return loss;
}

static void tp_compare(int L, int alibi, int K) {
    PooledCase c = {.m = tp_model(L, alibi, K, 0.0f)};
    tp_batch(&c);
    Bert *m = c.m;
    int np = params_num_tensors(m->params);
    float loss_full = tp_step(&c, 0, 1);
    float **grads = malloc(sizeof(float *) * (size_t)np);
    for (int h = 0; h < np; h++) {
        long k = params_tensor(m->params, h)->numel;
        grads[h] = malloc(sizeof(float) * (size_t)k);
        memcpy(grads[h], params_grad(m->params, h), sizeof(float) * (size_t)k);
    }
    float loss_pooled = tp_step(&c, 1, 1);
    CHECK_MSG(fabs(loss_pooled - loss_full) <= 1e-5 * fabs(loss_full) + 1e-7, "L%d alibi %d K %d: loss %.7f vs %.7f",
              L, alibi, K, loss_pooled, loss_full);
    double worst = 0;
    for (int h = 0; h < np; h++) {
        const ParamTensor *t = params_tensor(m->params, h);
        if (strstr(t->name, "key.bias")) continue;
        double e = tr_rel(params_grad(m->params, h), grads[h], t->numel);
        CHECK_MSG(e < 1e-4, "L%d alibi %d K %d: gradient of %s rel err %g", L, alibi, K, t->name, e);
        worst = fmax(worst, e);
    }
    printf("  L%d alibi %d K %d: loss %.5f, worst gradient rel err %.2g\n", L, alibi, K, loss_pooled, worst);
    for (int h = 0; h < np; h++) free(grads[h]);
    free(grads);
    bert_free(m);
}

TEST(bert_forward_pooled_trains_as_full_forward) {
    tp_compare(1, 0, 3);
    tp_compare(2, 1, 3);
    tp_compare(3, 1, 1);
}

static GradCheck *tp_check;
static void tp_forward(void *ctx) {
    PooledCase *c = ctx;
    c->loss = tp_step(c, 1, 0);
}
static void tp_backward(void *ctx, const float *dout) {
    PooledCase *c = ctx;
    tp_step(c, 1, 1);
    for (int k = 0; k < tp_check->n_tensors; k++)
        for (long i = 0; i < tp_check->tensors[k].n; i++) tp_check->tensors[k].grad[i] *= dout[0];
}

TEST(bert_forward_pooled_gradcheck_with_dropout) {
    PooledCase c = {.m = tp_model(2, 1, 3, 0.1f), .drop_seed = 91};
    tp_batch(&c);
    Bert *m = c.m;
    int C = m->cfg.hidden_size, FF = m->cfg.intermediate_size;
    GradCheck g;
    gradcheck_init(&g, &c, tp_forward, tp_backward, &c.loss, 1);
    tp_check = &g;
    gradcheck_add(&g, "word_embeddings", m->w.word_emb, m->g.word_emb, (long)m->cfg.vocab_size * C);
    gradcheck_add(&g, "layer.0.output.dense", m->w.layers[0].ffn.w_out, m->g.layers[0].ffn.w_out, (long)C * FF);
    gradcheck_add(&g, "layer.1.qkv", m->w.layers[1].attn.w_qkv, m->g.layers[1].attn.w_qkv, 3L * C * C);
    gradcheck_add(&g, "layer.1.intermediate.dense", m->w.layers[1].ffn.w_in, m->g.layers[1].ffn.w_in, (long)FF * C);
    gradcheck_add(&g, "pooler.dense", m->w.pool_w, m->g.pool_w, (long)C * C);
    gradcheck_expect(&g, "classification loss through the [CLS]-only path with dropout");
    bert_free(m);
}
