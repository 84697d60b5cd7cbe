/* translate.h — a translation training run (`glue translate train`), a
 * client of the training harness (loop.h) that supplies the step, the dev
 * evaluation and the files; and corpus translation/scoring shared with
 * `glue translate eval`. The model itself is models/seq2seq/.
 *
 * Run config: the model's keys (seq2seq.h S2sConfig, vocab_size excepted)
 * and the run's (`glue translate --help-settings` lists them with defaults
 * and ranges), overridden by --config F and --set key=value:
 *   data_dir, src, tgt, train, dev   <data_dir>/<split>.<lang> files
 *   vocab        a vocabulary file, or "" to train one (cased, joins marked,
 *                vocab_tokens tokens, on both sides of train) into the run dir
 *   max_tokens   source or target tokens per batch, padding counted
 *   lr, warmup   peak rate after `warmup` steps, then lr * sqrt(warmup / step)
 *   dev_beam, beam, alpha, extra_len, eval_batch   decoding of dev / test
 *   save_minutes how often the resume point is written within an epoch
 *   max_steps    0, or stop after that many steps (the partial epoch is
 *                evaluated like a full one): fixed budgets for comparisons
 *   average_last 0, or score the mean of the last N epochs' weights
 *                (averaged.ckpt), which becomes model.ckpt if it is the best
 *
 * Run directory (--out, default runs/translate):
 *   model.ckpt    the best checkpoint by dev BLEU (weights + vocabulary)
 *   vocab.txt     the vocabulary, when the run trained it
 *   config.json   the run config; results.json at the end (history, best,
 *                 wall and CPU seconds: CPU summed over resumed sessions)
 *   resume/       while unfinished, the resume point (resume.h): last.ckpt
 *                 the weights, last.state AdamW's moments and the dropout
 *                 RNG; every save_minutes, checkpoint_every steps, epoch end
 *                 and on SIGINT/SIGTERM: --resume continues exactly.
 * The directory is a transaction (run_txn.h): locked while a run trains in
 * it; a finished or interrupted run in it is refused before anything is
 * written unless --resume or --overwrite, and --overwrite trains in
 * <out_dir>.next, swapped in only when the new run finished. */
#ifndef GLUE_TRAIN_TRANSLATE_H
#define GLUE_TRAIN_TRANSLATE_H

#include <stdint.h>

#include "models/seq2seq/seq2seq.h"
#include "models/seq2seq/seq2seq_data.h"
#include "train/loop.h"

typedef struct cJSON cJSON;

/* The defaults of every run-config key. Caller frees. */
cJSON *s2s_run_config_default(void);
/* The table of the run's own keys (models/run_config.h; the model's keys are
 * S2sConfig's): their ranges for --help-settings. */
struct SettingSpec;
const struct SettingSpec *s2s_run_settings(int *n);
/* The defaults overridden by the object in `file` (NULL: none) and then by
 * sets[i] = "key=value" (origin[i] names the option, may be NULL), with
 * models/run_config.h's rules: unknown keys or other kinds of values are
 * usage errors. NULL after a message. */
/* The decoding settings of a run's config (beam, alpha, extra_len; defaults
 * where absent), range-checked like every setting: 0, or EXIT_USAGE after one
 * message that starts with `who` (say, the config's path) and names the key: a
 * hand-edited config.json never reaches the decoder with a beam of 0. */
int s2s_decode_settings(const cJSON *run_config, const char *who, S2sDecodeOptions *dec);
cJSON *s2s_run_config_build(const char *file, const char *const *sets, const char *const *origin, int nsets);

typedef struct S2sTrainOptions {
    const cJSON *config;   /* the run config */
    uint64_t seed;
    int threads;           /* recorded in results.json */
    const char *out_dir;
    const char *command;   /* recorded in results.json */
    int resume;
    int overwrite;         /* replace a run in out_dir: trained in <out_dir>.next, swapped in
                            * when it finished (run_txn.h) */
    int show_progress;     /* per-epoch lines (and a progress bar on a terminal) on stderr */
    long stop_at;          /* > 0: save the resume point and stop once this many steps are
                            * done (a planned interruption; --resume continues) */
    long checkpoint_every; /* > 0: also save the resume point every this many steps (besides
                            * save_minutes and the epoch ends); SIGINT/SIGTERM save it at
                            * the next step boundary and stop (exit 128 + signal) */
} S2sTrainOptions;

/* Trains and writes the run directory. 0, TRAIN_STOPPED (loop.h: stopped at
 * stop_at), 128 + signal, or 1 (failed: data, divergence, disk) / 2 (bad
 * setting) after one clear message. */
int s2s_train(const S2sTrainOptions *o);

/* A finished run's model.ckpt in half precision (half the bytes; decoding
 * reads it back to float) with the run's config.json and results.json, in
 * out_dir: what a shipped model is made from. 0, or 1 after a message. */
int s2s_snapshot(const char *run_dir, const char *out_dir);

/* Detokenised translations of corpus c's sources, in corpus order (sentences
 * are decoded batch_sents at a time in length order). Caller frees each and
 * the array. */
char **s2s_translate_corpus(Seq2Seq *m, const S2sCorpus *c, const S2sDecodeOptions *o, int batch_sents);

/* Mean per-token NLL and smoothed loss of c under m (no dropout), batched by
 * max_tokens. */
S2sLoss s2s_corpus_loss(Seq2Seq *m, const S2sCorpus *c, int max_tokens);

#endif
