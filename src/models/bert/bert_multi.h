/* bert_multi.h — BERT for several tasks at once: multi-task fine-tuning as
 * MT-DNN (Liu et al. 2019) does it, one encoder (with its pooler) shared by
 * all tasks and one head per task — the classifier, the regressor or the
 * pair-features head that each task's settings choose (pair_encoding), as
 * when it is fine-tuned alone.
 *
 * Each task is an ordinary BERT model behind BERT_OPS (bert_task.h: a
 * BertTaskModel over the shared encoder, its head attached at each forward),
 * so the harness's step, head and evaluation train and score it as they do
 * a single task's model; a step of task t updates the encoder (one AdamW
 * state for all tasks) and t's head (its own AdamW state, stepped only on
 * t's batches, as PyTorch's Adam skips parameters without a gradient), with
 * one gradient-norm clip over both.
 *
 * model.ckpt: a BERT checkpoint of the encoder without a classifier, with
 * its vocabulary, so that `glue finetune TASK --init RUN` starts from it as
 * from any pretrained encoder (a fresh head; the multi-task heads are left
 * behind); the heads ride along as "tasks.<task>.classifier.{weight,bias}"
 * and the config names the tasks under "multitask". The state (resume):
 * the encoder's AdamW moments, each head's, and each task's dropout RNG. */
#ifndef GLUE_BERT_MULTI_H
#define GLUE_BERT_MULTI_H

#include <stdint.h>

#include "models/model.h"

typedef struct BertMulti BertMulti;

/* A model for tasks[0..n) with their configs (configs[i]: task i's
 * settings; the encoder's, init included, are configs[0]'s), fresh heads
 * drawn from seed. NULL after a message. */
BertMulti *bert_multi_create(const cJSON *const *configs, const Task *const *tasks, int n, uint64_t seed);
void bert_multi_free(BertMulti *mm);
/* Task i's model, for BERT_OPS (forward, backward, update, encode, length);
 * owned by mm. */
Model *bert_multi_task(BertMulti *mm, int i);
/* Parameters: the encoder's and every head's. */
long bert_multi_num_params(const BertMulti *mm);
/* model.ckpt as above. 0, or -1 after a message. */
int bert_multi_save(const BertMulti *mm, const char *path);
/* The weights of a file bert_multi_save wrote for the same tasks (resume). */
int bert_multi_load(BertMulti *mm, const char *path);
/* Optimizer states and dropout RNGs, for an exact --resume. */
int bert_multi_save_state(const BertMulti *mm, const char *path);
int bert_multi_load_state(BertMulti *mm, const char *path);

#endif
