/* report_glue.c — the report's GLUE table and per-task bar charts.
 *
 * Rows come from every result that has per-task dev metrics: each model of
 * `glue compare`, each `glue eval all` file (and the TF-IDF baseline), each
 * run's results.json in the results directory, the finished runs of the runs
 * directory (one row per model), and one row per model with seeds
 * (seeds.json of `glue finetune --seeds`: mean ± sample std).
 *
 * The GLUE score of a seeds row is computed per seed: for seed s, the tasks
 * with seeds take seed s's run and the other tasks the model's first
 * single-run row (the one the seeds repeat); the cell shows the mean ± std of
 * those scores over the seeds every seeded task has, and says so on hover. */
#include "eval/report_sections.h"

#include "core/common.h"
#include "eval/report.h"
#include "eval/svg_plot.h"
#include "train/evaluate.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define GLUE_MAX_ROWS 64
#define GLUE_MAX_TASKS 16
#define GLUE_MAX_VALS 2
#define GLUE_MAX_SEEDS 64

typedef struct Cell {
    int n;                         /* values; 0 = task not in this row */
    double v[GLUE_MAX_VALS];       /* ×100 as in the JSON; seeds: the mean */
    double sd[GLUE_MAX_VALS], lo[GLUE_MAX_VALS], hi[GLUE_MAX_VALS];   /* seeds only */
    int source;
    const cJSON *seed_runs;        /* seeds: the "runs" array */
} Cell;

typedef struct Row {
    char label[160], model[64];
    int source, seeds;             /* seeds: how many seeds (0: a single-run row) */
    const cJSON *tasks;            /* {"task": {"dev": {...}}} of a single-run row */
    cJSON *owned;
    double glue, glue_sd, glue_lo, glue_hi;
    int glue_tasks, glue_seeds, glue_source;
    char glue_note[512];
    Cell cell[GLUE_MAX_TASKS];
} Row;

typedef struct Table {
    Row row[GLUE_MAX_ROWS];
    int n;
} Table;

double report_num(const cJSON *o, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

const cJSON *report_members(const cJSON *o) { return cJSON_IsObject(o) ? o->child : NULL; }

static int task_index(const char *name) {
    const Task *t = task_find(name);
    if (!t || t->scored_with) return -1;
    int i = (int)(t - TASKS);
    return i >= 0 && i < GLUE_MAX_TASKS ? i : -1;
}

/* The names of a task's values: its metrics on "dev", or its primary metric
 * on each dev split (MNLI: matched, mismatched). Returns how many. */
static int task_value_names(const Task *t, const char **split, const char **metric) {
    const TaskSplit *dev[TASK_MAX_SPLITS];
    int nd = task_dev_splits(t, dev, TASK_MAX_SPLITS), n = 0;
    if (nd > 1) {
        for (int s = 0; s < nd && n < GLUE_MAX_VALS; s++, n++) split[n] = dev[s]->name, metric[n] = metric_name(t->metrics[0]);
        return n;
    }
    for (int k = 0; k < 2 && t->metrics[k] != METRIC_NONE; k++, n++)
        split[n] = nd ? dev[0]->name : "dev", metric[n] = metric_name(t->metrics[k]);
    return n;
}

/* A task's values from {"dev": {"f1": x}} (stat NULL) or, for a seeds
 * summary, {"dev": {"f1": {"mean": x, ...}}} (stat "mean", "std", ...). */
static int task_values(const Task *t, const cJSON *splits, const char *stat, double *v) {
    const char *split[GLUE_MAX_VALS], *metric[GLUE_MAX_VALS];
    int n = task_value_names(t, split, metric), found = 0;
    for (int k = 0; k < n; k++) {
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(splits, split[k]), metric[k]);
        v[k] = stat ? report_num(m, stat) : cJSON_IsNumber(m) ? m->valuedouble : NAN;
        found += isfinite(v[k]);
    }
    return found ? n : 0;
}

static Row *table_add(Table *tb, const char *model, const char *source_name, int source) {
    if (tb->n == GLUE_MAX_ROWS) return NULL;
    Row *r = &tb->row[tb->n++];
    *r = (Row){.source = source, .glue = NAN, .glue_sd = NAN};
    /* "tfidf+logistic regression (scikit-learn)": the first word is enough. */
    char m[64];
    snprintf(m, sizeof m, "%.*s", (int)strcspn(model, " "), model);
    snprintf(r->model, sizeof r->model, "%s", m);
    snprintf(r->label, sizeof r->label, "%s (%.90s)", m, source_name);
    return r;
}

/* Fills the cells of a single-run row from its tasks object. */
static void row_cells(Row *r, const cJSON *tasks, int source) {
    r->tasks = cJSON_IsObject(tasks) ? tasks : NULL;
    for (const cJSON *it = report_members(tasks); it; it = it->next) {
        int ti = task_index(it->string);
        if (ti < 0) continue;
        Cell *c = &r->cell[ti];
        c->n = task_values(&TASKS[ti], it, NULL, c->v);
        c->source = source;
        for (int k = 0; k < c->n; k++) c->sd[k] = NAN;
    }
}

static void row_glue(Row *r, const cJSON *glue) {
    int ntasks = 0;
    for (int k = 0; k < GLUE_MAX_TASKS; k++) ntasks += r->cell[k].n > 0;
    if (ntasks < 2) {   /* a "GLUE score" of one task is only that task's score */
        snprintf(r->glue_note, sizeof r->glue_note, "one task only: no GLUE score");
        return;
    }
    r->glue = report_num(glue, "glue_score");
    r->glue_tasks = (int)report_num(glue, "num_tasks");
    r->glue_source = r->source;
    if (!isfinite(r->glue) && r->tasks) {
        cJSON *g = report_glue_score(r->tasks);
        r->glue = report_num(g, "glue_score");
        r->glue_tasks = (int)report_num(g, "num_tasks");
        cJSON_Delete(g);
    }
}

/* {"dev": {...}, ...}: the metric objects of a run's "best" record. */
static cJSON *best_splits(const cJSON *best) {
    cJSON *e = cJSON_CreateObject();
    for (const cJSON *it = report_members(best); it; it = it->next)
        if (cJSON_IsObject(it)) cJSON_AddItemToObject(e, it->string, cJSON_Duplicate(it, 1));
    return e;
}

static const char *json_str(const cJSON *o, const char *k, const char *fallback) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : fallback;
}

/* The directory two levels above a run dir (runs/<task>/<model> -> runs), as a label. */
static void runs_root_name(const char *dir, char *out, size_t cap) {
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s", dir);
    for (int up = 0; up < 2; up++) {
        char *slash = strrchr(tmp, '/');
        if (slash) *slash = '\0';
        else snprintf(tmp, sizeof tmp, ".");
    }
    const char *base = strrchr(tmp, '/');
    snprintf(out, cap, "%.200s", base ? base + 1 : tmp);
}

static int is_seed_run(const char *dir) {
    const char *base = strrchr(dir, '/');
    return strncmp(base ? base + 1 : dir, "seed-", 5) == 0;
}

/* A run of the runs directory joins its model's row (one per model and root). */
static void add_run_of_runs(Table *tb, const ReportInput *in) {
    const char *model = json_str(in->json, "model", "?"), *task = json_str(in->json, "task", "");
    int ti = task_index(task);
    if (ti < 0 || is_seed_run(in->dir)) return;
    char root[256], label[400];
    runs_root_name(in->dir, root, sizeof root);
    snprintf(label, sizeof label, "%s (%s)", model, root);
    Row *r = NULL;
    for (int i = 0; i < tb->n && !r; i++)
        if (tb->row[i].owned && strcmp(tb->row[i].label, label) == 0) r = &tb->row[i];
    if (!r && !(r = table_add(tb, model, root, in->source))) return;
    if (!r->owned) r->owned = cJSON_CreateObject();
    if (cJSON_GetObjectItemCaseSensitive(r->owned, task)) return;
    cJSON *splits = best_splits(cJSON_GetObjectItemCaseSensitive(in->json, "best"));
    cJSON_AddItemToObject(r->owned, task, splits);
    r->tasks = r->owned;
    Cell *c = &r->cell[ti];
    c->n = task_values(&TASKS[ti], splits, NULL, c->v);
    c->source = in->source;
    for (int k = 0; k < c->n; k++) c->sd[k] = NAN;
}

static void add_seeds(Table *tb, const ReportInput *in) {
    const char *model = json_str(in->json, "model", "?"), *task = json_str(in->json, "task", "");
    int ti = task_index(task);
    if (ti < 0) return;
    const cJSON *runs = cJSON_GetObjectItemCaseSensitive(in->json, "runs");
    Row *r = NULL;
    for (int i = 0; i < tb->n && !r; i++)
        if (tb->row[i].seeds && strcmp(tb->row[i].model, model) == 0) r = &tb->row[i];
    if (!r && !(r = table_add(tb, model, "seeds", in->source))) return;
    int n = cJSON_GetArraySize(runs);
    if (n > r->seeds) r->seeds = n;
    snprintf(r->label, sizeof r->label, "%s (seeds, %d each)", r->model, r->seeds);
    Cell *c = &r->cell[ti];
    const cJSON *summary = cJSON_GetObjectItemCaseSensitive(in->json, "summary");
    c->n = task_values(&TASKS[ti], summary, "mean", c->v);
    task_values(&TASKS[ti], summary, "std", c->sd);
    task_values(&TASKS[ti], summary, "min", c->lo);
    task_values(&TASKS[ti], summary, "max", c->hi);
    c->source = in->source;
    c->seed_runs = runs;
}

/* The run of seed s in a seeds "runs" array, or NULL. */
static const cJSON *seed_run(const cJSON *runs, double s) {
    for (const cJSON *it = runs ? runs->child : NULL; it; it = it->next)
        if (report_num(it, "seed") == s) return it;
    return NULL;
}

/* GLUE per seed (see the header comment); needs a single-run row of the model. */
static void seeds_glue(Table *tb, Row *r) {
    const Row *base = NULL;
    for (int i = 0; i < tb->n && !base; i++)
        if (!tb->row[i].seeds && tb->row[i].tasks && strcmp(tb->row[i].model, r->model) == 0) base = &tb->row[i];
    if (!base) {
        snprintf(r->glue_note, sizeof r->glue_note,
                 "no single-run row of %s for the tasks without seeds: no GLUE score", r->model);
        return;
    }
    const cJSON *first = NULL;
    for (int k = 0; k < GLUE_MAX_TASKS && !first; k++) first = r->cell[k].seed_runs;
    double g[GLUE_MAX_SEEDS];
    int ng = 0;
    for (const cJSON *it = first ? first->child : NULL; it && ng < GLUE_MAX_SEEDS; it = it->next) {
        double s = report_num(it, "seed");
        cJSON *tasks = cJSON_Duplicate(base->tasks, 1);
        int all = 1;
        for (int k = 0; k < GLUE_MAX_TASKS && all; k++) {
            if (!r->cell[k].seed_runs) continue;
            const cJSON *run = seed_run(r->cell[k].seed_runs, s);
            if (!run) { all = 0; break; }
            cJSON_DeleteItemFromObjectCaseSensitive(tasks, TASKS[k].name);
            cJSON_AddItemToObject(tasks, TASKS[k].name, best_splits(cJSON_GetObjectItemCaseSensitive(run, "best")));
        }
        cJSON *gs = all ? report_glue_score(tasks) : NULL;
        if (gs) {
            g[ng++] = report_num(gs, "glue_score");
            r->glue_tasks = (int)report_num(gs, "num_tasks");
        }
        cJSON_Delete(gs);
        cJSON_Delete(tasks);
    }
    if (ng == 0) return;
    double mean = 0, var = 0;
    r->glue_lo = r->glue_hi = g[0];
    for (int i = 0; i < ng; i++) {
        mean += g[i] / ng;
        if (g[i] < r->glue_lo) r->glue_lo = g[i];
        if (g[i] > r->glue_hi) r->glue_hi = g[i];
    }
    for (int i = 0; i < ng; i++) var += (g[i] - mean) * (g[i] - mean);
    r->glue = mean;
    r->glue_sd = ng > 1 ? sqrt(var / (ng - 1)) : 0;
    r->glue_seeds = ng;
    r->glue_source = base->source;
    snprintf(r->glue_note, sizeof r->glue_note,
             "GLUE per seed over %d seeds: the tasks with seeds use that seed's run, the others %s; "
             "mean ± sample std, min %.2f, max %.2f", ng, base->label, r->glue_lo, r->glue_hi);
}

static void table_build(Table *tb, const ReportInputs *in) {
    tb->n = 0;
    for (int i = 0; i < in->n; i++) {
        const ReportInput *x = &in->in[i];
        if (x->kind == REPORT_IN_COMPARE) {
            char src[96];
            snprintf(src, sizeof src, "compare, seed %.0f", report_num(x->json, "seed"));
            const cJSON *models = cJSON_GetObjectItemCaseSensitive(x->json, "models");
            for (const cJSON *m = models->child; m; m = m->next) {
                Row *r = table_add(tb, json_str(m, "model", "?"), src, x->source);
                if (!r) break;
                row_cells(r, cJSON_GetObjectItemCaseSensitive(m, "tasks"), x->source);
                row_glue(r, cJSON_GetObjectItemCaseSensitive(m, "glue"));
            }
        } else if (x->kind == REPORT_IN_EVAL_ALL) {
            Row *r = table_add(tb, json_str(x->json, "model", "?"), x->name, x->source);
            if (!r) continue;
            row_cells(r, cJSON_GetObjectItemCaseSensitive(x->json, "tasks"), x->source);
            row_glue(r, cJSON_GetObjectItemCaseSensitive(x->json, "glue"));
        } else if (x->kind == REPORT_IN_RUN && !x->from_runs && task_index(json_str(x->json, "task", "")) >= 0) {
            Row *r = table_add(tb, json_str(x->json, "model", "?"), x->name, x->source);
            if (!r) continue;
            r->owned = cJSON_CreateObject();
            cJSON_AddItemToObject(r->owned, json_str(x->json, "task", ""),
                                  best_splits(cJSON_GetObjectItemCaseSensitive(x->json, "best")));
            row_cells(r, r->owned, x->source);
            row_glue(r, NULL);
        } else if (x->kind == REPORT_IN_RUN && x->from_runs) {
            add_run_of_runs(tb, x);
        } else if (x->kind == REPORT_IN_SEEDS) {
            add_seeds(tb, x);
        }
    }
    for (int i = 0; i < tb->n; i++) {
        Row *r = &tb->row[i];
        if (r->seeds) seeds_glue(tb, r);
        else if (r->owned && !isfinite(r->glue)) row_glue(r, NULL);
    }
}

static void table_free(Table *tb) {
    for (int i = 0; i < tb->n; i++) cJSON_Delete(tb->row[i].owned);
}

/* Which task columns any row has. */
static int table_columns(const Table *tb, int *cols) {
    int n = 0;
    for (int t = 0; t < NUM_TASKS && t < GLUE_MAX_TASKS; t++) {
        int any = 0;
        for (int i = 0; i < tb->n && !any; i++) any = tb->row[i].cell[t].n > 0;
        if (any) cols[n++] = t;
    }
    return n;
}

/* Ties are what a reader sees: equal to two decimals (runs on other BLAS
 * kernels differ in the 7th digit and must not lose their bold). */
static int shown_equal(double a, double b) {
    char x[64], y[64];
    snprintf(x, sizeof x, "%.2f", a);
    snprintf(y, sizeof y, "%.2f", b);
    return strcmp(x, y) == 0;
}

static void glue_cell(ReportPage *p, const Row *r, double best, int ncols) {
    FILE *f = p->f;
    fprintf(f, "<td class=\"glue-score\"");
    if (r->glue_note[0]) {
        fputs(" title=\"", f);
        report_page_text(p, r->glue_note);
        fputs("\"", f);
    } else {
        report_page_title_attr(p, r->glue_source);
    }
    fputs(">", f);
    if (!isfinite(r->glue)) { fputs("-</td>", f); return; }
    int is_best = !r->seeds && shown_equal(r->glue, best);
    if (is_best) fputs("<strong class=\"best\">", f);
    report_page_num(p, r->glue, 2);
    if (is_best) fputs("</strong>", f);
    if (r->seeds && isfinite(r->glue_sd)) {
        fputs("<span class=\"sd\"> ±", f);
        report_page_num(p, r->glue_sd, 2);
        fputs("</span>", f);
    }
    if (r->glue_tasks && r->glue_tasks != ncols) fprintf(f, " <span class=\"note\">(%d task%s)</span>", r->glue_tasks, r->glue_tasks == 1 ? "" : "s");
    fputs("</td>", f);
}

void report_section_glue(ReportPage *p, const ReportInputs *in) {
    static Table tb;
    table_build(&tb, in);
    FILE *f = p->f;
    fprintf(f, "<section id=\"glue\">\n<h2>GLUE dev results</h2>\n");
    int cols[GLUE_MAX_TASKS], nc = table_columns(&tb, cols);
    if (tb.n == 0 || nc == 0) {
        fprintf(f, "<p class=\"missing\">No GLUE results: no compare.json, glue.json, seeds or run results.json "
                   "with dev metrics were found. Make some with <code>glue finetune TASK</code>, "
                   "<code>glue eval all</code> or <code>glue compare all</code>.</p>\n</section>\n");
        report_page_missing(p, "no GLUE results (no table, no bar charts)");
        table_free(&tb);
        return;
    }
    /* The best value of each column among single-run rows (ties all marked). */
    double best[GLUE_MAX_TASKS][GLUE_MAX_VALS], best_glue = -INFINITY;
    for (int c = 0; c < nc; c++)
        for (int k = 0; k < GLUE_MAX_VALS; k++) {
            best[c][k] = -INFINITY;
            for (int i = 0; i < tb.n; i++) {
                const Cell *cl = &tb.row[i].cell[cols[c]];
                if (!tb.row[i].seeds && k < cl->n && isfinite(cl->v[k]) && cl->v[k] > best[c][k]) best[c][k] = cl->v[k];
            }
        }
    for (int i = 0; i < tb.n; i++)
        if (!tb.row[i].seeds && isfinite(tb.row[i].glue) && tb.row[i].glue > best_glue) best_glue = tb.row[i].glue;
    fprintf(f, "<div class=\"table-wrap\">\n<table id=\"glue-table\" class=\"results\">\n<thead><tr><th scope=\"col\" "
               "class=\"row-head\">model (source)</th>");
    for (int c = 0; c < nc; c++) {
        char head[64];
        report_task_header(&TASKS[cols[c]], head, sizeof head);
        /* "STS-B (pearson/spearman)" on two lines: the columns stay narrow. */
        char *paren = strstr(head, " (");
        if (paren) *paren = '\0';
        fprintf(f, "<th scope=\"col\">");
        report_page_text(p, head);
        if (paren) {
            fprintf(f, "<br><span class=\"unit\">");
            report_page_text(p, paren + 1);
            fprintf(f, "</span>");
        }
        fprintf(f, "</th>");
    }
    fprintf(f, "<th scope=\"col\">GLUE</th></tr></thead>\n<tbody>\n");
    for (int i = 0; i < tb.n; i++) {
        const Row *r = &tb.row[i];
        fprintf(f, "<tr%s><th scope=\"row\">", r->seeds ? " class=\"seeds\"" : "");
        report_page_text(p, r->label);
        report_page_fnref(p, r->source);
        fprintf(f, "</th>");
        for (int c = 0; c < nc; c++) {
            const Cell *cl = &r->cell[cols[c]];
            fprintf(f, "<td");
            report_page_title_attr(p, cl->source);
            fprintf(f, ">");
            if (!cl->n) fprintf(f, "-");
            for (int k = 0; k < cl->n; k++) {
                int is_best = !r->seeds && shown_equal(cl->v[k], best[c][k]);
                fprintf(f, "%s%s", k ? "/" : "", is_best ? "<strong class=\"best\">" : "");
                report_page_num(p, cl->v[k], 2);
                if (is_best) fprintf(f, "</strong>");
                if (r->seeds && isfinite(cl->sd[k])) {
                    fprintf(f, "<span class=\"sd\"> ±");
                    report_page_num(p, cl->sd[k], 2);
                    fprintf(f, "</span>");
                }
            }
            fprintf(f, "</td>");
        }
        glue_cell(p, r, best_glue, nc);
        fprintf(f, "</tr>\n");
    }
    fprintf(f, "</tbody>\n</table>\n</div>\n<p class=\"note\">Dev sets, metrics ×100. <strong>Bold</strong>: the best "
               "single-run value of its column (ties to the two decimals shown all bold). Seeds rows: mean ± "
               "sample standard deviation over the seeds (hover for the GLUE score's make-up). Hover a cell for its source; [n] are the sources "
               "below.</p>\n");
    /* Tasks nobody ran. */
    char absent[256] = "";
    for (int t = 0; t < NUM_TASKS && t < GLUE_MAX_TASKS; t++) {
        int present = 0;
        for (int c = 0; c < nc; c++) present |= cols[c] == t;
        size_t n = strlen(absent);
        if (!present && !TASKS[t].scored_with)
            snprintf(absent + n, sizeof absent - n, "%s%s", n ? ", " : "", TASKS[t].display);
    }
    if (absent[0]) {
        fprintf(f, "<p class=\"missing\">Not in any result (never trained or no data): ");
        report_page_text(p, absent);
        fprintf(f, ".</p>\n");
        report_page_missing(p, "GLUE tasks without any result: %s", absent);
    }
    fprintf(f, "</section>\n");
    table_free(&tb);
}

void report_section_task_bars(ReportPage *p, const ReportInputs *in) {
    static Table tb;
    table_build(&tb, in);
    FILE *f = p->f;
    int cols[GLUE_MAX_TASKS], nc = table_columns(&tb, cols);
    fprintf(f, "<section id=\"tasks\">\n<h2>Every model per task</h2>\n");
    if (nc == 0) fprintf(f, "<p class=\"missing\">No per-task results to chart.</p>\n");
    fprintf(f, "<div class=\"grid\">\n");
    for (int c = 0; c < nc; c++) {
        const Task *t = &TASKS[cols[c]];
        const char *split[GLUE_MAX_VALS], *metric[GLUE_MAX_VALS], *series[GLUE_MAX_VALS];
        char names[GLUE_MAX_VALS][64];
        int ns = task_value_names(t, split, metric), nr = 0, any_sd = 0;
        for (int k = 0; k < ns; k++) {
            if (strcmp(split[k], "dev")) snprintf(names[k], sizeof names[k], "%s %s", metric[k], split[k]);
            else snprintf(names[k], sizeof names[k], "%s", metric[k]);
            series[k] = names[k];
        }
        const char *labels[GLUE_MAX_ROWS];
        double value[GLUE_MAX_ROWS * GLUE_MAX_VALS], err[GLUE_MAX_ROWS * GLUE_MAX_VALS];
        for (int i = 0; i < tb.n; i++) {
            const Cell *cl = &tb.row[i].cell[cols[c]];
            if (!cl->n) continue;
            labels[nr] = tb.row[i].label;
            for (int k = 0; k < ns; k++) {
                value[nr * ns + k] = k < cl->n ? cl->v[k] : NAN;
                err[nr * ns + k] = k < cl->n && tb.row[i].seeds ? cl->sd[k] : NAN;
                any_sd |= isfinite(err[nr * ns + k]);
            }
            nr++;
        }
        char id[64], title[160], xlabel[160];
        snprintf(id, sizeof id, "bars-%s", t->name);
        snprintf(title, sizeof title, "%s: dev %s of every model", t->display, ns > 1 ? "metrics" : metric[0]);
        snprintf(xlabel, sizeof xlabel, "%s on dev (×100)", ns > 1 ? "metric" : metric[0]);
        fprintf(f, "<figure class=\"chart-box\">\n");
        svg_hbars(f, id, title, labels, nr, series, ns, value, err, xlabel,
                  any_sd ? "error bars: ± 1 sample std over seeds" : NULL);
        fprintf(f, "<figcaption>");
        report_page_text(p, title);
        fprintf(f, "</figcaption>\n</figure>\n");
    }
    fprintf(f, "</div>\n</section>\n");
    table_free(&tb);
}
