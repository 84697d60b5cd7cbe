/* dev_loss.h — the loss of a split's reported outputs against its gold: what
 * breaks a tie on the selection metric (a model already perfect on a small
 * dev set still learns: its loss falls), and what says a dev set is too
 * small to select an epoch on. */
#ifndef GLUE_TRAIN_DEV_LOSS_H
#define GLUE_TRAIN_DEV_LOSS_H

#include "tasks/task.h"

/* Fewer selection rows than this: a warning that the choice of epoch is
 * mostly noise (one row moves accuracy by more than 3 points). */
enum { DEV_LOSS_MIN_SELECT_ROWS = 30 };

/* Mean cross-entropy -log p(gold) of out (n, K probabilities) over d's
 * labelled rows, mean binary cross-entropy per label of out (n, K sigmoid
 * probabilities) for a multi-label task, or mean squared error of out (n, 1
 * scores) for regression; rounded to 1e-6 (so it reads back from JSON
 * exactly: a resumed run breaks ties as an uninterrupted one). NaN when no
 * row is labelled. */
double dev_loss(const Task *t, const Dataset *d, const float *out);

#endif
