/* step.h — one training step of any model, composed in one place:
 *
 *   forward to logits (ModelOps.forward) -> the head's loss and dlogits
 *   (head.h) -> backward (ModelOps.backward) -> the gradient summed over
 *   data-parallel ranks (core/dist_grad.h; started during the backward for a
 *   model that says which gradients are final) -> update (ModelOps.update:
 *   the model's clipping, optimizer and constraints).
 *
 * A model whose output layer is its loss (fastText, ModelOps.train_step)
 * takes its own step; callers need not know which kind they hold. */
#ifndef GLUE_STEP_H
#define GLUE_STEP_H

#include "models/model.h"

typedef struct TrainStep TrainStep;

/* Steps of m on train (its examples: the head's targets) and the model's
 * features of it, train_e (row r of one is row r of the other). */
TrainStep *train_step_create(const ModelOps *ops, Model *m, const Dataset *train, const Encoded *train_e);
/* One optimizer step on rows[0..n) of the training split; the mean loss over
 * them, or NaN when the gradient was not finite (nothing updated). Data
 * parallel, every rank calls it at every step, with its own rows (n may be 0). */
/* The run's loss settings (head.h head_configure; checked before by
 * head_settings_check): class weights, pos_weight, focal loss. Without it
 * the head is plain cross-entropy. Nothing for a model with its own step. */
void train_step_configure(TrainStep *s, const cJSON *config);
/* What the head computes (head_describe), or NULL for a model with its own
 * step. Caller frees. */
cJSON *train_step_describe(const TrainStep *s);
/* The head the step's loss goes through (head.h: label-error class weights,
 * per-example weights), or NULL for a model with its own step. */
struct Head *train_step_head(TrainStep *s);
float train_step_run(TrainStep *s, const int *rows, int n, const TrainState *st);
void train_step_free(TrainStep *s);

#endif
