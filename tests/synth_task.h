/* synth_task.h — small synthetic text tasks for the model tests (fastText,
 * TextCNN, BiLSTM), and the loop that learns one through ModelOps (tests only).
 *
 * Each kind of data can be solved only by the skill a test is after: class
 * words among noise (a bag of words suffices), the class shown in text b only,
 * whether two texts share a topic (neither text alone tells), word order (both
 * labels have one bag of words), a count (regression). A test describes its
 * data as a SynthTask (kind, vocabularies, lengths) instead of writing its own
 * generator; fixed ranges take no random draw, so data with the same
 * parameters and seed are the same whichever test makes them.
 *
 * Words: class (or topic) words "c<class>k<k>", noise words "n<k>", and for
 * SYNTH_ORDER the words "x" and "y". */
#ifndef GLUE_TESTS_SYNTH_TASK_H
#define GLUE_TESTS_SYNTH_TASK_H

#include <stdint.h>

#include "core/rng.h"
#include "models/model.h"

/* What the data are labelled for: 2 or 3 classes (accuracy), a score
 * (Pearson), a set of 4 labels (macro-F1 at threshold 0.5). */
extern const Task SYNTH_TASK2, SYNTH_TASK3, SYNTH_TASKR, SYNTH_TASKML;

typedef enum {
    SYNTH_CLASS,       /* a holds words of its class (label uniform over the task's classes) */
    SYNTH_CLASS_IN_B,  /* pair: a is noise only, b holds words of the class */
    SYNTH_SAME_TOPIC,  /* pair: a and b hold words of one topic each (of 4); label 1 iff the same */
    SYNTH_ORDER,       /* label 1 iff a holds "x y", 0 iff "y x" (the 2 signal words) */
    SYNTH_COUNT,       /* regression: the score is the number of class-1 words in a */
    SYNTH_MULTI,       /* multi-label: each label in the row's set with probability 2/5 (at least
                        * one); a holds words of every label of its set */
} SynthKind;

typedef struct SynthTask {
    const char *name;           /* for messages */
    const Task *task;           /* SYNTH_TASK2 / SYNTH_TASK3, SYNTH_TASKR for SYNTH_COUNT */
    SynthKind kind;
    int class_words;            /* distinct words per class or topic: k < class_words */
    int noise_words;            /* noise vocabulary: k < noise_words */
    int len_min, len_max;       /* words of a text, signal included (len_min > signal_max) */
    int signal_min, signal_max; /* class words of a text; SYNTH_COUNT: the score's range */
    int phrase;                 /* 1: the signal words stand together, at one random place
                                 * (a convolution window sees them all); 0: each at its own */
} SynthTask;

/* `len` words: `signal` words of class `cls` among noise, placed as st says.
 * Caller frees. */
char *synth_text(Rng *r, const SynthTask *st, int cls, int len, int signal);
/* n examples of st, drawn from seed; .task is st->task. Free with synth_free. */
Dataset synth_dataset(const SynthTask *st, int n, uint64_t seed);
void synth_free(Dataset *d);

/* The trainer's loop in small, through the harness's step (src/train/step.h)
 * on d and its features e: epochs [from, to) of cfg "batch" rows at a time,
 * the rows shuffled per epoch by a stream of seed (so any epoch can be rerun
 * alone, as a resume does); each step's TrainState as the trainer fills it,
 * with cfg "lr" constant and progress over cfg "epochs". Stops at the first
 * loss that is negative or not finite, as a failed check. */
void synth_train_epochs(const ModelOps *ops, Model *m, const Dataset *d, const Encoded *e, const cJSON *cfg,
                        uint64_t seed, int from, int to);
/* A fresh model (seed) trained on train for all of cfg "epochs" (shuffles from
 * seed too); NULL when create refuses the config. */
Model *synth_train(const ModelOps *ops, const Dataset *train, const cJSON *cfg, uint64_t seed);
/* out (d->n, K) for all of d, K = d->task->num_labels, as evaluation reports
 * them (src/train/evaluate.h evaluate_rows), in calls of `batch` rows in order
 * (0: one call). Caller frees. */
float *synth_predict(const ModelOps *ops, Model *m, const Dataset *d, int batch);
/* Trains a fresh model (seed) on n_train examples of st (seed) and scores it on
 * n_dev others (seed + 1): dev accuracy in % for classes (each row's
 * probabilities are checked to sum to 1), Pearson r for a score, macro-F1 in
 * % at threshold 0.5 for label sets; NAN when the
 * model is not created, so that any threshold fails. */
double synth_learn(const ModelOps *ops, const SynthTask *st, const cJSON *cfg, int n_train, int n_dev,
                   uint64_t seed);

#endif
