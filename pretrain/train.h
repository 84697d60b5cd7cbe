/* train.h — masked-LM and ELECTRA pretraining (`glue pretrain`): a client
 * of the training harness (train/loop.h) that supplies the step, the logging
 * and the held-out evaluation.
 *
 * One run: tokenize the corpus once (token_cache.h), then for `steps`
 * optimizer steps: `accumulate` micro-batches of `batch` sequences (stream.h,
 * dynamic masking masking.h) -> BERT forward -> MLM loss -> backward, the
 * gradient averaged over the micro-batches, clipped to global norm `clip`,
 * AdamW (no decay on biases and LayerNorm) with warm-up + linear decay.
 *
 * The run directory (--out):
 *   config.json   the pretraining config (with the model's BERT config)
 *   resume/       the resume point (train/resume.h): last.ckpt the weights
 *                 with ELECTRA's generator (a model), last.state the AdamW
 *                 moments, data position and RNGs; every checkpoint_every
 *                 steps, at the end and on SIGINT/SIGTERM. Kept when the run
 *                 ends: it may be carried further (another `steps`).
 *   model.ckpt    the weights alone (encoder + MLM head), written with the
 *                 resume point: what `glue finetune --init` takes. Both carry
 *                 the vocabulary (blob BERT_VOCAB_BLOB).
 *   log.jsonl     one JSON object a line: every log_every steps {"step",
 *                 "epoch", "loss", "mlm_acc", "lr", "grad_norm", "tokens",
 *                 "tokens_per_sec", "elapsed"}; held-out evaluations
 *                 {"step", "eval_loss", "eval_acc", "eval_masked"}
 *   summary.json  at the end: steps, tokens, time, final held-out numbers
 * and a progress line with the ETA on stderr.
 *
 * The directory is a transaction (train/run_txn.h): locked while a run
 * trains in it; a finished run (summary.json) or an interrupted one (a
 * resume point without it) is refused before anything is written unless
 * --resume (which also carries a finished run further) or --overwrite, which
 * trains in <out>.next, swapped in only when the new run finished.
 *
 * --resume continues from the resume point EXACTLY: the same losses as a run
 * that was never interrupted (same thread count). Log lines written after
 * that point are dropped, since those steps are computed again.
 *
 * A new run from a snapshot's weights (settings init, init_step, rewarm;
 * pretrain_config.h) starts at step init_step of its schedule with both
 * models as the snapshot holds them, a fresh AdamW and a data order of its
 * own; only what a snapshot does not keep (optimizer moments, data position,
 * RNG states) differs from --resume.
 *
 * Data parallel (`mpirun -np N glue pretrain ...`, core/dist.h): every rank
 * holds the model and reads the same stream, fills and masks every
 * micro-batch of `batch` sequences with the same RNG (so masking and ELECTRA's
 * samples do not depend on N), and computes only its batch / N rows (N must
 * divide batch; the global batch stays batch x accumulate). Its losses are its
 * rows' share of the whole batch's means (Bert.loss_count), so the sum of the
 * ranks' gradients (one MPI_Allreduce per arena after the backward) is the
 * one-process gradient up to summation order; the clip and the AdamW steps
 * then run identically on every rank. Logged numbers are the global ones.
 * Rank 0 alone writes the run directory and runs the held-out evaluations.
 * Dropout: with N > 1 each rank re-seeds its dropout RNG every step from the
 * seed, the step and its rank, so the checkpoint holds nothing per rank and
 * --resume works with any N (exactly with the same N; with another N to
 * summation order, and with dropout > 0 other dropout masks). Every rank
 * reads the resume point and the token cache at start: on several machines, --out
 * and --cache must be on a shared filesystem (or copied to each). One
 * process (N = 1) computes exactly what it did before data parallelism. */
#ifndef GLUE_PRETRAIN_TRAIN_H
#define GLUE_PRETRAIN_TRAIN_H

#include "pretrain/pretrain_config.h"

#define PRETRAIN_MODEL_CKPT "model.ckpt"
#define PRETRAIN_LOG "log.jsonl"
#define PRETRAIN_SUMMARY "summary.json"
#define PRETRAIN_CONFIG "config.json"

/* The checkpoint init names (--init, "init"): the file, or a run directory's model.ckpt. */
void pretrain_ckpt_path(const char *init, char *path, size_t cap);

/* `glue pretrain snapshot RUN_DIR OUT_DIR`: the run's last checkpoint
 * (the weights of RUN_DIR's resume point) as OUT_DIR/model.ckpt in half precision: the encoder
 * with its vocabulary, and of an ELECTRA run the generator's own tensors
 * (electra.h: what it does not share with the encoder), with the step they
 * are from in the config record ("step"); beside it the run's config
 * (pretrain_config.json) and its log so far (log.jsonl). What a session
 * commits so that a long run lost with its machine carries on from these
 * weights (--set init=OUT_DIR --set init_step=STEP, printed) rather than from
 * zero. Still an ordinary BERT checkpoint: `glue finetune --init` reads the
 * encoder and ignores the rest. An OUT_DIR that holds a run (RUN_DIR
 * itself, say) is refused: EXIT_USAGE, nothing written. 0, or 1 after a
 * message. */
int pretrain_snapshot(const char *run_dir, const char *out_dir);

typedef struct PretrainOptions {
    const PretrainConfig *cfg;
    const char *out_dir;
    const char *cache_dir;   /* token caches (token_cache_default_dir() if NULL) */
    const char *command;     /* recorded in summary.json */
    int resume;              /* continue from out_dir's resume point if there is one */
    int overwrite;           /* replace a run in out_dir (in a stage swapped in at the end) */
    long stop_at;            /* > 0: stop at this step as if interrupted (save, exit 0) */
    int threads;             /* recorded */
    int show_progress;
} PretrainOptions;

/* Runs (or continues) a pretraining run. Returns 0 when done or stopped at
 * stop_at, 128 + signal number after saving on SIGINT/SIGTERM, 1 when the work
 * failed (data, divergence, disk), 2 for a bad setting; one message each. */
int pretrain_run(const PretrainOptions *o);

#endif
