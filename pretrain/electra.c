/* electra.c — ELECTRA's generator, sampling and the replaced-token detection
 * step (see electra.h). */
#include "pretrain/electra.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "core/fastmath.h"
#include "core/kernels.h"

void electra_init(Electra *e, const BertConfig *gcfg, Bert *disc, float disc_weight, int B_max, int T_max,
                  int max_masked, uint64_t seed, uint64_t stream) {
    memset(e, 0, sizeof *e);
    /* Its own seed offset: the generator's weights are not the discriminator's. */
    e->gen = bert_create_sharing(gcfg, &(BertHeads){.mlm = 1}, seed + 1, disc);
    bert_reserve(e->gen, B_max, T_max, max_masked, 1);
    rng_seed_stream(&e->sample_rng, seed, stream);
    e->disc_weight = disc_weight;
    e->B_max = B_max;
    e->T_max = T_max;
    e->max_masked = max_masked;
    e->disc_ids = xmalloc(sizeof(int) * (size_t)B_max * (size_t)T_max);
    e->replaced = xmalloc((size_t)B_max * (size_t)T_max);
    e->sampled = xmalloc(sizeof(int) * (size_t)(max_masked > 0 ? max_masked : 1));
    e->uniforms = xmalloc(sizeof(float) * (size_t)(max_masked > 0 ? max_masked : 1));
}

void electra_free(Electra *e) {
    bert_free(e->gen);
    free(e->disc_ids);
    free(e->replaced);
    free(e->sampled);
    free(e->uniforms);
    memset(e, 0, sizeof *e);
}

/* Blocks of the cumulative scan: one vectorised sum per block, an element
 * walk only inside the block where the draw falls. */
enum { ELECTRA_SCAN_BLOCK = 256 };

/* The token of row r (V logits, max mx, sum of exps `sum`) where the
 * cumulative probability passes u in [0, 1). */
static int electra_sample_row(const ElemKernels *k, const float *r, int V, float mx, float sum, float u) {
    float target = u * sum, acc = 0.0f;
    for (int v0 = 0; v0 < V; v0 += ELECTRA_SCAN_BLOCK) {
        int v1 = v0 + ELECTRA_SCAN_BLOCK < V ? v0 + ELECTRA_SCAN_BLOCK : V;
        float block = k->exp_sum(r + v0, v1 - v0, mx);
        if (acc + block <= target && v1 < V) {
            acc += block;
            continue;
        }
        /* The draw falls here (or this is the last block: rounding may leave
         * the target just above the sum; then the block's last token). */
        for (int v = v0; v < v1; v++) {
            acc += fast_expf(r[v] - mx);
            if (acc > target) return v;
        }
        return v1 - 1;
    }
    return V - 1;
}

void electra_sample(int *out, const float *logits, int n, int V, Rng *rng, float *uniforms) {
    /* The draws in row order first, so the samples do not depend on threads. */
    for (int i = 0; i < n; i++) uniforms[i] = rng_uniform(rng);
    /* The exp sums run in core/kernels (vectorised for the CPU; this file is
     * built for the portable baseline, where they stayed scalar: 9% of a step). */
    const ElemKernels *k = kernels();
    #pragma omp parallel for schedule(static) if ((long)n * V > 65536)
    for (int i = 0; i < n; i++) {
        const float *r = logits + (long)i * V;
        float mx, sum = k->xent_row(NULL, r, V, 1, &mx);   /* max and sum of exp(r - max) */
        out[i] = electra_sample_row(k, r, V, mx, sum, uniforms[i]);
    }
}

float electra_forward_backward(Electra *e, Bert *disc, const MlmBatch *b, Rng *drop_rng, ElectraStats *s) {
    int B = b->B, T = b->T, n = b->n_masked;
    if (B > e->B_max || T > e->T_max || n > e->max_masked) DIE("electra: batch larger than reserved");
    BertBatch in = {B, T, b->ids, NULL, b->lengths};
    /* A shard of a larger batch (data-parallel) averages over the whole
     * batch's targets and tokens (tokens_all 0: a hand-made whole batch). */
    long real = 0;
    for (int i = 0; i < B; i++) real += b->lengths[i];
    long real_all = b->tokens_all > 0 ? b->tokens_all : real;
    e->gen->loss_count = mlm_batch_all_masked(b);
    disc->loss_count = real_all;
    /* 1. The generator on the masked input. */
    bert_forward_rows(e->gen, &in, b->positions, n, drop_rng);   /* the MLM reads the targets' rows only */
    float gen_acc = 0, gen_loss = bert_mlm_loss(e->gen, b->positions, b->labels, n, 1, &gen_acc);
    /* 2. Samples at the targets (the logits are those of this forward, with dropout). */
    /* The draws of the other shards' targets are skipped in order, so every
     * target gets the draw it would get in the whole batch. */
    for (int i = 0; i < b->masked_before; i++) rng_uniform(&e->sample_rng);
    if (n > 0) electra_sample(e->sampled, bert_mlm_logits(e->gen), n, e->gen->cfg.vocab_size, &e->sample_rng, e->uniforms);
    for (int i = 0; i < b->masked_after; i++) rng_uniform(&e->sample_rng);
    bert_backward(e->gen);
    /* 3. The corrupted input: originals everywhere but the targets. */
    memcpy(e->disc_ids, b->ids, sizeof(int) * (size_t)B * (size_t)T);
    memset(e->replaced, 0, (size_t)B * (size_t)T);
    long replaced = 0;
    for (int i = 0; i < n; i++) {
        int p = b->positions[i];
        e->disc_ids[p] = e->sampled[i];
        e->replaced[p] = e->sampled[i] != b->labels[i];
        replaced += e->replaced[p];
    }
    bert_forward(disc, &(BertBatch){B, T, e->disc_ids, NULL, b->lengths}, drop_rng);
    float disc_acc = 0, disc_loss = bert_rtd_loss(disc, e->replaced, e->disc_weight, 1, &disc_acc);
    bert_backward(disc);
    e->gen->loss_count = disc->loss_count = 0;
    if (s) *s = (ElectraStats){.gen_loss = gen_loss, .gen_acc = gen_acc, .disc_loss = disc_loss,
                               .disc_acc = disc_acc, .replaced_frac = (float)((double)replaced / (double)real_all)};
    return gen_loss + e->disc_weight * disc_loss;
}

int electra_save_weights(const Bert *gen, CkptWriter *w, CkptDtype dtype) {
    const Params *p = gen->params;
    return checkpoint_write_params_mirror(w, p, ELECTRA_GEN_PREFIX, p->data, dtype);
}

int electra_load_weights(Bert *gen, const Checkpoint *c) {
    Params *p = gen->params;
    return checkpoint_load_params_mirror(c, p, ELECTRA_GEN_PREFIX, p->data);
}

int electra_save_state(const Electra *e, CkptWriter *w) {
    const Params *p = e->gen->params;
    return optim_save_scoped(&e->opt, p, w, ELECTRA_GEN_PREFIX) ||
                   checkpoint_write_blob(w, "electra.state", &e->sample_rng, sizeof e->sample_rng)
               ? -1
               : 0;
}

int electra_load_state(Electra *e, const Checkpoint *c) {
    Params *p = e->gen->params;
    const CkptBlob *b = checkpoint_find_blob(c, "electra.state");
    if (!b || b->size != sizeof e->sample_rng) {
        user_error_data("resume an ELECTRA run from its own resume point", "%s: has no ELECTRA generator state", c->path);
        return -1;
    }
    if (optim_load_scoped(&e->opt, p, c, ELECTRA_GEN_PREFIX)) return -1;
    memcpy(&e->sample_rng, b->data, sizeof e->sample_rng);
    return 0;
}

int electra_init_from(Bert *gen, const Checkpoint *c) {
    const cJSON *rec = cJSON_GetObjectItemCaseSensitive(c->config, ELECTRA_GEN_CONFIG);
    if (!rec) return 0;
    BertConfig s;
    if (bert_config_from_json(rec, c->path, &s)) return -1;
    /* The record, not the tensors, tells the shapes apart: a stored generator
     * of more layers than this run's would load its first layers silently
     * (extra tensors are ignored). The embeddings are the discriminator's,
     * checked with it. */
    const BertConfig *g = &gen->cfg;
    if (s.hidden_size != g->hidden_size || s.num_layers != g->num_layers || s.num_heads != g->num_heads ||
        s.intermediate_size != g->intermediate_size) {
        user_error("set generator_size and generator_layers as the run it comes from had them (its "
                   "pretrain_config.json)",
                   "%s: its ELECTRA generator (hidden %d, layers %d, heads %d, FFN %d) is not this run's (hidden %d, "
                   "layers %d, heads %d, FFN %d)",
                   c->path, s.hidden_size, s.num_layers, s.num_heads, s.intermediate_size, g->hidden_size,
                   g->num_layers, g->num_heads, g->intermediate_size);
        return -1;
    }
    return electra_load_weights(gen, c) ? -1 : 1;
}
