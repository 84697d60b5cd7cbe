/* search.h — `glue finetune TASK --search`: a grid search of learning rate x
 * batch size that never looks at the dev set.
 *
 * Every trial trains on the training split minus a held-out slice (the same
 * slice for every trial: TrainerOptions.holdout) and is scored on that slice
 * (best epoch, the task's selection score); the winner is then trained again
 * on the full training split and reported on dev, exactly as a plain
 * `glue finetune` with its settings would be. Dev numbers chosen on dev are
 * optimistic; these are not.
 *
 * The default grid is the one Google used for the BERT miniatures (Turc et
 * al. 2019): lr {3e-4, 1e-4, 5e-5, 3e-5} x batch {8, 16, 32, 64, 128}.
 *
 * OUT/ holds trial-lr<LR>-b<B>/ (one trainer run each, reused when it
 * finished), final/ (the winner on the full split: evaluate it with
 * `glue eval TASK --run OUT/final`) and search.json:
 *   {"task", "model", "command", "holdout": fraction, "selection": "...",
 *    "trials": [{"lr", "batch", "dir", "heldout_score", "best_epoch"}, ...],
 *    "winner": {"lr", "batch", "heldout_score"},
 *    "final": {"dir", "best": {...the final run's best record...}}} */
#ifndef GLUE_SEARCH_H
#define GLUE_SEARCH_H

#include "train/trainer.h"

enum { SEARCH_MAX_VALUES = 16 };

typedef struct SearchOptions {
    TrainerOptions base;          /* task, ops, config (the other settings), seed, ...; out_dir = OUT */
    double lrs[SEARCH_MAX_VALUES];
    int n_lrs;
    int batches[SEARCH_MAX_VALUES];
    int n_batches;
    double holdout;               /* fraction of the training split (0.1) */
} SearchOptions;

/* Google's grid into o (lrs, batches) and holdout 0.1. */
void search_default_grid(SearchOptions *o);

/* Runs the search; 0 and *result (search.json's content; caller frees), or
 * an exit code after a message. */
int search_run(const SearchOptions *o, cJSON **result);

#define SEARCH_FILE "search.json"

#endif
