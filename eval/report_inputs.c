/* report_inputs.c — finding and reading the report's inputs (see report_inputs.h). */
#include "eval/report_inputs.h"

#include "core/common.h"
#include "core/files.h"
#include "train/resume.h"
#include "train/run_dir.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Run directories sit at runs/<task>/<model>/ and seed runs one level deeper
 * (DIR/seed-N/); a little more depth tolerates another layout. */
#define RUNS_MAX_DEPTH 4

cJSON *report_json_file(const char *path, char *why, size_t cap) {
    size_t len = 0;
    char *text = file_read(path, &len);
    if (!text) {
        snprintf(why, cap, "%s", errno == ENOENT ? "does not exist" : strerror(errno));
        return NULL;
    }
    const char *end = NULL;
    cJSON *j = cJSON_ParseWithOpts(text, &end, 0);
    if (!j) {
        int line = 1;
        for (const char *c = text; end && c < end && *c; c++) line += *c == '\n';
        snprintf(why, cap, "is not valid JSON (line %d)", line);
    } else if (!cJSON_IsObject(j)) {
        snprintf(why, cap, "is JSON but not an object");
        cJSON_Delete(j);
        j = NULL;
    }
    free(text);
    return j;
}

static const cJSON *field(const cJSON *o, const char *k) { return cJSON_GetObjectItemCaseSensitive(o, k); }

/* What a results file is, from its fields; -1 when none of ours. */
static int input_kind(const cJSON *j) {
    const cJSON *task = field(j, "task"), *bench = field(j, "benchmark");
    if (cJSON_IsArray(field(j, "models"))) return REPORT_IN_COMPARE;
    if (cJSON_IsString(field(j, "analysis")) && cJSON_IsArray(field(j, "tables"))) return REPORT_IN_ANALYSIS;
    if (cJSON_IsString(bench) && strcmp(bench->valuestring, "bert") == 0) return REPORT_IN_BENCH_BERT;
    if (cJSON_IsString(bench) && strncmp(bench->valuestring, "serve", 5) == 0) return REPORT_IN_BENCH_SERVE;
    if (cJSON_IsObject(field(j, "official")) && cJSON_IsObject(field(j, "ours"))) return REPORT_IN_BENCH_FASTTEXT;
    if (cJSON_IsArray(field(j, "configs"))) return REPORT_IN_BENCH_SCALING;
    if (cJSON_IsArray(field(j, "harnesses"))) return REPORT_IN_FUZZ;
    if (cJSON_IsArray(field(j, "results")) && cJSON_IsObject(field(j, "machine")) && cJSON_IsObject(field(j, "config")))
        return REPORT_IN_BENCH_RNN;
    if (cJSON_IsArray(field(j, "rows")) && cJSON_IsArray(field(j, "seeds"))) return REPORT_IN_PROTOCOL;
    if (cJSON_IsArray(field(j, "rows")) && cJSON_IsObject(field(cJSON_GetArrayItem(field(j, "rows"), 0), "fp32")) &&
        cJSON_IsString(field(cJSON_GetArrayItem(field(j, "rows"), 0), "format")))
        return REPORT_IN_QUANTIZED;
    if (cJSON_IsArray(field(j, "runs")) && cJSON_IsObject(field(j, "proxy"))) return REPORT_IN_SCREEN;
    if (cJSON_IsString(task) && strcmp(task->valuestring, "translation") == 0 && cJSON_IsArray(field(j, "runs")))
        return REPORT_IN_TRANSLATION;
    if (cJSON_IsArray(field(j, "runs")) && cJSON_IsObject(field(j, "summary"))) return REPORT_IN_SEEDS;
    if (cJSON_IsArray(field(j, "epochs"))) return REPORT_IN_RUN;
    if (cJSON_IsObject(field(j, "tasks"))) return REPORT_IN_EVAL_ALL;
    return -1;
}

static void inputs_add(ReportInputs *r, ReportPage *p, int kind, const char *path, const char *dir,
                       const char *name, cJSON *json, int from_runs) {
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 32;
        r->in = xrealloc(r->in, sizeof(ReportInput) * (size_t)r->cap);
    }
    r->in[r->n++] = (ReportInput){
        .kind = (ReportInputKind)kind, .path = xstrdup(path), .dir = dir ? xstrdup(dir) : NULL,
        .name = xstrdup(name), .json = json, .source = report_page_source(p, path, json), .from_runs = from_runs,
    };
}

/* A JSON file of ours, or a note saying why it is left out. */
static cJSON *inputs_read(ReportPage *p, const char *path, int *kind) {
    char why[256];
    cJSON *j = report_json_file(path, why, sizeof why);
    if (!j) {
        report_page_missing(p, "%s %s: left out", path, why);
        return NULL;
    }
    *kind = input_kind(j);
    if (*kind < 0) {
        report_page_missing(p, "%s: not a file glue writes (none of the fields of compare, eval all, seeds, run, "
                            "protocol, pretraining screen, translation, benchmark, fuzzing or analysis results): left out", path);
        cJSON_Delete(j);
        return NULL;
    }
    return j;
}

static int ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* Benchmarks sit one level down (results/bench/<cpu>/bench_bert_*.json). */
#define RESULTS_MAX_DEPTH 2

/* Every *.json under dir (sub = its path below the results directory, "" at
 * the top); returns how many. */
static int load_results_tree(ReportInputs *r, ReportPage *p, const char *dir, const char *sub, int depth) {
    struct dirent **ents = NULL;
    int n = scandir(dir, &ents, NULL, alphasort), found = 0;
    for (int i = 0; i < n; i++) {
        const char *name = ents[i]->d_name;
        char path[4096], stem[512];
        struct stat st;
        if (name[0] == '.') {
            free(ents[i]);
            continue;
        }
        file_join(dir, name, path, sizeof path);
        if (ends_with(name, ".json")) {
            snprintf(stem, sizeof stem, "%s%.*s", sub, (int)(strlen(name) - 5), name);
            int kind;
            cJSON *j = inputs_read(p, path, &kind);
            if (j) inputs_add(r, p, kind, path, NULL, stem, j, 0);
            found++;
        } else if (depth < RESULTS_MAX_DEPTH && stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
            snprintf(stem, sizeof stem, "%s%s/", sub, name);
            found += load_results_tree(r, p, path, stem, depth + 1);
        }
        free(ents[i]);
    }
    free(ents);
    return found;
}

static void load_results_dir(ReportInputs *r, ReportPage *p, const char *dir) {
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        report_page_missing(p, "results directory %s: %s (the GLUE table, protocols, translation and benchmarks "
                            "come from it)", dir, stat(dir, &st) != 0 ? strerror(errno) : "not a directory");
        return;
    }
    if (!load_results_tree(r, p, dir, "", 0)) report_page_missing(p, "results directory %s has no .json files", dir);
}

/* A pretraining run: dir with log.jsonl or log.jsonl.gz. 1 if it is one. */
static int add_pretrain(ReportInputs *r, ReportPage *p, const char *dir, int from_runs) {
    char log[4096], meta[4096];
    file_join(dir, "log.jsonl", log, sizeof log);
    if (!file_exists(log)) file_join(dir, "log.jsonl.gz", log, sizeof log);
    if (!file_exists(log)) return 0;
    /* The run's config (or its summary) says what was trained; optional. */
    cJSON *j = NULL;
    static const char *const META[] = {"summary.json", "pretrain_config.json", "config.json"};
    for (int k = 0; k < 3 && !j; k++) {
        file_join(dir, META[k], meta, sizeof meta);
        char why[256];
        if (file_exists(meta)) j = report_json_file(meta, why, sizeof why);
    }
    inputs_add(r, p, REPORT_IN_PRETRAIN, log, dir, dir, j, from_runs);
    return 1;
}

static void walk_runs(ReportInputs *r, ReportPage *p, const char *dir, int depth) {
    char path[4096];
    int kind;
    file_join(dir, RUN_RESULTS, path, sizeof path);
    int has_results = file_exists(path);
    if (has_results) {
        cJSON *j = inputs_read(p, path, &kind);
        if (j) inputs_add(r, p, kind, path, dir, dir, j, 1);
    }
    file_join(dir, "seeds.json", path, sizeof path);
    if (file_exists(path)) {
        cJSON *j = inputs_read(p, path, &kind);
        if (j) inputs_add(r, p, kind, path, dir, dir, j, 1);
    }
    int is_pretrain = add_pretrain(r, p, dir, 1);
    char cfg[4096];
    file_join(dir, RUN_CONFIG, cfg, sizeof cfg);
    if (!has_results && !is_pretrain && file_exists(cfg))
        report_page_missing(p, "%s: a run without results.json (%s): no curves or dev predictions for it", dir,
                            resume_exists(dir) ? "still running, or interrupted: its command with --resume finishes it"
                                               : "still running, or it failed");
    if (depth >= RUNS_MAX_DEPTH) return;
    struct dirent **ents = NULL;
    int n = scandir(dir, &ents, NULL, alphasort);
    for (int i = 0; i < n; i++) {
        struct stat st;
        if (ents[i]->d_name[0] != '.') {
            file_join(dir, ents[i]->d_name, path, sizeof path);
            if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) walk_runs(r, p, path, depth + 1);
        }
        free(ents[i]);
    }
    free(ents);
}

void report_inputs_load(ReportInputs *r, ReportPage *p, const char *results_dir, const char *runs_dir,
                        const char *const *pretrain_dirs, int npretrain) {
    *r = (ReportInputs){0};
    load_results_dir(r, p, results_dir);
    struct stat st;
    if (stat(runs_dir, &st) != 0 || !S_ISDIR(st.st_mode))
        report_page_missing(p, "runs directory %s: %s (dev predictions and the runs' learning curves come from run "
                            "directories: glue finetune TASK makes one)", runs_dir,
                            stat(runs_dir, &st) != 0 ? strerror(errno) : "not a directory");
    else
        walk_runs(r, p, runs_dir, 0);
    for (int i = 0; i < npretrain; i++)
        if (!add_pretrain(r, p, pretrain_dirs[i], 0))
            report_page_missing(p, "%s: no log.jsonl or log.jsonl.gz: no pretraining curve for it", pretrain_dirs[i]);
}

void report_inputs_free(ReportInputs *r) {
    for (int i = 0; i < r->n; i++) {
        free(r->in[i].path);
        free(r->in[i].dir);
        free(r->in[i].name);
        cJSON_Delete(r->in[i].json);
    }
    free(r->in);
    *r = (ReportInputs){0};
}

int report_inputs_count(const ReportInputs *r, ReportInputKind kind) {
    int n = 0;
    for (int i = 0; i < r->n; i++) n += r->in[i].kind == kind;
    return n;
}
