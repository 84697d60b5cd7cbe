/* cmd_export.c — `glue export CKPT OUTDIR [--vocab FILE] [--task TASK]`: a glue
 * BERT checkpoint (a model.ckpt, or a run directory holding one) written as a
 * Hugging Face model directory: config.json, model.safetensors, vocab.txt and
 * tokenizer_config.json (format: models/bert_hf.h). The classifier's id2label
 * names come from the task (--task, else the "task" of the run's results.json /
 * config.json next to the checkpoint); the vocabulary is --vocab, else the
 * default one (text/tokenizer.h), and must have the model's vocab_size tokens. */
#include "cli/commands.h"
#include "core/args.h"
#include "core/common.h"
#include "models/bert.h"
#include "models/bert_hf.h"
#include "models/run_dir.h"
#include "tasks/task.h"
#include "text/tokenizer.h"
#include "text/vocab.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define EXPORT_USAGE "glue export CKPT OUTDIR [--vocab FILE] [--task TASK]"

static int export_is_dir(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The directory holding the checkpoint file (".": a bare file name). */
static void export_dir_of(const char *ckpt, char *out, size_t cap) {
    snprintf(out, cap, "%s", ckpt);
    char *slash = strrchr(out, '/');
    if (!slash) snprintf(out, cap, ".");
    else if (slash == out) out[1] = '\0';
    else *slash = '\0';
}

/* The task the run in dir was trained on ("task" of results.json or
 * config.json), or NULL. */
static const Task *export_run_task(const char *dir) {
    static const char *const files[] = {RUN_RESULTS, RUN_CONFIG};
    for (int i = 0; i < 2; i++) {
        char path[4096];
        run_file_path(dir, files[i], path, sizeof path);
        if (!run_file_exists(path)) continue;
        cJSON *j = run_json_read(path, 0);
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(j, "task");
        const Task *task = cJSON_IsString(t) ? task_find(t->valuestring) : NULL;
        cJSON_Delete(j);
        if (task) return task;
    }
    return NULL;
}

/* The vocabulary must have exactly the model's vocab_size tokens. */
static int export_check_vocab(const char *path, int want) {
    Vocab *v = vocab_load(path);
    if (!v) return -1;
    int n = vocab_size(v);
    vocab_free(v);
    if (n == want) return 0;
    user_error("pass the vocabulary the model was trained with: --vocab FILE",
               "%s has %d tokens but the model's vocab_size is %d", path, n, want);
    return -1;
}

int cmd_export(int argc, char **argv) {
    Args a;
    args_init(&a, argc, argv);
    const char *vocab = args_str(&a, "--vocab", NULL);
    const char *task_name = args_str(&a, "--task", NULL);
    const char *pos[2];
    int np = args_positional(&a, pos, 2);
    int rc = args_finish(&a, EXPORT_USAGE);
    if (rc) return rc;
    if (np != 2) {
        user_error("usage: " EXPORT_USAGE, "export takes a checkpoint and an output directory");
        return EXIT_USAGE;
    }
    const Task *task = NULL;
    if (task_name && !(task = task_find_or_report(task_name))) return EXIT_USAGE;

    char ckpt[4096], run[4096];
    if (export_is_dir(pos[0])) {
        run_file_path(pos[0], RUN_CKPT, ckpt, sizeof ckpt);
        snprintf(run, sizeof run, "%s", pos[0]);
    } else {
        snprintf(ckpt, sizeof ckpt, "%s", pos[0]);
        export_dir_of(pos[0], run, sizeof run);
    }
    Bert *m = bert_load(ckpt);
    if (!m) return 1;
    if (!task) task = export_run_task(run);
    const char *const *labels = NULL;
    if (task && m->heads.num_labels > 1 && task->num_labels == m->heads.num_labels) labels = task->labels;
    if (!vocab) vocab = tokenizer_default_vocab_path();
    rc = export_check_vocab(vocab, m->cfg.vocab_size) || bert_hf_export(m, pos[1], vocab, labels) ? 1 : 0;
    if (rc == 0)
        printf("exported %s (%s%s, %ld parameters) to %s\n", ckpt, m->heads.num_labels > 0 ? "classifier" : "encoder",
               m->heads.mlm ? " + MLM head" : "", bert_num_params(m), pos[1]);
    bert_free(m);
    return rc;
}
