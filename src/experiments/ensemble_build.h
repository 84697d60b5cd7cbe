/* ensemble_build.h — a run directory made of finished runs (`glue ensemble`,
 * and the last step of `glue boost`): the members checked, their outputs on
 * dev combined (models/ensemble/ensemble.h), the weights given, equal, or fit
 * on dev, and the directory written as any run's, so that `glue eval --run`,
 * `glue predict --run` and `glue compare` read it as they read a trained one:
 *   model.ckpt     the combination (members' runs and weights; no tensors)
 *   config.json    {"model", "combine", "members", threshold / top_k}
 *   thresholds.json  a multi-label task's rule tuned on dev (decision.h)
 *   results.json   task, model, labels, members [{run, model, weight,
 *                  dev score}], "weights": "given" | "equal" | "dev",
 *                  best {"dev": metrics, "score"}, train_seconds (the
 *                  members' sum: what the ensemble cost), and the caller's
 *                  record (boost: its rounds)
 *
 * Refused before anything is written (run_txn.h), each with one message: a
 * member that is not a finished run, members of another task than the
 * ensemble's or with another label order (the runs record theirs), a finished
 * run in the output directory without overwrite, the output being a member.
 *
 * --weights dev: the best point of the simplex grid of step
 * 1/ENSEMBLE_FIT_STEPS by the selection score on dev: every point for up to
 * 5 members (ties: the nearest to equal weights), else a coordinate search
 * (moves of one step of weight from one member to another, from equal
 * weights, while the score rises). The test split is never looked at; the dev numbers of a fit ensemble are
 * optimistic (results.json says "weights": "dev"). */
#ifndef GLUE_ENSEMBLE_BUILD_H
#define GLUE_ENSEMBLE_BUILD_H

#include "models/ensemble/ensemble.h"

enum { ENSEMBLE_FIT_STEPS = 10 };

typedef struct EnsembleOptions {
    const Task *task;
    const char *kind;                     /* ENSEMBLE_MODEL or BOOST_MODEL */
    const char *runs[ENSEMBLE_MAX_MEMBERS];
    int num_runs;
    const double *weights;                /* (num_runs) given, or NULL: equal, or fit with fit_dev */
    int fit_dev;
    const char *combine;                  /* "probs", "logits", "vote" */
    const cJSON *settings;                /* the multi-label rule (threshold, top_k), or NULL: member 1's */
    const char *out_dir, *command;
    int overwrite;
    const cJSON *record;                  /* copied into results.json under record_key (NULL: none) */
    const char *record_key;
} EnsembleOptions;

/* The checks above, without writing: 0, or the exit code after a message. */
int ensemble_check(const EnsembleOptions *o);
/* Checks, builds and writes the run directory: 0 and *results (results.json,
 * caller frees; may be NULL), or the exit code after a message. */
int ensemble_build(const EnsembleOptions *o, cJSON **results);

#endif
