/* cmd_boost.c — `glue boost TASK --model M [--rounds R] [--seed S] [--set key=value]...
 * [--epochs N] [--out DIR] [--overwrite] [--threads N] [--json]`: stacked
 * boosting with SAMME weights (experiments/boost.h) into a run directory
 * (runs/<task>/boost by default) that eval, predict and compare read like
 * any run, its rounds beside it (<OUT>-round<k>). */
#include "cli/cli_run.h"
#include "cli/combined_show.h"
#include "cli/commands.h"
#include "core/args.h"
#include "core/common.h"
#include "core/threads.h"
#include "experiments/boost.h"
#include "models/ensemble/ensemble.h"
#include "models/run_config.h"
#include "train/run_dir.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BOOST_USAGE                                                                                   \
    "glue boost TASK --model M [--rounds R] [--seed S] [--epochs N] [--set key=value]... [--out DIR]\n" \
    "       [--overwrite] [--threads N] [--json]"
#define BOOST_MAX_SETS 16
#define BOOST_DEFAULT_SEED 42

int cmd_boost(int argc, char **argv) {
    Args a;
    args_init(&a, argc, argv);
    const char *model = args_str(&a, "--model", NULL), *out = args_str(&a, "--out", NULL);
    long rounds = args_int(&a, "--rounds", 3), seed = args_int(&a, "--seed", BOOST_DEFAULT_SEED);
    long epochs = args_int(&a, "--epochs", 0), threads = args_threads(&a, 0);
    int overwrite = args_flag(&a, "--overwrite"), json = args_flag(&a, "--json");
    const char *sets[BOOST_MAX_SETS + 1], *origin[BOOST_MAX_SETS + 1];
    int nsets = args_strs(&a, "--set", sets, BOOST_MAX_SETS);
    for (int i = 0; i < nsets; i++) origin[i] = "--set";
    char epochs_set[64];
    if (epochs > 0) {
        snprintf(epochs_set, sizeof epochs_set, "epochs=%ld", epochs);
        origin[nsets] = "--epochs";
        sets[nsets++] = epochs_set;
    }
    const char *pos[2];
    int npos = args_positional(&a, pos, 2);
    int rc = args_finish(&a, BOOST_USAGE);
    if (rc) return rc;
    if (npos != 1 || !model) {
        user_error_usage(NULL, "boost: expected TASK and --model M");
        return args_usage(BOOST_USAGE);
    }
    const ModelOps *ops = cli_find_model(model);
    if (!ops) return EXIT_USAGE;
    if (ensemble_is(ops)) {
        user_error_usage("boost a trainable model (textcnn, bilstm, ...)", "boost: %s is not trained, it is built", model);
        return EXIT_USAGE;
    }
    const Task *t = cli_resolve_task(pos[0], ops->name, NULL);
    if (!t) return EXIT_USAGE;
    cJSON *config = run_config_build(ops->default_config(t), NULL, sets, origin, nsets);
    char dir[4200];
    if (out) snprintf(dir, sizeof dir, "%s", out);
    else run_dir_path(t->name, BOOST_MODEL, dir, sizeof dir);
    char *command = cli_command_line(argc, argv);
    if (!config) rc = EXIT_USAGE;
    if (rc == 0) {
        BoostOptions o = {.base = {.task = t, .ops = ops, .config = config, .seed = (uint64_t)seed,
                                   .threads = threads_init((int)threads), .out_dir = dir,
                                   .data_root = task_data_root(), .command = command, .show_progress = 1,
                                   .overwrite = overwrite},
                          .rounds = (int)rounds};
        cJSON *res = NULL;
        rc = boost_run(&o, &res);
        if (rc == 0) rc = combined_show(t, dir, res, json);
        cJSON_Delete(res);
    }
    free(command);
    cJSON_Delete(config);
    cli_task_free(t);
    return rc;
}
