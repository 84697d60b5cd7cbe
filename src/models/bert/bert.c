/* bert.c — creating a BERT model: its parameters under Hugging Face's names in
 * one arena, the pointer structs over data and gradients, and the workspace
 * (bert_reserve). See bert.h for the model and bert_work.h for the workspace. */
#include "models/bert/bert.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "models/bert/bert_work.h"
#include "nn/attention.h"

#define BERT_INIT_STD 0.02f   /* BERT's initializer_range */

/* Handles of one layer's tensors, in declaration order. */
typedef struct {
    int qw, kw, vw, qb, kb, vb, ow, ob, ln1g, ln1b, iw, ib, o2w, o2b, ln2g, ln2b;
} BertLayerHandles;

/* Matrix N(0, 0.02), bias 0 (no decay), LayerNorm 1 / 0 (no decay). */
#define BERT_MATRIX(p, name, r, c) params_declare(p, name, PARAM_SHAPE(r, c), PARAM_INIT_NORMAL(BERT_INIT_STD), 0)
#define BERT_BIAS(p, name, n) params_declare(p, name, PARAM_SHAPE(n), PARAM_INIT_ZEROS, PARAM_NO_DECAY)
#define BERT_LN_W(p, name, n) params_declare(p, name, PARAM_SHAPE(n), PARAM_INIT_ONES, PARAM_NO_DECAY)

static BertLayerHandles bert_declare_layer(Params *p, int l, int C, int FF) {
    BertLayerHandles h;
    char n[PARAM_NAME_MAX];
#define BERT_NAME(suffix) (snprintf(n, sizeof n, "bert.encoder.layer.%d.%s", l, suffix), n)
    /* query, key, value weights then their biases: adjacent -> one (3C, C) block
     * and one (3C) bias (see bert.h). */
    h.qw = BERT_MATRIX(p, BERT_NAME("attention.self.query.weight"), C, C);
    h.kw = BERT_MATRIX(p, BERT_NAME("attention.self.key.weight"), C, C);
    h.vw = BERT_MATRIX(p, BERT_NAME("attention.self.value.weight"), C, C);
    h.qb = BERT_BIAS(p, BERT_NAME("attention.self.query.bias"), C);
    h.kb = BERT_BIAS(p, BERT_NAME("attention.self.key.bias"), C);
    h.vb = BERT_BIAS(p, BERT_NAME("attention.self.value.bias"), C);
    h.ow = BERT_MATRIX(p, BERT_NAME("attention.output.dense.weight"), C, C);
    h.ob = BERT_BIAS(p, BERT_NAME("attention.output.dense.bias"), C);
    h.ln1g = BERT_LN_W(p, BERT_NAME("attention.output.LayerNorm.weight"), C);
    h.ln1b = BERT_BIAS(p, BERT_NAME("attention.output.LayerNorm.bias"), C);
    h.iw = BERT_MATRIX(p, BERT_NAME("intermediate.dense.weight"), FF, C);
    h.ib = BERT_BIAS(p, BERT_NAME("intermediate.dense.bias"), FF);
    h.o2w = BERT_MATRIX(p, BERT_NAME("output.dense.weight"), C, FF);
    h.o2b = BERT_BIAS(p, BERT_NAME("output.dense.bias"), C);
    h.ln2g = BERT_LN_W(p, BERT_NAME("output.LayerNorm.weight"), C);
    h.ln2b = BERT_BIAS(p, BERT_NAME("output.LayerNorm.bias"), C);
#undef BERT_NAME
    return h;
}

/* All handles of the model; -1 for an absent head (and for the embedding
 * tables of a model that shares another's). */
typedef struct {
    int word, pos, type, emb_lng, emb_lnb, proj_w, proj_b;
    BertLayerHandles *layers;
    int pool_w, pool_b, mlm_w, mlm_b, mlm_lng, mlm_lnb, mlm_bias, cls_w, cls_b;
    int rtd_w, rtd_b, rtd_out_w, rtd_out_b, final_lng, final_lnb;
} BertHandles;

static float *bert_ptr(const Params *p, int h) { return h < 0 ? NULL : params_data(p, h); }

/* The pointer struct over the data (the gradients: bert_bind_grads). */
static void bert_bind(Bert *m, const BertHandles *h) {
    BertWeights *w = &m->w;
    const Params *p = m->params;
    int L = m->cfg.num_layers;
    const BertWeights *shared = m->emb_donor ? &m->emb_donor->w : NULL;
    w->word_emb = shared ? shared->word_emb : bert_ptr(p, h->word);
    w->pos_emb = shared ? shared->pos_emb : bert_ptr(p, h->pos);
    w->type_emb = shared ? shared->type_emb : bert_ptr(p, h->type);
    w->emb_ln_g = shared ? shared->emb_ln_g : bert_ptr(p, h->emb_lng);
    w->emb_ln_b = shared ? shared->emb_ln_b : bert_ptr(p, h->emb_lnb);
    w->emb_proj_w = bert_ptr(p, h->proj_w);
    w->emb_proj_b = bert_ptr(p, h->proj_b);
    if (!w->layers) w->layers = xcalloc((size_t)L, sizeof *w->layers);
    for (int l = 0; l < L; l++) {
        const BertLayerHandles *lh = &h->layers[l];
        BertLayer *ly = &w->layers[l];
        ly->attn = (BlockAttnParams){.w_qkv = bert_ptr(p, lh->qw), .b_qkv = bert_ptr(p, lh->qb),
                                  .w_o = bert_ptr(p, lh->ow), .b_o = bert_ptr(p, lh->ob),
                                  .ln_g = bert_ptr(p, lh->ln1g), .ln_b = bert_ptr(p, lh->ln1b)};
        ly->ffn = (BlockFfnParams){.w_in = bert_ptr(p, lh->iw), .b_in = bert_ptr(p, lh->ib),
                                .w_out = bert_ptr(p, lh->o2w), .b_out = bert_ptr(p, lh->o2b),
                                .ln_g = bert_ptr(p, lh->ln2g), .ln_b = bert_ptr(p, lh->ln2b)};
    }
    w->pool_w = bert_ptr(p, h->pool_w);
    w->pool_b = bert_ptr(p, h->pool_b);
    w->mlm_w = bert_ptr(p, h->mlm_w);
    w->mlm_b = bert_ptr(p, h->mlm_b);
    w->mlm_ln_g = bert_ptr(p, h->mlm_lng);
    w->mlm_ln_b = bert_ptr(p, h->mlm_lnb);
    w->mlm_bias = bert_ptr(p, h->mlm_bias);
    w->cls_w = bert_ptr(p, h->cls_w);
    w->cls_b = bert_ptr(p, h->cls_b);
    w->final_ln_g = bert_ptr(p, h->final_lng);
    w->final_ln_b = bert_ptr(p, h->final_lnb);
    w->rtd_w = bert_ptr(p, h->rtd_w);
    w->rtd_b = bert_ptr(p, h->rtd_b);
    w->rtd_out_w = bert_ptr(p, h->rtd_out_w);
    w->rtd_out_b = bert_ptr(p, h->rtd_out_b);
}

/* The fused QKV GEMM reads query|key|value as one block: verify the arena put
 * them back to back (it does when C % 16 == 0, which the config check requires). */
static void bert_check_fused(const Params *p, const BertLayerHandles *h, int C) {
    long CC = (long)C * C;
    const float *qw = params_data(p, h->qw), *qb = params_data(p, h->qb);
    if (params_data(p, h->kw) != qw + CC || params_data(p, h->vw) != qw + 2 * CC ||
        params_data(p, h->kb) != qb + C || params_data(p, h->vb) != qb + 2 * C)
        DIE("bert: query/key/value tensors are not contiguous in the arena (C = %d)", C);
}

static Bert *bert_create_impl(const BertConfig *cfg, const BertHeads *heads, uint64_t seed, const Bert *donor) {
    if (bert_config_check(cfg, NULL) != 0) DIE("bert_create: invalid config (check it before creating)");
    Bert *m = xcalloc(1, sizeof *m);
    m->cfg = *cfg;
    m->emb_donor = donor;
    m->heads = heads ? *heads : (BertHeads){0};
    if (m->heads.num_labels < 0) DIE("bert_create: num_labels %d", m->heads.num_labels);
    if (m->heads.num_labels > 0) m->heads.pooler = 1;
    if (cfg->alibi) {
        m->alibi_slopes = xmalloc((size_t)cfg->num_heads * sizeof *m->alibi_slopes);
        attention_alibi_slopes(m->alibi_slopes, cfg->num_heads);
    }
    int V = cfg->vocab_size, C = cfg->hidden_size, L = cfg->num_layers, FF = cfg->intermediate_size;
    int E = bert_embedding_size(cfg);
    Params *p = m->params = params_create();
    BertHandles h;
    memset(&h, -1, sizeof h);
    if (!donor) {
        h.word = BERT_MATRIX(p, "bert.embeddings.word_embeddings.weight", V, E);
        h.pos = BERT_MATRIX(p, "bert.embeddings.position_embeddings.weight", cfg->max_position, E);
        h.type = BERT_MATRIX(p, "bert.embeddings.token_type_embeddings.weight", cfg->type_vocab_size, E);
        h.emb_lng = BERT_LN_W(p, "bert.embeddings.LayerNorm.weight", E);
        h.emb_lnb = BERT_BIAS(p, "bert.embeddings.LayerNorm.bias", E);
    }
    if (E != C) {
        h.proj_w = BERT_MATRIX(p, "bert.embeddings_project.weight", C, E);
        h.proj_b = BERT_BIAS(p, "bert.embeddings_project.bias", C);
    }
    h.layers = xmalloc((size_t)L * sizeof *h.layers);
    for (int l = 0; l < L; l++) h.layers[l] = bert_declare_layer(p, l, C, FF);
    if (cfg->pre_ln) {
        h.final_lng = BERT_LN_W(p, "bert.encoder.LayerNorm.weight", C);
        h.final_lnb = BERT_BIAS(p, "bert.encoder.LayerNorm.bias", C);
    }
    if (m->heads.pooler) {
        h.pool_w = BERT_MATRIX(p, "bert.pooler.dense.weight", C, C);
        h.pool_b = BERT_BIAS(p, "bert.pooler.dense.bias", C);
    }
    if (m->heads.mlm) {
        /* The transform maps to E: the decoder is the (V, E) word table. */
        h.mlm_w = BERT_MATRIX(p, "cls.predictions.transform.dense.weight", E, C);
        h.mlm_b = BERT_BIAS(p, "cls.predictions.transform.dense.bias", E);
        h.mlm_lng = BERT_LN_W(p, "cls.predictions.transform.LayerNorm.weight", E);
        h.mlm_lnb = BERT_BIAS(p, "cls.predictions.transform.LayerNorm.bias", E);
        h.mlm_bias = BERT_BIAS(p, "cls.predictions.bias", V);
    }
    if (m->heads.rtd) {
        h.rtd_w = BERT_MATRIX(p, "discriminator_predictions.dense.weight", C, C);
        h.rtd_b = BERT_BIAS(p, "discriminator_predictions.dense.bias", C);
        h.rtd_out_w = BERT_MATRIX(p, "discriminator_predictions.dense_prediction.weight", 1, C);
        h.rtd_out_b = BERT_BIAS(p, "discriminator_predictions.dense_prediction.bias", 1);
    }
    if (m->heads.pair_features && (m->heads.pair_features < 4 || m->heads.pair_features > 5 || m->heads.num_labels < 2))
        DIE("bert_create: pair_features %d with %d labels", m->heads.pair_features, m->heads.num_labels);
    if (m->heads.num_labels > 0) {
        int in = m->heads.pair_features ? m->heads.pair_features * C : C;   /* the classifier's input */
        h.cls_w = BERT_MATRIX(p, "classifier.weight", m->heads.num_labels, in);
        h.cls_b = BERT_BIAS(p, "classifier.bias", m->heads.num_labels);
    }
    Rng rng;
    rng_seed(&rng, seed);
    params_allocate(p, &rng);
    for (int l = 0; l < L; l++) bert_check_fused(p, &h.layers[l], C);
    bert_bind(m, &h);
    free(h.layers);
    return m;
}

Bert *bert_create(const BertConfig *cfg, const BertHeads *heads, uint64_t seed) {
    return bert_create_impl(cfg, heads, seed, NULL);
}

Bert *bert_create_sharing(const BertConfig *cfg, const BertHeads *heads, uint64_t seed, const Bert *donor) {
    const BertConfig *d = &donor->cfg;
    if (cfg->vocab_size != d->vocab_size || bert_embedding_size(cfg) != bert_embedding_size(d) ||
        cfg->max_position != d->max_position || cfg->type_vocab_size != d->type_vocab_size)
        DIE("bert_create_sharing: embedding shapes differ from the donor's");
    if (donor->emb_donor) DIE("bert_create_sharing: the donor shares another model's embeddings");
    return bert_create_impl(cfg, heads, seed, donor);
}

/* Every float pointer of BertWeights / BlockAttnParams / BlockFfnParams, for walking
 * the structs field by field. */
#define BERT_EMB_FIELDS(X) X(word_emb) X(pos_emb) X(type_emb) X(emb_ln_g) X(emb_ln_b)
#define BERT_TOP_FIELDS(X) X(emb_proj_w) X(emb_proj_b) X(final_ln_g) X(final_ln_b) X(pool_w) X(pool_b) \
    X(mlm_w) X(mlm_b) X(mlm_ln_g) X(mlm_ln_b) X(mlm_bias) X(cls_w) X(cls_b) X(rtd_w) X(rtd_b) X(rtd_out_w) X(rtd_out_b)
#define BERT_SUB_FIELDS(X) X(w_qkv) X(b_qkv) X(w_o) X(b_o) X(ln_g) X(ln_b)
#define BERT_FFN_FIELDS(X) X(w_in) X(b_in) X(w_out) X(b_out) X(ln_g) X(ln_b)

/* The gradient mirror has the data's offsets: m->g is m->w moved from the data
 * arena to the gradient arena, field by field (absent heads stay NULL). */
static float *bert_grad_of(const Bert *m, const float *data) {
    return data ? m->params->grad + (data - m->params->data) : NULL;
}

static void bert_bind_grads(Bert *m) {
    params_grad_enable(m->params);
    const BertWeights *w = &m->w;
    BertWeights *g = &m->g;
    if (!g->layers) g->layers = xcalloc((size_t)m->cfg.num_layers, sizeof *g->layers);
#define BERT_MIRROR(f) g->f = bert_grad_of(m, w->f);
    BERT_TOP_FIELDS(BERT_MIRROR)
#undef BERT_MIRROR
    if (m->head) bert_attach_head(m, m->head);   /* its gradients live in its own arena */
    /* Shared embedding tables: their gradients live in the donor's arena. */
    const BertWeights *dg = m->emb_donor ? &m->emb_donor->g : NULL;
    if (dg && !dg->word_emb) DIE("bert: reserve the embedding donor for training before the model sharing them");
#define BERT_MIRROR_EMB(f) g->f = dg ? dg->f : bert_grad_of(m, w->f);
    BERT_EMB_FIELDS(BERT_MIRROR_EMB)
#undef BERT_MIRROR_EMB
    for (int l = 0; l < m->cfg.num_layers; l++) {
        const BertLayer *a = &w->layers[l];
        BertLayer *b = &g->layers[l];
#define BERT_MIRROR_ATTN(f) b->attn.f = bert_grad_of(m, a->attn.f);
#define BERT_MIRROR_FFN(f) b->ffn.f = bert_grad_of(m, a->ffn.f);
        BERT_SUB_FIELDS(BERT_MIRROR_ATTN)
        BERT_FFN_FIELDS(BERT_MIRROR_FFN)
#undef BERT_MIRROR_ATTN
#undef BERT_MIRROR_FFN
    }
}

static void bert_work_free(BertWork *k, int L) {
    if (!k) return;
    free(k->ids); free(k->segments); free(k->pos_ids); free(k->lengths);
    free(k->emb); free(k->emb_mean); free(k->emb_rstd); free(k->h0); free(k->emb_mask);
    free(k->emb_ln); free(k->demb1); free(k->demb2);
    free(k->final_out); free(k->final_mean); free(k->final_rstd);
    free(k->rtd_pre); free(k->rtd_act); free(k->rtd_logits); free(k->rtd_dlogits); free(k->rtd_d1); free(k->rtd_d2);
    for (int l = 0; l < L && k->attn; l++) {
        block_attn_acts_free(&k->attn[l]);
        block_ffn_acts_free(&k->ffn[l]);
    }
    free(k->attn); free(k->ffn); free(k->scratch);
    if (k->rows_max) {
        block_attn_acts_free(&k->rows_attn);
        block_ffn_acts_free(&k->rows_ffn);
    }
    free(k->rows_asked); free(k->rows_slot); free(k->rows_pos); free(k->rows_flat); free(k->rows_in); free(k->drows); free(k->drows2);
    free(k->pair_f); free(k->pair_df);
    free(k->cls_x); free(k->pooled); free(k->head_in); free(k->head_mask);
    free(k->mlm_x); free(k->mlm_pre); free(k->mlm_act); free(k->mlm_mean); free(k->mlm_rstd); free(k->mlm_out);
    free(k->mlm_logits); free(k->mlm_dlogits); free(k->mlm_d1); free(k->mlm_d2); free(k->mlm_row_loss);
    free(k->dhidden); free(k->dpooled); free(k->dbuf); free(k->dhead);
    free(k);
}

void bert_free(Bert *m) {
    if (!m) return;
    bert_use_bf16(m, 0);
    bert_use_int8(m, 0);
    free(m->int8_smooth);
    free(m->int8_absmax);
    bert_work_free(m->work, m->cfg.num_layers);
    free(m->w.layers);
    free(m->g.layers);
    params_free(m->params);
    free(m->alibi_slopes);
    free(m);
}

static float *bert_floats(long n) { return xaligned_alloc(sizeof(float) * (size_t)(n > 0 ? n : 1)); }

/* The sublayer dims of the largest call. */
static BlockDims bert_max_dims(const Bert *m, int B, int T) {
    const BertConfig *c = &m->cfg;
    return (BlockDims){.B = B, .T = T, .C = c->hidden_size, .NH = c->num_heads, .FF = c->intermediate_size,
                    .eps = c->layer_norm_eps, .hidden_dropout = c->hidden_dropout,
                    .attn_dropout = c->attention_dropout};
}

void bert_reserve(Bert *m, int B, int T, int max_masked, int train) {
    BertWork *old = m->work;
    if (B < 1 || T < 1 || max_masked < 0) DIE("bert_reserve: B %d T %d max_masked %d", B, T, max_masked);
    if (T > m->cfg.max_position) DIE("bert_reserve: T %d > max_position %d", T, m->cfg.max_position);
    int F = m->heads.pair_features ? m->heads.pair_features : 1;   /* classifier input: F * C */
    if (old) {
        if (B <= old->maxB && T <= old->maxT && max_masked <= old->max_masked && train <= old->train &&
            F <= old->maxF)
            return;
        F = F > old->maxF ? F : old->maxF;   /* never shrinks: several heads take turns (bert_attach_head) */
        B = B > old->maxB ? B : old->maxB;
        T = T > old->maxT ? T : old->maxT;
        max_masked = max_masked > old->max_masked ? max_masked : old->max_masked;
        train = train || old->train;
        bert_work_free(old, m->cfg.num_layers);
    }
    BertWork *k = m->work = xcalloc(1, sizeof *k);
    int C = m->cfg.hidden_size, L = m->cfg.num_layers, V = m->cfg.vocab_size, E = bert_embedding_size(&m->cfg);
    int CE = C > E ? C : E;
    long N = (long)B * T, n = max_masked;
    k->maxB = B; k->maxT = T; k->max_masked = max_masked; k->train = train; k->maxF = F;
    k->ids = xmalloc(sizeof(int) * (size_t)N);
    k->segments = xmalloc(sizeof(int) * (size_t)N);
    k->pos_ids = xmalloc(sizeof(int) * (size_t)N);
    k->lengths = xmalloc(sizeof(int) * (size_t)B);
    k->emb = bert_floats(N * E);
    k->emb_mean = bert_floats(N);
    k->emb_rstd = bert_floats(N);
    k->h0 = bert_floats(N * C);
    k->emb_mask = xmalloc((size_t)(N * E));
    if (E != C) {
        k->emb_ln = bert_floats(N * E);
        if (train) {
            k->demb1 = bert_floats(N * E);
            k->demb2 = bert_floats(N * E);
        }
    }
    if (m->cfg.pre_ln) {
        k->final_out = bert_floats(N * C);
        k->final_mean = bert_floats(N);
        k->final_rstd = bert_floats(N);
    }
    BlockDims md = bert_max_dims(m, B, T);
    k->attn = xcalloc((size_t)L, sizeof *k->attn);
    k->ffn = xcalloc((size_t)L, sizeof *k->ffn);
    for (int l = 0; l < L; l++) {
        block_attn_acts_init(&k->attn[l], &md, 0);
        block_ffn_acts_init(&k->ffn[l], &md);
    }
    long s = block_scratch_floats(&md);
    /* The last layer at chosen rows (bert_forward_rows / _pooled): one slot
     * per sequence for [CLS]; for the MLM's masked rows up to half the
     * length (past that the full layer costs little more, and runs). The
     * cross-attention sublayer it uses is post-LN only. */
    int rows = m->heads.pooler ? 1 : 0;
    if (m->heads.mlm && max_masked > 0) {
        int half = (T + 1) / 2 < max_masked ? (T + 1) / 2 : max_masked;
        rows = half > rows ? half : rows;
    }
    if (m->cfg.pre_ln) rows = 0;
    k->rows_max = rows;
    if (rows) {
        BlockDims cd = md;
        cd.T = rows;
        cd.Tk = T;
        block_attn_acts_init(&k->rows_attn, &cd, 1);
        block_ffn_acts_init(&k->rows_ffn, &cd);
        long asked = B > max_masked ? B : max_masked;
        k->rows_asked = xmalloc(sizeof(int) * (size_t)asked);
        k->rows_slot = xmalloc(sizeof(int) * (size_t)asked);
        k->rows_pos = xmalloc(sizeof(int) * (size_t)B * (size_t)rows);
        k->rows_flat = xmalloc(sizeof(int) * (size_t)B * (size_t)rows);
        k->rows_in = bert_floats((long)B * rows * C);
        if (train) {
            k->drows = bert_floats((long)B * rows * C);
            k->drows2 = bert_floats((long)B * rows * C);
        }
        long cs = block_scratch_floats(&cd);
        s = cs > s ? cs : s;
    }
    k->scratch = bert_floats(s > N * CE ? s : N * CE);   /* the embedding backward uses N*E of it */
    k->cls_x = bert_floats((long)B * C);
    k->pooled = bert_floats((long)B * C);
    k->head_in = bert_floats((long)B * C * F);
    k->head_mask = xmalloc((size_t)B * (size_t)C * (size_t)F);
    if (F > 1) {
        k->pair_f = bert_floats((long)B * C * F);
        k->pair_df = bert_floats((long)B * C * F);
    }
    if (m->heads.mlm && n > 0) {
        k->mlm_x = bert_floats(n * C);
        k->mlm_pre = bert_floats(n * E);
        k->mlm_act = bert_floats(n * E);
        k->mlm_mean = bert_floats(n);
        k->mlm_rstd = bert_floats(n);
        k->mlm_out = bert_floats(n * E);
        k->mlm_logits = bert_floats(n * V);
        k->mlm_row_loss = xmalloc(sizeof(double) * (size_t)n);
        if (train) {
            k->mlm_dlogits = bert_floats(n * V);
            k->mlm_d1 = bert_floats(n * CE);
            k->mlm_d2 = bert_floats(n * CE);
        }
    }
    if (m->heads.rtd) {
        k->rtd_pre = bert_floats(N * C);
        k->rtd_act = bert_floats(N * C);
        k->rtd_logits = bert_floats(N);
        if (train) {
            k->rtd_dlogits = bert_floats(N);
            k->rtd_d1 = bert_floats(N * C);
            k->rtd_d2 = bert_floats(N * C);
        }
    }
    if (train) {
        bert_bind_grads(m);
        k->dhidden = bert_floats(N * C);
        k->dbuf = bert_floats(N * C);
        k->dpooled = bert_floats((long)B * C);
        k->dhead = bert_floats((long)B * C);
    }
}

long bert_num_params(const Bert *m) { return params_count(m->params); }

void bert_set_layer_decay(Bert *m, double decay) {
    int L = m->cfg.num_layers;
    for (int h = 0; h < params_num_tensors(m->params); h++) {
        ParamTensor *t = &m->params->t[h];
        int layer;
        double depth = L + 1;   /* pooler and heads: the top */
        if (strncmp(t->name, "bert.embeddings", 15) == 0) depth = 0;
        else if (sscanf(t->name, "bert.encoder.layer.%d.", &layer) == 1) depth = layer + 1;
        t->lr_scale = (float)pow(decay, L + 1 - depth);
    }
}

/* ---- task heads in arenas of their own (multi-task fine-tuning) ---- */

BertTaskHead *bert_task_head_create(const Bert *m, int num_labels, int pair_features, uint64_t seed) {
    if (num_labels < 1 || (pair_features && (pair_features < 4 || pair_features > 5 || num_labels < 2)))
        DIE("bert_task_head_create: %d labels, pair_features %d", num_labels, pair_features);
    BertTaskHead *h = xcalloc(1, sizeof *h);
    h->num_labels = num_labels;
    h->pair_features = pair_features;
    int C = m->cfg.hidden_size, in = pair_features ? pair_features * C : C;
    h->params = params_create();
    BERT_MATRIX(h->params, "classifier.weight", num_labels, in);
    BERT_BIAS(h->params, "classifier.bias", num_labels);
    Rng rng;
    rng_seed(&rng, seed);
    params_allocate(h->params, &rng);
    params_grad_enable(h->params);   /* small; a head attached for training needs them at once */
    return h;
}

void bert_task_head_free(BertTaskHead *h) {
    if (!h) return;
    params_free(h->params);
    free(h);
}

void bert_attach_head(Bert *m, BertTaskHead *h) {
    if (m->heads.num_labels > 0 && !m->head) DIE("bert_attach_head: the model has a classifier of its own");
    if (h && !m->heads.pooler) DIE("bert_attach_head: the model has no pooler");
    m->head = h;
    m->heads.num_labels = h ? h->num_labels : 0;
    m->heads.pair_features = h ? h->pair_features : 0;
    m->w.cls_w = h ? params_data(h->params, 0) : NULL;
    m->w.cls_b = h ? params_data(h->params, 1) : NULL;
    m->g.cls_w = h ? h->params->grad + params_tensor(h->params, 0)->offset : NULL;
    m->g.cls_b = h ? h->params->grad + params_tensor(h->params, 1)->offset : NULL;
}
