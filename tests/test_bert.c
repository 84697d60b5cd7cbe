/* test_bert.c — the BERT model against a PyTorch reference written from plain
 * torch ops (tests/ref/bert_ref.py): encoder output, MLM logits and loss,
 * classification / regression logits and loss, the gradient of EVERY
 * parameter, and the loss curve of 20 AdamW steps (also with ALiBi); plus padding invariance,
 * the siamese similarity head (finite differences, cosines recomputed, padding),
 * configs (built-in, JSON with HF keys, bad values) and checkpoints (round
 * trip, heads on a pretrained encoder, corrupt and foreign files). */
#include "tests/scratch.h"
#include "tests/test.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/checkpoint.h"
#include "core/rng.h"
#include "models/bert/bert.h"
#include "models/bert/bert_work.h"
#include "optim/clip.h"
#include "optim/optim.h"
#include "tests/capture.h"
#include "tests/bert_task_loss.h"
#include "tests/gradcheck.h"
#include "tests/torchref.h"

/* ---- the reference model: V 100, C 32, L 2, NH 4, FF 128, P 16, B 3, T 12 ---- */

enum { RB = 3, RT = 12, RNM = 6, RSTEPS = 20 };
#define REF_LR 1e-3f

static BertConfig ref_config(void) {
    return (BertConfig){.vocab_size = 100, .hidden_size = 32, .num_layers = 2, .num_heads = 4,
                        .intermediate_size = 128, .max_position = 16, .type_vocab_size = 2,
                        .hidden_dropout = 0.0f, .attention_dropout = 0.0f, .layer_norm_eps = 1e-12f};
}

/* Random weights well away from the init (biases and LayerNorm not 0 / 1), so
 * every path carries signal. */
static void ref_randomize(Bert *m, uint64_t seed) {
    for (int h = 0; h < params_num_tensors(m->params); h++) {
        const ParamTensor *t = params_tensor(m->params, h);
        float *x = params_data(m->params, h);
        if (strstr(t->name, "LayerNorm.weight")) {
            gradcheck_fill(x, t->numel, 0.8f, 1.2f, seed + (uint64_t)h);
        } else if (t->ndim == 1) {
            gradcheck_fill(x, t->numel, -0.1f, 0.1f, seed + (uint64_t)h);
        } else {
            float a = strstr(t->name, "embeddings") ? 0.5f : 0.25f;
            gradcheck_fill(x, t->numel, -a, a, seed + (uint64_t)h);
        }
    }
}

typedef struct {
    int ids[RB * RT], segments[RB * RT], lengths[RB];
    int positions[RNM], mlm_labels[RNM];
    int labels[RB];
    float targets[RB];
} RefBatch;

static void ref_batch(RefBatch *b, int V) {
    Rng r;
    rng_seed(&r, 5);
    const int lengths[RB] = {12, 7, 3};
    for (int i = 0; i < RB; i++) {
        b->lengths[i] = lengths[i];
        for (int t = 0; t < RT; t++) {
            int real = t < lengths[i];
            b->ids[i * RT + t] = real ? (t == 0 ? 1 : 2 + (int)rng_below(&r, (uint32_t)V - 2)) : 0;
            b->segments[i * RT + t] = real && t >= lengths[i] / 2;
        }
        b->labels[i] = i % 3;
        b->targets[i] = 0.5f + 1.5f * (float)i;
    }
    const int pos[RNM] = {1, 5, 11, RT + 2, RT + 6, 2 * RT + 1};   /* inside each row's length */
    for (int i = 0; i < RNM; i++) {
        b->positions[i] = pos[i];
        b->mlm_labels[i] = (int)rng_below(&r, (uint32_t)V);
    }
}

/* Forward + the heads' losses (+ backward into m->g). losses[0] MLM, [1] head. */
static float ref_step(Bert *m, const RefBatch *b, int K, int nm, int backward, float *losses) {
    if (backward) params_zero_grad(m->params);
    bert_forward(m, &(BertBatch){RB, RT, b->ids, b->segments, b->lengths}, NULL);
    losses[0] = nm ? bert_mlm_loss(m, b->positions, b->mlm_labels, nm, backward, NULL) : 0.0f;
    losses[1] = test_bert_head_loss(m, b->labels, b->targets, NULL, backward);
    if (backward) bert_backward(m);
    return losses[0] + losses[1];
}

/* max |a - b| / max |b|: one relative error per tensor. */
static double rel_err(const float *a, const float *b, long n) {
    double scale = 0.0;
    for (long i = 0; i < n; i++) scale = fabs(b[i]) > scale ? fabs(b[i]) : scale;
    return torchref_max_diff(a, b, n) / (scale > 0 ? scale : 1e-30);
}

static void ref_compare(int K, int nm, int alibi, int pre_ln) {
    BertConfig cfg = ref_config();
    cfg.alibi = alibi;
    cfg.pre_ln = pre_ln;
    Bert *m = bert_create(&cfg, &(BertHeads){.mlm = nm > 0, .num_labels = K}, 3);
    ref_randomize(m, 100);
    bert_reserve(m, RB, RT, RNM, 1);
    RefBatch b;
    ref_batch(&b, cfg.vocab_size);
    int C = cfg.hidden_size, V = cfg.vocab_size, np = params_num_tensors(m->params);

    /* Inputs: every parameter, the batch as floats. */
    RefTensor *in = calloc((size_t)np + 7, sizeof *in);
    float fids[RB * RT], fseg[RB * RT], flen[RB], fpos[RNM], flab[RNM], fhead[RB];
    for (int i = 0; i < RB * RT; i++) { fids[i] = (float)b.ids[i]; fseg[i] = (float)b.segments[i]; }
    for (int i = 0; i < RB; i++) {
        flen[i] = (float)b.lengths[i];
        fhead[i] = K == 1 ? b.targets[i] : (float)b.labels[i];
    }
    for (int i = 0; i < RNM; i++) { fpos[i] = (float)b.positions[i]; flab[i] = (float)b.mlm_labels[i]; }
    int ni = 0;
    for (int h = 0; h < np; h++)
        in[ni++] = (RefTensor){params_tensor(m->params, h)->name, params_data(m->params, h), params_tensor(m->params, h)->numel};
    in[ni++] = (RefTensor){"ids", fids, RB * RT};
    in[ni++] = (RefTensor){"segments", fseg, RB * RT};
    in[ni++] = (RefTensor){"lengths", flen, RB};
    in[ni++] = (RefTensor){"head_labels", fhead, RB};
    if (nm) {
        in[ni++] = (RefTensor){"positions", fpos, nm};
        in[ni++] = (RefTensor){"mlm_labels", flab, nm};
    }
    /* Outputs: hidden, logits, losses, curve, then one gradient per parameter. */
    long nh = (long)RB * RT * C;
    float *hidden = malloc(sizeof(float) * (size_t)nh), *mlm = malloc(sizeof(float) * (size_t)(nm ? nm : 1) * V);
    float head[RB * 3], losses[2], curve[RSTEPS];
    RefTensor *out = calloc((size_t)np + 5, sizeof *out);
    char (*gname)[PARAM_NAME_MAX + 8] = calloc((size_t)np, sizeof *gname);
    float **grads = calloc((size_t)np, sizeof *grads);
    int no = 0;
    out[no++] = (RefTensor){"hidden", hidden, nh};
    out[no++] = (RefTensor){"head_logits", head, (long)RB * K};
    out[no++] = (RefTensor){"losses", losses, 2};
    out[no++] = (RefTensor){"curve", curve, RSTEPS};
    if (nm) out[no++] = (RefTensor){"mlm_logits", mlm, (long)nm * V};
    for (int h = 0; h < np; h++) {
        const ParamTensor *t = params_tensor(m->params, h);
        snprintf(gname[h], sizeof gname[h], "grad.%s", t->name);
        grads[h] = malloc(sizeof(float) * (size_t)t->numel);
        out[no++] = (RefTensor){gname[h], grads[h], t->numel};
    }
    char args[160];
    snprintf(args, sizeof args, "%d %d %d %d %d %d %d %d %d %d %d %d %g %d %d", V, C, cfg.num_layers, cfg.num_heads,
             cfg.intermediate_size, cfg.max_position, cfg.type_vocab_size, RB, RT, K, nm, RSTEPS, (double)REF_LR,
             alibi, pre_ln);
    if (torchref_run("bert_ref.py", args, in, ni, out, no) == 1) {
        float mine[2];
        ref_step(m, &b, K, nm, 1, mine);
        /* Measured (K=3 + MLM, K=1): outputs <= 3e-7, gradients <= 2e-6 relative. */
        double e = rel_err(bert_hidden(m), hidden, nh);
        CHECK_MSG(e < 1e-5, "K=%d hidden: rel err %g", K, e);
        if (nm) {
            e = rel_err(bert_mlm_logits(m), mlm, (long)nm * V);
            CHECK_MSG(e < 1e-5, "mlm logits: rel err %g", e);
            CHECK_NEAR(mine[0], losses[0], 1e-5 * losses[0]);
            /* MLM accuracy: the rows whose label has the reference's largest logit.
             * Half the labels are set to the reference's arg-max so that hits occur. */
            int hits = 0, labels2[RNM];
            for (int i = 0; i < nm; i++) {
                const float *r = mlm + (long)i * V;
                int best = 0;
                for (int v = 1; v < V; v++) best = r[v] > r[best] ? v : best;
                labels2[i] = i % 2 ? b.mlm_labels[i] : best;
                hits += best == labels2[i];
            }
            float acc;
            bert_mlm_loss(m, b.positions, labels2, nm, 0, &acc);
            CHECK_MSG(hits >= nm / 2 && fabs(acc - (double)hits / nm) < 1e-6, "MLM accuracy %g, reference %d/%d", acc,
                      hits, nm);
        }
        float logits[RB * 3];
        bert_head_forward(m, NULL, logits);
        e = rel_err(logits, head, (long)RB * K);
        CHECK_MSG(e < 1e-5, "K=%d head logits: rel err %g", K, e);
        CHECK_NEAR(mine[1], losses[1], 1e-5 * losses[1]);
        double worst = 0;
        for (int h = 0; h < np; h++) {
            const ParamTensor *t = params_tensor(m->params, h);
            if (strstr(t->name, "attention.self.key.bias")) {
                /* Exactly 0 in exact arithmetic (softmax ignores a shift shared by
                 * all keys of a query); both sides hold only rounding (~6e-9). */
                float zero[128] = {0};
                double mine_abs = torchref_max_diff(params_grad(m->params, h), zero, t->numel);
                double ref_abs = torchref_max_diff(grads[h], zero, t->numel);
                CHECK_MSG(mine_abs < 1e-7 && ref_abs < 1e-7, "%s: %g vs %g, expected ~0", t->name, mine_abs, ref_abs);
                continue;
            }
            e = rel_err(params_grad(m->params, h), grads[h], t->numel);
            CHECK_MSG(e <= 1e-4, "K=%d gradient of %s: rel err %g", K, t->name, e);
            worst = e > worst ? e : worst;
        }
        /* 20 AdamW steps (clip 1.0, decay 0.01 except biases / LayerNorm). */
        Optimizer o = optim_adamw(0.01);
        o.eps = 1e-6;
        double worst_curve = 0;
        for (int s = 0; s < RSTEPS; s++) {
            float l = ref_step(m, &b, K, nm, 1, mine);
            clip_grad_norm(m->params, 1.0f);
            optim_step(&o, m->params, REF_LR);
            double d = fabs(l - curve[s]);
            worst_curve = d > worst_curve ? d : worst_curve;
        }
        CHECK_MSG(worst_curve <= 1e-3, "K=%d AdamW loss curve differs by %g", K, worst_curve);
        CHECK_MSG(curve[RSTEPS - 1] < curve[0] * 0.9f, "the reference loss did not fall: %g -> %g", curve[0],
                  curve[RSTEPS - 1]);
        printf("  K=%d: worst gradient rel err %.2g, worst loss-curve diff %.2g (loss %.4f -> %.4f)\n", K, worst,
               worst_curve, curve[0], curve[RSTEPS - 1]);
    }
    for (int h = 0; h < np; h++) free(grads[h]);
    free(grads); free(gname); free(out); free(in); free(hidden); free(mlm);
    bert_free(m);
}

TEST(bert_matches_torch_mlm_classifier) { ref_compare(3, RNM, 0, 0); }

TEST(bert_matches_torch_regression) { ref_compare(1, 0, 0, 0); }

/* "absolute+alibi": ALiBi's penalty in every self-attention. */
TEST(bert_matches_torch_alibi) { ref_compare(3, RNM, 1, 0); }
/* Pre-LN layers and the final LayerNorm (with ALiBi, as a screening run would use them). */
TEST(bert_matches_torch_pre_ln) { ref_compare(3, RNM, 1, 1); }

/* Padding is invisible: a row's outputs do not depend on what pads it, or on
 * how long the batch is. */
TEST(bert_padding_invariance) {
    BertConfig cfg = ref_config();
    Bert *m = bert_create(&cfg, &(BertHeads){.num_labels = 2}, 3);
    ref_randomize(m, 200);
    bert_reserve(m, 2, RT, 0, 0);
    RefBatch b;
    ref_batch(&b, cfg.vocab_size);
    /* Row 1 (length 7) inside the batch of T = 12 ... */
    bert_forward(m, &(BertBatch){RB - 1, RT, b.ids, b.segments, b.lengths}, NULL);
    int C = cfg.hidden_size;
    float *h12 = malloc(sizeof(float) * 7 * C), logits12[2], logits7[2];
    memcpy(h12, bert_hidden(m) + (long)RT * C, sizeof(float) * 7 * C);
    float both[4];
    bert_head_forward(m, NULL, both);
    memcpy(logits12, both + 2, sizeof logits12);
    /* ... and alone with T = 7 and garbage-free: the same numbers. */
    bert_forward(m, &(BertBatch){1, 7, b.ids + RT, b.segments + RT, b.lengths + 1}, NULL);
    CHECK_MSG(torchref_max_diff(h12, bert_hidden(m), 7L * C) < 1e-5, "hidden states depend on padding");
    bert_head_forward(m, NULL, logits7);
    CHECK_NEAR(logits7[0], logits12[0], 1e-5);
    CHECK_NEAR(logits7[1], logits12[1], 1e-5);
    free(h12);
    bert_free(m);
}

/* ---- the siamese similarity head (bert_siamese.c) ---- */

/* Two pairs, four rows: texts a in rows 0-1, texts b in rows 2-3; padded ids
 * are garbage on purpose (the pooling must read real tokens only). */
enum { SN = 2, ST = RT };
typedef struct {
    Bert *m;
    int ids[2 * SN * ST], lengths[2 * SN];
    float targets[SN], loss;
} SiameseCase;

static void siamese_case_init(SiameseCase *c) {
    BertConfig cfg = ref_config();
    c->m = bert_create(&cfg, &(BertHeads){.num_labels = 1}, 4);
    ref_randomize(c->m, 300);
    bert_reserve(c->m, 2 * SN, ST, 0, 1);
    const int lengths[2 * SN] = {12, 5, 9, 3};
    Rng r;
    rng_seed(&r, 6);
    for (int i = 0; i < 2 * SN; i++) {
        c->lengths[i] = lengths[i];
        for (int t = 0; t < ST; t++) c->ids[i * ST + t] = 1 + (int)rng_below(&r, (uint32_t)cfg.vocab_size - 1);
    }
    c->targets[0] = 0.9f;
    c->targets[1] = -0.2f;
}

static void siamese_forward(void *ctx) {
    SiameseCase *c = ctx;
    bert_forward(c->m, &(BertBatch){2 * SN, ST, c->ids, NULL, c->lengths}, NULL);
    c->loss = test_bert_siamese_loss(c->m, SN, c->targets, 0);
}

/* The gradients of the registered tensors, times dout[0] (the checker's loss
 * weight): the whole model's backward from the siamese loss. */
static GradCheck *siamese_check;
static void siamese_backward(void *ctx, const float *dout) {
    SiameseCase *c = ctx;
    params_zero_grad(c->m->params);
    bert_forward(c->m, &(BertBatch){2 * SN, ST, c->ids, NULL, c->lengths}, NULL);
    test_bert_siamese_loss(c->m, SN, c->targets, 1);
    bert_backward(c->m);
    for (int k = 0; k < siamese_check->n_tensors; k++)
        for (long i = 0; i < siamese_check->tensors[k].n; i++) siamese_check->tensors[k].grad[i] *= dout[0];
}

/* Finite differences through the encoder into the mean-pooled cosine. */
TEST(bert_siamese_gradcheck) {
    SiameseCase c;
    siamese_case_init(&c);
    Bert *m = c.m;
    int C = m->cfg.hidden_size, V = m->cfg.vocab_size, FF = m->cfg.intermediate_size;
    GradCheck g;
    gradcheck_init(&g, &c, siamese_forward, siamese_backward, &c.loss, 1);
    siamese_check = &g;
    gradcheck_add(&g, "word_embeddings", m->w.word_emb, m->g.word_emb, (long)V * C);
    gradcheck_add(&g, "embeddings.LayerNorm.weight", m->w.emb_ln_g, m->g.emb_ln_g, C);
    gradcheck_add(&g, "layer.0.qkv", m->w.layers[0].attn.w_qkv, m->g.layers[0].attn.w_qkv, 3L * C * C);
    gradcheck_add(&g, "layer.1.output.dense", m->w.layers[1].ffn.w_out, m->g.layers[1].ffn.w_out, (long)C * FF);
    gradcheck_add(&g, "layer.1.output.LayerNorm.bias", m->w.layers[1].ffn.ln_b, m->g.layers[1].ffn.ln_b, C);
    gradcheck_expect(&g, "siamese cosine loss");
    bert_free(m);
}

/* The scores are the cosines of the rows' mean hidden states over their real
 * tokens, recomputed here from bert_hidden; the loss is their mean squared
 * error; and neither depends on what pads a row or on the batch's T. */
TEST(bert_siamese_scores_and_padding) {
    SiameseCase c;
    siamese_case_init(&c);
    int C = c.m->cfg.hidden_size;
    siamese_forward(&c);
    float scores[SN];
    bert_siamese_forward(c.m, scores);
    const float *h = bert_hidden(c.m);
    double want_loss = 0;
    for (int i = 0; i < SN; i++) {
        double u[64] = {0}, v[64] = {0}, uv = 0, uu = 0, vv = 0;
        for (int t = 0; t < c.lengths[i]; t++)
            for (int k = 0; k < C; k++) u[k] += h[((long)i * ST + t) * C + k] / c.lengths[i];
        for (int t = 0; t < c.lengths[SN + i]; t++)
            for (int k = 0; k < C; k++) v[k] += h[((long)(SN + i) * ST + t) * C + k] / c.lengths[SN + i];
        for (int k = 0; k < C; k++) uv += u[k] * v[k], uu += u[k] * u[k], vv += v[k] * v[k];
        double cs = uv / sqrt(uu * vv);
        CHECK_NEAR(scores[i], cs, 1e-5);
        want_loss += (cs - c.targets[i]) * (cs - c.targets[i]) / SN;
    }
    CHECK_NEAR(c.loss, want_loss, 1e-5);
    /* Pair 1 (rows 1 and 3, lengths 5 and 3) alone, T = 5, other padding. */
    int ids[2 * 5], lengths[2] = {5, 3};
    memcpy(ids, c.ids + ST, sizeof(int) * 5);
    memcpy(ids + 5, c.ids + 3 * ST, sizeof(int) * 3);
    ids[8] = ids[9] = 0;
    bert_forward(c.m, &(BertBatch){2, 5, ids, NULL, lengths}, NULL);
    float alone;
    bert_siamese_forward(c.m, &alone);
    CHECK_NEAR(alone, scores[1], 1e-5);
    bert_free(c.m);
}

/* ---- configs ---- */

TEST(bert_config_named_and_json) {
    const int expect[][3] = {{2, 128, 2}, {4, 256, 4}, {4, 512, 8}, {8, 512, 8}, {12, 768, 12}};
    for (int i = 0; i < BERT_NUM_CONFIG_NAMES; i++) {
        BertConfig c, f;
        CHECK(bert_config_named(BERT_CONFIG_NAMES[i], &c) == 0);
        CHECK_EQ_INT(c.num_layers, expect[i][0]);
        CHECK_EQ_INT(c.hidden_size, expect[i][1]);
        CHECK_EQ_INT(c.num_heads, expect[i][2]);
        CHECK_EQ_INT(c.intermediate_size, 4 * c.hidden_size);
        CHECK_EQ_INT(c.vocab_size, 30522);
        /* The committed JSON file says the same. */
        char path[128];
        snprintf(path, sizeof path, "models/configs/%s.json", BERT_CONFIG_NAMES[i]);
        CHECK_MSG(bert_config_resolve(path, &f) == 0, "%s", path);
        CHECK_MSG(memcmp(&c, &f, sizeof c) == 0, "%s differs from the built-in config", path);
        /* JSON round trip. */
        cJSON *j = bert_config_to_json(&c);
        CHECK(bert_config_from_json(j, "round trip", &f) == 0);
        CHECK(memcmp(&c, &f, sizeof c) == 0);
        cJSON_Delete(j);
    }
    /* ALiBi: tiny with "position_embedding_type": "absolute+alibi", and back. */
    BertConfig c, tiny;
    CHECK(bert_config_resolve("models/configs/tiny-alibi.json", &c) == 0);
    CHECK(bert_config_named("tiny", &tiny) == 0);
    CHECK(c.alibi == 1 && tiny.alibi == 0);
    tiny.alibi = 1;
    CHECK(memcmp(&c, &tiny, sizeof c) == 0);
    cJSON *ja = bert_config_to_json(&c);
    CHECK(strcmp(cJSON_GetObjectItem(ja, "position_embedding_type")->valuestring, "absolute+alibi") == 0);
    BertConfig back;
    CHECK(bert_config_from_json(ja, "round trip", &back) == 0 && back.alibi == 1);
    cJSON_Delete(ja);
    CHECK(bert_config_named("huge", &c) == -1);
    /* A HF-style config with only the required keys, and extra keys ignored. */
    cJSON *j = cJSON_Parse("{\"vocab_size\": 1000, \"hidden_size\": 64, \"num_hidden_layers\": 1,"
                           " \"num_attention_heads\": 4, \"architectures\": [\"BertForMaskedLM\"]}");
    CHECK(bert_config_from_json(j, "x", &c) == 0);
    CHECK_EQ_INT(c.intermediate_size, 256);
    CHECK_EQ_INT(c.max_position, 512);
    CHECK_NEAR(c.layer_norm_eps, 1e-12, 1e-18);
    cJSON_Delete(j);
}

TEST(bert_config_bad_values) {
    const char *bad[] = {
        "{\"vocab_size\": 10, \"hidden_size\": 64, \"num_hidden_layers\": 1}",                 /* heads missing */
        "{\"vocab_size\": 10, \"hidden_size\": 64, \"num_hidden_layers\": 1, \"num_attention_heads\": 5}",
        "{\"vocab_size\": 10, \"hidden_size\": 40, \"num_hidden_layers\": 1, \"num_attention_heads\": 4}",
        "{\"vocab_size\": 10, \"hidden_size\": 64, \"num_hidden_layers\": 0, \"num_attention_heads\": 4}",
        "{\"vocab_size\": 10, \"hidden_size\": 64, \"num_hidden_layers\": 1, \"num_attention_heads\": 4,"
        " \"hidden_dropout_prob\": 1.5}",
        "{\"vocab_size\": 10, \"hidden_size\": 64, \"num_hidden_layers\": 1, \"num_attention_heads\": 4,"
        " \"hidden_act\": \"relu\"}",
        "{\"vocab_size\": 10, \"hidden_size\": 64, \"num_hidden_layers\": 1, \"num_attention_heads\": 4,"
        " \"position_embedding_type\": \"relative_key\"}",
        "{\"vocab_size\": 2.5, \"hidden_size\": 64, \"num_hidden_layers\": 1, \"num_attention_heads\": 4}",
        "[1, 2]",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cJSON *j = cJSON_Parse(bad[i]);
        BertConfig c;
        StderrCapture cap;
        stderr_capture_begin(&cap);
        int rc = bert_config_from_json(j, "bad.json", &c);
        char *err = stderr_capture_end(&cap);
        CHECK_MSG(rc == -1, "accepted %s", bad[i]);
        CHECK_MSG(err && strstr(err, "bad.json"), "no message naming the file for %s: %s", bad[i], err ? err : "");
        free(err);
        cJSON_Delete(j);
    }
    StderrCapture cap;
    stderr_capture_begin(&cap);
    BertConfig c;
    int rc = bert_config_resolve("/nonexistent/tiny.json", &c);
    free(stderr_capture_end(&cap));
    CHECK(rc == -1);
}

/* ---- checkpoints ---- */

TEST(bert_checkpoint_round_trip_and_errors) {
    BertConfig cfg = ref_config();
    Bert *m = bert_create(&cfg, &(BertHeads){.mlm = 1, .num_labels = 3}, 3);
    ref_randomize(m, 300);
    char path[SCRATCH_PATH_MAX];
    int fd = scratch_file("test_bert", path, sizeof path);
    if (fd >= 0) close(fd);
    CHECK(bert_save(m, path) == 0);
    Bert *l = bert_load(path);
    CHECK(l != NULL);
    if (l) {
        CHECK_EQ_INT(l->heads.num_labels, 3);
        CHECK_EQ_INT(l->heads.mlm, 1);
        CHECK(l->params->total == m->params->total &&
              memcmp(l->params->data, m->params->data, sizeof(float) * m->params->total) == 0);
        bert_free(l);
    }
    /* A pretrained encoder with a fresh 2-way head: encoder and pooler copied,
     * classifier new. */
    Checkpoint *c = checkpoint_read(path);
    CHECK(c != NULL);
    if (c) {
        Bert *f = bert_from_checkpoint(c, &(BertHeads){.num_labels = 2}, 0, 9);
        CHECK(f != NULL);
        if (f) {
            int hw = params_find(f->params, "bert.encoder.layer.1.output.dense.weight");
            int hm = params_find(m->params, "bert.encoder.layer.1.output.dense.weight");
            CHECK(memcmp(params_data(f->params, hw), params_data(m->params, hm), sizeof(float) * 32 * 128) == 0);
            CHECK(params_find(f->params, "cls.predictions.bias") < 0);
            CHECK(params_tensor(f->params, params_find(f->params, "classifier.weight"))->shape[0] == 2);
            bert_free(f);
        }
        checkpoint_free(c);
    }
    /* Corrupt: one flipped byte in the payload. */
    FILE *fp = fopen(path, "r+b");
    CHECK(fp != NULL);
    if (fp) {
        fseek(fp, 200, SEEK_SET);
        int ch = fgetc(fp);
        fseek(fp, 200, SEEK_SET);
        fputc(ch ^ 0x5a, fp);
        fclose(fp);
    }
    StderrCapture cap;
    stderr_capture_begin(&cap);
    Bert *bad = bert_load(path);
    char *err = stderr_capture_end(&cap);
    CHECK(bad == NULL);
    CHECK_MSG(err && strstr(err, path), "no message naming the file: %s", err ? err : "");
    free(err);
    /* Not a BERT checkpoint: params of something else. */
    cJSON *other = cJSON_Parse("{\"model\": \"fasttext\"}");
    CHECK(checkpoint_save_params(path, other, m->params, CKPT_F32) == 0);
    cJSON_Delete(other);
    stderr_capture_begin(&cap);
    bad = bert_load(path);
    err = stderr_capture_end(&cap);
    CHECK(bad == NULL);
    CHECK_MSG(err && strstr(err, "not a BERT checkpoint"), "message: %s", err ? err : "");
    free(err);
    unlink(path);
    bert_free(m);
}

/* Layer-wise lr decay: embeddings decay^(L+1), layer i decay^(L-i), the top 1. */
TEST(bert_layer_decay_scales) {
    BertConfig cfg = ref_config();
    Bert *m = bert_create(&cfg, &(BertHeads){.num_labels = 2}, 1);
    bert_set_layer_decay(m, 0.5);
    const struct { const char *name; float scale; } want[] = {
        {"bert.embeddings.word_embeddings.weight", 0.125f}, {"bert.embeddings.LayerNorm.bias", 0.125f},
        {"bert.encoder.layer.0.attention.self.query.weight", 0.25f},
        {"bert.encoder.layer.1.output.LayerNorm.weight", 0.5f}, {"bert.pooler.dense.weight", 1.0f},
        {"classifier.bias", 1.0f},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        int h = params_find(m->params, want[i].name);
        CHECK_MSG(h >= 0 && params_tensor(m->params, h)->lr_scale == want[i].scale, "%s: scale %g, want %g",
                  want[i].name, h >= 0 ? params_tensor(m->params, h)->lr_scale : -1.0, want[i].scale);
    }
    bert_set_layer_decay(m, 1.0);
    for (int h = 0; h < params_num_tensors(m->params); h++) CHECK(params_tensor(m->params, h)->lr_scale == 1.0f);
    bert_free(m);
}

/* ---- the pair-features head (bert_pair_head.c) ---- */

/* Three pairs: with F = 5 the joined pairs are rows 0-2, texts a rows 3-5,
 * texts b rows 6-8; with F = 4 only the texts. */
enum { PN = 3 };
typedef struct {
    Bert *m;
    int F, B, ids[3 * PN * RT], segments[3 * PN * RT], lengths[3 * PN], labels[PN];
    float loss;
} PairCase;

static void pair_case_init(PairCase *c, int F) {
    BertConfig cfg = ref_config();
    c->F = F;
    c->B = (F == 5 ? 3 : 2) * PN;
    c->m = bert_create(&cfg, &(BertHeads){.num_labels = 3, .pair_features = F}, 4);
    ref_randomize(c->m, 400);
    bert_reserve(c->m, c->B, RT, 0, 1);
    Rng r;
    rng_seed(&r, 8);
    for (int i = 0; i < c->B; i++) {
        c->lengths[i] = 3 + (int)rng_below(&r, RT - 3);
        for (int t = 0; t < RT; t++) {
            c->ids[i * RT + t] = 1 + (int)rng_below(&r, (uint32_t)cfg.vocab_size - 1);
            c->segments[i * RT + t] = F == 5 && i < PN && t > c->lengths[i] / 2;
        }
    }
    for (int i = 0; i < PN; i++) c->labels[i] = i % 3;
}

static void pair_forward(void *ctx) {
    PairCase *c = ctx;
    bert_forward(c->m, &(BertBatch){c->B, RT, c->ids, c->segments, c->lengths}, NULL);
    c->loss = test_bert_pair_loss(c->m, PN, c->labels, NULL, 0);
}

static void pair_backward(void *ctx, const float *dout) {
    PairCase *c = ctx;
    params_zero_grad(c->m->params);
    bert_forward(c->m, &(BertBatch){c->B, RT, c->ids, c->segments, c->lengths}, NULL);
    test_bert_pair_loss(c->m, PN, c->labels, NULL, 1);
    bert_backward(c->m);
    Params *p = c->m->params;
    for (size_t i = 0; i < p->total; i++) p->grad[i] *= dout[0];
}

/* Finite differences through the features, the mean pooling and the encoder
 * (F = 4). eps 1e-3: |u - v| has a kink at 0, and with eps 1e-2 a few of the
 * 96 differences cross it; padding does not matter. With so small a step the
 * float loss's rounding (a few ulp of ~1.1, ~3e-7, over 2 eps) is ~1.5e-4 of
 * every difference, so the absolute floor is 3e-4 (floor 3e-2 x rtol), not
 * the default 1e-4: on an Intel Xeon (family 6, model 207) two elements with
 * gradients of ~6e-4 differed by 1.5e-4 through rounding alone. */
TEST(bert_pair_features_gradcheck) {
    PairCase c;
    pair_case_init(&c, 4);
    Bert *m = c.m;
    int C = m->cfg.hidden_size;
    GradCheck g;
    gradcheck_init(&g, &c, pair_forward, pair_backward, &c.loss, 1);
    g.eps = 1e-3f;
    g.floor = 3e-2f;
    gradcheck_add(&g, "classifier.weight", m->w.cls_w, m->g.cls_w, 3L * 4 * C);
    gradcheck_add(&g, "classifier.bias", m->w.cls_b, m->g.cls_b, 3);
    gradcheck_add(&g, "word_embeddings", m->w.word_emb, m->g.word_emb, (long)m->cfg.vocab_size * C);
    gradcheck_add(&g, "layer.1.output.dense", m->w.layers[1].ffn.w_out, m->g.layers[1].ffn.w_out,
                  (long)C * m->cfg.intermediate_size);
    gradcheck_expect(&g, "features loss");
    float before = (pair_forward(&c), c.loss);
    int last = c.B - 1;
    if (c.lengths[last] < RT) {
        c.ids[last * RT + RT - 1] ^= 1;   /* a padded position */
        pair_forward(&c);
        CHECK_MSG(c.loss == before, "padding changed the loss: %g vs %g", c.loss, before);
    }
    bert_free(m);
}

/* The head alone on hidden states and pooled vectors set by hand, every
 * |u - v| at least 0.2 (far from the kink): finite differences w.r.t. the
 * hidden states, the pooled [CLS] (F = 5) and the classifier. */
static PairCase *head_case;
static void head_forward(void *ctx) {
    PairCase *c = ctx;
    c->loss = test_bert_pair_loss(c->m, PN, c->labels, NULL, 0);
}
static void head_backward(void *ctx, const float *dout) {
    PairCase *c = ctx;
    BertWork *k = c->m->work;
    long N = (long)c->B * RT * c->m->cfg.hidden_size;
    memset(k->dhidden, 0, sizeof(float) * (size_t)N);
    memset(k->dpooled, 0, sizeof(float) * (size_t)c->B * c->m->cfg.hidden_size);
    params_zero_grad(c->m->params);
    test_bert_pair_loss(c->m, PN, c->labels, NULL, 1);
    for (long i = 0; i < N; i++) k->dhidden[i] *= dout[0];
    for (long i = 0; i < (long)c->B * c->m->cfg.hidden_size; i++) k->dpooled[i] *= dout[0];
    for (size_t i = 0; i < c->m->params->total; i++) c->m->params->grad[i] *= dout[0];
}

static void pair_head_gradcheck(int F) {
    PairCase c;
    pair_case_init(&c, F);
    head_case = &c;
    Bert *m = c.m;
    int C = m->cfg.hidden_size, first = F == 5 ? PN : 0;
    bert_forward(m, &(BertBatch){c.B, RT, c.ids, c.segments, c.lengths}, NULL);
    BertWork *k = m->work;
    float *h = k->ffn[m->cfg.num_layers - 1].out;
    Rng r;
    rng_seed(&r, 12);
    for (int i = 0; i < c.B; i++)
        for (int t = 0; t < RT; t++)
            for (int e = 0; e < C; e++) {
                /* Second texts sit 0.2 to 0.6 above or below the first texts in every channel. */
                float base = (float)((e * 7 + i % PN) % 5) * 0.3f - 0.6f;
                float off = (i >= first + PN) ? ((e + i) % 2 ? 0.4f : -0.4f) : 0.0f;
                h[((long)i * RT + t) * C + e] = base + off + 0.2f * (rng_uniform(&r) - 0.5f);
            }
    GradCheck g;
    gradcheck_init(&g, &c, head_forward, head_backward, &c.loss, 1);
    gradcheck_add(&g, "hidden", h, k->dhidden, (long)c.B * RT * C);
    if (F == 5) gradcheck_add(&g, "pooled", k->pooled, k->dpooled, (long)c.B * C);
    gradcheck_add(&g, "classifier.weight", m->w.cls_w, m->g.cls_w, 3L * F * C);
    gradcheck_expect(&g, F == 5 ? "cross+features head" : "features head");
    bert_free(m);
}

TEST(bert_pair_features_head_gradcheck) { pair_head_gradcheck(4); }
TEST(bert_pair_cross_features_head_gradcheck) { pair_head_gradcheck(5); }

/* "layer_norm_position" and "embedding_size" read, write back and refuse bad values. */
TEST(bert_config_pre_ln_and_embedding_size_json) {
    cJSON *j = cJSON_Parse("{\"vocab_size\": 100, \"hidden_size\": 32, \"num_hidden_layers\": 2, "
                           "\"num_attention_heads\": 4, \"layer_norm_position\": \"pre\", \"embedding_size\": 16}");
    BertConfig c;
    CHECK(bert_config_from_json(j, "t", &c) == 0 && c.pre_ln == 1 && bert_embedding_size(&c) == 16);
    cJSON *back = bert_config_to_json(&c);
    BertConfig c2;
    CHECK(bert_config_from_json(back, "back", &c2) == 0 && c2.pre_ln == 1 && c2.embedding_size == 16);
    cJSON_Delete(back);
    cJSON_ReplaceItemInObject(j, "layer_norm_position", cJSON_CreateString("middle"));
    StderrCapture cap;
    stderr_capture_begin(&cap);
    int rc = bert_config_from_json(j, "t", &c);
    char *err = stderr_capture_end(&cap);
    CHECK_MSG(rc == -1 && strstr(err, "layer_norm_position"), "%s", err);
    free(err);
    cJSON_Delete(j);
}
