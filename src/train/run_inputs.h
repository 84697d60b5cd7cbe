/* run_inputs.h — the files a run's settings name (an init checkpoint, a
 * vectors file, a vocabulary), fingerprinted, so that a finished run is not
 * reused once such a file has changed under the same path.
 *
 * A run's identity is its settings and seed (trainer_same_run); a setting
 * such as BERT's init=models/X names a file, and `glue pretrain snapshot` or a
 * user's copy can replace that file while the path stays. Without the
 * fingerprint, `glue compare`, `glue protocol` and every other reuser would
 * report fine-tunes of the old weights as the new encoder's.
 *
 * Recorded in results.json and the resume point (trainer.json) as
 *   "inputs": {"init": {"file": "models/x/model.ckpt", "bytes": 14680064, "crc32": "1a2b3c4d"}}
 * taken when the run first started (a resumed run keeps them: its weights
 * descend from those files). A setting counts when its value names a regular
 * file, or a directory holding model.ckpt (what --init DIR loads). */
#ifndef GLUE_RUN_INPUTS_H
#define GLUE_RUN_INPUTS_H

#include <stddef.h>

typedef struct cJSON cJSON;

/* The fingerprints of the files config's settings name now (an empty object
 * when none). Caller frees. */
cJSON *run_inputs_json(const cJSON *config);
/* 1 when every file in `recorded` (a run's "inputs") is still what it was
 * under config's settings; 1 for a run that recorded none (written before
 * runs recorded them). 0 otherwise, with why (when given) naming the file. */
int run_inputs_same(const cJSON *recorded, const cJSON *config, char *why, size_t cap);

#endif
