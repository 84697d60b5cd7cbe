/* bert.h — the BERT encoder (Devlin et al. 2019) with its heads, exactly as the
 * reference / Hugging Face BertModel computes it:
 *
 *   h0 = dropout(LN(word[ids] + position[t] + token_type[segments]))   eps 1e-12
 *   h_l = FFN(SelfAttention(h_{l-1}))           L post-LN layers (nn/transformer.h)
 *                                               (+ ALiBi in the attention: cfg.alibi)
 *   pooled = tanh(h_L[:, 0] W_p^T + b_p)        pooler on [CLS]
 *   MLM head:  logits = LN(gelu(h W_t^T + b_t)) · word^T + bias   (decoder TIED to
 *              the word embeddings), computed only on the masked positions
 *   classifier: logits = dropout(pooled) W_c^T + b_c   (K > 1; the fine-tuning
 *   regression: score  = dropout(pooled) w_c^T + b_c   (K == 1)  harness's loss)
 *
 * Files: bert.c (create: parameters, pointer structs, workspace),
 * bert_config.c (BertConfig <-> JSON, named configs), bert_forward.c
 * (embeddings, encoder and pooler forward/backward), bert_heads.c (the MLM
 * loss; classification / regression logits and their backward), bert_io.c (checkpoints, vocabulary
 * blob), bert_work.h (the private workspace); bert_task*.c put BERT behind
 * ModelOps (BERT_OPS, bert_task.h); bert_hf*.c (Hugging Face
 * import/export) are built on this header.
 *
 * Parameters live in ONE Params arena (core/params.h) under Hugging Face's
 * names and PyTorch's layouts (Linear W is (out, in)), so a HF checkpoint maps
 * 1:1 by name:
 *   bert.embeddings.word_embeddings.weight            (V, C)
 *   bert.embeddings.position_embeddings.weight        (P, C)
 *   bert.embeddings.token_type_embeddings.weight      (TV, C)
 *   bert.embeddings.LayerNorm.{weight,bias}           (C)
 *   bert.encoder.layer.<i>.attention.self.{query,key,value}.weight   (C, C)
 *   bert.encoder.layer.<i>.attention.self.{query,key,value}.bias     (C)
 *   bert.encoder.layer.<i>.attention.output.dense.{weight (C, C), bias (C)}
 *   bert.encoder.layer.<i>.attention.output.LayerNorm.{weight,bias}  (C)
 *   bert.encoder.layer.<i>.intermediate.dense.{weight (FF, C), bias (FF)}
 *   bert.encoder.layer.<i>.output.dense.{weight (C, FF), bias (C)}
 *   bert.encoder.layer.<i>.output.LayerNorm.{weight,bias}            (C)
 *   bert.pooler.dense.{weight (C, C), bias (C)}                      (pooler)
 *   cls.predictions.transform.dense.{weight (C, C), bias (C)}        (MLM head)
 *   cls.predictions.transform.LayerNorm.{weight,bias}                (C)
 *   cls.predictions.bias                                             (V)
 *   classifier.{weight (K, C), bias (K)}                             (K > 0)
 * HF's cls.predictions.decoder.weight is the word embedding matrix itself (tied)
 * and cls.predictions.decoder.bias is cls.predictions.bias: neither is a tensor
 * of its own here. Per layer, query/key/value weights are declared one after
 * another, then the three biases, so each layer's (3C, C) weight block and (3C)
 * bias are contiguous for ONE fused QKV GEMM; that needs C % 16 == 0 (the arena
 * aligns every tensor to 16 floats), which bert_config_check enforces and
 * bert_create verifies.
 *
 * Init (BERT's): every matrix and embedding N(0, 0.02), LayerNorm weight 1,
 * biases 0. Weight decay: none on biases and LayerNorm (PARAM_NO_DECAY).
 *
 * Typical training step (the caller owns the optimizer, core/optim):
 *   Bert *m = bert_create(&cfg, &(BertHeads){.mlm = 1}, seed);
 *   bert_reserve(m, B_max, T_max, n_masked_max, 1);
 *   params_zero_grad(m->params);
 *   bert_forward(m, &(BertBatch){B, T, ids, segments, lengths}, &rng);
 *   float acc, loss = bert_mlm_loss(m, positions, labels, n, 1, &acc);
 *   bert_backward(m);
 *   clip_grad_norm(m->params, 1.0f); optim_step(&opt, m->params, lr);
 * Fine-tuning replaces the MLM call by a task head's forward, the harness's
 * loss (src/train/head.h) and the head's backward from its dlogits
 * (bert_head_forward / bert_head_backward); heads can also be combined
 * (their gradients add up). Evaluation:
 *   bert_forward(m, &batch, NULL); bert_head_forward(m, NULL, logits);
 *
 * Threads: call from the main thread (see core/threads.h). Deterministic for a
 * seed, the dropout Rng's state and the thread count. */
#ifndef GLUE_BERT_H
#define GLUE_BERT_H

#include <stdint.h>

#include "core/checkpoint.h"
#include "core/params.h"
#include "core/rng.h"
#include "nn/transformer.h"

typedef struct cJSON cJSON;

/* ---- configuration (bert_config.c) ---- */

typedef struct BertConfig {
    int vocab_size;           /* V   "vocab_size" */
    int hidden_size;          /* C   "hidden_size" */
    int num_layers;           /* L   "num_hidden_layers" */
    int num_heads;            /* NH  "num_attention_heads"; HS = C / NH */
    int intermediate_size;    /* FF  "intermediate_size" (4C) */
    int max_position;         /* P   "max_position_embeddings" (512) */
    int type_vocab_size;      /* TV  "type_vocab_size" (2) */
    float hidden_dropout;     /*     "hidden_dropout_prob" (0.1) */
    float attention_dropout;  /*     "attention_probs_dropout_prob" (0.1) */
    float layer_norm_eps;     /*     "layer_norm_eps" (1e-12) */
    int alibi;                /*     "position_embedding_type": "absolute" (0, BERT's) or
                               *     "absolute+alibi" (1, glue's): the learned absolute
                               *     positions plus ALiBi's distance penalty in every
                               *     self-attention (nn/attention.h), which lets a small
                               *     model leave MLM's context-blind plateau early
                               *     (pretrain/README.md). Hugging Face's BERT computes
                               *     only the first: such models are not exportable. */
    int embedding_size;       /* E   "embedding_size" (ELECTRA's key; absent = C): the
                               *     width of the embedding tables and of the MLM head's
                               *     transform. E != C adds a projection E -> C after the
                               *     embedding LayerNorm ("bert.embeddings_project", as
                               *     ELECTRA-Small's E 128 / C 256, and its generators,
                               *     which share the discriminator's tables). */
    int pre_ln;               /*     "layer_norm_position": "post" (0, BERT's) or "pre" (1):
                               *     each sublayer normalises its input, y = x + f(LN(x)),
                               *     and "bert.encoder.LayerNorm" normalises the last layer's
                               *     output (Xiong et al. 2020; the "Cramming" recipe). Not a
                               *     Hugging Face BERT: such models are not exportable. */
} BertConfig;

/* The built-in configs (Turc et al.'s miniatures + base; vocab 30522, FF = 4C):
 *   tiny L2 H128 A2, mini L4 H256 A4, small L4 H512 A8, medium L8 H512 A8,
 *   base L12 H768 A12. Also in models/configs/<name>.json. */
extern const char *const BERT_CONFIG_NAMES[];
extern const int BERT_NUM_CONFIG_NAMES;
/* 0 and *c filled for a built-in name, -1 (no message) otherwise. */
int bert_config_named(const char *name, BertConfig *c);
/* From a JSON object with Hugging Face's keys. Required: vocab_size,
 * hidden_size, num_hidden_layers, num_attention_heads; the rest default as
 * above (intermediate_size = 4 * hidden_size); other keys are ignored, except
 * that a "hidden_act" other than "gelu" or a "position_embedding_type" other
 * than "absolute" or "absolute+alibi" is refused (this model computes neither). 0 ok, -1 after one
 * message naming `origin` (a file name, for messages; may be NULL). */
int bert_config_from_json(const cJSON *j, const char *origin, BertConfig *c);
/* A built-in name or a path to a JSON file (e.g. a HF config.json). -1 after a message. */
int bert_config_resolve(const char *name_or_path, BertConfig *c);
/* The config as HF's JSON (plus "model_type": "bert", "hidden_act": "gelu"). Caller frees. */
cJSON *bert_config_to_json(const BertConfig *c);
/* 0 if every value is usable (positive sizes, C % NH == 0, C % 16 == 0,
 * dropouts in [0, 1), eps > 0); otherwise -1 after one message. */
int bert_config_check(const BertConfig *c, const char *origin);

/* ---- the model (bert.c) ---- */

/* Which heads a model has. */
typedef struct BertHeads {
    int mlm;                  /* masked-LM head cls.predictions.* */
    int pooler;               /* bert.pooler.* (forced on when num_labels > 0) */
    int num_labels;           /* 0 none; 1 regression (MSE); K > 1 classifier (xent) */
    int rtd;                  /* replaced-token detection head discriminator_predictions.*
                               * (ELECTRA's discriminator, bert_rtd.c) */
    int pair_features;        /* 0: the classifier reads pooled [CLS] (K, C); 4: it reads
                               * [u; v; |u-v|; u*v] of a pair's mean-pooled texts (K, 4C);
                               * 5: [pooled; u; v; |u-v|; u*v] (K, 5C) (bert_pair_head.c) */
} BertHeads;

/* One layer's weights (or gradients) as the transformer sublayers take them. */
typedef struct BertLayer {
    BlockAttnParams attn;        /* w_qkv = query|key|value weights (3C, C), contiguous */
    BlockFfnParams ffn;          /* intermediate.dense, output.dense, output.LayerNorm */
} BertLayer;

/* Pointers into the arena: m->w into params data, m->g into the gradient mirror
 * (NULL fields before gradients are enabled, and for absent heads). */
typedef struct BertWeights {
    float *word_emb;          /* (V, C)  also the MLM decoder weight (tied) */
    float *pos_emb;           /* (P, C) */
    float *type_emb;          /* (TV, C) */
    float *emb_ln_g, *emb_ln_b;   /* (C) */
    BertLayer *layers;        /* (L) */
    float *pool_w, *pool_b;   /* (C, C), (C) */
    float *mlm_w, *mlm_b;     /* (C, C), (C)   transform.dense */
    float *mlm_ln_g, *mlm_ln_b;   /* (C)     transform.LayerNorm */
    float *mlm_bias;          /* (V)  decoder output bias */
    float *emb_proj_w, *emb_proj_b;   /* (C, E), (C) when E != C, else NULL */
    float *final_ln_g, *final_ln_b;   /* (C) bert.encoder.LayerNorm when pre_ln, else NULL */
    float *rtd_w, *rtd_b;     /* (C, C), (C)   discriminator_predictions.dense */
    float *rtd_out_w, *rtd_out_b;     /* (1, C), (1) discriminator_predictions.dense_prediction */
    float *cls_w, *cls_b;     /* (K, C), (K) */
} BertWeights;

typedef struct BertWork BertWork;   /* activations and scratch (bert_reserve) */

typedef struct Bert {
    BertConfig cfg;
    BertHeads heads;
    Params *params;           /* every tensor, HF names */
    BertWeights w;            /* data */
    BertWeights g;            /* gradients (after bert_reserve(..., train = 1)) */
    BertWork *work;           /* NULL until bert_reserve */
    float *alibi_slopes;      /* (NH) when cfg.alibi, else NULL */
    struct Bf16Weights *bf16; /* (4L) packed encoder weights while bert_use_bf16 is on, else NULL */
    struct Int8Weights *int8; /* (4L) int8 encoder weights while bert_use_int8 is on, else NULL */
    int int8_stored;          /* loaded from an int8 checkpoint (bert_int8.c): the fp32 weights are
                               * the int8 ones dequantized, and there is nothing to quantize */
    float *int8_smooth;       /* (L (3C + FF)) SmoothQuant factors s of each layer's four products'
                               * inputs (bert_int8_channels), or NULL: none (all 1) */
    long int8_calibrated;     /* the training examples int8_smooth was calibrated on (0: none) */
    float *int8_absmax;       /* the same layout while bert_int8_calibrate records, else NULL */
    const struct Bert *emb_donor; /* bert_create_sharing: whose embedding tables this model uses */
    /* The count bert_mlm_loss and bert_rtd_loss average over (loss, accuracy
     * and gradient): 0 = their own (n positions, real tokens). Data-parallel
     * training gives each rank some rows of a batch and sets the WHOLE batch's
     * count, so the ranks' losses and gradients sum to the whole batch's mean. */
    long loss_count;
    /* Told by bert_backward as it goes down the layers: grad_ready(ctx, lo)
     * means every gradient of the arena from float lo to its end is final for
     * this backward. The arena is declared embeddings first, then layers 0 ..
     * L-1, then the final LayerNorm, pooler and heads, and the backward
     * finishes it in the opposite order (the heads' gradients are written by
     * the losses before it), so after layer l everything from l's first
     * tensor on is done; lo 0 comes last. Data-parallel pretraining starts
     * summing those gradients meanwhile (core/dist.h DistBuckets). NULL:
     * nobody listens. */
    void (*grad_ready)(void *ctx, long lo);
    void *grad_ready_ctx;
    /* The task head attached in place of a classifier of the model's own
     * (bert_attach_head), or NULL. */
    struct BertTaskHead *head;
} Bert;

/* A batch of token ids. Row b has lengths[b] real tokens then padding (any id,
 * conventionally [PAD] = 0); padding keys are masked out of attention, and the
 * outputs at padding positions are computed but meaningless. */
typedef struct BertBatch {
    int B, T;                 /* T <= cfg.max_position and <= the reserved T */
    const int *ids;           /* (B, T) in [0, V) */
    const int *segments;      /* (B, T) in [0, TV), or NULL = all 0 */
    const int *lengths;       /* (B) in [1, T], or NULL = all T */
} BertBatch;

/* A model with fresh weights drawn from seed (BERT's init, above). Dies on a
 * config that fails bert_config_check (check user input first). */
Bert *bert_create(const BertConfig *cfg, const BertHeads *heads, uint64_t seed);
void bert_free(Bert *m);
/* A model that declares no embedding tables of its own (word, position, token
 * type and the embedding LayerNorm) but reads and trains those of `donor`:
 * ELECTRA's generator, which shares the discriminator's embeddings. cfg must
 * agree with the donor's vocab_size, embedding_size, max_position and
 * type_vocab_size. Gradients of the shared tables go into the donor's
 * gradient arena, so reserve the donor for training first. The donor must
 * outlive the model. */
Bert *bert_create_sharing(const BertConfig *cfg, const BertHeads *heads, uint64_t seed, const Bert *donor);
/* The embedding width E (cfg->embedding_size, or C when unset). */
int bert_embedding_size(const BertConfig *cfg);
/* Allocates activations for batches up to (B, T) and MLM calls up to
 * max_masked positions (0 if the MLM head is not used); train = 1 also enables
 * gradients and the backward's buffers. May be called again to grow. */
void bert_reserve(Bert *m, int B, int T, int max_masked, int train);
/* Trainable scalars. */
long bert_num_params(const Bert *m);
/* Layer-wise learning-rate decay (ELECTRA's fine-tuning): each tensor's
 * lr_scale (core/params.h) = decay^(L + 1 - depth), depth 0 for the embeddings
 * (and their projection), i + 1 for encoder layer i, L + 1 for the pooler and
 * heads (which keep the full rate). decay 1 restores one rate for all. */
void bert_set_layer_decay(Bert *m, double decay);

/* A task head in an arena of its own, for multi-task fine-tuning (MT-DNN:
 * one encoder, a head per task; models/bert/bert_multi.h): the classifier
 * (or regressor) that BertHeads.num_labels and .pair_features describe,
 * tensors "classifier.weight" (K, F*C or C) and "classifier.bias" (K), drawn
 * from seed as bert_create draws them, with its gradients enabled. */
typedef struct BertTaskHead {
    int num_labels, pair_features;
    Params *params;
} BertTaskHead;
BertTaskHead *bert_task_head_create(const Bert *m, int num_labels, int pair_features, uint64_t seed);
void bert_task_head_free(BertTaskHead *h);
/* Makes h the classifier of m (a model made without one, with a pooler):
 * from now on the task-head forwards and backwards (bert_head_*,
 * bert_pair_features_*) read h's weights and add into h's gradients, and
 * m->heads says h's num_labels and pair_features; bert_reserve sizes the head
 * buffers for the largest head attached so far. NULL detaches (before
 * saving the encoder: its checkpoint then has no classifier). The heads take
 * turns; m never frees them. */
void bert_attach_head(Bert *m, BertTaskHead *h);

/* ---- forward / backward (bert_forward.c) ---- */

/* Embeddings + encoder (+ pooler when the model has one); saves what the
 * backward needs. rng != NULL: training (dropout on, drawn from rng; requires
 * bert_reserve(..., train = 1)); NULL: evaluation. Ids, segments and lengths
 * outside their ranges are a programmer error (DIE). Also zeroes the hidden-
 * state gradient that the heads then add into. */
void bert_forward(Bert *m, const BertBatch *batch, Rng *rng);
/* For a model with a pooler whose loss reads only the pooled [CLS] vector
 * (classification, regression): the same pooled vectors, losses, logits and
 * gradients as bert_forward(m, batch, rng), but the last layer is computed
 * only where the pooler reads it, at [CLS]: its keys and values for every
 * position, its queries, attention output, FFN and LayerNorms for one row per
 * sequence (cross-attention from the [CLS] rows to the previous layer, ALiBi
 * at the rows' own positions: the same math, about 5/6 of the last layer's
 * FLOPs saved; pre-LN models run the full forward). rng as bert_forward's
 * (NULL: evaluation); bert_backward works after it. bert_hidden, the MLM,
 * pair-features and siamese heads are unavailable after it. */
void bert_forward_pooled(Bert *m, const BertBatch *batch, Rng *rng);
/* bert_forward for a loss that reads the last hidden state at n flat
 * positions only (positions[i] = b * T + t; the MLM head's): the last layer
 * is computed at those rows, as bert_forward_pooled does at [CLS] — with a
 * backward, so pretraining's MLM steps skip about 85% of the last layer's
 * work at 15% masking. bert_mlm_loss must then be given the same positions
 * (in the same order); bert_hidden, the pooler and the other heads are
 * unavailable after it. Falls back to the full forward (and every head works)
 * for pre-LN models and when a sequence has more positions than half its
 * length or than reserved (bert_reserve's max_masked). */
void bert_forward_rows(Bert *m, const BertBatch *batch, const int *positions, int n, Rng *rng);
/* Inference with bf16 weights (core/gemm_bf16.h, bert_bf16.c): on = 1 packs
 * each layer's four dense weights (QKV, attention output, FFN in and out) and
 * the forwards use them; 0 frees them. Embeddings, LayerNorms, pooler and
 * heads stay fp32. bert_backward is refused while on (the packed copies would
 * not follow an optimizer step); call it again after changing the weights.
 * Needs AVX512-BF16; the commands use it only where gemm_bf16_native(). */
void bert_use_bf16(Bert *m, int on);
/* Inference with int8 weights (core/gemm_int8.h, bert_int8.c): on = 1
 * quantizes each layer's four dense weights (QKV, attention output, FFN in and
 * out; per output row) and the forwards run them through the int8 GEMM with
 * activations quantized per row; 0 frees them. Embeddings, LayerNorms, the
 * attention's score and context products, softmax, pooler and heads stay
 * fp32. bert_backward is refused while on. -1 after a message when a weight
 * is not finite. */
int bert_use_int8(Bert *m, int on);
/* SmoothQuant calibration (Xiao et al. 2023; bert_int8_calibrate.c): on = 1
 * starts recording, in the fp32 forwards that follow, the largest |x_k| of
 * every input channel k of each layer's four dense products; on = 0 stops and
 * turns what `examples` examples showed into the factors
 * s_k = max|x_k|^0.5 / max_n |W[n][k]|^0.5 that bert_use_int8 and
 * bert_save_int8 then fold into the int8 weights (W s) and the inputs (x / s).
 * 0, or -1 after a message (int8 already on; on = 0 with nothing recorded). */
int bert_int8_calibrate(Bert *m, int on, long examples);
/* The K floats of packed matrix j (0 QKV, 1 attention output, 2 FFN in, 3 FFN
 * out) of layer l in an (L (3C + FF)) array laid out as int8_smooth. */
float *bert_int8_channels(const Bert *m, float *base, int l, int j);
/* Matrix j of layer l in fp32: (N, K) as bert_int8_channels counts them. */
const float *bert_int8_weights(const Bert *m, int l, int j, int *N, int *K);
/* The last layer's output (B, T, C) of the last bert_forward. */
const float *bert_hidden(const Bert *m);
/* The pooled [CLS] vectors (B, C) of the last bert_forward (pooler models). */
const float *bert_pooled(const Bert *m);
/* Backpropagates the gradients the heads added (bert_*_loss with backward = 1)
 * through the pooler, the encoder and the embeddings into m->g (ADDED: zero
 * them with params_zero_grad before the step). */
void bert_backward(Bert *m);

/* ---- heads (bert_heads.c); each needs the matching head and a prior bert_forward ---- */

/* Masked LM on n positions of the last batch: positions[i] = b * T + t (flat,
 * the batch's T), labels[i] in [0, V) the original token there. The hidden rows
 * are GATHERED first, so the transform and the (n, V) vocabulary projection
 * cost n rows, not B*T. Returns the mean cross-entropy over the n positions and,
 * if accuracy != NULL, the fraction whose arg-max is the label. backward = 1
 * adds the gradients (of the mean) into m->g and the hidden-state gradient.
 * n must be <= the reserved max_masked; n = 0 returns 0. */
float bert_mlm_loss(Bert *m, const int *positions, const int *labels, int n, int backward,
                    float *accuracy);
/* The (n, V) logits of the last bert_mlm_loss. */
const float *bert_mlm_logits(const Bert *m);

/* Replaced-token detection (ELECTRA's discriminator, bert_rtd.c), on every
 * real token of the last batch (t < lengths[b]): logit = w2 · gelu(W1 h + b1)
 * + b2, loss = mean binary cross-entropy with logits against replaced (B, T)
 * in {0, 1} (padding ignored). Returns the loss; *accuracy (if non-NULL) gets
 * the fraction of real tokens classified right (logit > 0 <=> replaced).
 * backward = 1 adds the gradient of scale * loss into m->g and the hidden-state
 * gradient (scale is ELECTRA's discriminator weight, 50). */
float bert_rtd_loss(Bert *m, const unsigned char *replaced, float scale, int backward, float *accuracy);
/* The (B, T) logits of the last bert_rtd_loss (padding positions: 0). */
const float *bert_rtd_logits(const Bert *m);

/* The task heads: logits forward, and backward from their gradient. The
 * loss is the fine-tuning harness's (src/train/head.h), so each head gives
 * its outputs and takes back the loss's gradient w.r.t. them. A forward
 * needs the matching head and a prior bert_forward (or bert_forward_pooled
 * for bert_head_forward); rng != NULL: dropout on the head's input
 * (training), NULL: evaluation. A backward (after bert_reserve(..., train =
 * 1)) takes the gradient of its last forward's outputs and ADDS the
 * gradients into m->g and the hidden-state (or pooled) gradient for
 * bert_backward.
 *
 * Classifier (K > 1) or regressor (K = 1) on the pooled [CLS] vectors:
 * logits (B, K) = dropout(pooled) W_c^T + b_c. */
void bert_head_forward(Bert *m, Rng *rng, float *logits);
void bert_head_backward(Bert *m, const float *dlogits);
/* Pair classification on features of the two texts (heads.pair_features 4
 * or 5; bert_pair_head.c), the head TextCNN and BiLSTM use: the last
 * bert_forward held, for n pairs, (F = 5 only) the joined pairs in rows
 * [0, n), then each pair's first text "[CLS] a [SEP]" and second text
 * "[CLS] b [SEP]" in the next two blocks of n rows. u, v = the mean over real
 * tokens of the texts' last hidden states; logits (n, K) = dropout(f) W^T + b
 * with f = [u; v; |u - v|; u * v] (F = 4) or [pooled; u; v; |u - v|; u * v]
 * (F = 5). */
void bert_pair_features_forward(Bert *m, int n, Rng *rng, float *logits);
void bert_pair_features_backward(Bert *m, const float *dlogits);
/* Siamese similarity (bert_siamese.c; Sentence-BERT's regression objective):
 * the last bert_forward held 2n rows, the first texts of n pairs in rows
 * [0, n) and their second texts in rows [n, 2n), each "[CLS] text [SEP]".
 * Each row's output is mean-pooled over its real tokens (u, v); scores (n) =
 * cos(u_i, v_i). No dropout and no parameters of its own (a model's pooler
 * and classifier, if any, get no gradient). Needs the full bert_forward. */
void bert_siamese_forward(Bert *m, float *scores);
void bert_siamese_backward(Bert *m, const float *dscores);

/* ---- checkpoints (bert_io.c), through core/checkpoint.h ---- */

/* The checkpoint's config record:
 *   {"model": "bert", "bert": {HF config}, "heads": {"mlm":0|1, "pooler":0|1, "num_labels":K}}
 * Callers that write their own checkpoints (pretraining with optimizer state)
 * open a CkptWriter with it (adding keys of their own is fine) and write
 * the model with bert_write. Caller frees. */
cJSON *bert_checkpoint_config(const Bert *m);
/* Config + every parameter (f32). 0 ok, -1 after a message. */
int bert_save(const Bert *m, const char *path);
/* The same with the items of the JSON object `extra` (may be NULL) added to
 * the config record, and the vocabulary blob (below) when vocab != NULL. */
typedef struct Vocab Vocab;
int bert_save_with(const Bert *m, const char *path, const cJSON *extra, const Vocab *vocab);
/* What bert_save_with writes after the config (every parameter as dtype, the
 * vocabulary blob when vocab != NULL) into an open writer, for checkpoints
 * that hold more (pretraining's last.ckpt, a snapshot with ELECTRA's
 * generator). 0, or -1 after a message. */
int bert_write(const Bert *m, CkptWriter *w, const Vocab *vocab, CkptDtype dtype);
/* The config and heads stored in a checkpoint; -1 after a message when it is
 * not a glue BERT checkpoint or its config is unusable. */
int bert_checkpoint_read_config(const Checkpoint *c, BertConfig *cfg, BertHeads *heads);
/* Continues from a checkpoint's weights: m's embeddings and encoder layers
 * (and the pooler, MLM and RTD heads where c has them) are copied from c,
 * which must be the same architecture (sizes, positions, LayerNorm
 * placement); other heads stay as initialised. stack: c may (and must) hold
 * fewer layers than m, and m's layer l starts as c's layer l mod c's depth:
 * progressive stacking (Gong et al. 2019), a deeper encoder grown from a
 * trained shallow one rather than pretrained from nothing. 0, or -1 after a
 * message. */
int bert_init_from(Bert *m, const Checkpoint *c, int stack);
/* A model of the checkpoint's config. heads NULL: the stored heads, all loaded.
 * Otherwise the requested heads: the encoder (bert.embeddings.*,
 * bert.encoder.*) must be in the file; the pooler and MLM head are loaded when
 * the file has them (else fresh from seed); the classifier is loaded only when
 * copy_classifier and the file has one of the same K, else fresh (so a
 * pretrained encoder gets a new task head). NULL after a message. */
Bert *bert_from_checkpoint(const Checkpoint *c, const BertHeads *heads, int copy_classifier,
                           uint64_t seed);
/* bert_from_checkpoint(read(path), NULL, ...): the model exactly as saved. */
Bert *bert_load(const char *path);

/* A model is only usable with the WordPiece vocabulary it was trained with, so
 * glue's BERT checkpoints carry it: blob BERT_VOCAB_BLOB = vocab.txt bytes (one
 * token a line, id = line). Writers of BERT checkpoints (pretraining) should
 * add it: bert_save_with(m, path, NULL, vocab), or in their own writer
 * checkpoint_write_blob(w, BERT_VOCAB_BLOB, text, len). */
#define BERT_VOCAB_BLOB "vocab"
/* vocab.txt bytes of v (caller frees; *len excludes the final NUL). */
char *bert_vocab_text(const Vocab *v, size_t *len);
/* The vocabulary stored in c, or NULL (no message) when it has none. */
Vocab *bert_checkpoint_vocab(const Checkpoint *c);

/* An int8 checkpoint of m (bert_save_with's layout, the four dense weights of
 * each layer stored as int8 with a "<name>_scale" tensor of row scales, and
 * "quantized" in the config): a quarter of the fp32 file. 0, or -1 after a
 * message (m loaded from an int8 checkpoint, a weight not finite, the disk). */
int bert_save_int8(const Bert *m, const char *path, const cJSON *extra, const Vocab *vocab);
/* 1 when c is an int8 checkpoint (its config has "quantized"). */
int bert_checkpoint_is_int8(const Checkpoint *c);
/* m just read from the int8 checkpoint c (bert_from_checkpoint): its dense
 * weights dequantized and packed from the stored integers. -1 after a message
 * naming the tensor for a missing or malformed one, a scale that is NaN,
 * infinite, zero or negative, a weight of -128, or an int8 format version
 * this glue does not read. */
int bert_int8_load(Bert *m, const Checkpoint *c);

#endif
