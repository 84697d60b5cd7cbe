/* submission.h — the GLUE leaderboard zip that `glue eval all --split test
 * --submit FILE.zip` writes: the eleven files of the task registry (CoLA.tsv,
 * SST-2.tsv, ..., MNLI-m.tsv, MNLI-mm.tsv, AX.tsv) at the top level.
 *
 * A file a trained model wrote is taken as it is. A task with test data but no
 * trained model gets majority-class predictions (the most frequent training
 * label, or the dev split's when the train split is absent; the mean score for
 * STS-B) and is flagged as such, because the leaderboard rejects an archive
 * with a file missing. A task without test data cannot be written at all: it
 * is listed as missing and the archive is still written, with a warning. */
#ifndef GLUE_SUBMISSION_H
#define GLUE_SUBMISSION_H

typedef struct cJSON cJSON;

/* written: `glue eval`'s summary "tasks" object, {"<task>": {"<test split>":
 * {"file": path, "rows": n}}}. Adds to report {"zip": path, "files": [{"file",
 * "source": "model"|"majority", "rows"}], "missing": [names]}. Returns 0, or 1
 * after a message when the archive could not be written. */
int submission_write(const char *zip_path, const cJSON *written, const char *model, cJSON *report);

#endif
