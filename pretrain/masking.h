/* masking.h — BERT's masked-LM corruption, drawn afresh every time a sequence
 * is seen (dynamic masking, as RoBERTa; BERT fixed it once per copy of the data).
 *
 * Exactly the reference's create_masked_lm_predictions:
 *   - candidates: every token except the special ones ([CLS] [SEP] [PAD]
 *     [MASK] and [UNK] — an unknown word is no target worth predicting, and
 *     WikiText's <unk> placeholders become [UNK]);
 *   - with whole_word, a candidate is a word: a piece plus the "##" pieces
 *     that follow it, masked all together or not at all;
 *   - the number of targets is min(max_predictions, max(1, round(len * prob)))
 *     with len the sequence length including [CLS]/[SEP]; candidates are taken
 *     in random order, a word that would overshoot the number is skipped;
 *   - each target token independently: 80% [MASK], 10% a random token, 10%
 *     unchanged (the reference's "else: 50/50" of the remaining 20%); other
 *     splits are settings (mask_frac, random_frac: ELECTRA uses 85/0/15). The
 *     random token is uniform over the vocabulary minus the special tokens.
 * Targets are returned sorted by position. Everything comes from the given
 * Rng, whose state the caller checkpoints: same state, same masks. */
#ifndef GLUE_PRETRAIN_MASKING_H
#define GLUE_PRETRAIN_MASKING_H

#include "core/rng.h"
#include "text/vocab.h"

/* Longest sequence masking_apply takes (BERT's max_position_embeddings). */
enum { MASKING_MAX_LEN = 512 };

typedef struct MaskConfig {
    double prob;                    /* 0.15 (double, as the reference's Python float) */
    int max_predictions;            /* per sequence; BERT: 20 for T = 128 */
    int whole_word;
    double mask_frac;               /* of the targets -> [MASK] (0.8; ELECTRA 0.85) */
    double random_frac;             /* of the targets -> a random token (0.1; ELECTRA 0) */
    int vocab_size;
    int mask_id;
    unsigned char *is_special;      /* (V) owned: never a target or a random replacement */
    unsigned char *is_cont;         /* (V) owned: "##" continuation pieces */
} MaskConfig;

/* Tables from the vocabulary, BERT's 80/10/10 split (change mask_frac and
 * random_frac after, with mask_frac + random_frac <= 1; the rest of the
 * targets stay unchanged). -1 after a message when it lacks [MASK]. */
int masking_init(MaskConfig *mc, const Vocab *v, double prob, int max_predictions, int whole_word);
void masking_free(MaskConfig *mc);

/* Corrupts ids[0..len) (len <= MASKING_MAX_LEN) in place. Writes each target's
 * position t (ascending) and original id to positions/labels (room for
 * max_predictions) and returns how many. */
int masking_apply(const MaskConfig *mc, Rng *rng, int *ids, int len, int *positions, int *labels);

#endif
