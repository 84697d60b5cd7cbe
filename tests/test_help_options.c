/* test_help_options.c — `glue CMD --help` names every option the command
 * takes: each --option of the usage a command prints on an unknown option
 * (its file's USAGE macro, which lists what its args_* calls read) must
 * appear in the help text of src/main.c. They drifted apart: finetune's help
 * had no --overwrite, --multi-label or --label-sep; translate's no --seed,
 * --overwrite, --stop-at, --quiet, --json; bench's no rnn at all. */
#include "tests/test.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BOGUS "--zz-no-such-option"

/* Every "--word" of text in order: calls f(word) for each. */
static void each_option(const char *text, void (*f)(const char *opt, const char *help, const char *cmd),
                        const char *help, const char *cmd) {
    for (const char *p = text; (p = strstr(p, "--")) != NULL;) {
        const char *q = p + 2;
        while (isalnum((unsigned char)*q) || *q == '-') q++;
        if (q - p > 2 && (p == text || !isalnum((unsigned char)p[-1]))) {
            char opt[64];
            int n = (int)(q - p) < (int)sizeof opt - 1 ? (int)(q - p) : (int)sizeof opt - 1;
            memcpy(opt, p, (size_t)n);
            opt[n] = 0;
            f(opt, help, cmd);
        }
        p = q;
    }
}

static void check_in_help(const char *opt, const char *help, const char *cmd) {
    if (strcmp(opt, BOGUS) == 0) return;
    /* the option as a word of the help: followed by no more of a name */
    int found = 0;
    size_t n = strlen(opt);
    for (const char *p = help; !found && (p = strstr(p, opt)) != NULL; p += n)
        found = !(isalnum((unsigned char)p[n]) || p[n] == '-');
    CHECK_MSG(found, "glue %s takes %s (its usage says so) but glue %s --help does not name it", cmd, opt, cmd);
}

TEST(help_names_every_option_of_the_usage) {
    /* What to run with an unknown option (reaching the command's args_finish)
     * and the command whose --help must name its options. */
    static const char *const CMDS[][2] = {
        {"tasks", "tasks"},       {"data fetch", "data"},         {"tokenize", "tokenize"},
        {"vocab train", "vocab"}, {"vectors train", "vectors"},   {"vectors eval x.vec", "vectors"},
        {"score", "score"},       {"bleu", "bleu"},               {"translate train", "translate"},
        {"translate eval", "translate"}, {"translate", "translate"}, {"finetune", "finetune"},
        {"finetune multi", "finetune"}, {"pretrain", "pretrain"}, {"eval", "eval"},
        {"predict", "predict"},   {"serve", "serve"},             {"compare", "compare"},
        {"ensemble", "ensemble"}, {"boost", "boost"},             {"protocol", "protocol"},
        {"bench fasttext", "bench"}, {"bench bert", "bench"},     {"bench rnn", "bench"},
        {"bench scaling", "bench"}, {"report", "report"},         {"quantize", "quantize"},
        {"export", "export"},
    };
    for (size_t i = 0; i < sizeof CMDS / sizeof CMDS[0]; i++) {
        char cmd[600];
        int st = -1;
        snprintf(cmd, sizeof cmd, "%s %s " BOGUS " 2>&1", test_glue_bin(), CMDS[i][0]);
        char *usage = test_run(cmd, &st);
        CHECK_MSG(st == 2 && strstr(usage, "unknown option") && strstr(usage, "usage:"),
                  "glue %s " BOGUS ": exit %d: %.300s", CMDS[i][0], st, usage);
        snprintf(cmd, sizeof cmd, "%s %s --help 2>&1", test_glue_bin(), CMDS[i][1]);
        char *help = test_run(cmd, &st);
        CHECK_MSG(st == 0, "glue %s --help: exit %d", CMDS[i][1], st);
        const char *from = strstr(usage, "usage:");   /* the usage, not the error line */
        if (from) each_option(from, check_in_help, help, CMDS[i][0]);
        free(usage);
        free(help);
    }
}
