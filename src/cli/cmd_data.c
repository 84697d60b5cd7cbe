/* cmd_data.c — `glue data fetch [TASK|all|glue|subsets|mt|pretrain]... [--mirror DIR]
 * [--dest DIR] [--json]`: the command-line face of data/fetch.c. The mirror may
 * also come from $GLUE_MIRROR; without one the official URLs are used. */
#include "cli/commands.h"
#include "core/args.h"
#include "core/common.h"
#include "data/fetch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DATA_USAGE "glue data fetch [TASK|all|glue|subsets|mt|pretrain]... [--mirror DIR] [--dest DIR] [--json]"

int cmd_data(int argc, char **argv) {
    Args a;
    args_init(&a, argc, argv);
    const char *env_mirror = getenv("GLUE_MIRROR");
    FetchOptions o = {
        .json = args_flag(&a, "--json"),
        .mirror = args_str(&a, "--mirror", env_mirror && *env_mirror ? env_mirror : NULL),
        .dest = args_str(&a, "--dest", NULL),
    };
    const char *pos[ARGS_MAX];
    int npos = args_positional(&a, pos, ARGS_MAX);
    int rc = args_finish(&a, DATA_USAGE);
    if (rc) return rc;
    if (npos < 1 || strcmp(pos[0], "fetch") != 0) {
        user_error(NULL, npos < 1 ? "data: missing subcommand" : "data: unknown subcommand '%s'",
                   npos < 1 ? "" : pos[0]);
        return args_usage(DATA_USAGE);
    }
    return data_fetch(pos + 1, npos - 1, &o);
}
