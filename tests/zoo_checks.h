/* zoo_checks.h — the checks every word model of the zoo passes through
 * ModelOps alone (tests only): save/load gives the same predictions and
 * refuses another task's file; training interrupted after an epoch, saved
 * with its state, loaded and continued is bit-identical to an uninterrupted
 * run; a row's prediction does not depend on the rest of its batch; a
 * non-finite gradient is refused. The model
 * must be a word model (models/baselines/word_model_io.h: a WordModelBase first).
 * And the comparison of a model's logits and parameter gradients with its
 * PyTorch reference script. */
#ifndef GLUE_TESTS_ZOO_CHECKS_H
#define GLUE_TESTS_ZOO_CHECKS_H

#include "core/params.h"
#include "models/model.h"
#include "tests/synth_task.h"
#include "tests/torchref.h"

/* cfg trains for at least 2 epochs in resume; st's task is two-class. */
void zoo_check_save_load(const ModelOps *ops, const SynthTask *st, const cJSON *cfg);
void zoo_check_resume_exact(const ModelOps *ops, const SynthTask *st, const cJSON *cfg);
/* Also on a fresh model: a batch of more, shorter rows after one of fewer,
 * longer rows (an evaluation batch after training batches) predicts as the rest.
 * tol: 0 for bit-identical rows; a model whose GEMMs run over its whole batch
 * may differ in the last bits (BLAS blocking), so it passes its bound. */
void zoo_check_batch_independent(const ModelOps *ops, const SynthTask *st, const cJSON *cfg, double tol);

/* A gradient with a NaN: update returns -1 and changes no weight (the
 * harness then reports the divergence). */
void zoo_check_divergence_refused(const ModelOps *ops, const SynthTask *st, const cJSON *cfg);

/* Runs tests/ref/<script> <args> on every tensor of p (by name) followed by
 * extra[n_extra], and checks the reference's "logits" against logits[n_logits]
 * and its "grad.<name>" against each gradient of p (after the caller's forward
 * and backward), all within tol. The first pad_row values of the tensor "emb"
 * (the padding row, held at zero by the model) are not compared. label starts
 * each failure message. Skips when torch is unavailable. */
void zoo_check_torch_grads(const char *script, const char *args, const Params *p, const RefTensor *extra, int n_extra,
                           const float *logits, long n_logits, double tol, long pad_row, const char *label);

#endif
