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
#include "tests/bert_task_loss.h"
#include "tests/gradcheck.h"
#include "tests/test.h"

enum { TR_B = 4, TR_T = 12, TR_MAX = 12 };

/* One case: a model, a batch, its MLM rows or its labels, and which forward. */
typedef struct {
    Bert *m;
    int ids[TR_B * TR_T], lengths[TR_B];
    int positions[TR_MAX], mlm_labels[TR_MAX], n;   /* MLM models */
    int labels[TR_B];                               /* classifiers */
    float targets[TR_B];                            /* regressors */
    uint64_t drop_seed;   /* dropout on (its masks redrawn alike every call) when nonzero */
    float loss, acc;
} RowsCase;

/* heads: an MLM model (K = 0) or a pooler + K-way classifier (K = 1: regression).
 * Weights well away from the init, so every path carries signal. */
static void tr_init(RowsCase *c, int L, int alibi, int E, int K, float dropout) {
    BertConfig cfg = {.vocab_size = 61, .hidden_size = 32, .embedding_size = E, .num_layers = L, .num_heads = 4,
                      .intermediate_size = 64, .max_position = 16, .type_vocab_size = 2,
                      .hidden_dropout = dropout, .attention_dropout = dropout, .layer_norm_eps = 1e-12f,
                      .alibi = alibi};
    BertHeads heads = K ? (BertHeads){.pooler = 1, .num_labels = K} : (BertHeads){.mlm = 1};
    Bert *m = c->m = bert_create(&cfg, &heads, 7);
    for (int h = 0; h < params_num_tensors(m->params); h++) {
        const ParamTensor *t = params_tensor(m->params, h);
        float a = t->ndim == 1 ? 0.1f : 0.3f;
        if (strstr(t->name, "LayerNorm.weight")) gradcheck_fill(params_data(m->params, h), t->numel, 0.8f, 1.2f, 40 + (uint64_t)h);
        else gradcheck_fill(params_data(m->params, h), t->numel, -a, a, 40 + (uint64_t)h);
    }
    bert_reserve(m, TR_B, TR_T, K ? 0 : TR_MAX, 1);
    const int lengths[TR_B] = {12, 7, 3, 10};
    Rng r;
    rng_seed(&r, 13);
    for (int i = 0; i < TR_B * TR_T; i++) c->ids[i] = 1 + (int)rng_below(&r, 60);
    memcpy(c->lengths, lengths, sizeof lengths);
    for (int i = 0; i < TR_MAX; i++) c->mlm_labels[i] = (int)rng_below(&r, 61);
    for (int i = 0; i < TR_B; i++) {
        c->labels[i] = i % 3;
        c->targets[i] = 0.3f * (float)i - 0.4f;
    }
}

static void tr_positions(RowsCase *c, const int *pos, int n) {
    c->n = n;
    memcpy(c->positions, pos, sizeof(int) * (size_t)n);
}

/* One step; shortcut = 1 takes the rows path (bert_forward_rows for an MLM
 * model, bert_forward_pooled for a classifier), 0 the full forward. */
static float tr_step(RowsCase *c, int shortcut, int backward) {
    Rng drop;
    rng_seed(&drop, c->drop_seed);
    Rng *rng = c->drop_seed ? &drop : NULL;
    Bert *m = c->m;
    BertBatch b = {TR_B, TR_T, c->ids, NULL, c->lengths};
    if (backward) params_zero_grad(m->params);
    if (!shortcut) bert_forward(m, &b, rng);
    else if (m->heads.mlm) bert_forward_rows(m, &b, c->positions, c->n, rng);
    else bert_forward_pooled(m, &b, rng);
    c->acc = 0;
    c->loss = m->heads.mlm ? bert_mlm_loss(m, c->positions, c->mlm_labels, c->n, backward, &c->acc)
                           : test_bert_head_loss(m, c->labels, c->targets, rng, backward);
    if (backward) bert_backward(m);
    return c->loss;
}

static double tr_rel(const float *a, const float *b, long n) {
    double d = 0, s = 0;
    for (long i = 0; i < n; i++) {
        d = fmax(d, fabs((double)a[i] - b[i]));
        s = fmax(s, fabs((double)b[i]));
    }
    return d / (s > 0 ? s : 1e-30);
}

/* The shortcut against the full forward: loss, MLM accuracy and logits, every
 * gradient. Frees the model. */
static void tr_compare(RowsCase *c, const char *what) {
    Bert *m = c->m;
    int np = params_num_tensors(m->params), V = m->cfg.vocab_size;
    float loss_full = tr_step(c, 0, 1), acc_full = c->acc;
    float *logits = NULL;
    if (m->heads.mlm) {
        logits = malloc(sizeof(float) * (size_t)c->n * V);
        memcpy(logits, bert_mlm_logits(m), sizeof(float) * (size_t)c->n * V);
    }
    float **grads = malloc(sizeof(float *) * (size_t)np);
    for (int h = 0; h < np; h++) {
        long k = params_tensor(m->params, h)->numel;
        grads[h] = malloc(sizeof(float) * (size_t)k);
        memcpy(grads[h], params_grad(m->params, h), sizeof(float) * (size_t)k);
    }
    float loss = tr_step(c, 1, 1);
    CHECK_MSG(fabs(loss - loss_full) <= 1e-5 * fabs(loss_full), "%s: loss %.7f vs full %.7f", what, loss, loss_full);
    CHECK_MSG(c->acc == acc_full, "%s: accuracy %g vs %g", what, c->acc, acc_full);
    if (logits) {
        double e = tr_rel(bert_mlm_logits(m), logits, (long)c->n * V);
        CHECK_MSG(e < 1e-5, "%s: logits rel err %g", what, e);
    }
    double worst = 0;
    for (int h = 0; h < np; h++) {
        const ParamTensor *t = params_tensor(m->params, h);
        if (strstr(t->name, "key.bias")) continue;   /* 0 in exact arithmetic: rounding on both sides */
        double e = tr_rel(params_grad(m->params, h), grads[h], t->numel);
        CHECK_MSG(e < 1e-4, "%s: gradient of %s rel err %g", what, t->name, e);
        worst = fmax(worst, e);
    }
    printf("  %s: loss %.5f, worst gradient rel err %.2g\n", what, loss, worst);
    for (int h = 0; h < np; h++) free(grads[h]);
    free(grads);
    free(logits);
    bert_free(m);
}

/* Row 0: 5, 1, 11; row 1: 2, 6; row 2: none; row 3: 8, 0, 4 (in that order). */
static const int tr_pos[] = {5, 1, 11, TR_T + 2, 3 * TR_T + 8, TR_T + 6, 3 * TR_T + 0, 3 * TR_T + 4};
enum { TR_NPOS = sizeof tr_pos / sizeof tr_pos[0] };

static void tr_mlm_case(int L, int alibi, int E, const int *pos, int n, const char *what) {
    RowsCase c = {0};
    tr_init(&c, L, alibi, E, 0, 0.0f);
    tr_positions(&c, pos, n);
    tr_compare(&c, what);
}

TEST(bert_forward_rows_matches_full_forward) {
    tr_mlm_case(1, 0, 0, tr_pos, TR_NPOS, "L1, the last layer reads the embeddings");
    tr_mlm_case(2, 1, 0, tr_pos, TR_NPOS, "L2 ALiBi at the rows' own positions");
    tr_mlm_case(3, 1, 16, tr_pos, TR_NPOS, "L3 ALiBi, embeddings 16 wide");
    tr_mlm_case(2, 0, 16, tr_pos, 1, "L2, one row in the batch");
}

/* Seven rows in one sequence of 12 (more than half): the full forward runs,
 * so bert_hidden is available, and the results are the same. */
TEST(bert_forward_rows_falls_back_past_half) {
    int pos[9] = {0, 1, 2, 3, 4, 5, 6, TR_T + 1, 2 * TR_T + 2};
    tr_mlm_case(2, 1, 0, pos, 9, "L2 ALiBi, 7 rows in one sequence");
    RowsCase c = {0};
    tr_init(&c, 2, 1, 0, 0, 0.0f);
    tr_positions(&c, pos, 9);
    tr_step(&c, 1, 0);
    CHECK(bert_hidden(c.m) != NULL);
    bert_free(c.m);
}

TEST(bert_forward_pooled_trains_as_full_forward) {
    const char *what[] = {"L1 K3", "L2 ALiBi K3", "L3 ALiBi regression"};
    for (int i = 0; i < 3; i++) {
        RowsCase c = {0};
        tr_init(&c, i + 1, i > 0, 0, i < 2 ? 3 : 1, 0.0f);
        tr_compare(&c, what[i]);
    }
}

/* Finite differences through the shortcut with dropout (hidden and attention;
 * the classifier's too) on: the masks are drawn from the same seed in every
 * evaluation. */
static GradCheck *tr_check;
static void tr_forward(void *ctx) { tr_step(ctx, 1, 0); }
static void tr_backward(void *ctx, const float *dout) {
    tr_step(ctx, 1, 1);
    for (int k = 0; k < tr_check->n_tensors; k++)
        for (long i = 0; i < tr_check->tensors[k].n; i++) tr_check->tensors[k].grad[i] *= dout[0];
}

static void tr_gradcheck(int K, const char *what) {
    RowsCase c = {.drop_seed = 77};
    tr_init(&c, 2, 1, 0, K, 0.1f);
    tr_positions(&c, tr_pos, TR_NPOS);
    Bert *m = c.m;
    int C = m->cfg.hidden_size, FF = m->cfg.intermediate_size;
    GradCheck g;
    gradcheck_init(&g, &c, tr_forward, tr_backward, &c.loss, 1);
    tr_check = &g;
    gradcheck_add(&g, "word_embeddings", m->w.word_emb, m->g.word_emb, (long)m->cfg.vocab_size * C);
    gradcheck_add(&g, "layer.0.output.dense", m->w.layers[0].ffn.w_out, m->g.layers[0].ffn.w_out, (long)C * FF);
    gradcheck_add(&g, "layer.1.qkv", m->w.layers[1].attn.w_qkv, m->g.layers[1].attn.w_qkv, 3L * C * C);
    gradcheck_add(&g, "layer.1.attention.output.LayerNorm.weight", m->w.layers[1].attn.ln_g,
                  m->g.layers[1].attn.ln_g, C);
    gradcheck_add(&g, "layer.1.intermediate.dense", m->w.layers[1].ffn.w_in, m->g.layers[1].ffn.w_in, (long)FF * C);
    gradcheck_add(&g, "layer.1.output.LayerNorm.bias", m->w.layers[1].ffn.ln_b, m->g.layers[1].ffn.ln_b, C);
    if (K) gradcheck_add(&g, "pooler.dense", m->w.pool_w, m->g.pool_w, (long)C * C);
    gradcheck_expect(&g, what);
    bert_free(m);
}

TEST(bert_forward_rows_gradcheck_with_dropout) { tr_gradcheck(0, "MLM loss through the rows path with dropout"); }

TEST(bert_forward_pooled_gradcheck_with_dropout) {
    tr_gradcheck(3, "classification loss through the [CLS]-only path with dropout");
}
