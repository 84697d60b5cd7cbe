/* intermediate.h — intermediate-task transfer (STILTs: Phang et al. 2018,
 * "Sentence Encoders on STILTs"): fine-tune on a related task first, then on
 * the target task from that model.
 *
 * A model whose settings have INTERMEDIATE_KEY (models/run_config.h; BERT:
 * `--set rte.intermediate=mnli-9k`) names the task to go through. The
 * commands and experiments that fine-tune call intermediate_run instead of
 * trainer_run: it first fine-tunes the same model on that task into
 * <out>/intermediate/ (a search's trials share <search dir>/intermediate/,
 * a protocol's rows and tasks share one stage per stage config and seed,
 * intermediate_shared_dir) — the intermediate task's default recipe for the
 * model, starting from the target's encoder (its "init", "bert" and "vocab"
 * settings) with the target's seed and threads — and then runs the target
 * from that run's weights (a new task head, as with any --init). So every
 * seed of the target has its own intermediate run, and the spread over seeds
 * includes the intermediate's.
 *
 * The intermediate run is the target's own state: a finished one made with
 * the same settings and seed is reused, an interrupted one is continued, and
 * one of other settings is replaced. The target's results.json records the
 * intermediate task, its directory and its best epoch (INTERMEDIATE_KEY).
 *
 * The stage may be a multi-task run (MT-DNN, train/multitask.h): "multi"
 * trains MULTITASK_DEFAULT_TASKS, "multi:A+B+..." those tasks, with the
 * multi-task defaults from the target's encoder; the target then starts
 * from its encoder. It does not depend on the target task, so a protocol's
 * tasks share one per seed: `glue protocol --change mtdnn:intermediate=multi`
 * is MT-DNN's recipe as a row. */
#ifndef GLUE_INTERMEDIATE_H
#define GLUE_INTERMEDIATE_H

#include "train/trainer.h"

/* INTERMEDIATE_KEY and INTERMEDIATE_NONE: models/run_config.h (a model's setting). */
#define INTERMEDIATE_DIR  "intermediate"   /* under the target's run directory */

/* trainer_run(o), after the intermediate stage when o's config names one:
 * the stage runs (or is reused) in stage_dir (NULL: <out_dir>/intermediate)
 * and the target starts from it. No stage runs when the target would not
 * start (a finished run without overwrite, a missing data file: trainer_run
 * says so at once) or continues a resume point (--resume: the stage
 * finished before it; its record is read again). The returns of trainer_run;
 * 2 after one message when the config names an unknown task or the task
 * itself. Data parallel: every rank calls it; they leave together. */
int intermediate_run(const TrainerOptions *o, const char *stage_dir, cJSON **results);
/* Where runs that share a stage put it: <root>/intermediate/<task>-seed<S>-<hash
 * of the stage's config>, so targets whose stage would be the same run (same
 * task, encoder and seed: protocol rows that change only the target's recipe)
 * train it once. Empty when o's config names no stage (or a bad one, which
 * intermediate_run reports). */
void intermediate_shared_dir(const TrainerOptions *o, const char *root, char *dir, size_t size);

#endif
