/* test_electra.c — ELECTRA pretraining (pretrain/electra.c, models/bert/bert_rtd.c,
 * narrow embeddings with a projection, shared embedding tables):
 *   - one full step (generator MLM, corrupted input, discriminator) against a
 *     PyTorch reference written from plain torch ops (tests/ref/electra_ref.py):
 *     both losses, the generator's MLM logits, the discriminator's logits and
 *     the gradient of every parameter of both models, with the generator
 *     projecting E -> C_g and with the discriminator projecting E -> C;
 *   - finite differences of the replaced-token detection head and of the
 *     embedding projection through the whole encoder;
 *   - the sampler draws from the softmax (frequencies within 5 sigma) and
 *     independently of the thread count. */
#include "tests/test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/rng.h"
#include "core/threads.h"
#include "models/bert/bert.h"
#include "pretrain/electra.h"
#include "tests/gradcheck.h"
#include "tests/torchref.h"

enum { EB = 3, ET = 10, ENM = 7 };
#define EDW 50.0f

/* Weights away from the init, as test_bert does, so every path carries signal. */
static void randomize(Params *p, uint64_t seed) {
    for (int h = 0; h < params_num_tensors(p); h++) {
        const ParamTensor *t = params_tensor(p, h);
        float *x = params_data(p, h);
        if (strstr(t->name, "LayerNorm.weight")) gradcheck_fill(x, t->numel, 0.8f, 1.2f, seed + (uint64_t)h);
        else if (t->ndim == 1) gradcheck_fill(x, t->numel, -0.1f, 0.1f, seed + (uint64_t)h);
        else gradcheck_fill(x, t->numel, strstr(t->name, "embeddings.") ? -0.5f : -0.25f,
                            strstr(t->name, "embeddings.") ? 0.5f : 0.25f, seed + (uint64_t)h);
    }
}

static BertConfig disc_config(int E, int C, int alibi) {
    return (BertConfig){.vocab_size = 60, .hidden_size = C, .num_layers = 2, .num_heads = 2,
                        .intermediate_size = 2 * C, .max_position = 16, .type_vocab_size = 2,
                        .layer_norm_eps = 1e-12f, .embedding_size = E, .alibi = alibi};
}

static BertConfig gen_config(const BertConfig *d, int C) {
    BertConfig g = *d;
    g.hidden_size = C;
    g.num_heads = 2;
    g.intermediate_size = 4 * C;
    g.num_layers = 1;
    return g;
}

/* A batch with [MASK] (id 4) and kept tokens at the targets. */
typedef struct {
    int ids[EB * ET], lengths[EB], positions[ENM], labels[ENM];
} ElectraBatch;

static void make_batch(ElectraBatch *b, MlmBatch *mb, int V) {
    Rng r;
    rng_seed(&r, 9);
    const int lengths[EB] = {10, 6, 4};
    for (int i = 0; i < EB; i++) {
        b->lengths[i] = lengths[i];
        for (int t = 0; t < ET; t++) b->ids[i * ET + t] = t < lengths[i] ? 5 + (int)rng_below(&r, (uint32_t)V - 5) : 0;
    }
    const int pos[ENM] = {1, 3, 4, 8, ET + 2, ET + 5, 2 * ET + 1};
    for (int i = 0; i < ENM; i++) {
        b->positions[i] = pos[i];
        b->labels[i] = b->ids[pos[i]];
        if (i % 3 != 2) b->ids[pos[i]] = 4;   /* [MASK]; every third target kept */
    }
    *mb = (MlmBatch){.B = EB, .T = ET, .B_max = EB, .T_max = ET, .max_masked = ENM, .ids = b->ids,
                     .lengths = b->lengths, .positions = b->positions, .labels = b->labels, .n_masked = ENM};
}

static double rel_err(const float *a, const float *b, long n) {
    double scale = 0.0;
    for (long i = 0; i < n; i++) scale = fabs(b[i]) > scale ? fabs(b[i]) : scale;
    return torchref_max_diff(a, b, n) / (scale > 0 ? scale : 1e-30);
}

/* Every tensor of p as reference inputs (names prefixed) and gradient outputs. */
typedef struct {
    RefTensor in[160], out[160];
    int ni, no;
    char names[160][PARAM_NAME_MAX + 16], gnames[160][PARAM_NAME_MAX + 24];
    float *grads[160];
    const Params *owner[160];
    int handle[160];
    int ng;
} RefSet;

static void refset_add_params(RefSet *s, const Params *p, const char *prefix) {
    for (int h = 0; h < params_num_tensors(p); h++) {
        const ParamTensor *t = params_tensor(p, h);
        int k = s->ng++;
        snprintf(s->names[k], sizeof s->names[k], "%s%s", prefix, t->name);
        snprintf(s->gnames[k], sizeof s->gnames[k], "grad.%s%s", prefix, t->name);
        s->in[s->ni++] = (RefTensor){s->names[k], params_data(p, h), t->numel};
        s->grads[k] = calloc((size_t)t->numel, sizeof(float));
        s->out[s->no++] = (RefTensor){s->gnames[k], s->grads[k], t->numel};
        s->owner[k] = p;
        s->handle[k] = h;
    }
}

static void electra_ref_case(int E, int C, int CG, int alibi) {
    BertConfig dc = disc_config(E, C, alibi), gc = gen_config(&dc, CG);
    Bert *disc = bert_create(&dc, &(BertHeads){.rtd = 1}, 1);
    randomize(disc->params, 100);
    bert_reserve(disc, EB, ET, ENM, 1);
    Electra e;
    electra_init(&e, &gc, disc, EDW, EB, ET, ENM, 7, 3);
    randomize(e.gen->params, 200);
    ElectraBatch eb;
    MlmBatch mb;
    make_batch(&eb, &mb, dc.vocab_size);
    params_zero_grad(disc->params);
    params_zero_grad(e.gen->params);
    ElectraStats st;
    float total = electra_forward_backward(&e, disc, &mb, NULL, &st);

    RefSet *s = calloc(1, sizeof *s);
    refset_add_params(s, disc->params, "");
    refset_add_params(s, e.gen->params, ELECTRA_GEN_PREFIX);
    float fids[EB * ET], flen[EB], fpos[ENM], flab[ENM], fsam[ENM];
    for (int i = 0; i < EB * ET; i++) fids[i] = (float)eb.ids[i];
    for (int i = 0; i < EB; i++) flen[i] = (float)eb.lengths[i];
    for (int i = 0; i < ENM; i++) {
        fpos[i] = (float)eb.positions[i];
        flab[i] = (float)eb.labels[i];
        fsam[i] = (float)e.sampled[i];
    }
    s->in[s->ni++] = (RefTensor){"ids", fids, EB * ET};
    s->in[s->ni++] = (RefTensor){"lengths", flen, EB};
    s->in[s->ni++] = (RefTensor){"positions", fpos, ENM};
    s->in[s->ni++] = (RefTensor){"mlm_labels", flab, ENM};
    s->in[s->ni++] = (RefTensor){"sampled", fsam, ENM};
    int V = dc.vocab_size;
    float *gen_logits = malloc(sizeof(float) * ENM * (size_t)V), disc_logits[EB * ET], losses[3];
    s->out[s->no++] = (RefTensor){"gen_logits", gen_logits, (long)ENM * V};
    s->out[s->no++] = (RefTensor){"disc_logits", disc_logits, EB * ET};
    s->out[s->no++] = (RefTensor){"losses", losses, 3};
    char args[200];
    snprintf(args, sizeof args, "%d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %g %d", V, bert_embedding_size(&dc), C,
             dc.num_layers, dc.num_heads, dc.intermediate_size, CG, gc.num_layers, gc.num_heads,
             gc.intermediate_size, dc.max_position, dc.type_vocab_size, EB, ET, ENM, (double)EDW, alibi);
    if (torchref_run("electra_ref.py", args, s->in, s->ni, s->out, s->no) == 1) {
        /* Some samples must differ from the originals and some targets must
         * survive, or the discriminator's labels would be all one class. */
        int n_replaced = 0;
        for (int i = 0; i < ENM; i++) n_replaced += e.sampled[i] != eb.labels[i];
        CHECK_MSG(n_replaced > 0, "no target was replaced");
        CHECK_NEAR(st.gen_loss, losses[0], 1e-5 * losses[0]);
        CHECK_NEAR(st.disc_loss, losses[1], 1e-5 * losses[1]);
        CHECK_NEAR(total, losses[2], 1e-5 * losses[2]);
        double err = rel_err(bert_mlm_logits(e.gen), gen_logits, (long)ENM * V);
        CHECK_MSG(err < 1e-5, "E %d C %d: generator logits rel err %g", E, C, err);
        err = rel_err(bert_rtd_logits(disc), disc_logits, EB * ET);
        CHECK_MSG(err < 1e-5, "E %d C %d: discriminator logits rel err %g", E, C, err);
        for (int k = 0; k < s->ng; k++) {
            const ParamTensor *t = params_tensor(s->owner[k], s->handle[k]);
            const float *mine = params_grad(s->owner[k], s->handle[k]);
            if (strstr(t->name, "attention.self.key.bias")) {   /* exactly 0 up to rounding (test_bert) */
                float zero[64] = {0};
                CHECK_MSG(torchref_max_diff(mine, zero, t->numel) < 1e-6, "%s not ~0", s->names[k]);
                continue;
            }
            err = rel_err(mine, s->grads[k], t->numel);
            CHECK_MSG(err <= 1e-4, "E %d C %d: gradient of %s: rel err %g", E, C, s->names[k], err);
        }
    }
    for (int k = 0; k < s->ng; k++) free(s->grads[k]);
    free(s);
    free(gen_logits);
    electra_free(&e);
    bert_free(disc);
}

/* The generator projects the shared 32-wide tables to 16. */
TEST(electra_step_matches_torch) { electra_ref_case(32, 32, 16, 0); }
/* ELECTRA-Small's shape in miniature: the discriminator projects E 16 -> C 32; with ALiBi. */
TEST(electra_step_matches_torch_projected_alibi) { electra_ref_case(16, 32, 16, 1); }

/* ---- finite differences: the detection head and the projection ---- */

typedef struct {
    Bert *m;
    int ids[EB * ET], lengths[EB];
    unsigned char replaced[EB * ET];
    float loss;
} RtdCase;

static void rtd_forward(void *ctx) {
    RtdCase *c = ctx;
    bert_forward(c->m, &(BertBatch){EB, ET, c->ids, NULL, c->lengths}, NULL);
    c->loss = bert_rtd_loss(c->m, c->replaced, 1.0f, 0, NULL);
}

static GradCheck *rtd_check;
static void rtd_backward(void *ctx, const float *dout) {
    RtdCase *c = ctx;
    params_zero_grad(c->m->params);
    bert_forward(c->m, &(BertBatch){EB, ET, c->ids, NULL, c->lengths}, NULL);
    bert_rtd_loss(c->m, c->replaced, dout[0], 1, NULL);   /* the scale is the checker's loss weight */
    bert_backward(c->m);
}

TEST(electra_rtd_head_and_projection_gradcheck) {
    BertConfig cfg = disc_config(16, 32, 0);
    RtdCase c;
    c.m = bert_create(&cfg, &(BertHeads){.rtd = 1}, 4);
    randomize(c.m->params, 300);
    bert_reserve(c.m, EB, ET, 0, 1);
    Rng r;
    rng_seed(&r, 2);
    const int lengths[EB] = {10, 6, 4};
    for (int i = 0; i < EB; i++) {
        c.lengths[i] = lengths[i];
        for (int t = 0; t < ET; t++) {
            c.ids[i * ET + t] = (int)rng_below(&r, (uint32_t)cfg.vocab_size);
            c.replaced[i * ET + t] = rng_below(&r, 3) == 0;
        }
    }
    Bert *m = c.m;
    GradCheck g;
    gradcheck_init(&g, &c, rtd_forward, rtd_backward, &c.loss, 1);
    rtd_check = &g;
    gradcheck_add(&g, "rtd dense", m->w.rtd_w, m->g.rtd_w, 32L * 32);
    gradcheck_add(&g, "rtd dense bias", m->w.rtd_b, m->g.rtd_b, 32);
    gradcheck_add(&g, "rtd prediction", m->w.rtd_out_w, m->g.rtd_out_w, 32);
    gradcheck_add(&g, "rtd prediction bias", m->w.rtd_out_b, m->g.rtd_out_b, 1);
    gradcheck_add(&g, "embeddings_project", m->w.emb_proj_w, m->g.emb_proj_w, 32L * 16);
    gradcheck_add(&g, "embeddings_project bias", m->w.emb_proj_b, m->g.emb_proj_b, 32);
    gradcheck_add(&g, "word_embeddings", m->w.word_emb, m->g.word_emb, 60L * 16);
    gradcheck_add(&g, "embeddings.LayerNorm.weight", m->w.emb_ln_g, m->g.emb_ln_g, 16);
    gradcheck_add(&g, "layer.1.qkv", m->w.layers[1].attn.w_qkv, m->g.layers[1].attn.w_qkv, 3L * 32 * 32);
    gradcheck_expect(&g, "replaced-token detection loss");
    /* Padding takes no part: changing a padded id changes nothing. */
    float before = (rtd_forward(&c), c.loss);
    c.ids[2 * ET + 7] = (c.ids[2 * ET + 7] + 1) % cfg.vocab_size;
    c.replaced[2 * ET + 7] ^= 1;
    rtd_forward(&c);
    CHECK_MSG(c.loss == before, "padding changed the loss: %g vs %g", c.loss, before);
    bert_free(c.m);
}

/* ---- sampling ---- */

TEST(electra_sampler_follows_softmax) {
    enum { V = 5, N = 4000, ROUNDS = 50 };
    const float row[V] = {1.0f, -2.0f, 0.5f, 2.0f, 0.0f};
    float *logits = malloc(sizeof(float) * N * V), *u = malloc(sizeof(float) * N);
    for (int i = 0; i < N; i++) memcpy(logits + (long)i * V, row, sizeof row);
    double p[V], z = 0;
    for (int v = 0; v < V; v++) z += (p[v] = exp(row[v]));
    long count[V] = {0};
    int *out = malloc(sizeof(int) * N), *out1 = malloc(sizeof(int) * N);
    Rng r;
    rng_seed(&r, 11);
    for (int k = 0; k < ROUNDS; k++) {
        electra_sample(out, logits, N, V, &r, u);
        for (int i = 0; i < N; i++) count[out[i]]++;
    }
    long total = (long)N * ROUNDS;
    for (int v = 0; v < V; v++) {
        double q = p[v] / z, sd = sqrt(total * q * (1 - q));
        CHECK_MSG(fabs((double)count[v] - total * q) < 5 * sd, "token %d drawn %ld times, expected %.0f +- %.0f", v,
                  count[v], total * q, sd);
    }
    /* The same draws on one thread and on two. */
    Rng a, b;
    rng_seed(&a, 5);
    rng_seed(&b, 5);
    int saved = threads_count();
    threads_init(1);
    electra_sample(out1, logits, N, V, &a, u);
    threads_init(2);
    electra_sample(out, logits, N, V, &b, u);
    threads_init(saved);
    CHECK(memcmp(out, out1, sizeof(int) * N) == 0);
    free(out);
    free(out1);
    free(u);
    free(logits);
}
