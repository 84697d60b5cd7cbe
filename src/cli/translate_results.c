/* translate_results.c — the table of translation runs (see translate_results.h). */
#include "cli/translate_results.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli_run.h"
#include "core/common.h"
#include "core/files.h"
#include "eval/report.h"
#include "models/run_config.h"
#include "train/run_dir.h"

#define TR_BLEU_DEFINITION                                                                              \
    "bleu: sacreBLEU (cased, 13a) of the detokenised output against the raw references; bleu_tok_lc: " \
    "lower-cased, against the Moses-tokenised lower-cased references of multi30k/tok; dev_bleu: the "   \
    "run's best dev BLEU (greedy, cased), the checkpoint that is scored"

/* The run's name: the last component of its directory. */
static void tr_run_name(const char *dir, char *out, size_t cap) {
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/') n--;
    size_t start = n;
    while (start > 0 && dir[start - 1] != '/') start--;
    snprintf(out, cap, "%.*s", (int)(n - start), dir + start);
}

static cJSON *tr_find_run(cJSON *runs, const char *name) {
    cJSON *r;
    cJSON_ArrayForEach(r, runs) {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(r, "run");
        if (cJSON_IsString(n) && strcmp(n->valuestring, name) == 0) return r;
    }
    return NULL;
}

static void tr_set(cJSON *obj, const char *key, cJSON *value) {
    if (cJSON_GetObjectItemCaseSensitive(obj, key)) cJSON_ReplaceItemInObjectCaseSensitive(obj, key, value);
    else cJSON_AddItemToObject(obj, key, value);
}

/* What the run was: settings from its config, training facts from its results.json. */
static void tr_describe_run(cJSON *entry, const char *run_dir, const cJSON *cfg) {
    char where[4200];
    file_portable_path(run_dir, where, sizeof where);   /* no home directory in results */
    tr_set(entry, "dir", cJSON_CreateString(where));
    tr_set(entry, "positions", cJSON_CreateString(run_config_string(cfg, "positions", "sinusoid")));
    tr_set(entry, "lpr_base", cJSON_CreateNumber(run_config_number(cfg, "lpr_base", 0)));
    tr_set(entry, "lpr_keys", cJSON_CreateNumber(run_config_number(cfg, "lpr_keys", 0)));
    tr_set(entry, "lpr_values", cJSON_CreateNumber(run_config_number(cfg, "lpr_values", 0)));
    char path[4200];
    file_join(run_dir, RUN_RESULTS, path, sizeof path);
    cJSON *res = file_exists(path) ? json_file_read(path, 0) : NULL;
    tr_set(entry, "finished", cJSON_CreateBool(res != NULL));
    if (!res) return;
    const cJSON *best = cJSON_GetObjectItemCaseSensitive(res, "best");
    const cJSON *epochs = cJSON_GetObjectItemCaseSensitive(res, "epochs");
    tr_set(entry, "num_params", cJSON_CreateNumber(run_config_number(res, "num_params", 0)));
    tr_set(entry, "steps", cJSON_CreateNumber(run_config_number(res, "steps", 0)));
    tr_set(entry, "epochs", cJSON_CreateNumber(cJSON_GetArraySize(epochs)));
    tr_set(entry, "cpu_hours", cJSON_CreateNumber(run_config_number(res, "cpu_seconds", 0) / 3600.0));
    tr_set(entry, "train_hours", cJSON_CreateNumber(run_config_number(res, "train_seconds", 0) / 3600.0));
    tr_set(entry, "dev_bleu", cJSON_CreateNumber(run_config_number(best, "dev_bleu", 0)));
    tr_set(entry, "train_command", cJSON_CreateString(run_config_string(res, "command", "")));
    cJSON_Delete(res);
}

static cJSON *tr_score_json(const TranslateScore *s) {
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "beam", s->dec->beam);
    cJSON_AddNumberToObject(j, "alpha", s->dec->alpha);
    cJSON_AddNumberToObject(j, "sentences", s->sentences);
    cJSON_AddNumberToObject(j, "bleu", s->cased->bleu);
    if (s->tok_lc) cJSON_AddNumberToObject(j, "bleu_tok_lc", s->tok_lc->bleu);
    cJSON_AddNumberToObject(j, "bp", s->cased->bp);
    cJSON_AddStringToObject(j, "hypotheses", s->hypotheses);
    cJSON_AddStringToObject(j, "command", s->command ? s->command : "");
    return j;
}

/* "LPR k=4, a^K+a^V": the position scheme as the ablation table names it. */
static void tr_positions_label(const cJSON *run, char *out, size_t cap) {
    const char *pos = run_config_string(run, "positions", "?");
    if (strcmp(pos, "lpr") != 0) { snprintf(out, cap, "%s", pos); return; }
    int keys = run_config_number(run, "lpr_keys", 0) != 0, values = run_config_number(run, "lpr_values", 0) != 0;
    snprintf(out, cap, "LPR k=%g, %s", run_config_number(run, "lpr_base", 0),
             keys && values ? "a^K+a^V" : keys ? "a^K only" : values ? "a^V only" : "neither");
}

/* Every split any run was scored on, in order of first appearance. */
static cJSON *tr_split_names(const cJSON *runs) {
    cJSON *names = cJSON_CreateArray(), *r, *s;
    cJSON_ArrayForEach(r, runs) {
        cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(r, "splits")) {
            int seen = 0;
            const cJSON *n;
            cJSON_ArrayForEach(n, names) seen |= strcmp(n->valuestring, s->string) == 0;
            if (!seen) cJSON_AddItemToArray(names, cJSON_CreateString(s->string));
        }
    }
    return names;
}

static void tr_number_cell(ReportTable *t, const cJSON *obj, const char *key, const char *fmt) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (cJSON_IsNumber(v)) report_table_add(t, fmt, v->valuedouble);
    else report_table_add(t, "-");
}

static int tr_write_markdown(const char *path, const cJSON *doc) {
    const cJSON *runs = cJSON_GetObjectItemCaseSensitive(doc, "runs"), *r, *n;
    cJSON *splits = tr_split_names(runs);
    int nsplits = cJSON_GetArraySize(splits);
    ReportTable *t = report_table_create(6 + 2 * nsplits);
    report_table_add(t, "Run");
    report_table_add(t, "Positions");
    report_table_add(t, "Params");
    report_table_add(t, "Steps");
    report_table_add(t, "CPU h");
    report_table_add(t, "dev BLEU");
    cJSON_ArrayForEach(n, splits) {
        report_table_add(t, "%s BLEU", n->valuestring);
        report_table_add(t, "%s tok-lc", n->valuestring);
    }
    cJSON_ArrayForEach(r, runs) {
        char label[96];
        tr_positions_label(r, label, sizeof label);
        report_table_add(t, "%s", run_config_string(r, "run", "?"));
        report_table_add(t, "%s", label);
        tr_number_cell(t, r, "num_params", "%.0f");
        tr_number_cell(t, r, "steps", "%.0f");
        tr_number_cell(t, r, "cpu_hours", "%.2f");
        tr_number_cell(t, r, "dev_bleu", "%.2f");
        const cJSON *scored = cJSON_GetObjectItemCaseSensitive(r, "splits");
        cJSON_ArrayForEach(n, splits) {
            const cJSON *s = cJSON_GetObjectItemCaseSensitive(scored, n->valuestring);
            tr_number_cell(t, s, "bleu", "%.2f");
            tr_number_cell(t, s, "bleu_tok_lc", "%.2f");
        }
    }
    AtomicFile out;
    FILE *f = atomic_open(&out, path);
    int rc = 1;
    if (f) {
        fprintf(f, "# Translation runs: Multi30k English -> German\n\n"
                   "BLEU: sacreBLEU (cased, 13a) of the detokenised output against the raw references; "
                   "tok-lc: lower-cased, against the tokenised lower-cased references (the number most "
                   "Multi30k papers report). dev BLEU: greedy, of the checkpoint scored (the best epoch, "
                   "or the average of the last epochs when that was better). CPU h: all threads, "
                   "summed over resumed sessions. Written by `glue translate eval --results`; each entry "
                   "of the JSON holds the commands.\n\n");
        report_table_print_markdown(t, f);
        rc = atomic_commit(&out) ? 1 : 0;
    }
    report_table_free(t);
    cJSON_Delete(splits);
    return rc;
}

int translate_results_add(const char *file, const char *run_dir, const cJSON *run_cfg, const TranslateScore *score) {
    cJSON *doc = NULL;
    if (file_exists(file)) {
        doc = json_file_read(file, 1);
        if (!doc || !cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(doc, "runs"))) {
            if (doc) user_error_data("give another --results file, or move this one away", "%s is not a translation results file", file);
            cJSON_Delete(doc);
            return 1;
        }
    } else {
        doc = cJSON_CreateObject();
        cJSON_AddStringToObject(doc, "task", "translation");
        cJSON_AddStringToObject(doc, "bleu", TR_BLEU_DEFINITION);
        cJSON_AddItemToObject(doc, "runs", cJSON_CreateArray());
    }
    cJSON *runs = cJSON_GetObjectItemCaseSensitive(doc, "runs");
    char name[256];
    tr_run_name(run_dir, name, sizeof name);
    cJSON *entry = tr_find_run(runs, name);
    if (!entry) {
        entry = cJSON_CreateObject();
        cJSON_AddStringToObject(entry, "run", name);
        cJSON_AddItemToArray(runs, entry);
    }
    tr_describe_run(entry, run_dir, run_cfg);
    cJSON *splits = cJSON_GetObjectItemCaseSensitive(entry, "splits");
    if (!splits) splits = cJSON_AddObjectToObject(entry, "splits");
    tr_set(splits, score->split, tr_score_json(score));
    char md[4200];
    file_md_twin(file, md, sizeof md);
    int rc = json_file_write(file, doc) != 0 || tr_write_markdown(md, doc) != 0;
    cJSON_Delete(doc);
    return rc;
}

void translate_best_describe(const cJSON *best, char *out, size_t cap) {
    const cJSON *avg = cJSON_GetObjectItemCaseSensitive(best, "averaged_epochs");
    int n = cJSON_IsArray(avg) ? cJSON_GetArraySize(avg) : 0;
    double bleu = run_config_number(best, "dev_bleu", 0);
    if (n > 0)   /* the checkpoint average won: it has no epoch of its own */
        snprintf(out, cap, "best dev BLEU %.2f, the average of epochs %d-%d", bleu,
                 cJSON_GetArrayItem(avg, 0)->valueint, cJSON_GetArrayItem(avg, n - 1)->valueint);
    else
        snprintf(out, cap, "best dev BLEU %.2f at epoch %d", bleu, (int)run_config_number(best, "epoch", 0));
}
