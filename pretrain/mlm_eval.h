/* mlm_eval.h — held-out masked-LM loss and accuracy.
 *
 * The text (e.g. WikiText-2 valid) is read in corpus order, packed into
 * full-length sequences (no random short ones) and masked with BERT's standard
 * rule (15% of tokens, 80/10/10, token level) drawn from a FIXED seed, so the
 * same text gives the same masked positions for every model and every run:
 * numbers from different checkpoints are comparable. Loss is the mean
 * cross-entropy over all masked positions (not a mean of batch means), and
 * accuracy the fraction of them whose arg-max is the original token. */
#ifndef GLUE_PRETRAIN_MLM_EVAL_H
#define GLUE_PRETRAIN_MLM_EVAL_H

#include <stdint.h>

#include "models/bert/bert.h"
#include "pretrain/mlm_batch.h"

/* The masking seed of `glue pretrain eval` unless --seed says otherwise. */
enum { MLM_EVAL_SEED = 12345 };
/* The standard evaluation masks 15% of the tokens, token level. */
#define MLM_EVAL_MASK_PROB 0.15

/* Targets per sequence the standard masking can choose for length T (no cap
 * below that, so every evaluation masks alike): round(0.15 T), at least 1. */
int mlm_eval_max_predictions(int T);

typedef struct MlmEvalResult {
    double loss, accuracy;   /* mean over masked positions; accuracy in [0, 1] */
    long masked, sequences, tokens;
    double seconds;
} MlmEvalResult;

/* Evaluates m (its MLM head; no dropout) on the cache. sc: the sequences
 * (its shuffle and short_prob are ignored: corpus order, full length); mc:
 * the masking (the standard is 0.15, token level), drawn from mask_seed.
 * batch: buffers for B rows of at least sc->seq_len; m reserved for them.
 * max_batches 0: the whole text. 0 ok, -1 after a message. */
int mlm_eval_run(Bert *m, TokenCache *cache, const PretrainStreamConfig *sc, const MaskConfig *mc,
                 uint64_t mask_seed, long max_batches, MlmBatch *batch, int B, MlmEvalResult *out);

/* `glue pretrain eval`: the model in init (a checkpoint of glue pretrain, or
 * its run directory), with vocab (NULL: the checkpoint's own, else the
 * default), on corpus ("FILE" or "FORMAT:FILE"), its tokens cached in cache
 * (NULL: the default), standard masking from seed. *corpus_path: the corpus
 * file as read. 0 ok; 1, or EXIT_USAGE for a mismatch of model and options,
 * after a message. */
typedef struct MlmEvalRequest {
    const char *init, *corpus, *vocab, *cache;
    int batch, seq_len;
    uint64_t seed;
    long max_batches;   /* 0: the whole text */
    int quiet;          /* no progress display */
} MlmEvalRequest;
int mlm_eval_checkpoint(const MlmEvalRequest *r, MlmEvalResult *out, const char **corpus_path);

#endif
