/* intermediate.h — intermediate-task transfer (STILTs: Phang et al. 2018,
 * "Sentence Encoders on STILTs"): fine-tune on a related task first, then on
 * the target task from that model.
 *
 * A model whose settings have "intermediate" (BERT: `--set
 * rte.intermediate=mnli-9k`) names the task to go through. Before the target
 * run creates its model, the trainer fine-tunes the same model on that task
 * into <out>/intermediate/ (a search's trials share <search dir>/intermediate/,
 * a protocol's rows and tasks share one stage per stage config and seed,
 * intermediate_shared_dir) — the intermediate task's default recipe for the
 * model, starting from the target's encoder (its "init", "bert" and "vocab"
 * settings) with the target's seed and threads — and the target then starts
 * from that run's weights (a new task head, as with any --init). So every
 * seed of the target has its own intermediate run, and the spread over seeds
 * includes the intermediate's.
 *
 * The intermediate run is the target's own state: a finished one made with
 * the same settings and seed is reused, an interrupted one is continued, and
 * one of other settings is replaced. The target's results.json records the
 * intermediate task, its directory and its best epoch ("intermediate"). */
#ifndef GLUE_INTERMEDIATE_H
#define GLUE_INTERMEDIATE_H

#include "train/trainer.h"

/* INTERMEDIATE_KEY and INTERMEDIATE_NONE: models/run_config.h (a model's setting). */
#define INTERMEDIATE_DIR  "intermediate"   /* under the target's run directory */

/* Runs (or reuses) the intermediate stage of the target run o. Returns 0 with
 * *model_config NULL when o's config names none; 0 with *model_config the
 * config to create the target's model from (o's, with "init" the
 * intermediate run) and *summary the record for results.json (both the
 * caller's to free); or the exit code after one message (1 the run failed, 2
 * a bad setting). Data parallel: every rank calls it; they leave together. */
int intermediate_stage(const TrainerOptions *o, cJSON **model_config, cJSON **summary);
/* Where runs that share a stage put it: <root>/intermediate/<task>-seed<S>-<hash
 * of the stage's config>, so targets whose stage would be the same run (same
 * task, encoder and seed: protocol rows that change only the target's recipe)
 * train it once. Empty when o's config names no stage (or a bad one, which
 * intermediate_stage reports). */
void intermediate_shared_dir(const TrainerOptions *o, const char *root, char *dir, size_t size);
/* The record of the finished intermediate run of o (a resumed target's), or
 * NULL when there is none. */
cJSON *intermediate_record(const TrainerOptions *o);

#endif
