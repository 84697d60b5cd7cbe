/* ensemble.h — a combination of finished runs scored as one model: the
 * weighted mean of its members' probabilities (combine=probs) or logits
 * (combine=logits, then the task's softmax or sigmoid), or their weighted
 * vote (combine=vote: stacked boosting's SAMME combination, each member's
 * arg-max counted with its weight; single-label). A regression member
 * contributes its score in every mode.
 *
 * Two model kinds share this code: "ensemble" (`glue ensemble`) and "boost"
 * (`glue boost`), so that compare shows them as rows of their own. Neither is
 * trained by `glue finetune`: they are built from runs (experiments/
 * ensemble_build.h). model_find finds them; model_at does not list them.
 *
 * The checkpoint (model.ckpt) holds no tensors, only the config:
 *   {"model": "ensemble", "combine": "probs",
 *    "members": [{"run": "/abs/runs/sst2/fasttext", "model": "fasttext", "weight": 0.5,
 *                 "results_crc": "1a2b3c4d"}, ...]}
 * A member is loaded from its own run directory (its model.ckpt), so a
 * member retrained since (another results.json, results_crc) is refused
 * with a message: the ensemble would no longer be what was measured. */
#ifndef GLUE_MODELS_ENSEMBLE_H
#define GLUE_MODELS_ENSEMBLE_H

#include "models/model.h"

#define ENSEMBLE_MODEL "ensemble"
#define BOOST_MODEL "boost"
enum { ENSEMBLE_MAX_MEMBERS = 32 };

typedef enum { ENSEMBLE_PROBS, ENSEMBLE_LOGITS, ENSEMBLE_VOTE } EnsembleCombine;
extern const char *const ENSEMBLE_COMBINES[3];   /* "probs", "logits", "vote" */

extern const ModelOps ENSEMBLE_OPS, BOOST_OPS;

/* 1 when ops is one of the two (not trainable: built from runs). */
int ensemble_is(const ModelOps *ops);
/* A combination from its config (above; members' runs loaded for task t).
 * NULL after a message. */
Model *ensemble_from_config(const cJSON *config, const Task *t);
int ensemble_size(const Model *m);
/* Member i's outputs for rows[0..n) of e (the ensemble's features) in the
 * space its combine averages: probabilities (or scores), or logits (a member
 * without logits, fastText: the log of its probabilities, or their log-odds
 * under sigmoid). out (n, K). */
void ensemble_member_outputs(Model *m, int i, const Encoded *e, const int *rows, int n, float *out);
/* The combination of M members' outputs (each (n, K), as above) under
 * weights w (M, >= 0, any sum > 0) into out (n, K): what predict reports.
 * multi: sigmoid outputs; K = 1: scores. */
void ensemble_combine(EnsembleCombine how, int multi, const float *const *outs, const double *w, int M, long n,
                      int K, float *out);
/* The members' weights now used (M), and replaced (the ensemble's config
 * follows, so save writes them). */
void ensemble_weights(const Model *m, double *w);
void ensemble_set_weights(Model *m, const double *w);
EnsembleCombine ensemble_combine_of(const Model *m);
/* Its config (as save writes it: the weights now used). */
const cJSON *ensemble_config_of(const Model *m);

#endif
