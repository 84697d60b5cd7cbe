/* masking.c — BERT's dynamic masked-LM corruption (see masking.h). */
#include "pretrain/masking.h"

#include "core/common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The reference's split of the targets: 80% [MASK], of the rest half a
 * random token, half unchanged. */
#define MASKING_MASK_FRAC 0.8
#define MASKING_RANDOM_FRAC 0.1

int masking_init(MaskConfig *mc, const Vocab *v, double prob, int max_predictions, int whole_word) {
    memset(mc, 0, sizeof *mc);
    const VocabSpecials *sp = vocab_specials(v);
    if (sp->mask < 0) {
        user_error("use a BERT vocabulary (it has [MASK])", "the vocabulary has no [MASK] token");
        return -1;
    }
    mc->prob = prob;
    mc->max_predictions = max_predictions;
    mc->whole_word = whole_word;
    mc->mask_frac = MASKING_MASK_FRAC;
    mc->random_frac = MASKING_RANDOM_FRAC;
    mc->vocab_size = vocab_size(v);
    mc->mask_id = sp->mask;
    mc->is_special = xcalloc((size_t)mc->vocab_size, 1);
    mc->is_cont = xcalloc((size_t)mc->vocab_size, 1);
    const int specials[] = {sp->pad, sp->unk, sp->cls, sp->sep, sp->mask};
    for (int i = 0; i < (int)(sizeof specials / sizeof specials[0]); i++)
        if (specials[i] >= 0) mc->is_special[specials[i]] = 1;
    for (int id = 0; id < mc->vocab_size; id++) {
        const char *t = vocab_token(v, id);
        mc->is_cont[id] = strncmp(t, VOCAB_CONT_PREFIX, VOCAB_CONT_PREFIX_LEN) == 0 && t[VOCAB_CONT_PREFIX_LEN];
    }
    return 0;
}

void masking_free(MaskConfig *mc) {
    free(mc->is_special);
    free(mc->is_cont);
    memset(mc, 0, sizeof *mc);
}

static int random_token(const MaskConfig *mc, Rng *rng) {
    for (;;) {
        int id = (int)rng_below(rng, (uint32_t)mc->vocab_size);
        if (!mc->is_special[id]) return id;
    }
}

int masking_apply(const MaskConfig *mc, Rng *rng, int *ids, int len, int *positions, int *labels) {
    CHECK_OR_DIE(len <= MASKING_MAX_LEN);
    /* Candidates: the first position of each group (a token, or with
     * whole_word a word: a piece and the "##" pieces right after it). */
    int start[MASKING_MAX_LEN], ng = 0;
    for (int t = 0; t < len; t++) {
        if (mc->is_special[ids[t]]) continue;
        if (mc->whole_word && mc->is_cont[ids[t]] && t > 0 && !mc->is_special[ids[t - 1]]) continue;
        start[ng++] = t;
    }
    rng_shuffle_int(rng, start, ng);
    int want = (int)lrint((double)len * mc->prob);   /* Python's round: ties to even */
    if (want < 1) want = 1;
    if (want > mc->max_predictions) want = mc->max_predictions;
    unsigned char chosen[MASKING_MAX_LEN] = {0};
    int n = 0;
    for (int g = 0; g < ng && n < want; g++) {
        int s = start[g], k = 1;
        while (mc->whole_word && s + k < len && mc->is_cont[ids[s + k]]) k++;
        if (n + k > want) continue;   /* the reference skips a word that overshoots */
        memset(chosen + s, 1, (size_t)k);
        n += k;
    }
    /* Targets in position order; the 80/10/10 draw per target, in that order. */
    int m = 0;
    for (int t = 0; t < len && m < n; t++) {
        if (!chosen[t]) continue;
        positions[m] = t;
        labels[m++] = ids[t];
        /* Two draws as the reference makes them (the second only when the
         * first did not pick [MASK]); with the defaults the thresholds are
         * exactly its 0.8f and 0.5f. */
        if (rng_uniform(rng) < (float)mc->mask_frac) ids[t] = mc->mask_id;
        else if (mc->random_frac > 0 && rng_uniform(rng) >= (float)(1.0 - mc->random_frac / (1.0 - mc->mask_frac)))
            ids[t] = random_token(mc, rng);
    }
    return m;
}
