/* combined_show.h — what `glue ensemble` and `glue boost` say once their run
 * directory is written: the test split scored where its labels are public
 * (GoEmotions, a user's --test file: cli/run_score.h, cached in the run), and
 * the dev metrics with each member's weight and score alone, or --json. */
#ifndef GLUE_CLI_COMBINED_SHOW_H
#define GLUE_CLI_COMBINED_SHOW_H

#include "tasks/task.h"

typedef struct cJSON cJSON;

/* res: the run's results.json content (its "test" added here). 0, or 1 after a message. */
int combined_show(const Task *t, const char *dir, cJSON *res, int json);

#endif
