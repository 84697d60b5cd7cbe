/* mlm_eval.c — held-out masked-LM loss and accuracy (see mlm_eval.h). */
#include "pretrain/mlm_eval.h"

#include "core/common.h"

#include <math.h>
#include <string.h>

int mlm_eval_max_predictions(int T) {
    int n = (int)lrint(MLM_EVAL_MASK_PROB * (double)T);
    return n < 1 ? 1 : n;
}

int mlm_eval_run(Bert *m, TokenCache *cache, const PretrainStreamConfig *sc, const MaskConfig *mc,
                 uint64_t mask_seed, long max_batches, MlmBatch *batch, int B, MlmEvalResult *out) {
    memset(out, 0, sizeof *out);
    double t0 = now_seconds(), loss_sum = 0, hit_sum = 0;
    PretrainStreamConfig ec = *sc;
    ec.shuffle = 0;
    ec.short_prob = 0;
    PretrainStream s;
    stream_init(&s, cache, &ec);
    Rng rng;
    rng_seed(&rng, mask_seed);
    int rc = 0;
    for (long k = 0; max_batches <= 0 || k < max_batches; k++) {
        int n = mlm_batch_fill(batch, &s, mc, &rng, B);
        if (n < 0) { rc = -1; break; }
        if (n == 0) break;
        bert_forward(m, &(BertBatch){batch->B, batch->T, batch->ids, NULL, batch->lengths}, NULL);
        float acc = 0;
        float loss = bert_mlm_loss(m, batch->positions, batch->labels, batch->n_masked, 0, &acc);
        loss_sum += (double)loss * batch->n_masked;
        hit_sum += (double)acc * batch->n_masked;
        out->masked += batch->n_masked;
        out->sequences += n;
        out->tokens += batch->tokens;
    }
    stream_free(&s);
    out->loss = out->masked ? loss_sum / (double)out->masked : 0;
    out->accuracy = out->masked ? hit_sum / (double)out->masked : 0;
    out->seconds = now_seconds() - t0;
    return rc;
}
