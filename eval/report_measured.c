/* report_measured.c — the report's numbers measured outside GLUE: the
 * translation table (translation.json: BLEU per run, i.e. per position
 * representation) and the benchmarks (bench/<cpu>/bench_bert_*.json against
 * PyTorch, a table and chart per CPU; bench_fasttext.json against the
 * official fastText; bench_scaling.json, two MPI ranks against two threads),
 * each with the CPU it was measured on, or "CPU not recorded" when the file
 * does not say. */
#include "eval/report_sections.h"

#include "core/common.h"
#include "eval/svg_plot.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SPLITS 8
#define MAX_ROWS 32

static const char *str_or(const cJSON *o, const char *k, const char *fallback) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) && *v->valuestring ? v->valuestring : fallback;
}

/* The CPU a file (or one of its runs) names: "cpu", "machine": "..." or
 * "machine": {"cpu": ...}, at the top or in "provenance". */
static const char *cpu_of(const cJSON *o) {
    for (int k = 0; k < 2 && o; k++) {
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(o, "machine");
        const char *cpu = str_or(o, "cpu", NULL);
        if (!cpu && cJSON_IsString(m)) cpu = m->valuestring;
        if (!cpu && cJSON_IsObject(m)) cpu = str_or(m, "cpu", NULL);
        if (cpu) return cpu;
        o = cJSON_GetObjectItemCaseSensitive(o, "provenance");
    }
    return NULL;
}

static void cpu_cell(ReportPage *p, const cJSON *o, const cJSON *fallback) {
    const char *cpu = cpu_of(o);
    if (!cpu) cpu = cpu_of(fallback);
    fprintf(p->f, "<td class=\"cpu%s\">", cpu ? "" : " missing");
    report_page_text(p, cpu ? cpu : "CPU not recorded");
    fprintf(p->f, "</td>");
}

/* The median of o[key] ({"median": ..., "min": ...}): NaN when absent. */
static double median_of(const cJSON *o, const char *key) {
    return report_num(cJSON_GetObjectItemCaseSensitive(o, key), "median");
}

/* ---- translation ---- */

static void translation_file(ReportPage *p, const ReportInput *in) {
    const cJSON *runs = cJSON_GetObjectItemCaseSensitive(in->json, "runs");
    const char *split[MAX_SPLITS];
    int ns = 0;
    for (const cJSON *r = runs->child; r; r = r->next)
        for (const cJSON *s = report_members(cJSON_GetObjectItemCaseSensitive(r, "splits")); s; s = s->next) {
            int seen = 0;
            for (int k = 0; k < ns; k++) seen |= strcmp(split[k], s->string) == 0;
            if (!seen && ns < MAX_SPLITS) split[ns++] = s->string;
        }
    FILE *f = p->f;
    report_page_sourced(p, "<div class=\"table-wrap\">\n<table id=\"translation-table\" class=\"results\">\n<caption>",
                        in->path, in->source);
    fprintf(f, "</caption>\n<thead><tr><th scope=\"col\" class=\"row-head\">run</th><th scope=\"col\" class=\"text\">positions</th>");
    for (int k = 0; k < ns; k++) {
        char name[128];   /* "test_2016_flickr" -> "test 2016 flickr": headers may wrap */
        snprintf(name, sizeof name, "%s", split[k]);
        for (char *c = name; *c; c++) *c = *c == '_' ? ' ' : *c;
        fprintf(f, "<th scope=\"col\">");
        report_page_printf(p, "%s BLEU", name);
        fprintf(f, "</th><th scope=\"col\">");
        report_page_printf(p, "%s tok-lc", name);
        fprintf(f, "</th>");
    }
    fprintf(f, "<th scope=\"col\">dev BLEU</th><th scope=\"col\">CPU-hours</th><th scope=\"col\">CPU</th></tr>"
               "</thead>\n<tbody>\n");
    const char *labels[MAX_ROWS], *series[MAX_SPLITS];
    double value[MAX_ROWS * MAX_SPLITS];
    int nr = 0;
    for (const cJSON *r = runs->child; r; r = r->next) {
        const cJSON *splits = cJSON_GetObjectItemCaseSensitive(r, "splits");
        char pos[128];
        snprintf(pos, sizeof pos, "%s", str_or(r, "positions", "?"));
        if (strcmp(pos, "lpr") == 0)
            snprintf(pos, sizeof pos, "LPR k=%.0f, %s", report_num(r, "lpr_base"),
                     report_num(r, "lpr_keys") != 0 && report_num(r, "lpr_values") != 0 ? "a^K and a^V"
                     : report_num(r, "lpr_keys") != 0                                   ? "a^K only"
                                                                                        : "a^V only");
        fprintf(f, "<tr><th scope=\"row\"");
        const char *cmd = str_or(r, "train_command", "");
        if (*cmd) {
            fprintf(f, " title=\"");
            report_page_text(p, cmd);
            fprintf(f, "\"");
        }
        fprintf(f, ">");
        report_page_text(p, str_or(r, "run", "?"));
        fprintf(f, "</th><td class=\"text\">");
        report_page_text(p, pos);
        fprintf(f, "</td>");
        if (nr < MAX_ROWS) labels[nr] = str_or(r, "run", "?");
        for (int k = 0; k < ns; k++) {
            const cJSON *s = cJSON_GetObjectItemCaseSensitive(splits, split[k]);
            const char *scmd = str_or(s, "command", "");
            report_page_num_cell(p, report_num(s, "bleu"), 2, scmd);
            report_page_num_cell(p, report_num(s, "bleu_tok_lc"), 2, scmd);
            if (nr < MAX_ROWS) value[nr * ns + k] = report_num(s, "bleu");
        }
        report_page_num_cell(p, report_num(r, "dev_bleu"), 2, NULL);
        report_page_num_cell(p, report_num(r, "cpu_hours"), 2, NULL);
        cpu_cell(p, r, in->json);
        fprintf(f, "</tr>\n");
        nr += nr < MAX_ROWS;
    }
    fprintf(f, "</tbody>\n</table>\n</div>\n");
    const cJSON *note = cJSON_GetObjectItemCaseSensitive(in->json, "bleu");
    if (cJSON_IsString(note)) {
        fprintf(f, "<p class=\"note\">");
        report_page_text(p, note->valuestring);
        fprintf(f, "</p>\n");
    }
    for (int k = 0; k < ns; k++) series[k] = split[k];
    if (nr && ns) {
        char id[300], slug[256];
        report_page_slug(in->name, slug, sizeof slug);
        snprintf(id, sizeof id, "bars-%s", slug);
        fprintf(f, "<figure class=\"chart-box\">\n");
        svg_hbars(f, id, "Test BLEU by position representation", labels, nr, series, ns, value, NULL,
                  "BLEU (sacreBLEU, cased, 13a)", NULL, SVG_VALUE_PERCENT);
        fprintf(f, "<figcaption>Test BLEU of each run (beam search; see the table for the settings).</figcaption>\n"
                   "</figure>\n");
    }
}

void report_section_translation(ReportPage *p, const ReportInputs *in) {
    fprintf(p->f, "<section id=\"translation\">\n<h2>Translation (Multi30k English→German)</h2>\n");
    int n = 0;
    for (int i = 0; i < in->n; i++)
        if (in->in[i].kind == REPORT_IN_TRANSLATION) translation_file(p, &in->in[i]), n++;
    if (!n) {
        fprintf(p->f, "<p class=\"missing\">No translation.json in the results directory: <code>glue translate "
                      "eval --results translation.json</code> scores a run into it.</p>\n");
        report_page_missing(p, "no translation.json: no translation table (glue translate eval --results makes one)");
    }
    fprintf(p->f, "</section>\n");
}

/* ---- benchmarks ---- */

static const struct { const char *key, *label; } PHASES[] = {
    {"train", "training step (B=32, T=128)"},   {"infer", "inference (B=32, T=128)"},
    {"latency", "latency (1 x 32 tokens)"},       {"infer_bf16", "bf16 inference vs PyTorch bf16"},
    {"latency_bf16", "bf16 latency vs PyTorch bf16"},
};
#define NPHASES ((int)(sizeof PHASES / sizeof PHASES[0]))

static void bench_bert_rows(ReportPage *p, const ReportInput *in, const char **labels, double *value, int *nr) {
    const char *config = str_or(in->json, "config", in->name);
    for (int k = 0; k < NPHASES; k++) {
        const cJSON *ph = cJSON_GetObjectItemCaseSensitive(in->json, PHASES[k].key);
        const cJSON *sp = cJSON_GetObjectItemCaseSensitive(ph, "speedup_vs_torch");
        if (!ph) continue;
        fprintf(p->f, "<tr><th scope=\"row\"");
        report_page_title_attr(p, in->source);
        report_page_sourced(p, ">", config, in->source);
        fprintf(p->f, "</th><td class=\"text\">");
        report_page_text(p, PHASES[k].label);
        fprintf(p->f, "</td>");
        report_page_num_cell(p, median_of(ph, "ours_tokens_per_s"), 0, NULL);
        report_page_num_cell(p, median_of(ph, "torch_tokens_per_s"), 0, NULL);
        report_page_num_cell(p, report_num(sp, "median"), 2, NULL);
        fprintf(p->f, "<td>");
        report_page_num(p, report_num(sp, "min"), 2);
        fprintf(p->f, "–");
        report_page_num(p, report_num(sp, "max"), 2);
        fprintf(p->f, "</td></tr>\n");
    }
    if (*nr < MAX_ROWS) {   /* the chart: the fp32 phases, one row per config */
        labels[*nr] = config;
        for (int k = 0; k < 3; k++)
            value[*nr * 3 + k] =
                median_of(cJSON_GetObjectItemCaseSensitive(in->json, PHASES[k].key), "speedup_vs_torch");
        ++*nr;
    }
}

/* Parameters' scale of a benchmarked BERT: layers x hidden size (0 when not recorded). */
static double bench_size(const ReportInput *in) {
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(in->json, "model");
    double v = report_num(m, "num_hidden_layers") * report_num(m, "hidden_size");
    return isfinite(v) ? v : 0;
}

static void bench_fasttext_table(ReportPage *p, const ReportInput *in) {
    FILE *f = p->f;
    report_page_sourced(p, "<table id=\"bench-fasttext-table\" class=\"results\">\n<caption>fastText against the "
                           "official tool: ", in->path, in->source);
    fprintf(f, "</caption>\n<thead><tr><th scope=\"col\" class=\"row-head\">implementation</th><th scope=\"col\">dev accuracy</th>"
               "<th scope=\"col\">training wall time (s, median)</th><th scope=\"col\">CPU</th></tr></thead>\n"
               "<tbody>\n");
    static const char *const SIDES[2] = {"official", "ours"};
    for (int s = 0; s < 2; s++) {
        const cJSON *side = cJSON_GetObjectItemCaseSensitive(in->json, SIDES[s]);
        fprintf(f, "<tr><th scope=\"row\">");
        report_page_text(p, str_or(side, "implementation", SIDES[s]));
        fprintf(f, "</th>");
        report_page_num_cell(p, report_num(side, "accuracy"), 2, NULL);
        report_page_num_cell(p, median_of(side, "train_seconds"), 2, NULL);
        cpu_cell(p, in->json, NULL);
        fprintf(f, "</tr>\n");
    }
    fprintf(f, "</tbody>\n</table>\n<p class=\"note\">Time ours / official: ");
    report_page_num(p, report_num(in->json, "time_ratio"), 2);
    fprintf(f, "; accuracy difference: ");
    report_page_num(p, report_num(in->json, "accuracy_diff"), 2);
    fprintf(f, " points.</p>\n");
}

/* The directory of a file: `glue bench bert` writes one per CPU (results/bench/<cpu>/). */
static void dir_of(const char *path, char *out, size_t cap) {
    const char *slash = strrchr(path, '/');
    if (slash) snprintf(out, cap, "%.*s", (int)(slash - path), path);
    else snprintf(out, cap, ".");
}

/* "CPU X; kernels K; GEMM G; 2 threads" of a benchmark file's machine. */
static void machine_text(const cJSON *j, char *out, size_t cap) {
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(j, "machine");
    const char *cpu = cpu_of(j);
    int n = snprintf(out, cap, "CPU %s", cpu ? cpu : "not recorded");
    if (str_or(m, "kernels", NULL) && n > 0 && (size_t)n < cap)
        n += snprintf(out + n, cap - (size_t)n, "; kernels %s", str_or(m, "kernels", ""));
    if (str_or(m, "gemm", NULL) && n > 0 && (size_t)n < cap)
        n += snprintf(out + n, cap - (size_t)n, "; GEMM %s", str_or(m, "gemm", ""));
    if (isfinite(report_num(m, "threads")) && n > 0 && (size_t)n < cap)
        snprintf(out + n, cap - (size_t)n, "; %.0f threads", report_num(m, "threads"));
}

/* The BERT benchmarks of one directory (one CPU): a table and a chart, the
 * smallest model first (the files come in name order: mini, small, tiny). */
static void bench_bert_group(ReportPage *p, const ReportInput **order, int no) {
    for (int i = 1; i < no; i++)
        for (int j = i; j > 0 && bench_size(order[j]) < bench_size(order[j - 1]); j--) {
            const ReportInput *t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    char dir[4096], slug[256], id[320], machine[1024];
    dir_of(order[0]->path, dir, sizeof dir);
    const char *base = strrchr(dir, '/');
    report_page_slug(base ? base + 1 : dir, slug, sizeof slug);
    machine_text(order[0]->json, machine, sizeof machine);
    FILE *f = p->f;
    fputs("<h3>", f);
    report_page_printf(p, "BERT against PyTorch: %s/", dir);
    fputs("</h3>\n<p class=\"note\">", f);
    report_page_printf(p, "%s. Medians over repetitions; a speed ratio above 1: ours is faster.", machine);
    fprintf(f, "</p>\n<div class=\"table-wrap\">\n<table id=\"bench-bert-%s\" class=\"results\">\n<thead><tr>"
               "<th scope=\"col\" class=\"row-head\">config</th><th scope=\"col\" class=\"text\">measurement</th>"
               "<th scope=\"col\">ours "
               "tokens/s</th><th scope=\"col\">PyTorch tokens/s</th><th scope=\"col\">speed ratio</th>"
               "<th scope=\"col\">ratio min–max</th></tr></thead>\n<tbody>\n", slug);
    const char *labels[MAX_ROWS];
    double value[MAX_ROWS * 3];
    int nr = 0;
    for (int i = 0; i < no; i++) bench_bert_rows(p, order[i], labels, value, &nr);
    fprintf(f, "</tbody>\n</table>\n</div>\n");
    const char *series[3] = {"training", "inference", "latency"};
    char title[1200];
    snprintf(title, sizeof title, "BERT speed ratio against PyTorch (fp32), %s", machine);
    snprintf(id, sizeof id, "bars-bench-bert-%s", slug);
    fprintf(f, "<figure class=\"chart-box\">\n");
    svg_hbars(f, id, title, labels, nr, series, 3, value, NULL, "speed ratio, ours / PyTorch (×; 1 = as fast)", NULL,
              0);
    fprintf(f, "<figcaption>");
    report_page_text(p, title);
    fprintf(f, ": medians (min–max in the table).</figcaption>\n</figure>\n");
}

static void bench_bert(ReportPage *p, const ReportInputs *in) {
    char *done = xcalloc((size_t)(in->n ? in->n : 1), 1);
    for (int i = 0; i < in->n; i++) {
        if (in->in[i].kind != REPORT_IN_BENCH_BERT || done[i]) continue;
        const ReportInput *group[MAX_ROWS];
        int ng = 0;
        char dir[4096], other[4096];
        dir_of(in->in[i].path, dir, sizeof dir);
        for (int k = i; k < in->n && ng < MAX_ROWS; k++) {
            if (in->in[k].kind != REPORT_IN_BENCH_BERT || done[k]) continue;
            dir_of(in->in[k].path, other, sizeof other);
            if (strcmp(dir, other) == 0) group[ng++] = &in->in[k], done[k] = 1;
        }
        bench_bert_group(p, group, ng);
    }
    free(done);
}

/* A row of glue bench scaling: medians, the ratio with its spread. */
static void bench_scaling_row(ReportPage *p, const cJSON *c) {
    FILE *f = p->f;
    fprintf(f, "<tr><th scope=\"row\">");
    report_page_text(p, str_or(c, "config", "?"));
    fprintf(f, "</th>");
    report_page_num_cell(p, report_num(c, "batch"), 0, NULL);
    report_page_num_cell(p, report_num(c, "measured_steps"), 0, NULL);
    static const char *const MEDIANS[] = {"ranks1_threads2_tokens_per_sec", "ranks2_threads1_tokens_per_sec",
                                          "ranks_over_threads"};
    for (int k = 0; k < 3; k++)
        report_page_num_cell(p, median_of(c, MEDIANS[k]), k < 2 ? 0 : 2, NULL);
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(c, "ranks_over_threads");
    fprintf(f, "<td>");
    report_page_num(p, report_num(r, "min"), 2);
    fprintf(f, "–");
    report_page_num(p, report_num(r, "max"), 2);
    fprintf(f, "</td>");
    report_page_num_cell(p, median_of(c, "allreduce_seconds_per_step"), 3, NULL);
    report_page_num_cell(p, median_of(c, "allreduce_bytes_per_step") / 1e6, 1, NULL);
    report_page_num_cell(p, median_of(c, "wait_for_slowest_rank_seconds_per_step"), 3, NULL);
    fprintf(f, "</tr>\n");
}

static void bench_scaling_table(ReportPage *p, const ReportInput *in) {
    FILE *f = p->f;
    char slug[256];
    report_page_slug(in->name, slug, sizeof slug);
    report_page_sourced(p, "<h3>Data-parallel pretraining: ", in->path, in->source);
    const char *cpu = cpu_of(in->json);
    fputs("</h3>\n<p class=\"note\">1 process × 2 threads against 2 MPI ranks × 1 thread (<code>glue bench "
          "scaling</code>). ", f);
    report_page_printf(p, "CPU %s, %.0f cores used; medians of %.0f repetitions; corpus %s.", cpu ? cpu : "not recorded",
                       report_num(in->json, "cores_used"), report_num(in->json, "reps"),
                       str_or(in->json, "corpus", "not recorded"));
    fprintf(f, "</p>\n<div class=\"table-wrap\">\n<table id=\"bench-scaling-%s\" class=\"results\">\n<thead><tr>"
               "<th scope=\"col\" class=\"row-head\">config</th><th scope=\"col\">batch</th>"
               "<th scope=\"col\">steps measured</th><th scope=\"col\">1 rank × 2 threads tokens/s</th>"
               "<th scope=\"col\">2 ranks × 1 thread tokens/s</th><th scope=\"col\">ranks / threads</th>"
               "<th scope=\"col\">ranks / threads min–max</th><th scope=\"col\">all-reduce s/step</th>"
               "<th scope=\"col\">all-reduce MB/step</th><th scope=\"col\">wait for the slowest rank s/step</th>"
               "</tr></thead>\n<tbody>\n", slug);
    const cJSON *configs = cJSON_GetObjectItemCaseSensitive(in->json, "configs");
    for (const cJSON *c = configs->child; c; c = c->next) bench_scaling_row(p, c);
    fprintf(f, "</tbody>\n</table>\n</div>\n<p class=\"note\">Ranks / threads: the median over repetitions of each "
               "repetition's ratio (above 1: two ranks are faster), not the ratio of the medians.</p>\n");
}

/* glue bench rnn: our LSTM/GRU layers against PyTorch's, one row a measurement. */
static void bench_rnn_table(ReportPage *p, const ReportInput *in) {
    FILE *f = p->f;
    char slug[256];
    report_page_slug(in->name, slug, sizeof slug);
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(in->json, "machine"),
                *c = cJSON_GetObjectItemCaseSensitive(in->json, "config");
    const char *cpu = cpu_of(in->json);
    report_page_sourced(p, "<h3>Recurrent layers: ", in->path, in->source);
    fputs("</h3>\n<p class=\"note\">Bidirectional LSTM and GRU against PyTorch's nn.LSTM / nn.GRU in the same "
          "invocation (<code>glue bench rnn</code>): seconds per call, medians. ", f);
    report_page_printf(p, "CPU %s, %.0f threads; input %.0f, hidden %.0f, batch %.0f; load average %.2f at the start, "
                          "%.2f at the end.", cpu ? cpu : "not recorded", report_num(m, "threads"), report_num(c, "dim"),
                       report_num(c, "hidden"), report_num(c, "batch"), report_num(m, "load_start"),
                       report_num(m, "load_end"));
    fprintf(f, "</p>\n<div class=\"table-wrap\">\n<table id=\"bench-rnn-%s\" class=\"results\">\n<thead><tr>"
               "<th scope=\"col\" class=\"row-head\">cell</th><th scope=\"col\">length</th>"
               "<th scope=\"col\">measurement</th><th scope=\"col\">ours (s)</th><th scope=\"col\">PyTorch (s)</th>"
               "<th scope=\"col\">PyTorch / ours</th></tr></thead>\n<tbody>\n", slug);
    const cJSON *rows = cJSON_GetObjectItemCaseSensitive(in->json, "results"), *r;
    cJSON_ArrayForEach(r, rows) {
        fprintf(f, "<tr><th scope=\"row\">");
        report_page_text(p, str_or(r, "cell", "?"));
        fprintf(f, "</th>");
        report_page_num_cell(p, report_num(r, "length"), 0, NULL);
        fprintf(f, "<td>");
        report_page_text(p, str_or(r, "what", "?"));
        fprintf(f, "</td>");
        report_page_num_cell(p, median_of(r, "ours_seconds"), 4, NULL);
        report_page_num_cell(p, median_of(r, "torch_seconds"), 4, NULL);
        report_page_num_cell(p, report_num(r, "torch_over_ours"), 2, NULL);
        fprintf(f, "</tr>\n");
    }
    fprintf(f, "</tbody>\n</table>\n</div>\n");
}

/* `make bench-serve` (requests/s and latency per concurrency, against the
 * offline rate) and `make soak-serve` (errors and resident memory over
 * minutes): one small table each. */
static void bench_serve_table(ReportPage *p, const ReportInput *in) {
    FILE *f = p->f;
    const cJSON *j = in->json;
    int soak = strcmp(str_or(j, "benchmark", ""), "serve_soak") == 0;
    report_page_sourced(p, soak ? "<h3>glue serve, soak: " : "<h3>glue serve under load: ", in->path, in->source);
    fputs("</h3>\n<p class=\"note\">", f);
    report_page_printf(p, "wrk on loopback against glue serve (one SST-2 dev sentence per request), run %s; CPU %s; "
                          "load average before: %s.", str_or(j, "run", "?"), cpu_of(j) ? cpu_of(j) : "not recorded",
                       str_or(j, "load_average_before", "?"));
    fputs("</p>\n", f);
    fputs("<div class=\"table-wrap\">\n<table class=\"results\">\n<thead><tr>", f);
    if (soak) {
        fputs("<th scope=\"col\">seconds</th><th scope=\"col\">connections</th><th scope=\"col\">requests/s</th>"
              "<th scope=\"col\">good not 200</th><th scope=\"col\">bad not 400</th>"
              "<th scope=\"col\">RSS change, first to last minute</th></tr></thead>\n<tbody>\n<tr>", f);
        report_page_num_cell(p, report_num(j, "seconds"), 0, NULL);
        report_page_num_cell(p, report_num(j, "connections"), 0, NULL);
        report_page_num_cell(p, report_num(j, "requests_per_sec"), 1, NULL);
        report_page_num_cell(p, report_num(j, "good_err"), 0, NULL);
        report_page_num_cell(p, report_num(j, "bad_other"), 0, NULL);
        report_page_num_cell(p, 100 * report_num(j, "rss_change"), 1, "percent");
        fputs("</tr>\n", f);
    } else {
        fputs("<th scope=\"col\">connections</th><th scope=\"col\">requests/s</th><th scope=\"col\">p50</th>"
              "<th scope=\"col\">p99</th></tr></thead>\n<tbody>\n", f);
        const cJSON *r;
        cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(j, "levels")) {
            fputs("<tr>", f);
            report_page_num_cell(p, report_num(r, "connections"), 0, NULL);
            report_page_num_cell(p, report_num(r, "requests_per_sec"), 1, NULL);
            fputs("<td>", f);
            report_page_text(p, str_or(r, "p50", "?"));
            fputs("</td><td>", f);
            report_page_text(p, str_or(r, "p99", "?"));
            fputs("</td></tr>\n", f);
        }
        fputs("<tr><th scope=\"row\">offline</th>", f);
        report_page_num_cell(p, report_num(j, "offline_examples_per_sec"), 1, "examples/s of glue predict --run");
        fputs("<td colspan=\"2\">", f);
        report_page_printf(p, "at 64 connections %.0f%% of the offline rate", 100 * report_num(j, "ratio_at_64"));
        fputs("</td></tr>\n", f);
    }
    fputs("</tbody>\n</table>\n</div>\n", f);
}

/* `glue quantize --results`: each run's dev metrics in fp32 and int8. */
static void quantized_table(ReportPage *p, const ReportInput *in) {
    FILE *f = p->f;
    report_page_sourced(p, "<h3>fp32 against quantized: ", in->path, in->source);
    fputs("</h3>\n<div class=\"table-wrap\">\n<table class=\"results\">\n<thead><tr><th scope=\"col\">run</th>"
          "<th scope=\"col\">metric</th><th scope=\"col\">fp32</th><th scope=\"col\">quantized</th>"
          "<th scope=\"col\">&Delta;</th><th scope=\"col\">fp32 MB</th><th scope=\"col\">quantized MB</th></tr></thead>\n"
          "<tbody>\n", f);
    const cJSON *r;
    cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(in->json, "rows")) {
        const char *format = str_or(r, "format", "int8");
        char bytes[64];
        snprintf(bytes, sizeof bytes, "%s_bytes", format);
        const cJSON *fp = cJSON_GetObjectItemCaseSensitive(r, "fp32"), *q = cJSON_GetObjectItemCaseSensitive(r, format), *s;
        cJSON_ArrayForEach(s, fp) {
            const cJSON *m;
            if (!cJSON_IsObject(s)) continue;
            cJSON_ArrayForEach(m, s) {
                double a = report_num(s, m->string), b = report_num(cJSON_GetObjectItemCaseSensitive(q, s->string), m->string);
                fputs("<tr><td>", f);
                report_page_printf(p, "%s, %s (%s)", str_or(r, "task", "?"), str_or(r, "model", "?"), format);
                fputs("</td><td>", f);
                report_page_printf(p, "%s %s", s->string, m->string);
                fputs("</td>", f);
                report_page_num_cell(p, a, 2, NULL);
                report_page_num_cell(p, b, 2, NULL);
                report_page_num_cell(p, b - a, 2, NULL);
                report_page_num_cell(p, report_num(r, "fp32_bytes") / 1e6, 1, NULL);
                report_page_num_cell(p, report_num(r, bytes) / 1e6, 2, NULL);
                fputs("</tr>\n", f);
            }
        }
    }
    fputs("</tbody>\n</table>\n</div>\n", f);
}

void report_section_bench(ReportPage *p, const ReportInputs *in) {
    FILE *f = p->f;
    fprintf(f, "<section id=\"bench\">\n<h2>Benchmarks</h2>\n");
    bench_bert(p, in);
    int n = 0;
    for (int i = 0; i < in->n; i++) {
        const ReportInput *x = &in->in[i];
        if (x->kind == REPORT_IN_BENCH_FASTTEXT) bench_fasttext_table(p, x);
        if (x->kind == REPORT_IN_BENCH_SCALING) bench_scaling_table(p, x);
        if (x->kind == REPORT_IN_BENCH_RNN) bench_rnn_table(p, x);
        if (x->kind == REPORT_IN_BENCH_SERVE) bench_serve_table(p, x);
        if (x->kind == REPORT_IN_QUANTIZED) quantized_table(p, x);
        n += x->kind == REPORT_IN_BENCH_FASTTEXT || x->kind == REPORT_IN_BENCH_SCALING ||
             x->kind == REPORT_IN_BENCH_BERT || x->kind == REPORT_IN_BENCH_RNN || x->kind == REPORT_IN_BENCH_SERVE ||
             x->kind == REPORT_IN_QUANTIZED;
    }
    if (!n) {
        fprintf(f, "<p class=\"missing\">No benchmark results in the results directory: <code>make bench</code> "
                   "writes bench_fasttext.json and bench/&lt;cpu&gt;/bench_bert_*.json, <code>glue bench scaling"
                   "</code> bench_scaling.json.</p>\n");
        report_page_missing(p, "no benchmark results (bench_*.json): make bench or glue bench scaling makes them");
    }
    fprintf(f, "</section>\n");
}
