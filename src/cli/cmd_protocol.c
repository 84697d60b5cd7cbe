/* cmd_protocol.c — `glue protocol`: fine-tuning recipe changes measured over
 * seeds, one table (experiments/protocol.h). */
#include "cli/cli_run.h"
#include "cli/commands.h"
#include "core/args.h"
#include "models/run_config.h"
#include "core/common.h"
#include "core/threads.h"
#include "experiments/protocol.h"
#include "train/run_dir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROTOCOL_USAGE                                                                                           \
    "glue protocol [--tasks cola,mrpc,stsb,rte] [--seeds 1,2,3,4,5] [--model bert] [--init CKPT|DIR]\n"         \
    "       [--set [TASK.]key=value]... [--change NAME:key=value[,task.key=value...]]... [--out DIR] [--results FILE.json]\n"   \
    "       [--threads N]"


int cmd_protocol(int argc, char **argv) {
    Args a;
    args_init(&a, argc, argv);
    char tasks_buf[256], seeds_buf[256], root_default[4200], results_default[4200];
    snprintf(tasks_buf, sizeof tasks_buf, "%s", args_str(&a, "--tasks", "cola,mrpc,stsb,rte"));
    snprintf(seeds_buf, sizeof seeds_buf, "%s", args_str(&a, "--seeds", "1,2,3,4,5"));
    snprintf(root_default, sizeof root_default, "%s/protocol", run_root());
    snprintf(results_default, sizeof results_default, "%s/finetune_protocol.json", run_results_root());
    const char *model = args_str(&a, "--model", "bert"), *init = args_str(&a, "--init", NULL);
    const char *root = args_str(&a, "--out", root_default), *results = args_str(&a, "--results", results_default);
    long threads = args_threads(&a, 0);
    const char *changes[PROTOCOL_MAX_ROWS], *sets[PROTOCOL_MAX_SETS];
    int nsets = args_strs(&a, "--set", sets, PROTOCOL_MAX_SETS);
    int nch = args_strs(&a, "--change", changes, PROTOCOL_MAX_ROWS - 1);
    const char *pos[2];
    int npos = args_positional(&a, pos, 2);
    int rc = args_finish(&a, PROTOCOL_USAGE);
    if (rc) return rc;
    /* The baseline's settings: --set and --init (a shorthand for init=). */
    const char *all[PROTOCOL_MAX_SETS + 1], *origin[PROTOCOL_MAX_SETS + 1];
    char init_set[4200];
    int nall = 0;
    for (int i = 0; i < nsets; i++) all[nall] = sets[i], origin[nall++] = "--set";
    if (init) {
        snprintf(init_set, sizeof init_set, "init=%s", init);
        all[nall] = init_set, origin[nall++] = "--init";
    }
    if (run_config_conflicts(all, origin, nall) != 0) return EXIT_USAGE;
    const char *tasks[PROTOCOL_MAX_TASKS];
    long seeds[PROTOCOL_MAX_SEEDS];
    int nt = cli_split_list(tasks_buf, tasks, PROTOCOL_MAX_TASKS);
    int ns = cli_parse_seeds(seeds_buf, seeds, PROTOCOL_MAX_SEEDS);
    if (ns < 0 || (nt > 0 && cli_names_unique(tasks, nt, "--tasks"))) return EXIT_USAGE;
    if (npos != 0 || nt < 1 || ns < 1) {
        user_error("usage: " PROTOCOL_USAGE, "protocol: up to %d tasks, %d seeds (whole numbers >= 0) and %d changes",
                   PROTOCOL_MAX_TASKS, PROTOCOL_MAX_SEEDS, PROTOCOL_MAX_ROWS - 1);
        return EXIT_USAGE;
    }
    ProtocolRow rows[PROTOCOL_MAX_ROWS] = {{.name = "baseline"}};
    char *texts[PROTOCOL_MAX_ROWS] = {0};
    for (int i = 0; i < nch && rc == 0; i++) {
        texts[i] = xstrdup(changes[i]);
        if (protocol_parse_change(texts[i], &rows[i + 1])) rc = EXIT_USAGE;
    }
    if (rc == 0) {
        char *command = cli_command_line(argc, argv);
        ProtocolOptions o = {.model = model, .init = init, .sets = sets, .n_sets = nsets, .rows = rows, .n_rows = nch + 1, .tasks = tasks,
                             .n_tasks = nt, .seeds = seeds, .n_seeds = ns, .root = root, .results = results,
                             .command = command, .threads = threads_init((int)threads)};
        rc = protocol_run(&o);
        free(command);
    }
    for (int i = 0; i < nch; i++) free(texts[i]);
    return rc;
}
