/* cmd_export.c — `glue export CKPT OUTDIR [--vocab FILE] [--task TASK]`: a glue
 * BERT checkpoint (a model.ckpt, or a run directory holding one) written as a
 * Hugging Face model directory: config.json, model.safetensors, vocab.txt and
 * tokenizer_config.json (format: models/bert/bert_hf.h). The classifier's id2label
 * names come from the task (--task, else the one a fine-tuned checkpoint
 * records); the vocabulary is --vocab, else the one the checkpoint carries,
 * else the default one (text/tokenizer.h), and must have vocab_size tokens. */
#include "cli/commands.h"
#include "core/args.h"
#include "core/common.h"
#include "core/threads.h"
#include "core/files.h"
#include "models/bert/bert.h"
#include "models/bert/bert_hf.h"
#include "train/run_dir.h"
#include "tasks/task.h"
#include "text/tokenizer.h"
#include "text/vocab.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define EXPORT_USAGE "glue export CKPT OUTDIR [--vocab FILE] [--task TASK] [--overwrite] [--threads N] [--json]"

static int export_is_dir(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The task a fine-tuned checkpoint records ("task" of its config), or NULL. */
static const Task *export_ckpt_task(const Checkpoint *c) {
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(c->config, "task");
    return cJSON_IsString(t) ? task_find(t->valuestring) : NULL;
}

/* --vocab, else the checkpoint's own, else the default; it must have exactly
 * the model's vocab_size tokens. NULL after a message. */
static Vocab *export_vocab(const char *path, const Checkpoint *c, int want) {
    Vocab *v = path ? vocab_load(path) : bert_checkpoint_vocab(c);
    if (!v && !path) v = vocab_load(path = tokenizer_default_vocab_path());
    if (!v) return NULL;
    if (vocab_size(v) == want) return v;
    user_error_data("pass the vocabulary the model was trained with: --vocab FILE",
               "%s has %d tokens but the model's vocab_size is %d", path ? path : "the checkpoint's vocabulary",
               vocab_size(v), want);
    vocab_free(v);
    return NULL;
}

/* The first file of an export that dir holds already, or NULL: an export
 * writes over none without --overwrite (OUTDIR may be another model's folder,
 * e.g. a glue model directory with its own vocab.txt). */
static const char *export_existing(const char *dir) {
    static const char *const FILES[] = {BERT_HF_CONFIG, BERT_HF_WEIGHTS, BERT_HF_VOCAB, BERT_HF_TOKENIZER_CONFIG};
    for (size_t i = 0; i < sizeof FILES / sizeof FILES[0]; i++) {
        char path[4200];
        file_join(dir, FILES[i], path, sizeof path);
        if (file_exists(path)) return FILES[i];
    }
    return NULL;
}

int cmd_export(int argc, char **argv) {
    Args a;
    args_init(&a, argc, argv);
    const char *vocab_path = args_str(&a, "--vocab", NULL);
    const char *task_name = args_str(&a, "--task", NULL);
    long threads = args_threads(&a, 0);   /* accepted like every command's; export does no math to speak of */
    int json = args_flag(&a, "--json"), overwrite = args_flag(&a, "--overwrite");
    const char *pos[2];
    int np = args_positional(&a, pos, 2);
    int rc = args_finish(&a, EXPORT_USAGE);
    if (rc) return rc;
    if (np != 2) {
        user_error("usage: " EXPORT_USAGE, "export takes a checkpoint and an output directory");
        return EXIT_USAGE;
    }
    const char *there = overwrite ? NULL : export_existing(pos[1]);
    if (there) {
        user_error_usage("--overwrite replaces it, or give another OUTDIR", "%s already holds %s", pos[1], there);
        return EXIT_USAGE;
    }
    threads_init((int)threads);
    const Task *task = NULL;
    if (task_name && !(task = task_find_or_report(task_name))) return EXIT_USAGE;

    char ckpt[4096];
    if (export_is_dir(pos[0])) file_join(pos[0], RUN_CKPT, ckpt, sizeof ckpt);
    else snprintf(ckpt, sizeof ckpt, "%s", pos[0]);
    Checkpoint *c = checkpoint_read(ckpt);
    Bert *m = c ? bert_from_checkpoint(c, NULL, 1, 0) : NULL;
    Vocab *v = m ? export_vocab(vocab_path, c, m->cfg.vocab_size) : NULL;
    if (c && !task) task = export_ckpt_task(c);
    checkpoint_free(c);
    const char *const *labels = NULL;
    if (task && m && m->heads.num_labels > 1 && task->num_labels == m->heads.num_labels) labels = task->labels;
    rc = v && bert_hf_export(m, pos[1], v, labels) == 0 ? 0 : 1;
    if (rc == 0 && json) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "checkpoint", ckpt);
        cJSON_AddStringToObject(o, "out", pos[1]);
        cJSON_AddStringToObject(o, "kind", m->heads.num_labels > 0 ? "classifier" : "encoder");
        cJSON_AddBoolToObject(o, "mlm_head", m->heads.mlm != 0);
        cJSON_AddNumberToObject(o, "num_labels", m->heads.num_labels);
        if (labels) {
            cJSON *ls = cJSON_AddArrayToObject(o, "id2label");
            for (int i = 0; i < m->heads.num_labels; i++) cJSON_AddItemToArray(ls, cJSON_CreateString(labels[i]));
        }
        cJSON_AddNumberToObject(o, "num_params", (double)bert_num_params(m));
        json_print_line(o);
        cJSON_Delete(o);
    } else if (rc == 0) {
        printf("exported %s (%s%s, %ld parameters) to %s\n", ckpt, m->heads.num_labels > 0 ? "classifier" : "encoder",
               m->heads.mlm ? " + MLM head" : "", bert_num_params(m), pos[1]);
    }
    vocab_free(v);
    bert_free(m);
    return rc;
}
