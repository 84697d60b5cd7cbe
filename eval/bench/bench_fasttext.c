/* bench_fasttext.c — `glue bench fasttext`: our fastText against Debian's official
 * binary (/usr/bin/fasttext, facebookresearch/fastText) on one task, same data,
 * same settings, alternating A/B over several repetitions on this machine.
 *
 * Both sides are timed end to end, as a user would run them: read the training
 * data, build the vocabulary, train, write the model (the official tool writes
 * model.bin and model.vec; we write our compressed checkpoint). Our training loop
 * alone is reported too. Accuracy is on the dev split, from each side's own
 * predictions (official: `fasttext predict`), scored by the same code. We feed
 * batches shuffled per epoch, as `glue finetune` does; the reference streams its
 * file in order from one offset per thread (on SST-2 both give ~81.4).
 *
 * With product quantization settings (--quantize, or any of --dsub --cutoff
 * --qnorm --qout --retrain --qepoch --qlr), each side's model is then
 * compressed with them: the official's by `fasttext quantize` (model.ftz,
 * predicted by `fasttext predict` from it), ours by glue's fastText quantize
 * (the checkpoint `glue quantize` writes, read back before it predicts); the
 * rows "quantized" hold both sizes on disk and dev accuracies. */
#include "eval/bench/bench.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/args.h"
#include "core/common.h"
#include "core/editdist.h"
#include "core/files.h"
#include "core/provenance.h"
#include "core/rng.h"
#include "train/evaluate.h"
#include "models/baselines/fasttext.h"
#include "tasks/task.h"

#define BENCH_FT_USAGE \
    "glue bench fasttext [--task sst2] [--epoch 5] [--dim 100] [--wordNgrams 1] [--threads 2] [--reps 3]\n" \
    "  [--fasttext PATH] [--json] [--quantize] [--dsub 2] [--cutoff 0] [--qnorm] [--qout] [--retrain]\n" \
    "  [--qepoch 5] [--qlr 0.05]"
#define BENCH_FT_BIN "/usr/bin/fasttext"
#define BENCH_FT_LABEL "__label__"
#define BENCH_FT_MAX_REPS 50
/* What the comparison must show (the official scores ~81.3 on SST-2 dev). */
#define BENCH_FT_MAX_ACC_GAP 0.5

typedef struct {
    const Task *task;
    int epochs, dim, word_ngrams, threads, reps, json;
    cJSON *qsettings;         /* product quantization settings (fastText's keys), NULL: none */
    const char *bin;          /* the official fasttext */
    char tmp[4096];           /* our private temporary directory */
    char train_txt[4200], dev_txt[4200];
    Dataset dev;
    int *gold;                /* (dev.n) */
} FtBench;

typedef struct {
    double seconds[BENCH_FT_MAX_REPS], acc[BENCH_FT_MAX_REPS];
    double loop_seconds[BENCH_FT_MAX_REPS];   /* ours only: the training loop */
    double bytes[BENCH_FT_MAX_REPS];          /* the fp32 model file */
    double qacc[BENCH_FT_MAX_REPS], qbytes[BENCH_FT_MAX_REPS];   /* quantized: dev accuracy, file size */
} FtSide;

/* The quantization flags into b->qsettings (fastText's quantize keys); the
 * ranges are checked by the model when it quantizes. -1 after a message. */
static int bench_ft_quant_flags(Args *a, FtBench *b) {
    static const char *const numbers[][2] = {{"--dsub", "dsub"}, {"--cutoff", "cutoff"}, {"--qepoch", "epoch"},
                                             {"--qlr", "lr"}};
    static const char *const switches[][2] = {{"--qnorm", "qnorm"}, {"--qout", "qout"}, {"--retrain", "retrain"}};
    cJSON *j = cJSON_CreateObject();
    int any = args_flag(a, "--quantize");
    for (int i = 0; i < 4; i++) {
        const char *v = args_str(a, numbers[i][0], NULL);
        char *end;
        if (!v) continue;
        double x = strtod(v, &end);
        if (end == v || *end) {
            user_error(BENCH_FT_USAGE, "%s takes a number, not '%s'", numbers[i][0], v);
            cJSON_Delete(j);
            return -1;
        }
        cJSON_AddNumberToObject(j, numbers[i][1], x);
        any = 1;
    }
    for (int i = 0; i < 3; i++)
        if (args_flag(a, switches[i][0])) {
            cJSON_AddTrueToObject(j, switches[i][1]);
            any = 1;
        }
    if (any) b->qsettings = j;
    else cJSON_Delete(j);
    return 0;
}

static int bench_ft_parse(int argc, char **argv, FtBench *b) {
    Args a;
    args_init(&a, argc, argv);
    const char *task = args_str(&a, "--task", "sst2");
    b->epochs = (int)args_int(&a, "--epoch", 5);
    b->dim = (int)args_int(&a, "--dim", 100);
    b->word_ngrams = (int)args_int(&a, "--wordNgrams", 1);
    if (bench_ft_quant_flags(&a, b) != 0) return EXIT_USAGE;
    b->threads = (int)args_threads(&a, 2);
    b->reps = (int)args_int(&a, "--reps", 3);
    b->bin = args_str(&a, "--fasttext", BENCH_FT_BIN);
    b->json = args_flag(&a, "--json");
    int rc = args_finish(&a, BENCH_FT_USAGE);
    if (rc) return rc;
    if (b->epochs < 1 || b->dim < 1 || b->threads < 1 || b->word_ngrams < 1 || b->reps < 1 ||
        b->reps > BENCH_FT_MAX_REPS) {
        user_error(BENCH_FT_USAGE, "bench fasttext: --epoch, --dim, --wordNgrams, --threads need >= 1 and --reps 1..%d",
                   BENCH_FT_MAX_REPS);
        return EXIT_USAGE;
    }
    b->task = task_find(task);
    if (!b->task) {
        char tail[96];
        user_error("run 'glue tasks' for the list", "unknown task '%s'%s", task, str_did_you_mean(task_suggest(task), tail, sizeof tail));
        return EXIT_USAGE;
    }
    if (b->task->num_labels < 2 || !task_dev_split(b->task) || !task_split(b->task, "train")) {
        user_error("pick a classification task with train and dev data, e.g. sst2",
                   "bench fasttext: the official fastText only classifies; %s is not usable here", b->task->name);
        return EXIT_USAGE;
    }
    if (access(b->bin, X_OK) != 0) {
        user_error("install it: sudo apt-get install fasttext (or give --fasttext PATH)",
                   "the official fastText binary %s is missing", b->bin);
        return 1;
    }
    return 0;
}

/* The reference's input format: "__label__K words..." a line; pairs joined by
 * FT_SEP exactly as our model joins them. */
static int bench_ft_write(const Dataset *d, const char *path) {
    FILE *f = fopen(path, "w");
    if (!f) { user_error_io(NULL, "cannot write %s", path); return -1; }
    for (int i = 0; i < d->n; i++) {
        const Example *x = &d->ex[i];
        fprintf(f, BENCH_FT_LABEL "%d %s", x->label, x->a ? x->a : "");
        if (x->b) fprintf(f, " " FT_SEP " %s", x->b);
        fputc('\n', f);
    }
    if (fclose(f) != 0) { user_error_io(NULL, "cannot write %s", path); return -1; }
    return 0;
}

/* Accuracy ×100 of a `fasttext predict` output file against gold. */
static int bench_ft_score_file(const char *path, const int *gold, int n, double *acc) {
    FILE *f = fopen(path, "r");
    if (!f) { user_error_io(NULL, "cannot read %s", path); return -1; }
    int *pred = xmalloc((size_t)n * sizeof *pred), k = 0;
    char line[256];
    size_t plen = strlen(BENCH_FT_LABEL);
    while (k < n && fgets(line, sizeof line, f))
        pred[k++] = strncmp(line, BENCH_FT_LABEL, plen) == 0 ? atoi(line + plen) : -1;
    fclose(f);
    int rc = k == n ? 0 : -1;
    if (rc) user_error(NULL, "%s: %d predictions for %d dev rows", path, k, n);
    else *acc = 100.0 * metric_accuracy(pred, gold, n);
    free(pred);
    return rc;
}

static long bench_ft_file_size(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fclose(f);
    return n;
}

/* `fasttext quantize` of the official's model with b->qsettings, spelled out
 * in full (the same parse gives ours its values), then its dev accuracy. */
static int bench_ft_official_quantize(FtBench *b, const char *out, const char *log, double *acc, double *bytes) {
    FtQuantConfig q;
    if (ft_quant_config_parse(b->qsettings, &q) != 0) return -1;
    char dsub[16], cutoff[32], epoch[16], lr[32], thr[16], model[4300], pred[4200];
    snprintf(dsub, sizeof dsub, "%d", q.dsub);
    snprintf(cutoff, sizeof cutoff, "%ld", q.cutoff);
    snprintf(epoch, sizeof epoch, "%d", q.epochs);
    snprintf(lr, sizeof lr, "%g", q.lr);
    snprintf(thr, sizeof thr, "%d", b->threads);
    const char *argv[24] = {b->bin, "quantize", "-input", b->train_txt, "-output", out, "-dsub", dsub, "-cutoff", cutoff,
                            "-epoch", epoch, "-lr", lr, "-thread", thr, "-verbose", "0"};
    int n = 18;
    if (q.qnorm) argv[n++] = "-qnorm";
    if (q.qout) argv[n++] = "-qout";
    if (q.retrain) argv[n++] = "-retrain";
    argv[n] = NULL;
    if (bench_spawn(argv, NULL, log, NULL) != 0) {
        user_error("see its messages in the log", "%s quantize failed (log: %s)", b->bin, log);
        return -1;
    }
    snprintf(model, sizeof model, "%s.ftz", out);
    snprintf(pred, sizeof pred, "%s/official-ftz.pred", b->tmp);
    *bytes = (double)bench_ft_file_size(model);
    const char *predict[] = {b->bin, "predict", model, b->dev_txt, NULL};
    if (bench_spawn(predict, pred, log, NULL) != 0) {
        user_error(NULL, "%s predict failed (log: %s)", b->bin, log);
        return -1;
    }
    return bench_ft_score_file(pred, b->gold, b->dev.n, acc);
}

static int bench_ft_official(FtBench *b, FtSide *side, int r) {
    double *seconds = &side->seconds[r], *acc = &side->acc[r];
    char out[4200], log[4200], model[4300], pred[4200], epoch[16], dim[16], thr[16], ngrams[16];
    snprintf(out, sizeof out, "%s/official", b->tmp);
    snprintf(model, sizeof model, "%s.bin", out);
    snprintf(log, sizeof log, "%s/official.log", b->tmp);
    snprintf(pred, sizeof pred, "%s/official.pred", b->tmp);
    snprintf(epoch, sizeof epoch, "%d", b->epochs);
    snprintf(dim, sizeof dim, "%d", b->dim);
    snprintf(thr, sizeof thr, "%d", b->threads);
    snprintf(ngrams, sizeof ngrams, "%d", b->word_ngrams);
    /* Everything our defaults use, spelled out (they are also the tool's defaults). */
    const char *train[] = {b->bin, "supervised", "-input", b->train_txt, "-output", out, "-epoch", epoch,
                           "-dim", dim, "-thread", thr, "-lr", "0.1", "-wordNgrams", ngrams, "-minCount", "1",
                           "-loss", "softmax", "-verbose", "0", NULL};
    if (bench_spawn(train, NULL, log, seconds) != 0) {
        user_error("see its messages in the log", "%s supervised failed (log: %s)", b->bin, log);
        return -1;
    }
    side->bytes[r] = (double)bench_ft_file_size(model);
    const char *predict[] = {b->bin, "predict", model, b->dev_txt, NULL};
    if (bench_spawn(predict, pred, log, NULL) != 0) {
        user_error(NULL, "%s predict failed (log: %s)", b->bin, log);
        return -1;
    }
    if (bench_ft_score_file(pred, b->gold, b->dev.n, acc) != 0) return -1;
    return b->qsettings ? bench_ft_official_quantize(b, out, log, &side->qacc[r], &side->qbytes[r]) : 0;
}

/* create + encode + epochs of batches shuffled per epoch, as `glue finetune`'s
 * trainer feeds them; returns the model or NULL. */
static Model *bench_ft_train(const FtBench *b, const Dataset *train, uint64_t seed, double *loop_seconds) {
    const ModelOps *ops = &FASTTEXT_OPS;
    cJSON *cfg = ft_reference_config();   /* the settings the official tool runs with */
    cJSON_ReplaceItemInObjectCaseSensitive(cfg, "epochs", cJSON_CreateNumber(b->epochs));
    cJSON_ReplaceItemInObjectCaseSensitive(cfg, "dim", cJSON_CreateNumber(b->dim));
    cJSON_ReplaceItemInObjectCaseSensitive(cfg, "wordNgrams", cJSON_CreateNumber(b->word_ngrams));
    cJSON_ReplaceItemInObjectCaseSensitive(cfg, "threads", cJSON_CreateNumber(b->threads));
    int batch = cJSON_GetObjectItem(cfg, "batch")->valueint;
    Model *m = ops->create(cfg, b->task, train, seed);
    cJSON_Delete(cfg);
    if (!m) return NULL;
    Encoded *e = ops->encode(m, train);
    double t0 = now_seconds();
    int *rows = xmalloc((size_t)train->n * sizeof *rows);
    for (int i = 0; i < train->n; i++) rows[i] = i;
    long per_epoch = (train->n + batch - 1) / batch, total = per_epoch * b->epochs, step = 0;
    for (int ep = 0; ep < b->epochs; ep++) {
        Rng rng;
        rng_seed_stream(&rng, seed, (uint64_t)ep);
        rng_shuffle_int(&rng, rows, train->n);
        for (int s = 0; s < train->n; s += batch, step++) {
            TrainState st = {.step = step, .total_steps = total, .progress = (double)step / (double)total,
                             .epoch = ep};
            ops->train_step(m, e, rows + s, train->n - s < batch ? train->n - s : batch, &st);
        }
    }
    *loop_seconds = now_seconds() - t0;
    free(rows);
    ops->encoded_free(e);
    return m;
}

/* Dev accuracy ×100 of model m. */
static double bench_ft_accuracy(const FtBench *b, Model *m) {
    const ModelOps *ops = &FASTTEXT_OPS;
    int K = b->task->num_labels, *rows = xmalloc((size_t)b->dev.n * sizeof *rows);
    int *pred = xmalloc((size_t)b->dev.n * sizeof *pred);
    float *out = xmalloc((size_t)b->dev.n * (size_t)K * sizeof *out);
    for (int i = 0; i < b->dev.n; i++) rows[i] = i;
    Encoded *e = ops->encode(m, &b->dev);
    ops->predict(m, e, rows, b->dev.n, out);
    for (int i = 0; i < b->dev.n; i++) pred[i] = evaluate_argmax(out + (size_t)i * K, K);
    double acc = 100.0 * metric_accuracy(pred, b->gold, b->dev.n);
    ops->encoded_free(e);
    free(rows);
    free(pred);
    free(out);
    return acc;
}

/* Ours quantized with b->qsettings as `glue quantize` does, saved, read back
 * and scored. */
static int bench_ft_ours_quantize(FtBench *b, Model *m, const Dataset *train, double *acc, double *bytes) {
    const ModelOps *ops = &FASTTEXT_OPS;
    char ckpt[4200];
    snprintf(ckpt, sizeof ckpt, "%s/ours-pq.ckpt", b->tmp);
    if (ops->quantize(m, b->qsettings, train) != 0 || ops->save(m, ckpt) != 0) return -1;
    Model *q = ops->load(ckpt, b->task);
    if (!q) return -1;
    *bytes = (double)bench_ft_file_size(ckpt);
    *acc = bench_ft_accuracy(b, q);
    ops->free(q);
    return 0;
}

static int bench_ft_ours(FtBench *b, uint64_t seed, FtSide *side, int r) {
    const ModelOps *ops = &FASTTEXT_OPS;
    char ckpt[4200];
    snprintf(ckpt, sizeof ckpt, "%s/ours.ckpt", b->tmp);
    double t0 = now_seconds();
    Dataset train;
    if (task_load(b->task, "train", task_data_root(), 0, &train) != 0) return -1;
    Model *m = bench_ft_train(b, &train, seed, &side->loop_seconds[r]);
    if (!m || ops->save(m, ckpt) != 0) {
        if (m) ops->free(m);
        dataset_free(&train);
        return -1;
    }
    side->seconds[r] = now_seconds() - t0;
    side->bytes[r] = (double)bench_ft_file_size(ckpt);
    side->acc[r] = bench_ft_accuracy(b, m);
    int rc = b->qsettings ? bench_ft_ours_quantize(b, m, &train, &side->qacc[r], &side->qbytes[r]) : 0;
    ops->free(m);
    dataset_free(&train);
    return rc;
}

static cJSON *bench_ft_side_json(const FtSide *x, int reps, int ours, const char *binary) {
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "implementation", binary);
    cJSON_AddNumberToObject(j, "accuracy", summarize(x->acc, reps).median);
    cJSON_AddItemToObject(j, "accuracy_reps", cJSON_CreateDoubleArray(x->acc, reps));
    cJSON_AddItemToObject(j, "train_seconds", bench_stats_json(summarize(x->seconds, reps)));
    cJSON_AddItemToObject(j, "train_seconds_reps", cJSON_CreateDoubleArray(x->seconds, reps));
    if (ours) cJSON_AddItemToObject(j, "train_loop_seconds", bench_stats_json(summarize(x->loop_seconds, reps)));
    return j;
}

static double bench_ft_median(const double *x, int reps) { return summarize(x, reps).median; }

/* One side's quantized row: fp32 and quantized file sizes and accuracies. */
static cJSON *bench_ft_quant_side(const FtSide *x, int reps, const char *format) {
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "format", format);
    cJSON_AddNumberToObject(j, "fp32_bytes", bench_ft_median(x->bytes, reps));
    cJSON_AddNumberToObject(j, "bytes", bench_ft_median(x->qbytes, reps));
    cJSON_AddNumberToObject(j, "fp32_accuracy", bench_ft_median(x->acc, reps));
    cJSON_AddNumberToObject(j, "accuracy", bench_ft_median(x->qacc, reps));
    cJSON_AddItemToObject(j, "accuracy_reps", cJSON_CreateDoubleArray(x->qacc, reps));
    cJSON_AddItemToObject(j, "bytes_reps", cJSON_CreateDoubleArray(x->qbytes, reps));
    return j;
}

/* The "quantized" rows: both sides compressed with the same settings; the
 * checks are issue 46's: ours at most 1.1x the official's size and at most
 * 0.5 points below its accuracy. */
static cJSON *bench_ft_quant_json(const FtBench *b, const FtSide *off, const FtSide *ours) {
    cJSON *j = cJSON_CreateObject();
    FtQuantConfig q;
    ft_quant_config_parse(b->qsettings, &q);
    cJSON_AddItemToObject(j, "settings", ft_quant_config_json(&q));
    cJSON_AddItemToObject(j, "official", bench_ft_quant_side(off, b->reps, "fasttext quantize (.ftz)"));
    cJSON_AddItemToObject(j, "ours", bench_ft_quant_side(ours, b->reps, "glue quantize (checkpoint)"));
    double size_ratio = bench_ft_median(ours->qbytes, b->reps) / bench_ft_median(off->qbytes, b->reps);
    double acc_diff = bench_ft_median(ours->qacc, b->reps) - bench_ft_median(off->qacc, b->reps);
    cJSON_AddNumberToObject(j, "size_ratio", size_ratio);
    cJSON_AddNumberToObject(j, "accuracy_diff", acc_diff);
    cJSON_AddNumberToObject(j, "ours_compression", bench_ft_median(ours->bytes, b->reps) /
                                                       bench_ft_median(ours->qbytes, b->reps));
    cJSON_AddBoolToObject(j, "size_at_most_1_1x_official", size_ratio <= 1.1);
    cJSON_AddBoolToObject(j, "accuracy_at_most_0_5_below", acc_diff >= -BENCH_FT_MAX_ACC_GAP);
    return j;
}

static cJSON *bench_ft_json(const FtBench *b, const FtSide *off, const FtSide *ours) {
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "task", b->task->name);
    cJSON_AddStringToObject(j, "split", b->dev.split ? b->dev.split->name : "dev");
    cJSON_AddNumberToObject(j, "epoch", b->epochs);
    cJSON_AddNumberToObject(j, "dim", b->dim);
    cJSON_AddNumberToObject(j, "wordNgrams", b->word_ngrams);
    cJSON_AddNumberToObject(j, "threads", b->threads);
    cJSON_AddNumberToObject(j, "reps", b->reps);
    cJSON_AddStringToObject(j, "timing", "wall seconds, end to end: read data, vocabulary, train, write model");
    cJSON_AddItemToObject(j, "official", bench_ft_side_json(off, b->reps, 0, b->bin));
    cJSON_AddItemToObject(j, "ours", bench_ft_side_json(ours, b->reps, 1, "glue fasttext"));
    double acc_diff = summarize(ours->acc, b->reps).median - summarize(off->acc, b->reps).median;
    double ratio = summarize(ours->seconds, b->reps).median / summarize(off->seconds, b->reps).median;
    cJSON_AddNumberToObject(j, "accuracy_diff", acc_diff);
    cJSON_AddNumberToObject(j, "time_ratio", ratio);
    cJSON_AddBoolToObject(j, "accuracy_within_0_5", fabs(acc_diff) <= BENCH_FT_MAX_ACC_GAP);
    cJSON_AddBoolToObject(j, "time_at_most_official", ratio <= 1.0);
    if (b->qsettings) cJSON_AddItemToObject(j, "quantized", bench_ft_quant_json(b, off, ours));
    cJSON_AddItemToObject(j, "provenance", provenance_json(b->threads, -1));
    return j;
}

static void bench_ft_print(const FtBench *b, const cJSON *j) {
    printf("fastText on %s (%s split), %d epochs, dim %d, %d threads, %d reps alternating A/B\n",
           b->task->display, b->dev.split ? b->dev.split->name : "dev", b->epochs, b->dim, b->threads, b->reps);
    printf("%-10s %9s %12s %8s %8s\n", "", "accuracy", "train s med", "min", "max");
    const char *sides[] = {"official", "ours"};
    for (int i = 0; i < 2; i++) {
        const cJSON *s = cJSON_GetObjectItem(j, sides[i]), *t = cJSON_GetObjectItem(s, "train_seconds");
        printf("%-10s %9.2f %12.3f %8.3f %8.3f\n", sides[i], cJSON_GetObjectItem(s, "accuracy")->valuedouble,
               cJSON_GetObjectItem(t, "median")->valuedouble, cJSON_GetObjectItem(t, "min")->valuedouble,
               cJSON_GetObjectItem(t, "max")->valuedouble);
    }
    const cJSON *loop = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "ours"), "train_loop_seconds");
    printf("(times: read data + vocabulary + train + write model; our training loop alone: %.3f s)\n",
           cJSON_GetObjectItem(loop, "median")->valuedouble);
    printf("time ours/official: %.3f (%s)   accuracy ours - official: %+.2f (%s)\n",
           cJSON_GetObjectItem(j, "time_ratio")->valuedouble,
           cJSON_IsTrue(cJSON_GetObjectItem(j, "time_at_most_official")) ? "ok, at most 1" : "SLOWER",
           cJSON_GetObjectItem(j, "accuracy_diff")->valuedouble,
           cJSON_IsTrue(cJSON_GetObjectItem(j, "accuracy_within_0_5")) ? "ok, within 0.5" : "NOT within 0.5");
    const cJSON *q = cJSON_GetObjectItem(j, "quantized");
    if (!q) return;
    char *settings = cJSON_PrintUnformatted(cJSON_GetObjectItem(q, "settings"));
    printf("quantized %s\n%-10s %12s %9s %12s %9s\n", settings, "", "fp32 bytes", "accuracy", "quant bytes", "accuracy");
    free(settings);
    for (int i = 0; i < 2; i++) {
        const cJSON *s = cJSON_GetObjectItem(q, sides[i]);
        printf("%-10s %12.0f %9.2f %12.0f %9.2f\n", sides[i], cJSON_GetObjectItem(s, "fp32_bytes")->valuedouble,
               cJSON_GetObjectItem(s, "fp32_accuracy")->valuedouble, cJSON_GetObjectItem(s, "bytes")->valuedouble,
               cJSON_GetObjectItem(s, "accuracy")->valuedouble);
    }
    printf("size ours/official: %.3f (%s)   accuracy ours - official: %+.2f (%s)\n",
           cJSON_GetObjectItem(q, "size_ratio")->valuedouble,
           cJSON_IsTrue(cJSON_GetObjectItem(q, "size_at_most_1_1x_official")) ? "ok, at most 1.1" : "LARGER",
           cJSON_GetObjectItem(q, "accuracy_diff")->valuedouble,
           cJSON_IsTrue(cJSON_GetObjectItem(q, "accuracy_at_most_0_5_below")) ? "ok" : "MORE than 0.5 below");
}

/* Loads dev, writes both text files into the temporary directory. */
static int bench_ft_prepare(FtBench *b) {
    Dataset train;
    const char *root = task_data_root();
    if (task_load(b->task, task_dev_split(b->task)->name, root, 0, &b->dev) != 0) return -1;
    if (task_load(b->task, "train", root, 0, &train) != 0) return -1;
    snprintf(b->train_txt, sizeof b->train_txt, "%s/train.txt", b->tmp);
    snprintf(b->dev_txt, sizeof b->dev_txt, "%s/dev.txt", b->tmp);
    int rc = bench_ft_write(&train, b->train_txt) || bench_ft_write(&b->dev, b->dev_txt) ? -1 : 0;
    dataset_free(&train);
    b->gold = xmalloc((size_t)(b->dev.n ? b->dev.n : 1) * sizeof *b->gold);
    for (int i = 0; i < b->dev.n; i++) b->gold[i] = b->dev.ex[i].label;
    return rc;
}

static int bench_ft_reps(FtBench *b, FtSide *off, FtSide *ours) {
    for (int r = 0; r < b->reps; r++) {
        /* Alternate who goes first, so drift in machine load hits both alike. */
        for (int k = 0; k < 2; k++) {
            int official_now = (r + k) % 2 == 0;
            int rc = official_now ? bench_ft_official(b, off, r) : bench_ft_ours(b, (uint64_t)r + 1, ours, r);
            if (rc != 0) return -1;
        }
        if (!b->json)
            fprintf(stderr, "rep %d/%d: official %.2f%% %.3fs, ours %.2f%% %.3fs\n", r + 1, b->reps, off->acc[r],
                    off->seconds[r], ours->acc[r], ours->seconds[r]);
    }
    return 0;
}

int bench_fasttext(int argc, char **argv) {
    FtBench b = {0};
    int rc = bench_ft_parse(argc, argv, &b);
    if (rc) return rc;
    if (bench_tmpdir_make("bench-fasttext", b.tmp, sizeof b.tmp) != 0) return 1;
    FtSide *off = xcalloc(1, sizeof *off), *ours = xcalloc(1, sizeof *ours);
    rc = 1;
    if (bench_ft_prepare(&b) == 0 && bench_ft_reps(&b, off, ours) == 0) {
        cJSON *j = bench_ft_json(&b, off, ours);
        if (b.json) {
            json_print_line(j);
        } else {
            bench_ft_print(&b, j);
        }
        rc = bench_write_results("bench_fasttext.json", j) == 0 ? 0 : 1;
        cJSON_Delete(j);
    }
    file_remove_tree(b.tmp);
    dataset_free(&b.dev);
    cJSON_Delete(b.qsettings);
    free(b.gold);
    free(off);
    free(ours);
    return rc;
}
