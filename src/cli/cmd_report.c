/* cmd_report.c — `glue report [--runs DIR] [--results DIR] [--out FILE]
 * [--pretrain DIR ...] [--no-predict]`: one self-contained HTML page of every
 * result and run (eval/report_html.h). Missing inputs are listed in the page,
 * not fatal: the command fails only when the page cannot be written. */
#include "cli/cli_run.h"
#include "cli/commands.h"
#include "core/args.h"
#include "core/common.h"
#include "eval/report_html.h"
#include "models/bert/bert_task.h"
#include "train/run_dir.h"

#include <stdio.h>
#include <stdlib.h>

#define REPORT_USAGE "glue report [--runs DIR] [--results DIR] [--out report.html] [--pretrain DIR ...] [--no-predict]"
#define REPORT_MAX_PRETRAIN 16

int cmd_report(int argc, char **argv) {
    Args a;
    args_init(&a, argc, argv);
    const char *pretrain[REPORT_MAX_PRETRAIN];
    ReportOptions o = {
        .runs_dir = args_str(&a, "--runs", run_root()),
        .results_dir = args_str(&a, "--results", run_results_root()),
        .out_path = args_str(&a, "--out", "report.html"),
        .npretrain = args_strs(&a, "--pretrain", pretrain, REPORT_MAX_PRETRAIN),
        .predict = !args_flag(&a, "--no-predict"),
        .pretrain_dirs = pretrain,
    };
    const char *pos[1];
    int npos = args_positional(&a, pos, 1);
    int rc = args_finish(&a, REPORT_USAGE);
    if (rc) return rc;
    if (npos) {
        user_error(NULL, "report: unexpected argument '%s'", pos[0]);
        return args_usage(REPORT_USAGE);
    }
    if (o.npretrain == 0) {   /* the shipped encoder's pretraining curves are in every report */
        static const char *const LINEAGE[] = BERT_SHIPPED_ENCODER_LINEAGE;
        for (size_t i = 0; i < sizeof LINEAGE / sizeof LINEAGE[0]; i++) pretrain[o.npretrain++] = LINEAGE[i];
    }
    char *command = cli_command_line(argc, argv);
    o.command = command;
    int missing = 0;
    rc = report_html_write(&o, &missing);
    if (rc == 0)
        fprintf(stderr, "wrote %s%s", o.out_path,
                missing ? " (some inputs are missing: the page lists them at the top)\n" : "\n");
    free(command);
    return rc;
}
