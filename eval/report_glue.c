/* report_glue.c — the report's GLUE table and per-task bar charts.
 *
 * Rows come from every result that has per-task dev metrics: each model of
 * `glue compare`, each `glue eval all` file (and the TF-IDF baseline), each
 * run's results.json in the results directory, the finished runs of the runs
 * directory (one row per model), and one row per model with seeds
 * (seeds.json of `glue finetune --seeds`: mean ± sample std). A row's label
 * says what its numbers are: one run, or a mean over how many seeds.
 *
 * The GLUE score of a seeds row is computed per seed over the tasks the seeds
 * files have (seeds_glue); the cell shows the mean ± std of those scores and
 * says so on hover, and "(N tasks)" when the row has fewer tasks than the
 * table. */
#include "eval/report_sections.h"

#include "core/common.h"
#include "core/stats.h"
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

/* What a row's numbers are. */
typedef enum {
    ROW_RUN,     /* one run per task: eval all, a run's results.json, the runs directory, a one-seed compare */
    ROW_MEAN,    /* a model of a compare.json over several seeds: each cell the mean, ± the task score's std */
    ROW_SEEDS,   /* seeds files of `glue finetune --seeds`: mean ± std per metric */
} RowKind;

typedef struct Cell {
    int n;                         /* values; 0 = task not in this row */
    double v[GLUE_MAX_VALS];       /* ×100 as in the JSON; seeds and means: the mean */
    double sd[GLUE_MAX_VALS], lo[GLUE_MAX_VALS], hi[GLUE_MAX_VALS];   /* ROW_SEEDS only */
    double score_sd;               /* ROW_MEAN: std over seeds of the task score (the mean of its metrics) */
    int source;
    const cJSON *seed_runs;        /* ROW_SEEDS: the "runs" array */
    const cJSON *seed_scores;      /* ROW_MEAN: the task score of each seed */
} Cell;

typedef struct Row {
    char label[160], model[64];
    RowKind kind;
    int source, nseeds;            /* nseeds: seeds each cell averages (0: ROW_RUN) */
    int seeds_mixed;               /* ROW_SEEDS: its files have different numbers of seeds */
    const cJSON *tasks;            /* {"task": {"dev": {...}}} of a ROW_RUN row */
    cJSON *owned;
    double glue, glue_sd;
    int glue_tasks, glue_source;
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

/* Columns: the official tasks, then the subsets (a seeds file of qnli-9k is
 * QNLI trained on 8,999 pairs: a column of its own, never QNLI's). */
static int num_columns(void) {
    int n = NUM_TASKS + NUM_SUBSET_TASKS;
    return n < GLUE_MAX_TASKS ? n : GLUE_MAX_TASKS;
}

static const Task *column_task(int i) { return i < NUM_TASKS ? &TASKS[i] : &SUBSET_TASKS[i - NUM_TASKS]; }

static int task_index(const char *name) {
    const Task *t = task_find(name);
    if (!t || t->scored_with) return -1;
    for (int i = 0; i < num_columns(); i++)
        if (column_task(i) == t) return i;
    return -1;
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
    *r = (Row){.kind = ROW_RUN, .source = source, .glue = NAN, .glue_sd = NAN};
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
        c->n = task_values(column_task(ti), it, NULL, c->v);
        c->source = source;
        c->score_sd = report_num(it, "score_std");
        c->seed_scores = cJSON_GetObjectItemCaseSensitive(it, "seed_scores");
        for (int k = 0; k < c->n; k++) c->sd[k] = NAN;
    }
}

static void row_glue(Row *r, const cJSON *glue) {
    int ntasks = 0;   /* official tasks: a subset has no place in the GLUE score */
    for (int k = 0; k < NUM_TASKS && k < GLUE_MAX_TASKS; k++) ntasks += r->cell[k].n > 0 && !TASKS[k].scored_with;
    if (ntasks < 2) {   /* a "GLUE score" of one task is only that task's score */
        snprintf(r->glue_note, sizeof r->glue_note, "one task only: no GLUE score");
        return;
    }
    r->glue = report_num(glue, "glue_score");
    double n = report_num(glue, "num_tasks");
    r->glue_source = r->source;
    if (!isfinite(r->glue) && r->tasks) {
        cJSON *g = report_glue_score(r->tasks);
        r->glue = report_num(g, "glue_score");
        n = report_num(g, "num_tasks");
        cJSON_Delete(g);
    }
    r->glue_tasks = isfinite(n) ? (int)n : ntasks;
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
    c->n = task_values(column_task(ti), splits, NULL, c->v);
    c->source = in->source;
    c->score_sd = NAN;
    for (int k = 0; k < c->n; k++) c->sd[k] = NAN;
}

static void add_seeds(Table *tb, const ReportInput *in) {
    const char *model = json_str(in->json, "model", "?"), *task = json_str(in->json, "task", "");
    int ti = task_index(task);
    if (ti < 0) return;
    const cJSON *runs = cJSON_GetObjectItemCaseSensitive(in->json, "runs");
    Row *r = NULL;
    for (int i = 0; i < tb->n && !r; i++)
        if (tb->row[i].kind == ROW_SEEDS && strcmp(tb->row[i].model, model) == 0) r = &tb->row[i];
    if (!r && !(r = table_add(tb, model, "seeds", in->source))) return;
    r->kind = ROW_SEEDS;
    int n = cJSON_GetArraySize(runs);
    r->seeds_mixed |= r->nseeds && n != r->nseeds;   /* files of different seed counts share the row */
    if (n > r->nseeds) r->nseeds = n;
    snprintf(r->label, sizeof r->label, "%s (seeds files, mean of %s%d seeds)", r->model,
             r->seeds_mixed ? "up to " : "", r->nseeds);
    Cell *c = &r->cell[ti];
    const cJSON *summary = cJSON_GetObjectItemCaseSensitive(in->json, "summary");
    const Task *t = column_task(ti);
    c->n = task_values(t, summary, "mean", c->v);
    task_values(t, summary, "std", c->sd);
    task_values(t, summary, "min", c->lo);
    task_values(t, summary, "max", c->hi);
    c->score_sd = NAN;
    c->source = in->source;
    c->seed_runs = runs;
}

/* The run of seed s in a seeds "runs" array, or NULL. */
static const cJSON *seed_run(const cJSON *runs, double s) {
    for (const cJSON *it = runs ? runs->child : NULL; it; it = it->next)
        if (report_num(it, "seed") == s) return it;
    return NULL;
}

/* GLUE per seed over the seeds files' own tasks: the GLUE score of seed s
 * from each seeded task's run of seed s (a seed missing from a file drops
 * out); mean ± sample std over the seeds. Other rows' runs are never mixed
 * in: they were made with another recipe, or are means themselves. */
static void seeds_glue(Row *r) {
    const cJSON *first = NULL;
    int ntasks = 0;
    for (int k = 0; k < GLUE_MAX_TASKS; k++) {
        if (!first) first = r->cell[k].seed_runs;
        ntasks += r->cell[k].seed_runs && k < NUM_TASKS;
    }
    if (ntasks < 2) {   /* a "GLUE score" of one task is only that task's score */
        snprintf(r->glue_note, sizeof r->glue_note, "seeds files of one GLUE task: no GLUE score");
        return;
    }
    double g[GLUE_MAX_SEEDS];
    int ng = 0;
    for (const cJSON *it = first ? first->child : NULL; it && ng < GLUE_MAX_SEEDS; it = it->next) {
        double s = report_num(it, "seed");
        cJSON *tasks = cJSON_CreateObject();
        int all = 1;
        for (int k = 0; k < GLUE_MAX_TASKS && all; k++) {
            if (!r->cell[k].seed_runs) continue;
            const cJSON *run = seed_run(r->cell[k].seed_runs, s);
            if (run)
                cJSON_AddItemToObject(tasks, column_task(k)->name,
                                      best_splits(cJSON_GetObjectItemCaseSensitive(run, "best")));
            all = run != NULL;
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
    Summary sm = summarize(g, ng);
    r->glue = sm.mean;
    r->glue_sd = sm.std;
    snprintf(r->glue_note, sizeof r->glue_note,
             "the GLUE score of each of %d seeds over the seeds files' %d tasks (the other tasks have no seeds): "
             "mean ± sample std, min %.2f, max %.2f", ng, r->glue_tasks, sm.min, sm.max);
}

/* The models of a compare.json: over several seeds ("seeds": [...], a model's
 * "glue_seeds") each cell is the mean of the seeds, and the label says how many. */
static void add_compare(Table *tb, const ReportInput *x) {
    const cJSON *models = cJSON_GetObjectItemCaseSensitive(x->json, "models");
    for (const cJSON *m = models->child; m; m = m->next) {
        const cJSON *gseeds = cJSON_GetObjectItemCaseSensitive(m, "glue_seeds");
        int n = cJSON_GetArraySize(gseeds);
        char src[128], with[64] = "";
        /* The majority class is counted from the data: no seed, nothing trained. */
        int trained = strcmp(json_str(m, "model", ""), "majority") != 0;
        /* A row of other settings (compare --init/--set, "bert *" in its
         * table) says which: it read as a second row of the defaults. */
        const cJSON *sets = cJSON_GetObjectItemCaseSensitive(m, "settings");
        for (const cJSON *s = cJSON_IsArray(sets) ? sets->child : NULL; s; s = s->next) {
            size_t len = strlen(with);
            if (cJSON_IsString(s)) snprintf(with + len, sizeof with - len, "%s%s", len ? " " : ", with ", s->valuestring);
        }
        if (n > 1) snprintf(src, sizeof src, "compare, mean of %d seeds%s", n, with);
        else if (!trained) snprintf(src, sizeof src, "compare, not trained");
        else snprintf(src, sizeof src, "compare, seed %.0f%s", report_num(x->json, "seed"), with);
        Row *r = table_add(tb, json_str(m, "model", "?"), src, x->source);
        if (!r) break;
        row_cells(r, cJSON_GetObjectItemCaseSensitive(m, "tasks"), x->source);
        row_glue(r, cJSON_GetObjectItemCaseSensitive(m, "glue"));
        if (n > 1) {
            r->kind = ROW_MEAN;
            r->nseeds = n;
            r->glue_sd = report_num(m, "glue_std");
            snprintf(r->glue_note, sizeof r->glue_note, "the mean of %d seeds' GLUE scores ± their sample std", n);
        }
    }
}

static void table_build(Table *tb, const ReportInputs *in) {
    tb->n = 0;
    for (int i = 0; i < in->n; i++) {
        const ReportInput *x = &in->in[i];
        if (x->kind == REPORT_IN_COMPARE) {
            add_compare(tb, x);
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
        if (r->kind == ROW_SEEDS) seeds_glue(r);
        else if (r->owned && !isfinite(r->glue)) row_glue(r, NULL);
    }
}

static void table_free(Table *tb) {
    for (int i = 0; i < tb->n; i++) cJSON_Delete(tb->row[i].owned);
}

/* Which task columns any row has. */
static int table_columns(const Table *tb, int *cols) {
    int n = 0;
    for (int t = 0; t < num_columns(); t++) {
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

void report_sd(ReportPage *p, double sd) {
    if (!isfinite(sd)) return;
    fputs("<span class=\"sd\"> ±", p->f);
    report_page_num(p, sd, 2);
    fputs("</span>", p->f);
}

static void glue_cell(ReportPage *p, const Row *r, double best, int ncols) {
    FILE *f = p->f;
    fprintf(f, "<td class=\"glue-score\"");
    report_page_title_note(p, r->glue_source ? r->glue_source : r->source, r->glue_note);
    fputs(">", f);
    if (!isfinite(r->glue)) { fputs("-</td>", f); return; }
    int is_best = r->glue_tasks == ncols && shown_equal(r->glue, best);
    if (is_best) fputs("<strong class=\"best\">", f);
    report_page_num(p, r->glue, 2);
    if (is_best) fputs("</strong>", f);
    if (r->kind != ROW_RUN && isfinite(r->glue_sd)) {
        fputs("<br><span class=\"sd\">±", f);
        report_page_num(p, r->glue_sd, 2);
        fputs("</span>", f);
    }
    if (r->glue_tasks && r->glue_tasks != ncols)
        fprintf(f, " <span class=\"note\">(%d task%s)</span>", r->glue_tasks, r->glue_tasks == 1 ? "" : "s");
    fputs("</td>", f);
}

/* A task cell: its values (the best of the column bold), the spread over
 * seeds of a mean, and on hover what it is and where it came from. */
static void task_cell(ReportPage *p, const Row *r, const Cell *cl, const double *best) {
    FILE *f = p->f;
    char note[512] = "";
    if (cl->n && r->kind == ROW_MEAN) {
        int n = snprintf(note, sizeof note, "mean of %d seeds; ± the sample std of the task score (the mean of "
                         "its metrics); seed scores", r->nseeds);
        for (const cJSON *s = cl->seed_scores ? cl->seed_scores->child : NULL; s && n > 0 && n < (int)sizeof note;
             s = s->next)
            n += snprintf(note + n, sizeof note - (size_t)n, "%s %.2f", s == cl->seed_scores->child ? ":" : ",",
                          s->valuedouble);
    } else if (cl->n && r->kind == ROW_SEEDS) {
        int n = snprintf(note, sizeof note, "mean of %d seeds ± sample std; min", cJSON_GetArraySize(cl->seed_runs));
        for (int k = 0; k < cl->n && n > 0 && n < (int)sizeof note; k++)
            n += snprintf(note + n, sizeof note - (size_t)n, "%s%.2f", k ? "/" : " ", cl->lo[k]);
        for (int k = 0; k < cl->n && n > 0 && n < (int)sizeof note; k++)
            n += snprintf(note + n, sizeof note - (size_t)n, "%s%.2f", k ? "/" : ", max ", cl->hi[k]);
    }
    fprintf(f, "<td");
    report_page_title_note(p, cl->source, note);
    fprintf(f, ">");
    if (!cl->n) fprintf(f, "-");
    for (int k = 0; k < cl->n; k++) {
        int is_best = shown_equal(cl->v[k], best[k]);
        fprintf(f, "%s%s", k ? "/" : "", is_best ? "<strong class=\"best\">" : "");
        report_page_num(p, cl->v[k], 2);
        if (is_best) fprintf(f, "</strong>");
    }
    /* The spread on a line of its own: "±0.61/±0.63" per metric, or the task score's "±1.12". */
    int spread = r->kind == ROW_MEAN ? isfinite(cl->score_sd) : 0;
    for (int k = 0; k < cl->n && r->kind == ROW_SEEDS; k++) spread |= isfinite(cl->sd[k]);
    if (cl->n && spread) {
        fputs("<br><span class=\"sd\">", f);
        for (int k = 0; k < cl->n && r->kind == ROW_SEEDS; k++) {
            fputs(k ? "/±" : "±", f);
            report_page_num(p, cl->sd[k], 2);
        }
        if (r->kind == ROW_MEAN) {
            fputs(cl->n > 1 ? "score ±" : "±", f);
            report_page_num(p, cl->score_sd, 2);
        }
        fputs("</span>", f);
    }
    fprintf(f, "</td>");
}

static void glue_table_head(ReportPage *p, const int *cols, int nc) {
    FILE *f = p->f;
    fprintf(f, "<div class=\"table-wrap\">\n<table id=\"glue-table\" class=\"results\">\n<thead><tr><th scope=\"col\" "
               "class=\"row-head\">model (source)</th>");
    for (int c = 0; c < nc; c++) {
        const Task *t = column_task(cols[c]), *of = t->subset_of ? task_find(t->subset_of) : NULL;
        char head[160];
        report_task_header(t, head, sizeof head);
        /* "STS-B (pearson/spearman)" on two lines: the columns stay narrow. */
        char *paren = strstr(head, " (");
        if (paren) *paren = '\0';
        char name[200];   /* a subset: "QNLI-9k", its long name on hover */
        snprintf(name, sizeof name, "%.160s%.30s", of ? of->display : head,
                 of && strchr(t->name, '-') ? strchr(t->name, '-') : "");
        fprintf(f, "<th scope=\"col\"");
        if (of) {
            fputs(" title=\"", f);
            report_page_text(p, head);
            fputs("\"", f);
        }
        fprintf(f, ">");
        report_page_text(p, name);
        if (paren) {
            fprintf(f, "<br><span class=\"unit\">");
            report_page_text(p, paren + 1);
            fprintf(f, "</span>");
        }
        fprintf(f, "</th>");
    }
    fprintf(f, "<th scope=\"col\">GLUE</th></tr></thead>\n<tbody>\n");
}

/* The official tasks no row has, said under the table with what would add them. */
static void glue_absent_tasks(ReportPage *p, const int *cols, int nc) {
    char absent[256] = "";
    for (int t = 0; t < NUM_TASKS && t < GLUE_MAX_TASKS; t++) {
        int present = 0;
        for (int c = 0; c < nc; c++) present |= cols[c] == t;
        size_t n = strlen(absent);
        if (!present && !TASKS[t].scored_with)
            snprintf(absent + n, sizeof absent - n, "%s%s", n ? ", " : "", TASKS[t].display);
    }
    if (!absent[0]) return;
    fprintf(p->f, "<p class=\"missing\">No result for ");
    report_page_text(p, absent);
    fprintf(p->f, " in these files: <code>glue compare all</code> runs every task whose data is present "
                  "(<code>glue data fetch all</code> fetches it), <code>glue finetune TASK</code> one task.</p>\n");
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
        report_page_missing(p, "no GLUE results (no table, no bar charts): glue finetune TASK, glue eval all or "
                               "glue compare all makes them");
        table_free(&tb);
        return;
    }
    /* The largest value of each column (ties all marked). */
    double best[GLUE_MAX_TASKS][GLUE_MAX_VALS], best_glue = -INFINITY;
    for (int c = 0; c < nc; c++)
        for (int k = 0; k < GLUE_MAX_VALS; k++) {
            best[c][k] = -INFINITY;
            for (int i = 0; i < tb.n; i++) {
                const Cell *cl = &tb.row[i].cell[cols[c]];
                if (k < cl->n && isfinite(cl->v[k]) && cl->v[k] > best[c][k]) best[c][k] = cl->v[k];
            }
        }
    int nofficial = 0;   /* the GLUE score's tasks: not the subsets */
    for (int c = 0; c < nc; c++) nofficial += cols[c] < NUM_TASKS;
    /* The best GLUE score among those over every task of the table: fewer tasks are another average. */
    for (int i = 0; i < tb.n; i++)
        if (isfinite(tb.row[i].glue) && tb.row[i].glue_tasks == nofficial && tb.row[i].glue > best_glue)
            best_glue = tb.row[i].glue;
    glue_table_head(p, cols, nc);
    for (int i = 0; i < tb.n; i++) {
        const Row *r = &tb.row[i];
        /* "bert (compare, mean of 5 seeds)": the source on a line of its own keeps the column narrow. */
        const char *paren = strstr(r->label, " (");
        fprintf(f, "<tr%s><th scope=\"row\">", r->kind == ROW_SEEDS ? " class=\"seeds\"" : "");
        report_page_printf(p, "%.*s", paren ? (int)(paren - r->label) : (int)strlen(r->label), r->label);
        report_page_fnref(p, r->source);
        if (paren) {
            fprintf(f, "<br><span class=\"unit\">");
            report_page_text(p, paren + 1);
            fprintf(f, "</span>");
        }
        fprintf(f, "</th>");
        for (int c = 0; c < nc; c++) task_cell(p, r, &r->cell[cols[c]], best[c]);
        glue_cell(p, r, best_glue, nofficial);
        fprintf(f, "</tr>\n");
    }
    fprintf(f, "</tbody>\n</table>\n</div>\n<p class=\"note\">Dev sets, metrics ×100. Each row says what its numbers "
               "are: one run per task, or the mean over a number of seeds, ± the sample standard deviation over the "
               "seeds (of each metric for seeds files; of the task's score, the mean of its metrics, for compare.json, "
               "which records only that). <strong>Bold</strong>: the largest value of its column (ties to the two "
               "decimals shown all bold; a GLUE score only among those over every task). Hover a cell for what it "
               "averages and its source, a seeds row's GLUE score for its make-up; [n] are the sources below.</p>\n");
    glue_absent_tasks(p, cols, nc);
    fprintf(f, "</section>\n");
    table_free(&tb);
}

void report_section_task_bars(ReportPage *p, const ReportInputs *in) {
    static Table tb;
    table_build(&tb, in);
    FILE *f = p->f;
    int cols[GLUE_MAX_TASKS], nc = table_columns(&tb, cols);
    fprintf(f, "<section id=\"tasks\">\n<h2>Every model per task</h2>\n");
    if (nc == 0)
        fprintf(f, "<p class=\"missing\">No per-task results to chart: <code>glue finetune TASK</code>, "
                   "<code>glue eval all</code> or <code>glue compare all</code> makes them.</p>\n");
    fprintf(f, "<div class=\"grid\">\n");
    for (int c = 0; c < nc; c++) {
        const Task *t = column_task(cols[c]);
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
            const Row *r = &tb.row[i];
            const Cell *cl = &r->cell[cols[c]];
            if (!cl->n) continue;
            labels[nr] = r->label;
            for (int k = 0; k < ns; k++) {
                value[nr * ns + k] = k < cl->n ? cl->v[k] : NAN;
                /* A compare.json mean has the spread of the task score only: a bar of one metric. */
                err[nr * ns + k] = k >= cl->n                          ? NAN
                                   : r->kind == ROW_SEEDS              ? cl->sd[k]
                                   : r->kind == ROW_MEAN && cl->n == 1 ? cl->score_sd
                                                                       : NAN;
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
                  any_sd ? "error bars: ± 1 sample std over seeds" : NULL, SVG_VALUE_PERCENT);
        fprintf(f, "<figcaption>");
        report_page_text(p, title);
        fprintf(f, "</figcaption>\n</figure>\n");
    }
    fprintf(f, "</div>\n</section>\n");
    table_free(&tb);
}
