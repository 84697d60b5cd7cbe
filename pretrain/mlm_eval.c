/* mlm_eval.c — held-out masked-LM loss and accuracy (see mlm_eval.h). */
#include "pretrain/mlm_eval.h"

#include "core/checkpoint.h"
#include "core/common.h"
#include "core/files.h"
#include "pretrain/pretrain_config.h"
#include "pretrain/token_cache.h"
#include "pretrain/train.h"
#include "text/tokenizer.h"

#include <cjson/cJSON.h>

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
        bert_forward_rows(m, &(BertBatch){batch->B, batch->T, batch->ids, NULL, batch->lengths}, batch->positions,
                          batch->n_masked, NULL);
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

/* The model in a checkpoint file or a run directory (its model.ckpt); it must
 * have the MLM head. *vocab: the vocabulary stored with it, or NULL. */
static Bert *mlm_eval_load(const char *init, Vocab **vocab) {
    char path[4200];
    pretrain_ckpt_path(init, path, sizeof path);
    Checkpoint *c = checkpoint_read(path);
    Bert *m = c ? bert_from_checkpoint(c, NULL, 0, 0) : NULL;
    *vocab = m ? bert_checkpoint_vocab(c) : NULL;
    checkpoint_free(c);
    if (m && !m->heads.mlm) {
        user_error("pass a checkpoint of glue pretrain (it keeps the MLM head)", "%s has no masked-LM head", path);
        bert_free(m);
        vocab_free(*vocab);
        *vocab = NULL;
        return NULL;
    }
    return m;
}

int mlm_eval_checkpoint(const MlmEvalRequest *r, MlmEvalResult *out, const char **corpus_path) {
    cJSON *spec = cJSON_CreateString(r->corpus);
    CorpusFile cf;
    if (pretrain_corpus_entry(spec, &cf, "--corpus")) {
        cJSON_Delete(spec);
        return EXIT_USAGE;
    }
    /* The vocabulary: r->vocab, else the checkpoint's own, else the default. */
    const char *vocab_path = r->vocab;
    Vocab *v = NULL;
    Bert *m = mlm_eval_load(r->init, &v);
    if (m && (vocab_path || !v)) {
        vocab_free(v);
        if (!vocab_path) vocab_path = tokenizer_default_vocab_path();
        v = vocab_load(vocab_path);
    }
    if (!vocab_path) vocab_path = "the checkpoint's vocabulary";
    MaskConfig mc = {0};
    TokenCache *tc = NULL;
    int rc = 1, T = r->seq_len;
    if (!v) goto done;
    if (vocab_size(v) != m->cfg.vocab_size || T > m->cfg.max_position) {
        user_error("pass the vocabulary the model was trained with (--vocab) and --seq-len <= its positions",
                   "%s has %d tokens, the model %d (and %d positions)", vocab_path, vocab_size(v),
                   m->cfg.vocab_size, m->cfg.max_position);
        rc = EXIT_USAGE;
        goto done;
    }
    int max_pred = mlm_eval_max_predictions(T);
    if (masking_init(&mc, v, MLM_EVAL_MASK_PROB, max_pred, 0)) goto done;
    TokenCacheBuild b = {.files = &cf, .n_files = 1, .vocab = v, .lowercase = 1, .show_progress = !r->quiet};
    tc = token_cache_find(&b, r->cache ? r->cache : token_cache_default_dir());
    if (!tc) goto done;
    const VocabSpecials *sp = vocab_specials(v);
    PretrainStreamConfig sc = {.seq_len = T, .cls_id = sp->cls, .sep_id = sp->sep, .is_cont = mc.is_cont};
    MlmBatch batch;
    mlm_batch_init(&batch, r->batch, T, max_pred, sp->pad);
    bert_reserve(m, r->batch, T, batch.max_masked, 0);
    if (mlm_eval_run(m, tc, &sc, &mc, r->seed, r->max_batches, &batch, r->batch, out) == 0) {
        /* cf.path points into spec (freed below): the same place in r->corpus */
        *corpus_path = r->corpus + (cf.path - spec->valuestring);
        rc = 0;
    }
    mlm_batch_free(&batch);
done:
    token_cache_close(tc);
    masking_free(&mc);
    vocab_free(v);
    bert_free(m);
    cJSON_Delete(spec);
    return rc;
}
