/* pretrain_config.h — the settings of a masked-LM pretraining run.
 *
 * A run's config is a JSON object (pretrain/tiny.json, pretrain/mini.json):
 * the defaults below, overridden by the --config file, then by `--set
 * key=value` (the same rules as fine-tuning configs, models/run_config.h: only
 * known keys, values of the same kind). Keys:
 *   model            BERT config: a built-in name (tiny, mini, ...) or a JSON file
 *   vocab            WordPiece vocabulary ("" = tokenizer_default_vocab_path())
 *   corpus           [file, ...]: "FILE", "FORMAT:FILE" or {"path": FILE,
 *                    "format": FORMAT} (formats: pretrain/corpus.h; "auto",
 *                    the default, guesses)
 *   eval_corpus      held-out text for `glue pretrain eval` and eval_every
 *   seq_len          T, tokens per sequence with [CLS] and [SEP] (128)
 *   batch            sequences per micro-batch
 *   accumulate       micro-batches per optimizer step (gradients averaged)
 *   steps            optimizer steps in all (the schedule's length; a resumed run
 *                    may change it: the rate from its step on follows the new end)
 *   lr, warmup, schedule   peak lr, warm-up steps, "linear" decay (schedule.h)
 *   weight_decay, beta1, beta2, adam_eps, clip   AdamW and gradient clipping
 *   dropout          hidden and attention dropout (replaces the model config's)
 *   mask_prob, max_predictions, whole_word, short_seq_prob   (masking.h, stream.h)
 *   mask_token_prob, random_token_prob   of the targets: [MASK] / random token
 *                    (the rest unchanged); BERT 0.8 / 0.1, ELECTRA 0.85 / 0
 *   objective        "mlm" (BERT's masked LM) or "electra" (replaced-token
 *                    detection, Clark et al. 2020: a generator MLM fills the
 *                    masked positions with samples, the encoder learns to tell
 *                    which tokens were replaced; pretrain/electra.h)
 *   generator_size, generator_layers, disc_weight   ELECTRA's generator width
 *                    (fraction of the encoder's, 0.25), depth (0: the
 *                    encoder's) and the discriminator loss weight (50)
 *   checkpoint_every steps between checkpoints (also saved at the end and on
 *                    SIGINT/SIGTERM)
 *   log_every        steps between log lines; eval_every: steps between held-out
 *                    evaluations (0: never during training)
 *   eval_batches     batches of the held-out text per evaluation during
 *                    training (0: all of it)
 *   seed             weights, data order, masking and dropout
 *   init             "" (random weights) or a checkpoint or run directory
 *                    to start from: its encoder, and with ELECTRA its
 *                    generator when it holds one (glue pretrain snapshot of
 *                    an ELECTRA run); a fresh optimizer either way
 *   init_stack       with init: 1 = init holds fewer layers than `model`;
 *                    layer l starts as init's layer l mod its depth
 *                    (progressive stacking, Gong et al. 2019); ELECTRA's
 *                    generator loads only at its stored depth
 *                    (generator_layers)
 *   init_step        with init: the step of the schedule this run starts at
 *                    (a long run carried on from its snapshot: the step
 *                    counter, warm-up + decay and the end at `steps` are the
 *                    original run's); 0 = from the start
 *   rewarm           the learning rate times min(1, (step - init_step + 1) /
 *                    rewarm) for the first rewarm steps (0: off): a fresh
 *                    AdamW at the schedule's peak rate is unstable
 *   bucket_mb        under mpirun: gradients are summed over the ranks in
 *                    buckets of this many MiB (2), each started while the
 *                    backward computes the layers below it; 0 = one sum of
 *                    the whole gradient after the backward
 *   zero             under mpirun: 1 = ZeRO-1, each rank keeps AdamW's
 *                    moments for 1/N of the parameters only (gradients
 *                    reduce-scattered, parameters all-gathered; no overlap
 *                    with the backward); 0 = every rank keeps all of them
 *                    (bucket_mb and zero change the sums' order at most:
 *                    a run may resume with other values)
 *   precision        "fp32", or "bf16": mixed precision, the dense layers'
 *                    products from bf16-rounded operands with fp32 sums
 *                    (core/blas.h's MATMUL_BF16; weights, gradients, AdamW
 *                    and everything else fp32), where the CPU has a fast bf16
 *                    dot product (AVX512-BF16; elsewhere fp32, said once at
 *                    the start). The held-out evaluations stay fp32. A run
 *                    may resume with the other value; summary.json names
 *                    the precision that ran.
 * Relative paths are relative to the current directory. */
#ifndef GLUE_PRETRAIN_CONFIG_H
#define GLUE_PRETRAIN_CONFIG_H

#include <stdint.h>

#include "models/bert/bert.h"
#include "pretrain/corpus.h"

typedef struct cJSON cJSON;

enum { PRETRAIN_MAX_CORPUS = 64 };

/* Where `glue data fetch pretrain` puts the text (relative to the current directory). */
#define PRETRAIN_DEFAULT_WIKI "data/pretrain/enwiki-2015-wikiextractor/enwiki_2015_AA00-AC29.txt.gz"
#define PRETRAIN_DEFAULT_WIKI2 "data/pretrain/enwiki-2015-wikiextractor/enwiki_2015_AC30-AD99.txt.gz"
#define PRETRAIN_DEFAULT_BROWN "data/pretrain/brown/brown_tagged.txt.gz"
#define PRETRAIN_DEFAULT_EVAL "data/pretrain/wikitext-2/wiki.valid.tokens.gz"

typedef struct PretrainConfig {
    cJSON *json;                       /* the whole config (owned); strings below point into it */
    const char *model;
    const char *init;                  /* "": random init; else a checkpoint or run directory to start from */
    int init_stack;                    /* with init: grow its layers into the deeper model */
    long init_step, rewarm;            /* with init: the schedule's step to start at; re-warm-up steps */
    BertConfig bert;                   /* resolved from model, dropout applied */
    const char *vocab;                 /* resolved path */
    CorpusFile corpus[PRETRAIN_MAX_CORPUS];
    int n_corpus;
    CorpusFile eval_corpus;
    int seq_len, batch, accumulate;
    long steps, warmup;
    double lr, weight_decay, beta1, beta2, adam_eps, clip, dropout;
    const char *schedule;
    double mask_prob, short_seq_prob;
    int max_predictions, whole_word;
    long checkpoint_every, log_every, eval_every, eval_batches;
    uint64_t seed;
    double mask_token_prob, random_token_prob;   /* masking split (80/10/10) */
    const char *objective;             /* "mlm" or "electra" */
    double generator_size;             /* ELECTRA: generator width / discriminator width */
    int generator_layers;              /* ELECTRA: 0 = the discriminator's */
    double disc_weight;                /* ELECTRA: lambda, the discriminator loss weight (50) */
    BertConfig generator;              /* ELECTRA: resolved generator config */
    double bucket_mb;                  /* data parallel: gradient sum bucket size (MiB; 0 = one sum) */
    int zero;                          /* data parallel: 1 = ZeRO-1 sharded optimizer state */
    int precision;                     /* a MatmulPrecision (core/blas.h): fp32, or bf16 products */
} PretrainConfig;

/* The default config (caller frees). */
cJSON *pretrain_config_defaults(void);
/* The table of its numbers, flags and names (models/run_config.h), for help. */
const struct SettingSpec *pretrain_config_settings(int *n);
/* 1 for the replaced-token detection objective. */
int pretrain_config_is_electra(const PretrainConfig *pc);
/* The generator's BertConfig of an ELECTRA run (pc->generator). 0 ok, -1 after a message. */
int pretrain_generator_config(const PretrainConfig *pc, BertConfig *g);

/* Defaults < config_file (may be NULL) < sets[i] ("key=value"; origin[i]
 * names each for messages) < corpus (n_corpus > 0: replaces "corpus"; each
 * "FILE" or "FORMAT:FILE", e.g. "brown:corpus.txt", as in the config).
 * 0 ok; otherwise one message and EXIT_USAGE. */
int pretrain_config_build(PretrainConfig *pc, const char *config_file, const char *const *sets,
                          const char *const *origin, int nsets, const char *const *corpus, int n_corpus);
/* Reads the fields from pc->json (after editing it). 0 ok, EXIT_USAGE after a message. */
int pretrain_config_parse(PretrainConfig *pc);
/* Only the numbers, flags and names of the settings table from a stored
 * config j (the "pretrain" record of a run's checkpoint; absent keys take
 * their defaults), nothing resolved (model, vocab and corpus may not exist
 * here): what a run's checkpoint says of its recipe. pc owns nothing (its
 * strings point into j). 0 ok, -1 after a message naming origin. */
int pretrain_config_read_settings(const cJSON *j, const char *origin, PretrainConfig *pc);
void pretrain_config_free(PretrainConfig *pc);

/* One corpus entry: "FILE", "FORMAT:FILE" or {"path": FILE, "format": FORMAT}
 * (f->path points into e). 0 ok; -1 after a message naming key. */
int pretrain_corpus_entry(const cJSON *e, CorpusFile *f, const char *key);

/* Keys that may differ between a run and its resumption (NULL-terminated):
 * checkpoint_every, log_every, eval_every, eval_batches, eval_corpus (they
 * change nothing that is computed); bucket_mb, zero (the sums' order) and
 * precision (the products' rounding: a bf16 run resumed on a CPU without bf16
 * runs fp32); steps (a resumed run may change its length: the schedule's end
 * moves). */
extern const char *const PRETRAIN_FREE_KEYS[];

#endif
