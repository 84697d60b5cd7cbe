/* test_settings_help.c — `glue CMD --help-settings`: it answers for every
 * model whatever the order of the options and with or without a task (a
 * model's defaults without a task used to crash TextCNN on a NULL task). */
#include "tests/test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const HELP_MODELS[] = {"bert", "fasttext", "textcnn", "bilstm", "textrnn", "rcnn", "han", "dpcnn", "transformer"};
#define NUM_HELP_MODELS ((int)(sizeof HELP_MODELS / sizeof HELP_MODELS[0]))

TEST(settings_help_any_order_any_task) {
    static const char *const SHAPES[] = {
        "finetune --help-settings --model %s",      "finetune --model %s --help-settings",
        "finetune sst2 --help-settings --model %s", "finetune --help-settings --model %s stsb",
        "finetune --model %s --epochs 3 --help-settings", "finetune --train a.tsv --dev b.tsv --model %s --help-settings",
        "finetune --help-settings --model=%s",
    };
    for (int m = 0; m < NUM_HELP_MODELS; m++)
        for (size_t k = 0; k < sizeof SHAPES / sizeof SHAPES[0]; k++) {
            char args[256], cmd[600], head[64];
            snprintf(args, sizeof args, SHAPES[k], HELP_MODELS[m]);
            snprintf(cmd, sizeof cmd, "%s %s 2>&1", test_glue_bin(), args);
            snprintf(head, sizeof head, "glue finetune (%s)", HELP_MODELS[m]);
            int st = -1;
            char *out = test_run(cmd, &st);
            CHECK_MSG(st == 0 && strstr(out, head) && strstr(out, "\n  epochs ") && strstr(out, "\n  lr "),
                      "glue %s: exit %d: %.300s", args, st, out);
            free(out);
        }
    static const char *const OTHERS[] = {"pretrain --help-settings", "translate --help-settings",
                                         "translate train --help-settings"};
    for (int k = 0; k < 3; k++) {
        char cmd[600];
        snprintf(cmd, sizeof cmd, "%s %s 2>&1", test_glue_bin(), OTHERS[k]);
        int st = -1;
        char *out = test_run(cmd, &st);
        CHECK_MSG(st == 0 && strstr(out, "--set keys of glue"), "glue %s: exit %d: %.300s", OTHERS[k], st, out);
        free(out);
    }
}
