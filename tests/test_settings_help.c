/* test_settings_help.c — `glue CMD --help-settings`: it answers for every
 * model whatever the order of the options and with or without a task (a
 * model's defaults without a task used to crash TextCNN on a NULL task). */
#include "models/model.h"
#include "tests/test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const HELP_MODELS[] = {"bert", "fasttext", "textcnn", "bilstm", "textrnn", "rcnn", "han", "dpcnn", "transformer",
                                          "dmn", "entnet", "seq2seq_attn"};
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

/* A model's name where the task goes shows that model's settings, saying so
 * (it showed BERT's); translate prints a range for every key, the model's
 * from the table its reader enforces. */
TEST(settings_help_model_as_task_and_translate_ranges) {
    for (int m = 1; m < 4; m++) {
        char cmd[600], head[64];
        snprintf(cmd, sizeof cmd, "%s finetune %s --help-settings 2>&1", test_glue_bin(), HELP_MODELS[m]);
        snprintf(head, sizeof head, "glue finetune (%s)", HELP_MODELS[m]);
        int st = -1;
        char *out = test_run(cmd, &st);
        CHECK_MSG(st == 0 && strstr(out, head) && strstr(out, "is a model, not a task"), "%s: %d: %.300s",
                  HELP_MODELS[m], st, out);
        free(out);
    }
    char cmd[600];
    snprintf(cmd, sizeof cmd, "%s translate --help-settings 2>&1", test_glue_bin());
    int st = -1, rows = 0, bare = 0;
    char *out = test_run(cmd, &st);
    CHECK(st == 0);
    for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
        if (strncmp(line, "  ", 2) != 0) continue;
        rows++;
        if (!strstr(line, " in [") && !strstr(line, "one of:") && !strstr(line, "text")) {
            bare++;
            CHECK_MSG(0, "no range: %s", line);
        }
    }
    CHECK_MSG(rows >= 30 && bare == 0, "%d rows, %d without a range", rows, bare);
    free(out);
    snprintf(cmd, sizeof cmd, "%s translate train --set d_model=1 --out /nonexistent/x 2>&1", test_glue_bin());
    out = test_run(cmd, &st);
    CHECK_MSG(st == 2 && strstr(out, "d_model") && strstr(out, "[2, 65536]"), "%d: %s", st, out);
    free(out);
}

/* 1 when text has name as a word of a list (" name," or " name "). */
static int help_names(const char *text, const char *name) {
    char comma[64], space[64];
    snprintf(comma, sizeof comma, " %s,", name);
    snprintf(space, sizeof space, " %s ", name);
    return strstr(text, comma) || strstr(text, space);
}

/* `glue finetune --help` names every model of the binary (its usage once
 * listed seven of twelve), and this file's list is the registry's. */
TEST(settings_help_names_every_model) {
    int listed = 0;
    for (int i = 0; i < model_count(); i++) {
        const char *name = model_at(i)->name;
        if (strcmp(name, "testbow") == 0) continue;   /* the test binary's own model */
        int found = 0;
        for (int m = 0; m < NUM_HELP_MODELS; m++) found |= strcmp(name, HELP_MODELS[m]) == 0;
        CHECK_MSG(found, "model %s is registered but not in HELP_MODELS", name);
        listed++;
    }
    CHECK_MSG(listed == NUM_HELP_MODELS, "%d models registered, HELP_MODELS has %d", listed, NUM_HELP_MODELS);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "%s finetune --help 2>&1", test_glue_bin());
    int st = -1;
    char *out = test_run(cmd, &st);
    for (int m = 0; m < NUM_HELP_MODELS; m++)
        CHECK_MSG(st == 0 && help_names(out, HELP_MODELS[m]), "glue finetune --help does not name %s: %.600s",
                  HELP_MODELS[m], out);
    free(out);
}

/* `glue pretrain --help-settings` says what objective and schedule may be
 * (both said "text", though anything but mlm/electra, or a schedule
 * schedule_parse does not know, is refused). */
TEST(settings_help_pretrain_names_objectives_and_schedules) {
    char cmd[600];
    snprintf(cmd, sizeof cmd, "%s pretrain --help-settings 2>&1", test_glue_bin());
    int st = -1;
    char *out = test_run(cmd, &st);
    const char *obj = strstr(out, "\n  objective "), *sched = strstr(out, "\n  schedule ");
    CHECK_MSG(st == 0 && obj && sched, "exit %d: %.300s", st, out);
    if (obj) {
        const char *end = strchr(obj + 1, '\n');
        int n = end ? (int)(end - obj) : (int)strlen(obj);
        char line[256];
        snprintf(line, sizeof line, "%.*s", n < 255 ? n : 255, obj);
        CHECK_MSG(strstr(line, "mlm electra"), "objective's line: %s", line);
    }
    if (sched) {
        const char *end = strchr(sched + 1, '\n');
        int n = end ? (int)(end - sched) : (int)strlen(sched);
        char line[256];
        snprintf(line, sizeof line, "%.*s", n < 255 ? n : 255, sched);
        CHECK_MSG(strstr(line, "linear") && strstr(line, "cosine"), "schedule's line: %s", line);
    }
    free(out);
}
