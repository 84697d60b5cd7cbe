/* boost.h — `glue boost TASK --model M --rounds R`: stacked boosting of a
 * neural classifier with SAMME weights (Zhu et al. 2009; for two classes
 * AdaBoost.M1), as scikit-learn's AdaBoostClassifier(algorithm="SAMME")
 * computes them:
 *   the examples' weights start equal (1/n); round k trains the model on the
 *   training split with its rows' loss weighted by them (the harness's
 *   per-example weights, train/head.h: n w_i, of mean 1), seed S + k - 1;
 *   its weighted error on the training split err_k = sum_{wrong} w_i;
 *   alpha_k = log((1 - err_k) / err_k) + log(K - 1); the wrong rows' weights
 *   are multiplied by exp(alpha_k), all renormalised to sum 1.
 *   err_k = 0: the round is kept with alpha 1 and boosting stops;
 *   err_k >= 1 - 1/K: no better than chance, the round is dropped and
 *   boosting stops (refused when it is the first).
 * The rounds are runs of their own, <OUT>-round<k> (beside OUT, which an
 * --overwrite replaces as a whole), and OUT is an ensemble of them
 * (experiments/ensemble_build.h, model "boost") combined by SAMME's vote:
 * argmax_c sum_k alpha_k [round k predicts c]. results.json's "rounds":
 * [{"round", "run", "seed", "error", "alpha"}].
 * Single-label classification with a model whose loss is the harness's head
 * (every model but fastText). */
#ifndef GLUE_BOOST_H
#define GLUE_BOOST_H

#include "train/trainer.h"

typedef struct BoostOptions {
    TrainerOptions base;   /* task, ops, config, seed, threads, data_root, command, show_progress; out_dir = OUT */
    int rounds;
} BoostOptions;

/* What a SAMME round says (boost_samme_step). */
enum { BOOST_GO_ON = 0, BOOST_PERFECT = 1, BOOST_CHANCE = 2 };

/* One SAMME round over n rows: pred and gold (gold < 0: a row that counts
 * for nothing), weights w (n, summing to 1) updated in place as above
 * (unchanged when the round is perfect or no better than chance). *err and
 * *alpha get the round's error and weight (alpha 1 when perfect, 0 when
 * dropped). BOOST_GO_ON, BOOST_PERFECT or BOOST_CHANCE. */
int boost_samme_step(double *w, const int *pred, const int *gold, int n, int K, double *err, double *alpha);
/* Trains the rounds and writes OUT: 0 and *results (OUT's results.json,
 * caller frees; may be NULL), or the exit code after a message. */
int boost_run(const BoostOptions *o, cJSON **results);

#endif
