/* screen.c — the fine-tuning proxy of pretraining runs and its table (see
 * screen.h). */
#include "experiments/screen.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "core/files.h"
#include "core/provenance.h"
#include "experiments/intermediate.h"
#include "experiments/protocol.h"
#include "models/model.h"
#include "models/run_config.h"
#include "train/run_dir.h"
#include "train/trainer.h"
#include "pretrain/pretrain_config.h"
#include "pretrain/train.h"
#include "tasks/task.h"

#define SCREEN_TABLE_TITLE "Pretraining screen: short runs judged by a fine-tuning proxy"

/* The recipe keys a row shows when they differ from the defaults. */
static const char *const SCREEN_KEYS[] = {
    "model",         "objective",  "steps",          "batch",           "accumulate",        "lr",
    "warmup",        "schedule",   "weight_decay",   "dropout",         "mask_prob",         "max_predictions",
    "mask_token_prob", "random_token_prob", "whole_word", "generator_size", "generator_layers", "disc_weight",
};

/* The last path component of dir (without trailing slashes). */
static void screen_run_name(const char *dir, char *out, size_t cap) {
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/') n--;
    size_t s = n;
    while (s > 0 && dir[s - 1] != '/') s--;
    snprintf(out, cap, "%.*s", (int)(n - s), dir + s);
}

/* results.json of one fine-tune, training it first when it is not there. NULL after a message. */
static cJSON *screen_finetune(const ScreenOptions *o, const char *run_dir, const Task *t, long seed) {
    char dir[4096], path[4200], init[4200];
    snprintf(dir, sizeof dir, "%s/screen/%s-seed%ld", run_dir, t->name, seed);
    file_join(dir, RUN_RESULTS, path, sizeof path);
    if (file_exists(path)) return json_file_read(path, 1);
    const ModelOps *ops = model_find("bert");
    snprintf(init, sizeof init, "init=%s/model.ckpt", run_dir);
    const char *sets[SCREEN_MAX_SETS + 2], *origin[SCREEN_MAX_SETS + 2];
    int nsets = 0;
    sets[nsets] = init, origin[nsets++] = "the run's encoder";
    if (strcmp(t->name, "sst2") == 0) sets[nsets] = "epochs=1", origin[nsets++] = "the proxy's SST-2 epochs";
    for (int i = 0; i < o->n_sets; i++) sets[nsets] = o->sets[i], origin[nsets++] = "--set";
    cJSON *config = run_config_build(ops->default_config(t), NULL, sets, origin, nsets);
    if (!config) return NULL;
    fprintf(stderr, "screen: fine-tuning %s (seed %ld) from %s\n", t->name, seed, run_dir);
    TrainerOptions to = {.task = t, .ops = ops, .config = config, .seed = (uint64_t)seed, .threads = o->threads,
                         .out_dir = dir, .data_root = task_data_root(), .command = o->command,
                         .resume = trainer_can_resume(dir, config, (uint64_t)seed, 0),   /* an interrupted fine-tune */
                         .show_progress = 1};
    cJSON *res = NULL;
    int rc = intermediate_run(&to, NULL, &res);
    cJSON_Delete(config);
    return rc == 0 ? res : NULL;
}

/* The mean of the metrics of the selection split of a fine-tune's best epoch;
 * the metrics go into `metrics` (summed, to be averaged over seeds). NAN when missing. */
static double screen_task_score(const cJSON *res, cJSON *metrics) {
    const cJSON *best = cJSON_GetObjectItemCaseSensitive(res, "best");
    return protocol_add_metrics(metrics, cJSON_GetObjectItemCaseSensitive(best, "dev"));
}

/* The recipe settings of the run that differ from the defaults. */
static cJSON *screen_settings(const cJSON *config) {
    cJSON *defaults = pretrain_config_defaults(), *out = cJSON_CreateObject();
    for (size_t i = 0; i < sizeof SCREEN_KEYS / sizeof SCREEN_KEYS[0]; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(config, SCREEN_KEYS[i]);
        const cJSON *d = cJSON_GetObjectItemCaseSensitive(defaults, SCREEN_KEYS[i]);
        if (v && !(d && cJSON_Compare(v, d, 1))) cJSON_AddItemToObject(out, SCREEN_KEYS[i], cJSON_Duplicate(v, 1));
    }
    cJSON_Delete(defaults);
    return out;
}

static double screen_number(const cJSON *j, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* 0 when run_dir is a finished pretraining run; else 1 after a message
 * (one that is not there is an I/O error, exit 74). */
static int screen_check_run(const char *run_dir) {
    char path[4200];
    file_join(run_dir, PRETRAIN_SUMMARY, path, sizeof path);
    if (file_exists(path)) return 0;
    if (!file_exists(run_dir))
        user_error_io("name the --out of a glue pretrain run", "%s: no such run directory", run_dir);
    else
        user_error("finish it first (glue pretrain ... --out DIR --resume)", "%s: not a finished pretraining run (no %s)",
                   run_dir, PRETRAIN_SUMMARY);
    return 1;
}

/* One row: the run's own files, then every proxy fine-tune. NULL after a message. */
static cJSON *screen_row(const ScreenOptions *o, const char *run_dir) {
    char path[4200], name[256];
    screen_run_name(run_dir, name, sizeof name);
    file_join(run_dir, PRETRAIN_SUMMARY, path, sizeof path);
    cJSON *summary = json_file_read(path, 1);
    file_join(run_dir, PRETRAIN_CONFIG, path, sizeof path);
    cJSON *config = summary ? json_file_read(path, 1) : NULL;
    if (!config) {
        cJSON_Delete(summary);
        return NULL;
    }
    cJSON *row = cJSON_CreateObject();
    cJSON_AddStringToObject(row, "run", name);
    const cJSON *obj = cJSON_GetObjectItemCaseSensitive(config, "objective");
    cJSON_AddStringToObject(row, "objective", cJSON_IsString(obj) ? obj->valuestring : "mlm");
    cJSON_AddItemToObject(row, "settings", screen_settings(config));
    cJSON_AddNumberToObject(row, "tokens", screen_number(summary, "tokens"));
    cJSON_AddNumberToObject(row, "train_seconds", screen_number(summary, "train_seconds"));
    cJSON_AddNumberToObject(row, "tokens_per_sec", screen_number(summary, "tokens_per_sec"));
    cJSON_AddNumberToObject(row, "threads", screen_number(summary, "threads"));
    const cJSON *cpu = cJSON_GetObjectItemCaseSensitive(summary, "cpu");
    cJSON_AddStringToObject(row, "cpu", cJSON_IsString(cpu) ? cpu->valuestring : "not recorded");
    cJSON *seeds = cJSON_AddArrayToObject(row, "proxy_seeds");
    for (int k = 0; k < o->n_seeds; k++) cJSON_AddItemToArray(seeds, cJSON_CreateNumber((double)o->seeds[k]));
    const cJSON *ev = cJSON_GetObjectItemCaseSensitive(summary, "eval");
    if (ev) {
        cJSON *h = cJSON_AddObjectToObject(row, "heldout_mlm");
        cJSON_AddNumberToObject(h, "loss", screen_number(ev, "loss"));
        cJSON_AddNumberToObject(h, "accuracy", 100 * screen_number(ev, "accuracy"));
        cJSON_AddStringToObject(h, "model", cJSON_IsString(obj) && strcmp(obj->valuestring, "electra") == 0
                                                 ? "generator" : "encoder");
    }
    cJSON *tasks = cJSON_AddObjectToObject(row, "tasks");
    double proxy = 0;
    int ok = 1;
    for (int i = 0; i < o->n_tasks && ok; i++) {
        const Task *t = task_find(o->tasks[i]);
        cJSON *metrics = cJSON_CreateObject(), *scores = cJSON_CreateArray();
        double s[SCREEN_MAX_SEEDS];
        for (int k = 0; k < o->n_seeds && ok; k++) {
            cJSON *res = screen_finetune(o, run_dir, t, o->seeds[k]);
            ok = res != NULL;
            s[k] = ok ? screen_task_score(res, metrics) : NAN;
            if (ok) cJSON_AddItemToArray(scores, cJSON_CreateNumber(s[k]));
            cJSON_Delete(res);
        }
        if (!ok) {
            cJSON_Delete(metrics);
            cJSON_Delete(scores);
            break;
        }
        double mean;
        protocol_task_cell(tasks, t->name, metrics, scores, s, o->n_seeds, &mean);
        proxy += mean / o->n_tasks;
    }
    cJSON_Delete(summary);
    cJSON_Delete(config);
    if (!ok) {
        cJSON_Delete(row);
        return NULL;
    }
    cJSON_AddNumberToObject(row, "proxy_score", proxy);
    return row;
}

/* The table's Markdown twin. */
static int screen_write_md(const cJSON *table, const char *json_path) {
    char path[4200];
    file_md_twin(json_path, path, sizeof path);
    AtomicFile out;
    FILE *f = atomic_open(&out, path);
    if (!f) return -1;
    const cJSON *proxy = cJSON_GetObjectItemCaseSensitive(table, "proxy");
    const cJSON *tasks = cJSON_GetObjectItemCaseSensitive(proxy, "tasks");
    fprintf(f, "# %s\n\nWritten by `glue pretrain screen` (%s). Proxy: each task fine-tuned from the run's "
               "encoder with the default recipe (SST-2 one epoch), dev set, seeds",
            SCREEN_TABLE_TITLE, cJSON_GetObjectItemCaseSensitive(table, "command")->valuestring);
    for (const cJSON *s = cJSON_GetObjectItemCaseSensitive(proxy, "seeds")->child; s; s = s->next)
        fprintf(f, " %ld", (long)s->valuedouble);
    fprintf(f, "; a task's score is the mean of its metrics (mean over seeds), the proxy score their mean. "
               "Held-out MLM: WikiText-2 valid (an ELECTRA run's is its generator's). Tokens/s: of the "
               "pretraining run, on the CPU its row names (throughput halves when other jobs share the cores: "
               "compare runs by tokens, not by time).\n\n");
    fprintf(f, "| run | objective | settings (not default) | tokens (M) | hours | tok/s (threads, CPU) | held-out MLM loss / acc |");
    for (const cJSON *t = tasks->child; t; t = t->next) fprintf(f, " %s |", task_find(t->valuestring)->display);
    fprintf(f, " proxy |\n|---|---|---|---|---|---|---|");
    for (const cJSON *t = tasks->child; t; t = t->next) fprintf(f, "---|");
    fprintf(f, "---|\n");
    for (const cJSON *r = cJSON_GetObjectItemCaseSensitive(table, "runs")->child; r; r = r->next) {
        char *settings = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(r, "settings"));
        const cJSON *h = cJSON_GetObjectItemCaseSensitive(r, "heldout_mlm");
        const cJSON *cpu = cJSON_GetObjectItemCaseSensitive(r, "cpu");
        fprintf(f, "| %s | %s | `%s` | %.1f | %.2f | %.0f (%.0f, %s) | ",
                cJSON_GetObjectItemCaseSensitive(r, "run")->valuestring,
                cJSON_GetObjectItemCaseSensitive(r, "objective")->valuestring, settings,
                screen_number(r, "tokens") / 1e6, screen_number(r, "train_seconds") / 3600,
                screen_number(r, "tokens_per_sec"), screen_number(r, "threads"),
                cJSON_IsString(cpu) ? cpu->valuestring : "not recorded");
        free(settings);
        if (h) fprintf(f, "%.3f / %.1f%% |", screen_number(h, "loss"), screen_number(h, "accuracy"));
        else fprintf(f, "- |");
        const cJSON *rt = cJSON_GetObjectItemCaseSensitive(r, "tasks");
        for (const cJSON *t = tasks->child; t; t = t->next) {
            const cJSON *tj = cJSON_GetObjectItemCaseSensitive(rt, t->valuestring);
            if (!tj) {
                fprintf(f, " - |");
                continue;
            }
            fprintf(f, " %.2f", screen_number(tj, "score"));
            if (cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(tj, "seed_scores")) > 1)
                fprintf(f, " ± %.2f", screen_number(tj, "std"));
            fprintf(f, " |");
        }
        fprintf(f, " **%.2f** |\n", screen_number(r, "proxy_score"));
    }
    if (atomic_commit(&out)) return -1;
    printf("wrote %s and %s\n", json_path, path);
    return 0;
}

int pretrain_screen(const ScreenOptions *o) {
    for (int i = 0; i < o->n_tasks; i++)
        if (!task_find_or_report(o->tasks[i])) return EXIT_USAGE;
    /* Every run before the first fine-tune: a mistyped last one fails now,
     * not after the others' fine-tunes. */
    for (int i = 0; i < o->n_runs; i++)
        if (screen_check_run(o->runs[i])) return 1;
    /* The table so far: rows of other runs are kept, a screened run's row replaced. */
    cJSON *table = file_exists(o->results) ? json_file_read(o->results, 1) : cJSON_CreateObject();
    if (!table || !cJSON_IsObject(table) ||
        (cJSON_GetObjectItemCaseSensitive(table, "title") &&
         !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(table, "title")))) {
        user_error("name another --results file", "%s is not a pretraining screen table", o->results);
        cJSON_Delete(table);
        return EXIT_USAGE;
    }
    cJSON *runs = cJSON_GetObjectItemCaseSensitive(table, "runs");
    if (!cJSON_IsArray(runs)) {
        cJSON_DeleteItemFromObjectCaseSensitive(table, "runs");
        runs = cJSON_AddArrayToObject(table, "runs");
    }
    int rc = 0;
    for (int i = 0; i < o->n_runs && rc == 0; i++) {
        cJSON *row = screen_row(o, o->runs[i]);
        if (!row) {
            rc = 1;
            break;
        }
        const char *name = cJSON_GetObjectItemCaseSensitive(row, "run")->valuestring;
        int at = 0, found = -1;
        for (cJSON *r = runs->child; r; r = r->next, at++) {
            const cJSON *rn = cJSON_GetObjectItemCaseSensitive(r, "run");
            if (cJSON_IsString(rn) && strcmp(rn->valuestring, name) == 0) found = at;
        }
        if (found >= 0) cJSON_ReplaceItemInArray(runs, found, row);
        else cJSON_AddItemToArray(runs, row);
        printf("%s: proxy score %.2f\n", name, cJSON_GetObjectItemCaseSensitive(row, "proxy_score")->valuedouble);
    }
    char parent[4200];
    snprintf(parent, sizeof parent, "%s", o->results);
    char *slash = strrchr(parent, '/');
    if (slash && slash != parent) *slash = '\0';
    if (rc == 0 && slash && slash != parent && file_make_dir(parent)) rc = 1;
    if (rc == 0) {
        char cpu[256];
        provenance_cpu(cpu, sizeof cpu);
        /* the command as cli_command_line wrote it: home written ~ */
        cJSON *fields[] = {cJSON_CreateString(SCREEN_TABLE_TITLE), cJSON_CreateString(o->command ? o->command : ""),
                           cJSON_CreateString(cpu), cJSON_CreateObject(),   /* cpu: of the fine-tunes */
                           provenance_json(o->threads, -1)};
        cJSON *tasks = cJSON_AddArrayToObject(fields[3], "tasks"), *seeds = cJSON_AddArrayToObject(fields[3], "seeds");
        for (int i = 0; i < o->n_tasks; i++) cJSON_AddItemToArray(tasks, cJSON_CreateString(task_find(o->tasks[i])->name));
        for (int k = 0; k < o->n_seeds; k++) cJSON_AddItemToArray(seeds, cJSON_CreateNumber((double)o->seeds[k]));
        cJSON_AddStringToObject(fields[3], "recipe", "glue finetune defaults from the run's model.ckpt; SST-2 1 epoch");
        const char *keys[] = {"title", "command", "cpu", "proxy", "provenance"};
        for (int k = 0; k < 5; k++) {
            cJSON_DeleteItemFromObjectCaseSensitive(table, keys[k]);
            cJSON_AddItemToObject(table, keys[k], fields[k]);
        }
        rc = json_file_write(o->results, table) || screen_write_md(table, o->results) ? 1 : 0;
    }
    cJSON_Delete(table);
    return rc;
}
