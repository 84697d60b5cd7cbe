/* electra.h — replaced-token detection pretraining (ELECTRA, Clark et al.
 * 2020), the `"objective": "electra"` of `glue pretrain`.
 *
 * One micro-batch (an MlmBatch: masked ids, target positions and originals):
 *   1. the generator, a small masked LM (pretrain_generator_config: a
 *      fraction of the encoder's width) that SHARES the discriminator's
 *      embedding tables, predicts the masked positions: loss_gen = MLM
 *      cross-entropy (mean over targets);
 *   2. every target is replaced by a sample from the generator's softmax
 *      (temperature 1, one uniform draw per target from the run's sample
 *      RNG; no gradient flows through the sampling);
 *   3. the discriminator (the encoder that is kept and fine-tuned) reads the
 *      corrupted sequence and predicts, for every real token, whether it
 *      differs from the original (a sample equal to the original counts as
 *      original): loss_disc = mean binary cross-entropy (bert_rtd_loss);
 *   4. loss = loss_gen + disc_weight * loss_disc (ELECTRA's lambda = 50); both
 *      backwards run, and the shared embeddings receive both gradients.
 * The caller clips the gradient of both arenas as one (clip_grad_norm_many)
 * and steps both optimizers with the same learning rate.
 *
 * In a resume point the generator's tensors are stored with the weights as
 * "generator." + name, its AdamW state under the scope "generator."
 * (optim_save_scoped) and the sample RNG in blob "electra.state" with the
 * state. A snapshot (glue pretrain snapshot)
 * keeps the generator's tensors alone, named the same, with its BertConfig
 * in the config record "generator": a run started from the snapshot (--set
 * init) takes the generator when its shape is the run's. */
#ifndef GLUE_PRETRAIN_ELECTRA_H
#define GLUE_PRETRAIN_ELECTRA_H

#include "core/checkpoint.h"
#include "models/bert/bert.h"
#include "optim/optim.h"
#include "pretrain/mlm_batch.h"

#define ELECTRA_GEN_PREFIX "generator."
#define ELECTRA_GEN_CONFIG "generator"

typedef struct Electra {
    Bert *gen;               /* the generator (owned); its embeddings are the discriminator's */
    Optimizer opt;           /* the generator's AdamW */
    Rng sample_rng;
    float disc_weight;
    int B_max, T_max, max_masked;
    int *disc_ids;           /* (B, T) the corrupted input */
    unsigned char *replaced; /* (B, T) 1 where a sample differs from the original */
    int *sampled;            /* (max_masked) */
    float *uniforms;         /* (max_masked) the draws of one batch */
} Electra;

/* What one micro-batch measured. */
typedef struct ElectraStats {
    float gen_loss, gen_acc;     /* generator MLM on the targets */
    float disc_loss, disc_acc;   /* discriminator on every real token */
    float replaced_frac;         /* replaced tokens / real tokens */
} ElectraStats;

/* A generator of config gcfg sharing disc's embeddings (disc must be reserved
 * for training first), its buffers for batches up to (B_max, T_max) with up to
 * max_masked targets, and the sample RNG from seed (stream `stream`). */
void electra_init(Electra *e, const BertConfig *gcfg, Bert *disc, float disc_weight, int B_max, int T_max,
                  int max_masked, uint64_t seed, uint64_t stream);
void electra_free(Electra *e);

/* Steps 1-4 above on batch b, adding gradients into both arenas (zero them
 * before). drop_rng: dropout of both models (NULL: none). Returns the total
 * loss. b may be a shard of a larger batch (mlm_batch_shard, data-parallel):
 * then the losses, accuracies and gradients are its share of the whole
 * batch's means (they sum over the shards to them), and the sample RNG
 * advances over the whole batch's targets. */
float electra_forward_backward(Electra *e, Bert *disc, const MlmBatch *b, Rng *drop_rng, ElectraStats *s);

/* For each of n rows of logits (n, V): a token drawn from softmax(row) with
 * one uniform from rng (inverse CDF; uniforms (n) is scratch). Rows run in
 * parallel; the result does not depend on the thread count. */
void electra_sample(int *out, const float *logits, int n, int V, Rng *rng, float *uniforms);

/* The generator's AdamW state and sample RNG into / out of a checkpoint
 * (see above; the weights: electra_save_weights). 0 ok, -1 after a message. */
int electra_save_state(const Electra *e, CkptWriter *w);
int electra_load_state(Electra *e, const Checkpoint *c);

/* The generator's weights alone (named as above), stored as dtype: what a
 * snapshot keeps (its writer's config carries ELECTRA_GEN_CONFIG). 0 ok. */
int electra_save_weights(const Bert *gen, CkptWriter *w, CkptDtype dtype);
/* The generator's weights from c into gen (the names above). 0, or -1 after
 * a message naming a missing tensor or one of another shape. */
int electra_load_weights(Bert *gen, const Checkpoint *c);
/* A run started from checkpoint c (--set init): gen takes the generator c
 * holds (record ELECTRA_GEN_CONFIG and its weights), which must be of gen's
 * shape. 1 taken, 0 c holds none (gen stays as it is), -1 after one message
 * naming c and what differs. */
int electra_init_from(Bert *gen, const Checkpoint *c);

#endif
