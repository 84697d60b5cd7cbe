/* report_protocol.c — the report's tables of experiments over seeds:
 *   `glue protocol` (finetune_protocol*.json and files like it): a row per
 *   change of the fine-tuning recipe, every task fine-tuned with each seed;
 *   `glue pretrain screen` (pretrain_screen.json): a row per short
 *   pretraining run, judged by fine-tuning proxy tasks with each seed.
 * Every task cell of both is what the file records: the mean over the seeds
 * of the task's score (the mean of its metrics, ×100) ± their sample std; the
 * hover gives the metrics' means and each seed's score. */
#include "eval/report_sections.h"

#include "core/common.h"
#include "tasks/task.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const cJSON *field(const cJSON *o, const char *k) { return cJSON_GetObjectItemCaseSensitive(o, k); }

static const char *str_or(const cJSON *o, const char *k, const char *fallback) {
    const cJSON *v = field(o, k);
    return cJSON_IsString(v) && *v->valuestring ? v->valuestring : fallback;
}

/* "1, 2, 3" from an array of numbers. */
static void number_list(const cJSON *arr, int decimals, char *out, size_t cap) {
    size_t n = 0;
    out[0] = '\0';
    for (const cJSON *s = cJSON_IsArray(arr) ? arr->child : NULL; s && n < cap; s = s->next)
        n += (size_t)snprintf(out + n, cap - n, "%s%.*f", s == arr->child ? "" : ", ", decimals, s->valuedouble);
}

/* A task entry {"metrics": {...}, "seed_scores": [...], "score", "std"} (and
 * "macro_f1", "macro_f1_std" for a classification task, in the hover). */
static void seeds_cell(ReportPage *p, const cJSON *tj, int source) {
    if (!cJSON_IsObject(tj)) {
        fputs("<td>-</td>", p->f);
        return;
    }
    char note[1024], scores[512];
    int n = snprintf(note, sizeof note, "mean over %d seeds:", cJSON_GetArraySize(field(tj, "seed_scores")));
    for (const cJSON *m = report_members(field(tj, "metrics")); m && n > 0 && n < (int)sizeof note; m = m->next)
        n += snprintf(note + n, sizeof note - (size_t)n, " %s %.2f%s", m->string, m->valuedouble, m->next ? "," : "");
    number_list(field(tj, "seed_scores"), 2, scores, sizeof scores);
    if (n > 0 && n < (int)sizeof note) n += snprintf(note + n, sizeof note - (size_t)n, "; score of each seed: %s", scores);
    const cJSON *f1 = field(tj, "macro_f1");   /* a classification task's macro-F1 beside its metric */
    if (cJSON_IsNumber(f1) && n > 0 && n < (int)sizeof note)
        snprintf(note + n, sizeof note - (size_t)n, "; macro-F1 %.2f ± %.2f", f1->valuedouble,
                 report_num(tj, "macro_f1_std"));
    fputs("<td", p->f);
    report_page_title_note(p, source, note);
    fputs(">", p->f);
    report_page_num(p, report_num(tj, "score"), 2);
    report_sd(p, report_num(tj, "std"));
    fputs("</td>", p->f);
}

/* Task column headers: "CoLA" over "(score)". */
static void task_heads(ReportPage *p, const cJSON *tasks) {
    for (const cJSON *t = cJSON_IsArray(tasks) ? tasks->child : NULL; t; t = t->next) {
        const Task *task = cJSON_IsString(t) ? task_find(t->valuestring) : NULL;
        fputs("<th scope=\"col\">", p->f);
        report_page_text(p, task ? task->display : cJSON_IsString(t) ? t->valuestring : "?");
        fputs("</th>", p->f);
    }
}

/* ---- glue protocol ---- */

static void protocol_row(ReportPage *p, const ReportInput *in, const cJSON *r, const cJSON *tasks, double base) {
    FILE *f = p->f;
    /* --set settings (named in the encoder line) are every row's, the baseline's too */
    int shared = strstr(str_or(in->json, "encoder", ""), "; for every row: ") != NULL;
    fputs("<tr><th scope=\"row\">", f);
    report_page_text(p, str_or(r, "name", "?"));
    fputs("</th><td class=\"text settings\">", f);
    const cJSON *sets = field(r, "settings");
    if (!cJSON_GetArraySize(sets)) fputs(shared ? "the settings for every row" : "defaults", f);
    for (const cJSON *s = cJSON_IsArray(sets) ? sets->child : NULL; s; s = s->next) {
        fputs(s == sets->child ? "<code>" : " <code>", f);
        report_page_text(p, cJSON_IsString(s) ? s->valuestring : "?");
        fputs("</code>", f);
    }
    fputs("</td>", f);
    for (const cJSON *t = cJSON_IsArray(tasks) ? tasks->child : NULL; t; t = t->next)
        seeds_cell(p, cJSON_IsString(t) ? field(field(r, "tasks"), t->valuestring) : NULL, in->source);
    double score = report_num(r, "score");
    fputs("<td class=\"glue-score\"><strong>", f);
    report_page_num(p, score, 2);
    fputs("</strong>", f);
    report_sd(p, report_num(r, "std"));
    fputs("</td><td>", f);
    if (isfinite(score - base) && score - base >= 0) fputs("+", f);
    report_page_num(p, score - base, 2);
    fputs("</td></tr>\n", f);
}

static void protocol_table(ReportPage *p, const ReportInput *in) {
    const cJSON *j = in->json, *tasks = field(j, "tasks"), *rows = field(j, "rows");
    char seeds[256], slug[256];
    number_list(field(j, "seeds"), 0, seeds, sizeof seeds);
    report_page_slug(in->name, slug, sizeof slug);
    FILE *f = p->f;
    /* the file's name: every protocol file has the same title */
    report_page_sourced(p, "<h3>", in->name, in->source);
    fputs("</h3>\n<p class=\"note\">Encoder: ", f);
    report_page_text(p, str_or(j, "encoder", "not recorded"));
    fputs(". Seeds ", f);
    report_page_text(p, seeds);
    fprintf(f, ".</p>\n<div class=\"table-wrap\">\n<table id=\"protocol-%s\" class=\"results\">\n<thead><tr>"
               "<th scope=\"col\" class=\"row-head\">change</th><th scope=\"col\" class=\"text\">settings</th>", slug);
    task_heads(p, tasks);
    fprintf(f, "<th scope=\"col\">score<br><span class=\"unit\">(mean of %d seeds)</span></th><th scope=\"col\">Δ"
               "</th></tr></thead>\n<tbody>\n", cJSON_GetArraySize(field(j, "seeds")));
    double base = report_num(cJSON_IsArray(rows) ? rows->child : NULL, "score");
    for (const cJSON *r = cJSON_IsArray(rows) ? rows->child : NULL; r; r = r->next) protocol_row(p, in, r, tasks, base);
    fputs("</tbody>\n</table>\n</div>\n", f);
}

void report_section_protocol(ReportPage *p, const ReportInputs *in) {
    FILE *f = p->f;
    fputs("<section id=\"protocol\">\n<h2>Fine-tuning protocols</h2>\n", f);
    if (!report_inputs_count(in, REPORT_IN_PROTOCOL)) {
        fputs("<p class=\"missing\">No protocol results in the results directory: <code>glue protocol --tasks "
              "TASKS --seeds 1,2,3 --change NAME:key=value</code> writes them (finetune_protocol.json).</p>\n"
              "</section>\n", f);
        report_page_missing(p, "no glue protocol results (finetune_protocol.json): no protocol tables "
                               "(glue protocol makes them)");
        return;
    }
    fputs("<p class=\"note\">Written by <code>glue protocol</code>: a row per change of the fine-tuning recipe, "
          "every task fine-tuned from the same encoder with each seed. A cell: the mean over the seeds of the "
          "task's score (the mean of its metrics, ×100) on dev at the best epoch ± their sample standard "
          "deviation; the epoch is selected on dev, as <code>glue finetune</code> does, so the numbers are "
          "optimistic alike for every row. Score: the mean over the tasks ± the spread over the seeds of each "
          "seed's mean; Δ: against the first row (the baseline). Hover a cell for its metrics and each seed's "
          "score.</p>\n", f);
    for (int i = 0; i < in->n; i++)
        if (in->in[i].kind == REPORT_IN_PROTOCOL) protocol_table(p, &in->in[i]);
    fputs("</section>\n", f);
}

/* ---- glue pretrain screen ---- */

/* "steps=1000 lr=0.001": a run's settings object, each as key=value. */
static void screen_settings(ReportPage *p, const cJSON *settings) {
    fputs("<td class=\"text settings\">", p->f);
    for (const cJSON *s = report_members(settings); s; s = s->next) {
        char *v = cJSON_IsString(s) ? NULL : cJSON_PrintUnformatted(s);
        fputs(s == settings->child ? "<code>" : " <code>", p->f);
        report_page_printf(p, "%s=%s", s->string, v ? v : s->valuestring);
        fputs("</code>", p->f);
        free(v);
    }
    fputs("</td>", p->f);
}

/* A run's proxy scores: the screen's result. */
static void screen_proxy_row(ReportPage *p, const ReportInput *in, const cJSON *r, const cJSON *tasks) {
    FILE *f = p->f;
    fputs("<tr><th scope=\"row\">", f);
    report_page_text(p, str_or(r, "run", "?"));
    fputs("</th>", f);
    for (const cJSON *t = cJSON_IsArray(tasks) ? tasks->child : NULL; t; t = t->next)
        seeds_cell(p, cJSON_IsString(t) ? field(field(r, "tasks"), t->valuestring) : NULL, in->source);
    fputs("<td class=\"glue-score\"><strong>", f);
    report_page_num(p, report_num(r, "proxy_score"), 2);
    fputs("</strong></td></tr>\n", f);
}

/* What the run was and cost: objective, settings, tokens, time, the CPU, the held-out MLM. */
static void screen_run_row(ReportPage *p, const cJSON *r) {
    FILE *f = p->f;
    fputs("<tr><th scope=\"row\">", f);
    report_page_text(p, str_or(r, "run", "?"));
    fputs("</th><td class=\"text\">", f);
    report_page_text(p, str_or(r, "objective", "?"));
    fputs("</td>", f);
    screen_settings(p, field(r, "settings"));
    report_page_num_cell(p, report_num(r, "tokens") / 1e6, 1, NULL);
    report_page_num_cell(p, report_num(r, "train_seconds") / 3600, 2, NULL);
    report_page_num_cell(p, report_num(r, "tokens_per_sec"), 0, NULL);
    report_page_num_cell(p, report_num(r, "threads"), 0, NULL);
    const char *cpu = str_or(r, "cpu", "not recorded");
    fprintf(f, "<td class=\"text cpu%s\">", strcmp(cpu, "not recorded") ? "" : " missing");
    report_page_text(p, strcmp(cpu, "not recorded") ? cpu : "CPU not recorded");
    const cJSON *mlm = field(r, "heldout_mlm");
    fputs("</td><td>", f);
    report_page_num(p, report_num(mlm, "loss"), 3);
    fputs(" / ", f);
    report_page_num(p, report_num(mlm, "accuracy"), 1);
    fputs("%", f);
    if (strcmp(str_or(mlm, "model", ""), "generator") == 0) fputs(" <span class=\"note\">(generator)</span>", f);
    fputs("</td></tr>\n", f);
}

static void screen_table(ReportPage *p, const ReportInput *in) {
    const cJSON *j = in->json, *proxy = field(j, "proxy"), *tasks = field(proxy, "tasks"), *runs = field(j, "runs");
    char seeds[256], slug[256];
    number_list(field(proxy, "seeds"), 0, seeds, sizeof seeds);
    report_page_slug(in->name, slug, sizeof slug);
    FILE *f = p->f;
    fputs("<h3>", f);
    report_page_printf(p, "%s (%s)", str_or(j, "title", "glue pretrain screen"), in->name);
    report_page_fnref(p, in->source);
    fputs("</h3>\n<p class=\"note\">Written by <code>glue pretrain screen</code>. Proxy: each task fine-tuned from "
          "the run's encoder (", f);
    report_page_text(p, str_or(proxy, "recipe", "recipe not recorded"));
    fputs(") on dev with seeds ", f);
    report_page_text(p, seeds);
    fputs("; a cell is the mean over the seeds of the task's score (the mean of its metrics, ×100) ± their sample "
          "standard deviation, the proxy score the mean over the tasks.</p>\n", f);
    fprintf(f, "<div class=\"table-wrap\">\n<table id=\"screen-%s\" class=\"results\">\n<thead><tr><th scope=\"col\" "
               "class=\"row-head\">run</th>", slug);
    task_heads(p, tasks);
    fprintf(f, "<th scope=\"col\">proxy<br><span class=\"unit\">(mean of %d seeds)</span></th></tr></thead>\n<tbody>\n",
            cJSON_GetArraySize(field(proxy, "seeds")));
    for (const cJSON *r = cJSON_IsArray(runs) ? runs->child : NULL; r; r = r->next) screen_proxy_row(p, in, r, tasks);
    fputs("</tbody>\n</table>\n</div>\n<p class=\"note\">The runs: held-out MLM loss / accuracy (an ELECTRA run's is "
          "its generator's); tokens/s of the pretraining run, on the CPU its row names (throughput halves when "
          "other jobs share the cores: compare runs by tokens, not by time).</p>\n", f);
    fprintf(f, "<div class=\"table-wrap\">\n<table id=\"screen-runs-%s\" class=\"results\">\n<thead><tr>"
               "<th scope=\"col\" class=\"row-head\">run</th><th scope=\"col\" class=\"text\">objective</th>"
               "<th scope=\"col\" class=\"text\">settings</th><th scope=\"col\">tokens (M)</th><th scope=\"col\">"
               "hours</th><th scope=\"col\">tokens/s</th><th scope=\"col\">threads</th><th scope=\"col\" "
               "class=\"text\">CPU</th><th scope=\"col\">held-out MLM loss / acc</th></tr></thead>\n<tbody>\n", slug);
    for (const cJSON *r = cJSON_IsArray(runs) ? runs->child : NULL; r; r = r->next) screen_run_row(p, r);
    fputs("</tbody>\n</table>\n</div>\n", f);
}

void report_screens(ReportPage *p, const ReportInputs *in) {
    int n = 0;
    for (int i = 0; i < in->n; i++)
        if (in->in[i].kind == REPORT_IN_SCREEN) screen_table(p, &in->in[i]), n++;
    if (!n) {
        fputs("<p class=\"missing\">No pretraining screen in the results directory: <code>glue pretrain screen "
              "RUN_DIR ...</code> fine-tunes proxy tasks from pretraining runs and writes one "
              "(pretrain_screen.json).</p>\n", p->f);
        report_page_missing(p, "no pretraining screen (pretrain_screen.json): glue pretrain screen makes one");
    }
}
