/* run_dir.h — where a fine-tuned model lives on disk, and its results file.
 *
 * One directory per (task, model): runs/<task>/<model>/ (root: $GLUE_RUNS or
 * "runs"), or whatever `glue finetune --out DIR` names. It holds
 *   model.ckpt    the best checkpoint (by the task's primary metric on dev)
 *   config.json   the model config the run used (defaults + user overrides)
 *   results.json  what happened (schema below)
 *   <submit>      leaderboard predictions written by `glue eval --split test`
 * and, only while a run is unfinished (for `glue finetune --resume`), its
 * resume point: resume/ and resume.prev/ (resume.h); while a run is running,
 * its lock run.lock (run_lock.h).
 *
 * A run directory is a transaction (run_txn.h): every refusal comes
 * before anything is written; one run at a time holds it; a run that replaces
 * another (--overwrite) trains in the stage <dir>.next and is swapped in
 * (renameat2 RENAME_EXCHANGE) only when it finished, so the directory always
 * holds the old run or the new one, never a mix; an interrupted run is never
 * started over unless asked.
 *
 * results.json (metric values ×100, keys as metric_name()):
 *   { "task": "mrpc", "model": "fasttext", "command": "glue finetune mrpc ...",
 *     "seed": 1, "threads": 2, "config": {...}, "num_params": 123456,
 *     "inputs": {"init": {"file": ..., "bytes": ..., "crc32": ...}},   (run_inputs.h)
 *     "train_examples": 3668, "train_seconds": 12.5, "train_examples_per_sec": 880.4,
 *     "eval_examples_per_sec": 50000.0,
 *     "selection": "mean of f1 and accuracy on dev",
 *     "labels": ["0", "1"],   (the label order the model was trained with; run_txn.h)
 *     "epochs": [ {"epoch": 1, "loss": 0.61, "seconds": 4.1, "score": 80.2, "dev_loss": 0.52,
 *                  "dev": {"f1": 81.0, "accuracy": 79.4}}, ... ],
 *     "best": {"epoch": 2, "score": 82.3, "dev": {"f1": 83.1, "accuracy": 81.5}} }
 * Each dev split is a key of its own ("dev", or "dev_matched" and
 * "dev_mismatched" for MNLI); "score" is the selection score (mean of the
 * selection split's metrics), "dev_loss" its loss (a tie on the score goes
 * to the lower: loop.h). The file is written once, when training ends: its
 * presence means a finished run. */
#ifndef GLUE_RUN_DIR_H
#define GLUE_RUN_DIR_H

#include <stddef.h>
#include <stdint.h>

#include "models/model.h"

typedef struct cJSON cJSON;

#define RUN_CKPT          MODEL_CKPT   /* models/model.h */
#define RUN_CONFIG        "config.json"
#define RUN_RESULTS       "results.json"
#define RUN_RESUME_DIR    "resume"
#define RUN_LAST_CKPT     "last.ckpt"
#define RUN_LAST_STATE    "last.state"
#define RUN_TRAINER_STATE "trainer.json"

/* Root of the run directories: $GLUE_RUNS or "runs". */
const char *run_root(void);
/* Where tables for several runs go (compare.json, compare.md, glue.json,
 * benchmarks, screens): $GLUE_RESULTS or <run_root()>/results — never the
 * repository's committed results/ unless asked (--results, GLUE_RESULTS). */
const char *run_results_root(void);
/* "<root>/<task>/<model>" into out (cap bytes); DIE if it does not fit. */
void run_dir_path(const char *task, const char *model, char *out, size_t cap);
/* "<dir>/<file>": core/files.h file_join. */
/* Directories, JSON files and atomic writes: core/files.h. */

/* ---- every training run's (fine-tuning, translation, pretraining) ---- */

/* A run starts: out_dir made, a stale results file (RUN_RESULTS, or
 * pretraining's summary.json) removed, as it would look finished, and
 * config.json written (a running job shows its settings). 0, or 1. */
int run_dir_begin(const char *out_dir, const char *results, const cJSON *config);
/* The head of every results file: {"command", "seed", "threads",
 * "provenance" (core/provenance.h), "config" (a copy; left out when NULL)}.
 * The driver adds its own fields. Caller frees. */
cJSON *run_results_head(const char *command, uint64_t seed, int threads, const cJSON *config);
/* A run ends: the results file (its presence: a finished run), then the
 * resume point removed unless keep_resume (pretraining's stays). 0, or 1. */
int run_dir_finish(const char *out_dir, const char *results_file, const cJSON *results, int keep_resume);

#endif
