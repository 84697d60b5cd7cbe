/* cmd_eval.c — `glue eval TASK|all [--model M] [--split dev|test] [--json]`:
 * load trained runs (runs/<task>/<model>/model.ckpt) and either score them on
 * the labelled dev splits (with the GLUE score for `all`) or write the test
 * predictions in leaderboard format into the run directory (AX with the MNLI
 * run). Everything is collected into one summary object first, then printed;
 * whole-benchmark extras (a submission zip, results/glue.json) belong in
 * eval_all_extras(), which sees that summary. */
#include "cli/cli_run.h"
#include "cli/commands.h"
#include "cli/run_score.h"
#include "cli/submission.h"
#include "core/args.h"
#include "core/common.h"
#include "core/files.h"
#include "core/provenance.h"
#include "core/gemm_bf16.h"
#include "core/gemm_int8.h"
#include "core/kernels.h"
#include "core/threads.h"
#include "eval/predictions.h"
#include "eval/report.h"
#include "train/decision.h"
#include "train/evaluate.h"
#include "models/run_config.h"
#include "train/run_dir.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EVAL_USAGE \
    "glue eval TASK|all [--model M] [--run DIR | --init DIR|CKPT] [--split dev|test] [--submit FILE.zip]\n" \
    "       [--results FILE] [--bf16 | --int8] [--json]\n"                                               \
    "   (a run on your own dataset: glue eval NAME --model M, or glue eval --run DIR;\n"              \
    "    --split test scores its --test file)"

typedef struct EvalArgs {
    const char *target, *model, *split;
    const char *submit;   /* --submit FILE.zip (all, test split) */
    const char *results;  /* --results FILE (all, dev split); NULL: the default */
    int json, all;
    int bf16;             /* --bf16: bf16 inference weights */
    int int8;             /* --int8: int8 inference weights, quantized as the run loads */
    const char *run, *init;   /* --run DIR / --init DIR|CKPT: the model to score (one task) */
} EvalArgs;

/* The predictions pred of d into path in the leaderboard format (`glue score` reads
 * it back); *labels (caller frees; NULL: not wanted) the predicted classes. 0 ok. */
static int eval_write_predictions(const Task *t, const Dataset *d, const float *pred, const char *path, int **labels) {
    int k = evaluate_num_outputs(t), n = d->n;
    long *index = xmalloc(sizeof(long) * (size_t)(n ? n : 1));
    int *label = xmalloc(sizeof(int) * (size_t)(n ? n : 1));
    double *score = xmalloc(sizeof(double) * (size_t)(n ? n : 1));
    for (int i = 0; i < n; i++) {
        index[i] = d->ex[i].index;
        label[i] = k == 1 ? -1 : evaluate_argmax(pred + (size_t)i * (size_t)k, k);
        score[i] = k == 1 ? pred[i] : 0;
    }
    int rc = predictions_write(path, t, index, label, score, n) ? 1 : 0;
    free(index);
    free(score);
    if (labels) *labels = label;
    else free(label);
    return rc;
}

/* The predictions of a labelled split into the run directory, and its confusion matrix
 * (rows: the gold label, columns: the predicted one) into out["dev_predictions"][split]. 0 ok. */
static int eval_save_dev_predictions(const Task *t, const Dataset *d, const float *pred, const char *dir,
                                     cJSON *out) {
    int k = evaluate_num_outputs(t), n = d->n, *label;
    char name[256], path[4400], where[4400];
    snprintf(name, sizeof name, "%s_predictions.tsv", d->split->name);
    file_join(dir, name, path, sizeof path);
    int rc = eval_write_predictions(t, d, pred, path, &label);
    cJSON *all = cJSON_GetObjectItemCaseSensitive(out, "dev_predictions");
    if (!all) all = cJSON_AddObjectToObject(out, "dev_predictions");
    cJSON *o = cJSON_AddObjectToObject(all, d->split->name);
    file_portable_path(path, where, sizeof where);
    cJSON_AddStringToObject(o, "file", where);
    if (k > 1) {
        cJSON *names = cJSON_AddArrayToObject(o, "labels"), *cm = cJSON_AddArrayToObject(o, "confusion");
        for (int g = 0; g < k; g++) {
            cJSON_AddItemToArray(names, cJSON_CreateString(task_label_name(t, g)));
            int row[TASK_MAX_LABELS] = {0};
            for (int i = 0; i < n; i++)
                if (d->ex[i].label == g) row[label[i]]++;
            cJSON_AddItemToArray(cm, cJSON_CreateIntArray(row, k));
        }
    }
    free(label);
    return rc;
}

/* Dev: {"<split>": {metrics}, ..., "examples": n, "examples_per_sec": x} over
 * the labelled dev splits — or, for a user's dataset with --split test, its
 * labelled test file (test = 1). */
static int eval_task_dev(const ModelOps *ops, Model *m, const Task *t, int batch, int test, const char *dir,
                         cJSON *out) {
    const TaskSplit *dev[TASK_MAX_SPLITS];
    int nd = test ? (dev[0] = task_split(t, "test")) != NULL : task_dev_splits(t, dev, TASK_MAX_SPLITS);
    if (test && nd == 0) {
        user_error("give --test FILE to glue finetune", "%s has no test file", t->display);
        return EXIT_USAGE;
    }
    Decision rule;   /* a multi-label run's rule, with the thresholds it chose on dev */
    if (decision_of_run(&rule, t, dir) != 0) return 1;
    long examples = 0;
    double seconds = 0;
    for (int s = 0; s < nd; s++) {
        Dataset d;
        if (task_load(t, dev[s]->name, task_data_root(), 0, &d) != 0) return 1;
        double secs = 0;
        float *pred = NULL;
        int rc = run_score_dataset(ops, m, t, &d, batch, &rule, dir, out, &pred, &secs);
        if (rc == 0 && dir[0] && !test && !t->multi_label) rc = eval_save_dev_predictions(t, &d, pred, dir, out);
        examples += d.n;
        seconds += secs;
        free(pred);
        dataset_free(&d);
        if (rc) return rc;
    }
    cJSON_AddNumberToObject(out, "examples", (double)examples);
    cJSON_AddNumberToObject(out, "examples_per_sec", seconds > 0 ? examples / seconds : 0);
    return 0;
}

/* Test: predictions of every test split written to dir/<submit name>;
 * out gets {"<split>": {"file": path, "rows": n}}. */
static int eval_task_test(const ModelOps *ops, Model *m, const Task *t, int batch, const char *dir,
                          cJSON *out) {
    for (int s = 0; s < t->num_splits; s++) {
        const TaskSplit *sp = &t->splits[s];
        if (!sp->is_test || !sp->submit) continue;
        Dataset d;
        if (task_load(t, sp->name, task_data_root(), 0, &d) != 0) return 1;
        float *pred = evaluate_predict_dataset(ops, m, &d, batch, NULL);
        char path[4096];
        file_join(dir, sp->submit, path, sizeof path);
        int rc = pred ? eval_write_predictions(t, &d, pred, path, NULL) : 1;
        if (rc == 0) {
            cJSON *o = cJSON_AddObjectToObject(out, sp->name);
            cJSON_AddStringToObject(o, "file", path);
            cJSON_AddNumberToObject(o, "rows", d.n);
        }
        free(pred);
        dataset_free(&d);
        if (rc) return rc;
    }
    return 0;
}

/* One task: load its run, evaluate, add summary["tasks"][name]. */
static int eval_one(const EvalArgs *e, const ModelOps *ops, const Task *t, cJSON *tasks) {
    const Task *rt = cli_run_task(t);
    char dir[4096];
    int test = strcmp(e->split, "test") == 0;
    if (test && e->init) {
        user_error("score it on dev, or fine-tune into a run directory and use --run DIR",
                   "eval --split test writes the leaderboard file into a run directory; --init %s is not one", e->init);
        return EXIT_USAGE;
    }
    Model *m = cli_load_model(ops, rt, e->run, e->init, (e->bf16 ? CLI_BF16 : 0) | (e->int8 ? CLI_INT8 : 0), dir,
                              sizeof dir);
    if (!m) return 1;
    cJSON *out = cJSON_CreateObject();
    char where[4200];
    file_portable_path(dir[0] ? dir : e->init, where, sizeof where);
    cJSON_AddStringToObject(out, "run", where);
    /* The kernels that ran, and whether --bf16 ran bf16 weights (false: the CPU
     * has no AVX512-BF16 and --bf16 ran the fp32 path, src/cli/cli_run.c). */
    cJSON_AddStringToObject(out, "kernels", kernels_level_name(kernels_level()));
    if (e->bf16) cJSON_AddBoolToObject(out, "bf16", gemm_bf16_native());
    if (e->int8) cJSON_AddStringToObject(out, "int8", gemm_int8_kernel());
    int batch = dir[0] ? run_score_batch(dir) : EVALUATE_BATCH_DEFAULT;
    /* a test split with public labels (GoEmotions) is scored here, as a user's test file */
    int scored = t->user || run_score_test_public(t);
    int rc = test && !scored ? eval_task_test(ops, m, t, batch, dir, out)
                             : eval_task_dev(ops, m, t, batch, test, dir, out);
    ops->free(m);
    if (rc == 0) cJSON_AddItemToObject(tasks, t->name, out);
    else cJSON_Delete(out);
    return rc;
}

/* one: the task of a single-task eval (a user's dataset is not in the registry). */
static void eval_print_text(const EvalArgs *e, const cJSON *summary, const Task *one) {
    const cJSON *tasks = cJSON_GetObjectItemCaseSensitive(summary, "tasks");
    /* a scored test split (labels public, or a user's file) is shown as dev is */
    int scored = tasks->child && cJSON_GetObjectItemCaseSensitive(tasks->child, "examples");
    int test = strcmp(e->split, "test") == 0 && !scored;
    static const char *const TEST_HEAD[] = {"Task", "Rows", "File"};
    static const char *const DEV_HEAD[] = {"Task", "Dev", "Examples", "Examples/s"};
    int ncols = test ? 3 : 4;
    ReportTable *tab = report_table_create(ncols);
    for (int c = 0; c < ncols; c++)
        report_table_add(tab, "%s", test ? TEST_HEAD[c] : c == 1 && scored && strcmp(e->split, "test") == 0 ? "Test" : DEV_HEAD[c]);
    for (const cJSON *it = tasks->child; it; it = it->next) {
        const Task *t = one ? one : task_find(it->string);
        if (test) {
            for (const cJSON *s = it->child; s; s = s->next) {
                if (!cJSON_IsObject(s)) continue;
                report_table_add(tab, "%s %s", t->display, s->string);
                report_table_add(tab, "%d", cJSON_GetObjectItemCaseSensitive(s, "rows")->valueint);
                report_table_add(tab, "%s", cJSON_GetObjectItemCaseSensitive(s, "file")->valuestring);
            }
            continue;
        }
        char head[128];
        report_task_header(t, head, sizeof head);
        report_table_add(tab, "%s", head);
        const cJSON *split = cJSON_GetObjectItemCaseSensitive(it, e->split);
        if (strcmp(e->split, "test") == 0 && split) {   /* the task's metrics on its test split */
            char cell[128] = "";
            for (int k = 0, len = 0; k < 2; k++) {
                const cJSON *v = t->metrics[k] == METRIC_NONE ? NULL
                                 : cJSON_GetObjectItemCaseSensitive(split, metric_name(t->metrics[k]));
                if (v) len += snprintf(cell + len, sizeof cell - (size_t)len, "%s%.2f", len ? "/" : "", v->valuedouble);
            }
            report_table_add(tab, "%s", cell[0] ? cell : "-");
        } else {
            report_task_cell(tab, t, it);
        }
        report_table_add(tab, "%.0f", run_config_number(it, "examples", 0));
        report_table_add(tab, "%.0f", run_config_number(it, "examples_per_sec", 0));
    }
    printf("%s, %s split\n", cJSON_GetObjectItemCaseSensitive(summary, "model")->valuestring, e->split);
    /* The benchmark table is Markdown, ready for a README; single tasks stay plain. */
    if (e->all && !test) report_table_print_markdown(tab, stdout);
    else report_table_print(tab, stdout);
    report_table_free(tab);
    const cJSON *missing = cJSON_GetObjectItemCaseSensitive(summary, "not_trained");
    for (const cJSON *it = missing ? missing->child : NULL; it; it = it->next)
        printf("%s%s%s", it == missing->child ? "not trained: " : ", ", task_find(it->valuestring)->display,
               it->next ? "" : "\n");
    /* The archive: which files are placeholders, which are missing. */
    const cJSON *sub = cJSON_GetObjectItemCaseSensitive(summary, "submission");
    if (sub) {
        const cJSON *files = cJSON_GetObjectItemCaseSensitive(sub, "files");
        int placeholders = 0;
        for (const cJSON *f = files ? files->child : NULL; f; f = f->next)
            if (strcmp(run_config_string(f, "source", ""), "majority") == 0)
                printf("%s %s", placeholders++ ? "," : "majority-class placeholders (no trained model):",
                       run_config_string(f, "file", ""));
        if (placeholders) printf("\n");
        const cJSON *miss = cJSON_GetObjectItemCaseSensitive(sub, "missing");
        for (const cJSON *f = miss ? miss->child : NULL; f; f = f->next)
            printf("%s %s%s", f == miss->child ? "missing (no test data):" : ",", f->valuestring, f->next ? "" : "\n");
        printf("archive: %s (%d files)\n", run_config_string(sub, "zip", "(not written)"), cJSON_GetArraySize(files));
    }
    const cJSON *glue = cJSON_GetObjectItemCaseSensitive(summary, "glue");
    if (glue && e->all)
        printf("GLUE score %.2f over %d task(s)\n", run_config_number(glue, "glue_score", 0),
               (int)run_config_number(glue, "num_tasks", 0));
}

/* Whole-benchmark outputs made from the summary: on dev, the GLUE table as
 * JSON (results/glue.json for BERT, results/glue-<model>.json otherwise, or
 * --results); on test with --submit, the leaderboard zip. Returns an exit code. */
static int eval_all_extras(const EvalArgs *e, cJSON *summary) {
    const cJSON *tasks = cJSON_GetObjectItemCaseSensitive(summary, "tasks");
    if (strcmp(e->split, "test") == 0) {
        if (!e->submit) return 0;
        cJSON *report = cJSON_AddObjectToObject(summary, "submission");
        return submission_write(e->submit, tasks, e->model, report);
    }
    char path[4096];
    if (e->results) snprintf(path, sizeof path, "%s", e->results);
    else if (strcmp(e->model, "bert") == 0) snprintf(path, sizeof path, "%s/glue.json", run_results_root());
    else snprintf(path, sizeof path, "%s/glue-%s.json", run_results_root(), e->model);
    char *slash = strrchr(path, '/');
    if (slash) {
        *slash = 0;
        int rc = file_make_dir(path);
        *slash = '/';
        if (rc) return 1;
    }
    if (json_file_write(path, summary) != 0) return 1;
    fprintf(stderr, "wrote %s\n", path);
    return 0;
}

static int eval_parse(int argc, char **argv, EvalArgs *e) {
    Args a;
    args_init(&a, argc, argv);
    e->json = args_flag(&a, "--json");
    e->bf16 = args_flag(&a, "--bf16");
    e->int8 = args_flag(&a, "--int8");
    e->model = args_str(&a, "--model", NULL);
    e->split = args_str(&a, "--split", "dev");
    e->submit = args_str(&a, "--submit", NULL);
    e->results = args_str(&a, "--results", NULL);
    e->run = args_str(&a, "--run", NULL);
    e->init = args_str(&a, "--init", NULL);
    const char *pos[2];
    int npos = args_positional(&a, pos, 2);
    int rc = args_finish(&a, EVAL_USAGE);
    if (rc) return rc;
    if (npos > 1 || (npos == 0 && !e->run)) {
        user_error(NULL, "eval: expected TASK or all, got %d arguments", npos);
        return args_usage(EVAL_USAGE);
    }
    if (strcmp(e->split, "dev") != 0 && strcmp(e->split, "test") != 0) {
        user_error("use --split dev or --split test", "eval: unknown split '%s'", e->split);
        return EXIT_USAGE;
    }
    e->target = npos ? pos[0] : NULL;   /* none: the dataset recorded in --run DIR */
    e->all = npos && strcmp(pos[0], "all") == 0;
    if (e->all && (e->run || e->init)) {
        user_error("glue eval TASK --run DIR", "eval all scores runs/<task>/<model>: --run and --init name one task's model");
        return EXIT_USAGE;
    }
    if (e->submit && (!e->all || strcmp(e->split, "test") != 0)) {
        user_error("glue eval all --split test --submit FILE.zip", "eval: --submit needs 'all' and --split test");
        return EXIT_USAGE;
    }
    if (e->results && (!e->all || strcmp(e->split, "dev") != 0)) {
        user_error("glue eval all --results FILE", "eval: --results needs 'all' and the dev split");
        return EXIT_USAGE;
    }
    return 0;
}

/* `all`: every task whose run exists (AX through MNLI's, test split only). */
static int eval_all(const EvalArgs *e, const ModelOps *ops, cJSON *tasks, cJSON *skipped) {
    int rc = 0;
    for (int i = 0; i < NUM_TASKS; i++) {
        const Task *t = &TASKS[i];
        char dir[4096], ckpt[4096];
        run_dir_path(cli_run_task(t)->name, ops->name, dir, sizeof dir);
        file_join(dir, RUN_CKPT, ckpt, sizeof ckpt);
        const TaskSplit *dev = task_dev_split(t);
        int usable = strcmp(e->split, "test") == 0 || (dev && dev->col_label >= 0);
        if (!usable) continue;
        if (!file_exists(ckpt)) { cJSON_AddItemToArray(skipped, cJSON_CreateString(t->name)); continue; }
        if (eval_one(e, ops, t, tasks) != 0) rc = 1;
    }
    if (!tasks->child && rc == 0) {
        user_error_io("train one first: glue finetune TASK --model M", "no trained %s runs under %s/", ops->name,
                   run_root());
        rc = 1;
    }
    return rc;
}

static int eval_task_or_all(const EvalArgs *ea, const ModelOps *ops, const Task *t);

int cmd_eval(int argc, char **argv) {
    EvalArgs e = {0};
    int rc = eval_parse(argc, argv, &e);
    if (rc) return rc;
    /* A run says which model it is; --model only where there is none. */
    const ModelOps *ops = cli_choose_model(e.model, e.run, e.init, "bert");
    if (!ops) return EXIT_USAGE;
    e.model = ops->name;
    const Task *t = e.all ? NULL : cli_resolve_task(e.target, ops->name, e.run);
    if (!e.all && !t) return EXIT_USAGE;
    rc = eval_task_or_all(&e, ops, t);
    cli_task_free(t);
    return rc;
}

/* A metric without a value fails the command, after the table has shown it
 * as nan (--json: null). 0, or EXIT_FAILED after a message. */
static int eval_check_numbers(const cJSON *tasks) {
    for (const cJSON *it = tasks ? tasks->child : NULL; it; it = it->next) {
        char what[256];
        if (!cli_nan_metric(it, what, sizeof what)) continue;
        user_error("a model with constant or non-finite outputs, or a gold score beyond a float's range, leaves a "
                   "metric undefined", "%s: %s is not a number", it->string, what);
        return EXIT_FAILED;
    }
    return 0;
}

static int eval_task_or_all(const EvalArgs *ea, const ModelOps *ops, const Task *t) {
    EvalArgs e = *ea;
    int rc;
    if (t && strcmp(e.split, "dev") == 0 && !(task_dev_split(t) && task_dev_split(t)->col_label >= 0)) {
        user_error("use --split test", "%s has no labelled dev split", t->display);
        return EXIT_USAGE;
    }
    int threads = threads_init(0);   /* every core this process may use, FTZ on */
    cJSON *summary = cJSON_CreateObject();
    cJSON_AddItemToObject(summary, "provenance", provenance_json(threads, -1));
    cJSON_AddStringToObject(summary, "model", ops->name);
    cJSON_AddStringToObject(summary, "split", e.split);
    cJSON *tasks = cJSON_AddObjectToObject(summary, "tasks");
    cJSON *skipped = cJSON_AddArrayToObject(summary, "not_trained");
    rc = e.all ? eval_all(&e, ops, tasks, skipped) : eval_one(&e, ops, t, tasks);
    if (tasks->child && strcmp(e.split, "dev") == 0 && !(t && t->user)) {   /* own data: no GLUE score */
        cJSON *glue = report_glue_score(tasks);
        if (glue) cJSON_AddItemToObject(summary, "glue", glue);
    }
    if (e.all && rc == 0) rc = eval_all_extras(&e, summary);
    if (tasks->child) {
        if (e.json) {
            json_print_line(summary);
        } else {
            eval_print_text(&e, summary, t);
        }
    }
    if (rc == 0) rc = eval_check_numbers(tasks);
    cJSON_Delete(summary);
    return rc;
}
