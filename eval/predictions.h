/* predictions.h — prediction files in GLUE leaderboard format: a header
 * "index<TAB>prediction" and one row per example, the prediction being the label
 * string the leaderboard wants ("entailment", "0", ...) or a number for STS-B.
 *
 * The writer produces submission files (and dev-set predictions); the reader
 * takes such a file back, checks every row, and matches it by index against a
 * labelled split for `glue score`. Every problem a user can cause (bad header,
 * missing index, unknown label, duplicate or missing rows) is reported once as
 * "file:line: what" and returned as -1. */
#ifndef GLUE_PREDICTIONS_H
#define GLUE_PREDICTIONS_H

#include "tasks/task.h"

typedef struct Predictions {
    const Task *task;
    char *path;
    long *index;      /* (n) the index column */
    int *label;       /* (n) class index; -1 for a regression task */
    double *score;    /* (n) STS-B similarity; 0 for classification */
    long *line;       /* (n) 1-based line in the file, for messages */
    int n;
} Predictions;

/* Read a file (.gz allowed). Returns 0, or -1 after one message. */
int predictions_read(const char *path, const Task *t, Predictions *out);
void predictions_free(Predictions *p);

/* Put the predictions in the order of d's examples: label_out[i] / score_out[i]
 * for example i (either may be NULL). Fails, with a message naming the file and
 * line, on an index twice, an index not in d, or an example without prediction. */
int predictions_match(const Predictions *p, const Dataset *d, int *label_out, double *score_out);

/* Write a leaderboard file: rows index[i] and label string label[i] (or score[i]
 * with 3 decimals for a regression task). Returns 0, or -1 after one message. */
int predictions_write(const char *path, const Task *t, const long *index, const int *label,
                      const double *score, int n);

#endif
