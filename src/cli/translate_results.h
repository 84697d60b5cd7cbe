/* translate_results.h — the table of translation runs: results/translation.json
 * and its Markdown twin results/translation.md.
 *
 * `glue translate eval --model DIR --split S --results FILE` scores a run and
 * records it here: one entry per run (named by its directory's last
 * component), holding what the run was (positions, LPR base and which of
 * a^K / a^V, parameters, steps, CPU hours, best dev BLEU from the run's
 * results.json) and, per evaluated split, the BLEU scores. Evaluating another
 * split or the same one again updates the entry in place, so the table of an
 * ablation is built one `eval` at a time and always says which command made
 * each number.
 *
 *   { "task": "translation", "bleu": "...definition...",
 *     "runs": [ { "run": "lpr-k4", "dir": "...", "positions": "lpr",
 *                 "lpr_base": 4, "lpr_keys": 1, "lpr_values": 1,
 *                 "num_params": 7584512, "steps": 5478, "epochs": 22,
 *                 "cpu_hours": 1.6, "dev_bleu": 38.1, "train_command": "...",
 *                 "splits": { "test_2016_flickr": { "beam": 5, "alpha": 0.6,
 *                      "sentences": 1000, "bleu": 36.2, "bleu_tok_lc": 38.0,
 *                      "hypotheses": "...", "command": "glue translate eval ..." } } } ] } */
#ifndef GLUE_TRANSLATE_RESULTS_H
#define GLUE_TRANSLATE_RESULTS_H

#include <stddef.h>

#include "metrics/bleu.h"
#include "models/seq2seq/seq2seq.h"

typedef struct cJSON cJSON;

typedef struct TranslateScore {
    const char *split;               /* file stem: test_2016_flickr, ... */
    const S2sDecodeOptions *dec;
    int sentences;
    const BleuScore *cased;          /* sacreBLEU: cased, 13a, detokenised */
    const BleuScore *tok_lc;         /* lower-cased tokenised references; NULL when absent */
    const char *hypotheses;          /* where the output was written */
    const char *command;             /* the eval command line */
} TranslateScore;

/* Adds or updates run_dir's entry in `file` (created when missing) with
 * score, then rewrites the Markdown table next to it (file's name with .md
 * for .json). run_cfg is the run's config.json. 0, or 1 after a message (a
 * malformed file is reported, never overwritten). */
int translate_results_add(const char *file, const char *run_dir, const cJSON *run_cfg, const TranslateScore *score);

/* "best dev BLEU 39.27 at epoch 22", or "..., the average of epochs 18-22"
 * when the averaged checkpoint won, from a run's results.json "best". */
void translate_best_describe(const cJSON *best, char *out, size_t cap);

#endif
