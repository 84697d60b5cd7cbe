/* cmd_quantize.c — `glue quantize RUN_DIR [--out DIR]`: a fine-tuned run as an
 * int8 run (ModelOps.save_int8; BERT: models/bert/bert_int8.c), or as a model
 * that compresses its own way (ModelOps.quantize; fastText: product
 * quantization with `fasttext quantize`'s settings --dsub, --cutoff, --qnorm,
 * --qout, --retrain, --epoch, --lr and its defaults,
 * models/baselines/fasttext_quantize.c), that eval, predict, compare and the
 * report read like any run.
 *
 * The new run directory holds the int8 model.ckpt, the source's config.json
 * (and dataset.json for a user's dataset, thresholds.json for a multi-label
 * run's tuned thresholds, which score the int8 model as they scored the fp32
 * one), and a results.json that is the
 * source's with "best" holding the int8 model's dev metrics, measured here
 * (compare and the report show what the int8 model scores, not what the
 * fp32 one did), and "quantized": the source run, its fp32 best, both
 * checkpoint sizes. The int8 model is read back from the file it was written
 * to before it is scored, so the file is what was measured.
 *
 * --calibrate N (int8): before quantizing, the fp32 model predicts N examples
 * of the training split (evenly spaced through it; never dev) while it
 * records what its int8 products will be fed (ModelOps.calibrate_int8; BERT:
 * SmoothQuant factors, models/bert/bert_int8_calibrate.c). */
#include "cli/cli_run.h"
#include "cli/commands.h"
#include "cli/quantize_table.h"
#include "cli/run_score.h"
#include "core/args.h"
#include "core/common.h"
#include "core/files.h"
#include "core/gemm_int8.h"
#include "core/threads.h"
#include "train/evaluate.h"
#include "train/run_dir.h"
#include "train/run_txn.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Not calibrated unless asked: on the shipped encoder's fine-tuned runs
 * SmoothQuant lowered the int8 logits' mean error by 2% (CoLA) to 8% (SST-2)
 * and moved the dev metrics both ways by a few rows (their inputs have no
 * outlier channels: the largest is at most 5x the median), so it is not
 * worth a pass over training data by default (docs/speed.md). */
enum { QUANTIZE_CALIBRATE_DEFAULT = 0 };
#define QUANTIZE_USAGE                                                                                       \
    "glue quantize RUN_DIR... [--out DIR] [--overwrite] [--results FILE.json] [--threads N] [--json]\n"    \
    "  bert runs also: [--calibrate N] (SmoothQuant factors from N training examples; 0, the default: "    \
    "none)\n"                                                                                              \
    "  fastText runs also: [--dsub 2] [--cutoff 0] [--qnorm] [--qout] [--retrain] [--epoch 5] [--lr 0.05]"

/* The product quantization flags, as `fasttext quantize` spells them (numbers,
 * then switches). */
static const char *const QUANTIZE_NUMBERS[] = {"dsub", "cutoff", "epoch", "lr", NULL};
static const char *const QUANTIZE_SWITCHES[] = {"qnorm", "qout", "retrain", NULL};

static long quantize_file_size(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

/* The int8 model's metrics on every labelled dev split of t: {"dev": {...}, ...}
 * into best (its "score" too), under the source run's prediction rule (a
 * multi-label run's tuned thresholds, as its fp32 best was scored), with the
 * per-label tables written into out as glue eval writes them. 0, or 1 after
 * a message. */
static int quantize_score(const ModelOps *ops, Model *m, const Task *t, const char *run, const char *out,
                          cJSON *best) {
    const TaskSplit *dev[TASK_MAX_SPLITS];
    int nd = task_dev_splits(t, dev, TASK_MAX_SPLITS);
    double score = 0;
    Decision rule;
    if (decision_of_run(&rule, t, run) != 0) return 1;
    for (int s = 0; s < nd; s++) {
        Dataset d;
        if (task_load(t, dev[s]->name, task_data_root(), 0, &d) != 0) return 1;
        cJSON *scored = cJSON_CreateObject();
        int rc = run_score_dataset(ops, m, t, &d, EVALUATE_BATCH_DEFAULT, &rule, out, scored, NULL, NULL);
        cJSON *metrics = cJSON_DetachItemFromObjectCaseSensitive(scored, dev[s]->name);
        cJSON_Delete(scored);
        dataset_free(&d);
        if (rc || !metrics) {
            cJSON_Delete(metrics);
            return 1;
        }
        score += evaluate_score(t, metrics) / nd;
        cJSON_DeleteItemFromObjectCaseSensitive(best, dev[s]->name);
        cJSON_AddItemToObject(best, dev[s]->name, metrics);
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
                            long q_bytes, const cJSON *settings, long calibrate) {
    cJSON *q = cJSON_CreateObject();
    char where[4200], key[64];
    const char *format = settings ? "pq" : "int8";
    file_portable_path(run, where, sizeof where);
    cJSON_AddStringToObject(q, "format", format);
    cJSON_AddStringToObject(q, "from", where);
    if (settings) cJSON_AddItemToObject(q, "settings", cJSON_Duplicate(settings, 1));
    else cJSON_AddStringToObject(q, "kernel", gemm_int8_kernel());
    if (!settings) cJSON_AddNumberToObject(q, "calibrate", (double)calibrate);
    cJSON *old = cJSON_DetachItemFromObjectCaseSensitive(results, "best");
    if (old) cJSON_AddItemToObject(q, "fp32_best", old);
    cJSON_AddNumberToObject(q, "fp32_checkpoint_bytes", (double)fp32_bytes);
    snprintf(key, sizeof key, "%s_checkpoint_bytes", format);
    cJSON_AddNumberToObject(q, key, (double)q_bytes);
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

/* m's int8 calibration from n examples of t's training split, evenly spaced
 * through it (all of them when it has fewer); 0, or 1 after a message. */
static int quantize_calibrate(const ModelOps *ops, Model *m, const Task *t, long n) {
    Dataset train = {0};
    if (task_load(t, "train", task_data_root(), 0, &train) != 0) return 1;
    Dataset sample = train;
    sample.n = (int)(n < train.n ? n : train.n);
    sample.ex = xmalloc(sizeof(Example) * (size_t)(sample.n > 0 ? sample.n : 1));
    for (int i = 0; i < sample.n; i++) sample.ex[i] = train.ex[(long)i * train.n / sample.n];
    double secs = 0;
    float *pred = NULL;
    int rc = ops->calibrate_int8(m, 1, 0) == 0 &&
                     (pred = evaluate_predict_dataset(ops, m, &sample, EVALUATE_BATCH_DEFAULT, &secs)) != NULL
                 ? 0 : 1;
    if (ops->calibrate_int8(m, 0, rc == 0 ? sample.n : 0) != 0) rc = 1;
    free(pred);
    free(sample.ex);
    dataset_free(&train);
    return rc;
}

/* The model of a run compressed and saved to ckpt: its own way with settings
 * (ModelOps.quantize; the training split loaded when they retrain), else int8,
 * calibrated on `calibrate` training examples first (0: not). 0, or 1 after a
 * message. */
static int quantize_write(const ModelOps *ops, Model *m, const Task *t, const cJSON *settings, long calibrate,
                          const char *ckpt) {
    if (!ops->quantize) {
        if (calibrate > 0 && ops->calibrate_int8 && quantize_calibrate(ops, m, t, calibrate) != 0) return 1;
        return ops->save_int8(m, ckpt) == 0 ? 0 : 1;
    }
    Dataset train = {0};
    int retrain = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(settings, "retrain"));
    if (retrain && task_load(t, "train", task_data_root(), 0, &train) != 0) return 1;
    int rc = ops->quantize(m, settings, retrain ? &train : NULL) == 0 && ops->save(m, ckpt) == 0 ? 0 : 1;
    if (retrain) dataset_free(&train);
    return rc;
}

/* The line of one quantized run (printed; kept in lines for --results);
 * calibrate: the int8 calibration's examples (0: none; not for pq). */
static void quantize_print(const char *task, const char *model, const char *format, long calibrate, const char *out,
                           cJSON *fp32, const cJSON *best, long fp32_bytes, long q_bytes, int json, cJSON *lines) {
    cJSON *line = cJSON_CreateObject();
    cJSON_AddStringToObject(line, "run", out);
    cJSON_AddStringToObject(line, "task", task);
    cJSON_AddStringToObject(line, "model", model);
    cJSON_AddStringToObject(line, "format", format);
    if (strcmp(format, "int8") == 0) cJSON_AddNumberToObject(line, "calibrate", (double)calibrate);
    cJSON_AddItemToObject(line, "fp32", fp32);
    cJSON_AddItemToObject(line, format, cJSON_Duplicate(best, 1));
    cJSON_AddNumberToObject(line, "fp32_bytes", (double)fp32_bytes);
    char key[64];
    snprintf(key, sizeof key, "%s_bytes", format);
    cJSON_AddNumberToObject(line, key, (double)q_bytes);
    if (json) {
        json_print_line(line);
    } else {
        char *a = cJSON_PrintUnformatted(fp32), *b = cJSON_PrintUnformatted(best);
        printf("%s: %s %s (%ld bytes, fp32 %ld)\n  fp32 %s\n  %-4s %s\n", task, format, out, q_bytes, fp32_bytes, a,
               format, b);
        free(a);
        free(b);
    }
    cJSON_AddItemToArray(lines, line);
}

/* Where run's quantized copy goes: out_arg, else RUN-pq for a model with its
 * own quantization (fastText's product quantization), RUN-int8 for the rest. */
static void quantize_out_dir(const char *run, const char *out_arg, const ModelOps *ops, char *out, size_t cap) {
    if (out_arg) snprintf(out, cap, "%s", out_arg);
    else snprintf(out, cap, "%s-%s", run, ops && ops->quantize ? "pq" : "int8");
}

/* Whether ops can be quantized with these settings (NULL: none given) and
 * --calibrate (-1: not given); a usage error when not. */
static int quantize_supported(const ModelOps *ops, const cJSON *settings, long calibrate) {
    if (!ops->save_int8 && !ops->quantize) {
        user_error_usage("quantize a bert or fasttext run", "%s has no quantized path (bert: int8; fasttext: product "
                         "quantization)", ops->name);
        return 0;
    }
    if (ops->save_int8 && settings) {
        user_error_usage("drop --dsub, --cutoff, --qnorm, --qout, --retrain, --epoch and --lr",
                         "those are fastText's product quantization settings; %s's int8 takes none", ops->name);
        return 0;
    }
    if (!ops->calibrate_int8 && calibrate > 0) {
        user_error_usage("drop --calibrate", "--calibrate is bert's int8 calibration; %s takes none", ops->name);
        return 0;
    }
    return 1;
}

/* 1 when dir is a folder with nothing in it. */
static int quantize_dir_empty(const char *dir) {
    DIR *d = opendir(dir);
    struct dirent *e;
    int empty = d != NULL;
    while (d && empty && (e = readdir(d))) empty = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");
    if (d) closedir(d);
    return empty;
}

/* What a quantized copy scored: the source's best (fp32, owned) and the
 * copy's (held by the results written), both checkpoints' sizes. */
typedef struct QuantizeOutcome {
    cJSON *fp32;
    const cJSON *best;
    long fp32_bytes, q_bytes;
} QuantizeOutcome;

/* run's model m quantized into the folder work: the checkpoint written, read
 * back (the file is what is scored), scored on t's dev splits, and the run's
 * files beside it (results last: a folder holding results is a finished
 * run). 0 with *got filled, or 1 after a message (got->fp32 to free). */
static int quantize_into(const ModelOps *ops, Model *m, const Task *t, const char *run, const char *work,
                         const cJSON *settings, long calibrate, cJSON *results, QuantizeOutcome *got) {
    char ckpt[4300], src[4300];
    file_join(work, RUN_CKPT, ckpt, sizeof ckpt);
    file_join(run, RUN_CKPT, src, sizeof src);
    Model *q = NULL;
    if (quantize_write(ops, m, t, settings, calibrate, ckpt) != 0 || !(q = ops->load(ckpt, cli_run_task(t))))
        return 1;
    cJSON *best = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(results, "best"), 1);
    if (!best) best = cJSON_CreateObject();
    got->fp32 = cJSON_Duplicate(best, 1);
    got->fp32_bytes = quantize_file_size(src);
    got->q_bytes = quantize_file_size(ckpt);
    int rc = 1;
    if (quantize_copy(run, work, DECISION_FILE) != 0 || quantize_score(ops, q, t, run, work, best) != 0) {
        cJSON_Delete(best);
    } else if (quantize_copy(run, work, RUN_CONFIG) == 0 && quantize_copy(run, work, "dataset.json") == 0 &&
               quantize_results(results, run, work, best, got->fp32_bytes, got->q_bytes, settings, calibrate) == 0) {
        got->best = best;   /* results holds it now */
        rc = 0;
    }
    ops->free(q);
    return rc;
}

/* Writes the quantized copy of run into out as a run-directory transaction
 * (train/run_txn.h): over a run (--overwrite) the copy is made in the stage
 * <out>.next and swapped in once it is written and scored, so a failure
 * midway (data missing, disk full) keeps the old copy whole; a failure
 * leaves a folder it made removed and an empty folder it was given empty. */
static int quantize_run(const char *run, const char *out_arg, const cJSON *given, long calibrate, int overwrite,
                        int json, cJSON *lines) {
    const char *task_name, *model_name;
    cJSON *results = quantize_source(run, &task_name, &model_name);
    if (!results) return 1;
    int rc = EXIT_USAGE;
    const ModelOps *ops = cli_find_model(model_name);
    int ok = ops && quantize_supported(ops, given, calibrate);
    if (calibrate < 0) calibrate = ops && ops->calibrate_int8 ? QUANTIZE_CALIBRATE_DEFAULT : 0;
    const Task *t = ok ? cli_resolve_task(task_name, model_name, run) : NULL;
    Model *m = NULL;
    const cJSON *settings = ops && ops->quantize ? given : NULL;
    cJSON *empty = ops && ops->quantize && !given ? cJSON_CreateObject() : NULL;
    if (empty) settings = empty;
    char out[4200];
    quantize_out_dir(run, out_arg, ops, out, sizeof out);
    RunDirTxn x = {.kind = NULL};
    int was_empty = quantize_dir_empty(out);
    QuantizeOutcome got = {0};
    if (t && (m = cli_load_run(ops, cli_run_task(t), run, 0))) {
        rc = run_dir_enter(&x, out, 0, overwrite);
        if (rc == 0)
            rc = quantize_into(ops, m, t, run, x.work, settings, calibrate, results, &got) == 0 &&
                         run_dir_commit(&x) == 0 ? 0 : 1;
        if (rc == 0) {
            quantize_print(task_name, model_name, settings ? "pq" : "int8", calibrate, out, got.fp32, got.best,
                           got.fp32_bytes, got.q_bytes, json, lines);
            got.fp32 = NULL;   /* the printed line holds it */
        }
    } else if (t) {
        rc = 1;
    }
    int in_place = x.dir[0] && strcmp(x.work, x.dir) == 0;   /* else a stage, removed on failure */
    run_dir_close(&x, rc == 0);
    if (rc != 0 && in_place && (x.made || was_empty) && file_remove_tree(out) == 0 && was_empty) file_make_dir(out);
    cJSON_Delete(got.fp32);
    if (m) ops->free(m);
    cJSON_Delete(empty);
    cli_task_free(t);
    cJSON_Delete(results);
    return rc;
}

/* The product quantization flags given, as settings (NULL: none); -1 in *bad
 * after a message for a flag that is not a number. */
static cJSON *quantize_flags(Args *a, int *bad) {
    cJSON *j = NULL;
    char flag[32];
    for (int i = 0; QUANTIZE_NUMBERS[i]; i++) {
        snprintf(flag, sizeof flag, "--%s", QUANTIZE_NUMBERS[i]);
        const char *v = args_str(a, flag, NULL);
        if (!v) continue;
        char *end;
        double x = strtod(v, &end);
        if (end == v || *end) {
            user_error("usage: " QUANTIZE_USAGE, "%s takes a number, not '%s'", flag, v);
            *bad = 1;
            continue;
        }
        if (!j) j = cJSON_CreateObject();
        cJSON_AddNumberToObject(j, QUANTIZE_NUMBERS[i], x);
    }
    for (int i = 0; QUANTIZE_SWITCHES[i]; i++) {
        snprintf(flag, sizeof flag, "--%s", QUANTIZE_SWITCHES[i]);
        if (!args_flag(a, flag)) continue;
        if (!j) j = cJSON_CreateObject();
        cJSON_AddTrueToObject(j, QUANTIZE_SWITCHES[i]);
    }
    return j;
}

/* RUN_DIR without trailing slashes into run; EXIT_USAGE after a message when
 * --out names the run itself. */
static int quantize_paths(const char *arg, const char *out, char *run, size_t cap) {
    snprintf(run, cap, "%s", arg);
    for (size_t n = strlen(run); n > 1 && run[n - 1] == '/'; n--) run[n - 1] = '\0';
    if (out && strcmp(out, run) == 0) {
        user_error_usage("give another --out DIR", "--out %s is the run itself: quantize writes a new run", out);
        return EXIT_USAGE;
    }
    return 0;
}

/* 0 when run's quantized copy may be written: its directory (out_arg, else
 * RUN-int8 or RUN-pq by the run's model) holds no checkpoint yet, or
 * --overwrite was given; else non-zero after a message (nothing written). */
static int quantize_target_free(const char *run, const char *out_arg, int overwrite) {
    char out[4200], ckpt[4300];
    const char *task_name, *model_name;
    cJSON *r = out_arg ? NULL : quantize_source(run, &task_name, &model_name);
    if (!out_arg && !r) return 1;
    quantize_out_dir(run, out_arg, r ? model_find(model_name) : NULL, out, sizeof out);
    cJSON_Delete(r);
    file_join(out, RUN_CKPT, ckpt, sizeof ckpt);
    if (!overwrite && file_exists(ckpt)) {
        user_error_usage("give another --out DIR, or --overwrite to replace it",
                         "%s already holds a quantized run: quantize does not write over it", out);
        return EXIT_USAGE;
    }
    /* the rest of a run directory's refusals: a folder of someone else's files, an interrupted run */
    return run_dir_check(NULL, out, out, 0, overwrite, 1);
}

int cmd_quantize(int argc, char **argv) {
    Args a;
    args_init(&a, argc, argv);
    const char *out_arg = args_str(&a, "--out", NULL), *results = args_str(&a, "--results", NULL);
    long threads = args_threads(&a, 0);
    const char *cal = args_str(&a, "--calibrate", NULL);
    int json = args_flag(&a, "--json"), overwrite = args_flag(&a, "--overwrite"), bad = 0;
    cJSON *settings = quantize_flags(&a, &bad);
    const char *pos[64];
    int np = args_positional(&a, pos, 64);
    int rc = args_finish(&a, QUANTIZE_USAGE);
    char *end = NULL;
    long calibrate = cal ? strtol(cal, &end, 10) : -1;   /* -1: the default, for the runs that take it */
    if (!rc && cal && (end == cal || *end || calibrate < 0 || calibrate > 1000000)) {
        user_error("usage: " QUANTIZE_USAGE, "--calibrate takes a number of training examples (0 to 1000000), not "
                   "'%s'", cal);
        rc = EXIT_USAGE;
    }

    if (!rc && (bad || np < 1 || np > 64 || (out_arg && np > 1))) {
        if (!bad) user_error("usage: " QUANTIZE_USAGE, "quantize takes 1 to 64 run directories (--out with one only)");
        rc = EXIT_USAGE;
    }
    char run[4096], out[4200] = "";
    if (out_arg) {
        snprintf(out, sizeof out, "%s", out_arg);
        for (size_t n = strlen(out); n > 1 && out[n - 1] == '/'; n--) out[n - 1] = '\0';
    }
    for (int i = 0; i < np && !rc; i++) {   /* every path checked before the first run is quantized */
        rc = quantize_paths(pos[i], out_arg ? out : NULL, run, sizeof run);
        if (!rc) rc = quantize_target_free(run, out_arg ? out : NULL, overwrite);
    }
    if (rc) {
        cJSON_Delete(settings);
        return rc;
    }
    threads_init((int)threads);
    cJSON *lines = cJSON_CreateArray();
    for (int i = 0; i < np && rc == 0; i++) {
        quantize_paths(pos[i], NULL, run, sizeof run);
        rc = quantize_run(run, out_arg ? out : NULL, settings, calibrate, overwrite, json, lines);
    }
    if (rc == 0 && results) {
        char *command = cli_command_line(argc, argv);
        rc = quantize_table_write(results, lines, command);
        free(command);
    }
    cJSON_Delete(lines);
    cJSON_Delete(settings);
    return rc;
}
