/* cmd_quantize.c — `glue quantize RUN_DIR [--out DIR]`: a fine-tuned run as an
 * int8 run (ModelOps.save_int8; BERT: models/bert/bert_int8.c) that eval,
 * predict, compare and the report read like any run.
 *
 * The new run directory holds the int8 model.ckpt, the source's config.json
 * (and dataset.json for a user's dataset), and a results.json that is the
 * source's with "best" holding the int8 model's dev metrics, measured here
 * (compare and the report show what the int8 model scores, not what the
 * fp32 one did), and "quantized": the source run, its fp32 best, both
 * checkpoint sizes. The int8 model is read back from the file it was written
 * to before it is scored, so the file is what was measured. */
#include "cli/cli_run.h"
#include "cli/commands.h"
#include "cli/quantize_table.h"
#include "core/args.h"
#include "core/common.h"
#include "core/files.h"
#include "core/gemm_int8.h"
#include "core/threads.h"
#include "train/evaluate.h"
#include "train/run_dir.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define QUANTIZE_USAGE "glue quantize RUN_DIR... [--out DIR] [--results FILE.json] [--threads N] [--json]"

static long quantize_file_size(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

/* The int8 model's metrics on every labelled dev split of t: {"dev": {...}, ...}
 * into best (its "score" too). 0, or 1 after a message. */
static int quantize_score(const ModelOps *ops, Model *m, const Task *t, cJSON *best) {
    const TaskSplit *dev[TASK_MAX_SPLITS];
    int nd = task_dev_splits(t, dev, TASK_MAX_SPLITS);
    double score = 0;
    for (int s = 0; s < nd; s++) {
        Dataset d;
        if (task_load(t, dev[s]->name, task_data_root(), 0, &d) != 0) return 1;
        double secs = 0;
        float *pred = evaluate_predict_dataset(ops, m, &d, EVALUATE_BATCH_DEFAULT, &secs);
        if (!pred) {
            dataset_free(&d);
            return 1;
        }
        cJSON *metrics = evaluate_metrics(t, &d, pred);
        score += evaluate_score(t, metrics) / nd;
        cJSON_DeleteItemFromObjectCaseSensitive(best, dev[s]->name);
        cJSON_AddItemToObject(best, dev[s]->name, metrics);
        free(pred);
        dataset_free(&d);
    }
    cJSON_DeleteItemFromObjectCaseSensitive(best, "score");
    cJSON_AddNumberToObject(best, "score", score);
    return 0;
}

/* Copies run/name to out/name when it exists; 0, or 1 after a message. */
static int quantize_copy(const char *run, const char *out, const char *name) {
    char from[4200], to[4200];
    file_join(run, name, from, sizeof from);
    file_join(out, name, to, sizeof to);
    if (!file_exists(from)) return 0;
    size_t len = 0;
    char *text = file_read(from, &len);
    int rc = text && atomic_write(to, text, len) == 0 ? 0 : 1;
    free(text);
    return rc;
}

/* The run's results.json with the int8 results folded in, written to out. */
static int quantize_results(cJSON *results, const char *run, const char *out, cJSON *best, long fp32_bytes,
                            long int8_bytes) {
    cJSON *q = cJSON_CreateObject();
    char where[4200];
    file_portable_path(run, where, sizeof where);
    cJSON_AddStringToObject(q, "format", "int8");
    cJSON_AddStringToObject(q, "from", where);
    cJSON_AddStringToObject(q, "kernel", gemm_int8_kernel());
    cJSON *old = cJSON_DetachItemFromObjectCaseSensitive(results, "best");
    if (old) cJSON_AddItemToObject(q, "fp32_best", old);
    cJSON_AddNumberToObject(q, "fp32_checkpoint_bytes", (double)fp32_bytes);
    cJSON_AddNumberToObject(q, "int8_checkpoint_bytes", (double)int8_bytes);
    cJSON_DeleteItemFromObjectCaseSensitive(results, "quantized");
    cJSON_AddItemToObject(results, "quantized", q);
    cJSON_AddItemToObject(results, "best", best);
    char path[4200];
    file_join(out, RUN_RESULTS, path, sizeof path);
    return json_file_write(path, results) == 0 ? 0 : 1;
}

/* The task and model a finished run records; NULL after a message. */
static cJSON *quantize_source(const char *run, const char **task, const char **model) {
    char path[4200];
    file_join(run, RUN_RESULTS, path, sizeof path);
    cJSON *r = json_file_read(path, 1);
    if (!r) return NULL;
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(r, "task"), *m = cJSON_GetObjectItemCaseSensitive(r, "model");
    if (!cJSON_IsString(t) || !cJSON_IsString(m)) {
        user_error_data("name a run directory written by glue finetune", "%s has no \"task\" and \"model\"", path);
        cJSON_Delete(r);
        return NULL;
    }
    *task = t->valuestring;
    *model = m->valuestring;
    return r;
}

static int quantize_run(const char *run, const char *out, int json, cJSON *lines) {
    const char *task_name, *model_name;
    cJSON *results = quantize_source(run, &task_name, &model_name);
    if (!results) return 1;
    int rc = EXIT_USAGE;
    const ModelOps *ops = cli_find_model(model_name);
    const Task *t = ops ? cli_resolve_task(task_name, model_name, run) : NULL;
    Model *m = NULL, *q = NULL;
    char ckpt[4200], src[4200];
    file_join(out, RUN_CKPT, ckpt, sizeof ckpt);
    file_join(run, RUN_CKPT, src, sizeof src);
    if (ops && !ops->save_int8) {
        user_error_usage("quantize a bert run", "%s has no int8 path (bert has; fastText's product quantization "
                         "is not implemented)", ops->name);
    } else if (t && (m = cli_load_run(ops, cli_run_task(t), run, 0))) {
        rc = 1;
        if (file_make_dir(out) == 0 && ops->save_int8(m, ckpt) == 0 &&
            (q = ops->load(ckpt, cli_run_task(t)))) {   /* read back: the file is what is scored */
            cJSON *best = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(results, "best"), 1);
            if (!best) best = cJSON_CreateObject();
            cJSON *fp32 = cJSON_Duplicate(best, 1);
            if (quantize_score(ops, q, t, best) != 0) {
                cJSON_Delete(best);
            } else if (quantize_copy(run, out, RUN_CONFIG) == 0 && quantize_copy(run, out, "dataset.json") == 0 &&
                       quantize_results(results, run, out, best, quantize_file_size(src), quantize_file_size(ckpt)) == 0) {
                rc = 0;
                cJSON *line = cJSON_CreateObject();
                cJSON_AddStringToObject(line, "run", out);
                cJSON_AddStringToObject(line, "task", task_name);
                cJSON_AddStringToObject(line, "model", model_name);
                cJSON_AddItemToObject(line, "fp32", fp32);
                cJSON_AddItemToObject(line, "int8", cJSON_Duplicate(best, 1));
                cJSON_AddNumberToObject(line, "fp32_bytes", (double)quantize_file_size(src));
                cJSON_AddNumberToObject(line, "int8_bytes", (double)quantize_file_size(ckpt));
                fp32 = NULL;
                if (json) json_print_line(line);
                else {
                    char *a = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(line, "fp32"));
                    char *b = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(line, "int8"));
                    printf("%s: int8 %s (%ld bytes, fp32 %ld)\n  fp32 %s\n  int8 %s\n", task_name, out,
                           quantize_file_size(ckpt), quantize_file_size(src), a, b);
                    free(a);
                    free(b);
                }
                cJSON_AddItemToArray(lines, line);
            }
            cJSON_Delete(fp32);
        }
    } else if (t) {
        rc = 1;
    }
    if (q) ops->free(q);
    if (m) ops->free(m);
    cli_task_free(t);
    cJSON_Delete(results);
    return rc;
}

/* RUN_DIR without trailing slashes, and where its quantized copy goes. */
static int quantize_paths(const char *arg, const char *out_arg, char *run, char *out, size_t cap) {
    snprintf(run, cap, "%s", arg);
    for (size_t n = strlen(run); n > 1 && run[n - 1] == '/'; n--) run[n - 1] = '\0';
    if (out_arg) snprintf(out, cap, "%s", out_arg);
    else snprintf(out, cap, "%s-int8", run);
    for (size_t n = strlen(out); n > 1 && out[n - 1] == '/'; n--) out[n - 1] = '\0';
    if (strcmp(out, run) == 0) {
        user_error_usage("give another --out DIR", "--out %s is the run itself: quantize writes a new run", out);
        return EXIT_USAGE;
    }
    return 0;
}

int cmd_quantize(int argc, char **argv) {
    Args a;
    args_init(&a, argc, argv);
    const char *out_arg = args_str(&a, "--out", NULL), *results = args_str(&a, "--results", NULL);
    long threads = args_int(&a, "--threads", 0);
    int json = args_flag(&a, "--json");
    const char *pos[64];
    int np = args_positional(&a, pos, 64);
    int rc = args_finish(&a, QUANTIZE_USAGE);
    if (rc) return rc;
    if (np < 1 || np > 64 || threads < 0 || (out_arg && np > 1)) {
        user_error("usage: " QUANTIZE_USAGE, "quantize takes 1 to 64 run directories (--out with one only), "
                   "--threads >= 0");
        return EXIT_USAGE;
    }
    threads_init((int)threads);
    char run[4200], out[4200];
    for (int i = 0; i < np; i++)   /* every path checked before the first run is quantized */
        if ((rc = quantize_paths(pos[i], out_arg, run, out, sizeof run)) != 0) return rc;
    cJSON *lines = cJSON_CreateArray();
    for (int i = 0; i < np && rc == 0; i++) {
        quantize_paths(pos[i], out_arg, run, out, sizeof run);
        rc = quantize_run(run, out, json, lines);
    }
    if (rc == 0 && results) {
        char *command = cli_command_line(argc, argv);
        rc = quantize_table_write(results, lines, command);
        free(command);
    }
    cJSON_Delete(lines);
    return rc;
}
