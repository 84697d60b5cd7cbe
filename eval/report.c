/* report.c — text and Markdown tables (see report.h). */
#include "eval/report.h"

#include "core/common.h"
#include "metrics/glue_score.h"
#include "train/evaluate.h"

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

struct ReportTable {
    int num_cols, num_cells, cap;
    char **cell;   /* (rows, num_cols), row-major; row 0 is the header */
};

ReportTable *report_table_create(int num_cols) {
    CHECK_OR_DIE(num_cols > 0);
    ReportTable *t = xcalloc(1, sizeof *t);
    t->num_cols = num_cols;
    return t;
}

void report_table_add(ReportTable *t, const char *fmt, ...) {
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (t->num_cells == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 64;
        t->cell = xrealloc(t->cell, sizeof(char *) * (size_t)t->cap);
    }
    t->cell[t->num_cells++] = xstrdup(buf);
}

void report_table_add_metric(ReportTable *t, const cJSON *v) {
    if (cJSON_IsNumber(v)) report_table_add(t, "%.2f", v->valuedouble);
    else report_table_add(t, "-");
}

static int table_rows(const ReportTable *t) { return (t->num_cells + t->num_cols - 1) / t->num_cols; }

static const char *table_cell(const ReportTable *t, int r, int c) {
    int i = r * t->num_cols + c;
    return i < t->num_cells ? t->cell[i] : "";
}

/* Display width in columns: UTF-8 continuation bytes take no column. */
static int text_width(const char *s) {
    int w = 0;
    for (; *s; s++) w += ((unsigned char)*s & 0xC0) != 0x80;
    return w;
}

static void table_widths(const ReportTable *t, int *width) {
    for (int c = 0; c < t->num_cols; c++) {
        width[c] = 1;
        for (int r = 0; r < table_rows(t); r++) {
            int w = text_width(table_cell(t, r, c));
            if (w > width[c]) width[c] = w;
        }
    }
}

/* A column of numbers ("12.3", "81.2/68.4", "0.5 s", "-") is right-aligned,
 * one with any word in it ("SST-2", a path) left-aligned. */
static int column_is_numeric(const ReportTable *t, int c) {
    for (int r = 1; r < table_rows(t); r++) {
        const char *s = table_cell(t, r, c);
        int ok = (s[0] >= '0' && s[0] <= '9') || s[0] == '.' ||
                 (s[0] == '-' && (s[1] == '\0' || (s[1] >= '0' && s[1] <= '9')));
        if (!ok) return 0;
    }
    return 1;
}

static void print_padded(FILE *f, const char *s, int width, int right) {
    int pad = width - text_width(s);
    if (right) fprintf(f, "%*s%s", pad, "", s);
    else fprintf(f, "%s%*s", s, pad, "");
}

void report_table_print(const ReportTable *t, FILE *f) {
    int *width = xmalloc(sizeof(int) * (size_t)t->num_cols);
    table_widths(t, width);
    for (int r = 0; r < table_rows(t); r++) {
        for (int c = 0; c < t->num_cols; c++) {
            if (c) fputs("  ", f);
            int right = c > 0 && column_is_numeric(t, c);
            if (c == t->num_cols - 1 && !right) fputs(table_cell(t, r, c), f);   /* no trailing blanks */
            else print_padded(f, table_cell(t, r, c), width[c], right);
        }
        fputc('\n', f);
        if (r == 0) {
            int total = 0;
            for (int c = 0; c < t->num_cols; c++) total += width[c] + (c ? 2 : 0);
            for (int i = 0; i < total; i++) fputc('-', f);
            fputc('\n', f);
        }
    }
    free(width);
}

void report_table_print_markdown(const ReportTable *t, FILE *f) {
    int *width = xmalloc(sizeof(int) * (size_t)t->num_cols);
    table_widths(t, width);
    for (int r = 0; r < table_rows(t); r++) {
        fputc('|', f);
        for (int c = 0; c < t->num_cols; c++) {
            fputc(' ', f);
            print_padded(f, table_cell(t, r, c), width[c], c > 0 && column_is_numeric(t, c));
            fputs(" |", f);
        }
        fputc('\n', f);
        if (r == 0) {
            fputc('|', f);
            for (int c = 0; c < t->num_cols; c++) {
                int right = c > 0 && column_is_numeric(t, c);
                fputc(right ? ' ' : ':', f);
                for (int i = 0; i < width[c]; i++) fputc('-', f);
                fputs(right ? ":|" : " |", f);
            }
            fputc('\n', f);
        }
    }
    free(width);
}

void report_table_free(ReportTable *t) {
    if (!t) return;
    for (int i = 0; i < t->num_cells; i++) free(t->cell[i]);
    free(t->cell);
    free(t);
}

const char *report_metric_short(MetricId m) { return m == METRIC_ACC ? "acc" : metric_name(m); }

void report_task_header(const Task *t, char *out, int cap) {
    const TaskSplit *dev[TASK_MAX_SPLITS];
    int nd = task_dev_splits(t, dev, TASK_MAX_SPLITS);
    if (nd > 1 && strncmp(dev[1]->name, "dev_", 4) == 0) {  /* MNLI: one metric on two dev splits, "m/mm" */
        snprintf(out, cap, "%s (m/mm)", t->display);
        return;
    }
    if (nd > 1) {   /* qnli-9k: the primary metric on "dev/heldout" */
        int n = snprintf(out, cap, "%s (%s ", t->display, report_metric_short(t->metrics[0]));
        for (int s = 0; s < nd && n > 0 && n < cap; s++)
            n += snprintf(out + n, (size_t)(cap - n), "%s%s", s ? "/" : "", dev[s]->name);
        if (n > 0 && n < cap) snprintf(out + n, (size_t)(cap - n), ")");
        return;
    }
    if (t->metrics[1] != METRIC_NONE)
        snprintf(out, cap, "%s (%s/%s)", t->display, report_metric_short(t->metrics[0]),
                 report_metric_short(t->metrics[1]));
    else
        snprintf(out, cap, "%s (%s)", t->display, report_metric_short(t->metrics[0]));
}

void report_task_cell(ReportTable *tab, const Task *t, const cJSON *splits) {
    const TaskSplit *dev[TASK_MAX_SPLITS];
    int nd = task_dev_splits(t, dev, TASK_MAX_SPLITS);
    char buf[128] = "";
    int len = 0, any = 0;
    /* Either one split with up to two metrics or several splits with the primary. */
    for (int s = 0; s < (nd > 1 ? nd : 1); s++) {
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(splits, nd ? dev[s]->name : "dev");
        for (int k = 0; k < (nd > 1 ? 1 : 2); k++) {
            if (t->metrics[k] == METRIC_NONE) continue;
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, metric_name(t->metrics[k]));
            if (cJSON_IsNumber(v)) any = 1;
            char val[32];
            if (cJSON_IsNumber(v)) snprintf(val, sizeof val, "%.2f", v->valuedouble);
            else snprintf(val, sizeof val, "-");
            len += snprintf(buf + len, sizeof buf - (size_t)len, "%s%s", len ? "/" : "", val);
        }
    }
    report_table_add(tab, "%s", any ? buf : "-");
}

#define REPORT_MAX_RECORDS 128

static cJSON *report_glue_score_opts(const cJSON *tasks, const GlueScoreOptions *o);

cJSON *report_glue_score(const cJSON *tasks) { return report_glue_score_opts(tasks, NULL); }

cJSON *report_glue_score_with_subsets(const cJSON *tasks) {
    GlueScoreOptions o = {.qnli_9k_as_qnli = 1};
    return report_glue_score_opts(tasks, &o);
}

static cJSON *report_glue_score_opts(const cJSON *tasks, const GlueScoreOptions *o) {
    GlueRecord rec[REPORT_MAX_RECORDS];
    int n = 0;
    for (const cJSON *it = tasks ? tasks->child : NULL; it; it = it->next) {
        const Task *t = task_find(it->string);
        if (!t) continue;
        const TaskSplit *dev[TASK_MAX_SPLITS];
        int nd = task_dev_splits(t, dev, TASK_MAX_SPLITS);
        if (t->subset_of && nd > 1) nd = 1;   /* a subset's held-out slice of train is not a GLUE split */
        for (int s = 0; s < nd && n < REPORT_MAX_RECORDS; s++) {
            const cJSON *m = cJSON_GetObjectItemCaseSensitive(it, dev[s]->name);
            GlueRecord r = {.task = t->name, .split = dev[s]->name};
            for (int k = 0; k < 2 && m && t->metrics[k] != METRIC_NONE; k++) {
                const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, metric_name(t->metrics[k]));
                if (cJSON_IsNumber(v)) r.values[r.num_metrics++] = v->valuedouble / 100.0;
            }
            if (r.num_metrics) rec[n++] = r;
        }
    }
    GlueScore gs;
    if (glue_score_compute_opts(rec, n, o, &gs) != 0) return NULL;
    return glue_score_json(&gs);
}

static double json_number(const cJSON *o, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : 0.0;
}

typedef void (*NumberFormat)(double v, char *out, int cap);

static void format_plain(double v, char *out, int cap) { snprintf(out, cap, "%.0f", v); }

/* A cell from o[key] through fmt, or "-" when o has no such number. */
static void add_number(ReportTable *tab, const cJSON *o, const char *key, NumberFormat fmt) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    char buf[32] = "-";
    if (cJSON_IsNumber(v)) fmt(v->valuedouble, buf, sizeof buf);
    report_table_add(tab, "%s", buf);
}

/* "12.3 s", "4.2 min", "1.5 h": training times span seconds to days. */
static void format_seconds(double s, char *out, int cap) {
    if (s < 120) snprintf(out, cap, "%.1f s", s);
    else if (s < 7200) snprintf(out, cap, "%.1f min", s / 60);
    else snprintf(out, cap, "%.1f h", s / 3600);
}

/* "1.2M", "340k", "512": parameter counts at a glance. */
static void format_count(double n, char *out, int cap) {
    if (n >= 1e6) snprintf(out, cap, "%.1fM", n / 1e6);
    else if (n >= 1e4) snprintf(out, cap, "%.0fk", n / 1e3);
    else snprintf(out, cap, "%.0f", n);
}

/* The number of seeds a row of a compare.json is the mean of: its GLUE scores
 * per seed, else a cell's per-seed scores; 0 for the majority row (nothing
 * trained). */
static int compare_row_seeds(const cJSON *m) {
    const char *model = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "model"));
    if (model && strcmp(model, "majority") == 0) return 0;
    int n = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(m, "glue_seeds"));
    const cJSON *cells = cJSON_GetObjectItemCaseSensitive(m, "tasks");
    for (const cJSON *c = cells ? cells->child : NULL; c && n == 0; c = c->next)
        n = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(c, "seed_scores"));
    return n ? n : 1;
}

/* 1 when a row is the mean of another number of seeds than the table's: a row
 * compare kept from an earlier table (compare_merge_previous) of other seeds. */
static int compare_row_seeds_differ(const cJSON *compare, const cJSON *m) {
    int table = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(compare, "seeds")), row = compare_row_seeds(m);
    return row && row != (table ? table : 1);
}

/* A model's row name: "bert", or "bert *" when --init/--set changed its
 * settings (said under the table: report_compare_settings), and "(5 seeds)"
 * when its seeds are not the table's. */
static const char *compare_model_label(const cJSON *compare, const cJSON *m, char *out, int cap) {
    int n = compare_row_seeds(m);
    char seeds[32] = "";
    if (compare_row_seeds_differ(compare, m)) snprintf(seeds, sizeof seeds, " (%d seed%s)", n, n == 1 ? "" : "s");
    snprintf(out, cap, "%s%s%s", cJSON_GetObjectItemCaseSensitive(m, "model")->valuestring,
             cJSON_GetObjectItemCaseSensitive(m, "settings") ? " *" : "", seeds);
    return out;
}

void report_compare_settings(const cJSON *compare, FILE *f, const char *before) {
    const cJSON *models = cJSON_GetObjectItemCaseSensitive(compare, "models");
    for (const cJSON *m = models ? models->child : NULL; m; m = m->next) {
        const cJSON *sets = cJSON_GetObjectItemCaseSensitive(m, "settings");
        if (!cJSON_IsArray(sets)) continue;
        char label[256];
        fprintf(f, "%s", before);
        before = "";
        fprintf(f, "%s: its defaults with", compare_model_label(compare, m, label, sizeof label));
        for (const cJSON *s = sets->child; s; s = s->next) fprintf(f, " `%s`", cJSON_IsString(s) ? s->valuestring : "?");
        fprintf(f, " (a setting TASK.key=value applies to that task only).\n");
    }
}

/* The number of tasks a row's GLUE score averages (0: none). */
static int compare_glue_tasks(const cJSON *m) {
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(m, "glue"), "num_tasks");
    return cJSON_IsNumber(n) ? (int)n->valuedouble : 0;
}

/* 1 when some model's entry of task has test metrics (public test labels). */
static int compare_has_test(const cJSON *models, const char *task) {
    for (const cJSON *m = models->child; m; m = m->next)
        if (cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(m, "tasks"),
                                                                              task), "test"))
            return 1;
    return 0;
}

/* A test cell: the task's metrics on test, "a/b", each "± std" over seeds when there were several. */
static void compare_test_cell(ReportTable *tab, const Task *t, const cJSON *entry) {
    const cJSON *test = cJSON_GetObjectItemCaseSensitive(entry, "test");
    const cJSON *sd = cJSON_GetObjectItemCaseSensitive(entry, "test_std");
    char buf[128] = "";
    int len = 0;
    for (int k = 0; k < 2 && test && t->metrics[k] != METRIC_NONE; k++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(test, metric_name(t->metrics[k]));
        const cJSON *s = cJSON_GetObjectItemCaseSensitive(sd, metric_name(t->metrics[k]));
        if (!cJSON_IsNumber(v)) continue;
        len += snprintf(buf + len, sizeof buf - (size_t)len, "%s%.2f", len ? " / " : "", v->valuedouble);
        if (cJSON_IsNumber(s)) len += snprintf(buf + len, sizeof buf - (size_t)len, " ± %.2f", s->valuedouble);
    }
    report_table_add(tab, "%s", len ? buf : "-");
}

ReportTable *report_compare_table(const cJSON *compare) {
    const cJSON *tasks = cJSON_GetObjectItemCaseSensitive(compare, "tasks");
    const cJSON *models = cJSON_GetObjectItemCaseSensitive(compare, "models");
    int nt = cJSON_GetArraySize(tasks);
    int extra = 0;
    for (const cJSON *m = models->child; m; m = m->next)
        extra |= cJSON_GetObjectItemCaseSensitive(m, "glue_with_subsets") != NULL;
    for (const cJSON *it = tasks->child; it; it = it->next) extra += compare_has_test(models, it->valuestring);
    ReportTable *tab = report_table_create(nt + 5 + extra);
    report_table_add(tab, "Model");
    for (const cJSON *it = tasks->child; it; it = it->next) {
        char head[128];
        report_task_header(task_find(it->valuestring), head, sizeof head);
        report_table_add(tab, "%s", head);
        if (compare_has_test(models, it->valuestring)) report_table_add(tab, "%s test", head);
    }
    report_table_add(tab, "GLUE");
    int with_subsets = 0;   /* a --with qnli-9k run: the seven-task score beside */
    for (const cJSON *m = models->child; m; m = m->next)
        with_subsets |= cJSON_GetObjectItemCaseSensitive(m, "glue_with_subsets") != NULL;
    if (with_subsets) report_table_add(tab, "GLUE+QNLI-9k");
    report_table_add(tab, "Train");
    report_table_add(tab, "Eval ex/s");
    report_table_add(tab, "Params");
    int most_tasks = 0;
    for (const cJSON *m = models->child; m; m = m->next)
        if (compare_glue_tasks(m) > most_tasks) most_tasks = compare_glue_tasks(m);
    for (const cJSON *m = models->child; m; m = m->next) {
        const cJSON *per = cJSON_GetObjectItemCaseSensitive(m, "tasks");
        char label[256];
        report_table_add(tab, "%s", compare_model_label(compare, m, label, sizeof label));
        for (const cJSON *it = tasks->child; it; it = it->next) {
            const cJSON *entry = cJSON_GetObjectItemCaseSensitive(per, it->valuestring);
            report_task_cell(tab, task_find(it->valuestring), entry);
            if (compare_has_test(models, it->valuestring)) compare_test_cell(tab, task_find(it->valuestring), entry);
        }
        const cJSON *g = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(m, "glue"), "glue_score");
        const cJSON *gsd = cJSON_GetObjectItemCaseSensitive(m, "glue_std");
        /* A row over fewer tasks than the others (a model that cannot learn one) says so: not comparable. */
        int nt_row = compare_glue_tasks(m);
        char fewer[32] = "";
        if (nt_row > 0 && nt_row < most_tasks) snprintf(fewer, sizeof fewer, " (%d task%s)", nt_row, nt_row == 1 ? "" : "s");
        if (cJSON_IsNumber(g) && cJSON_IsNumber(gsd))   /* several seeds: the mean and its spread */
            report_table_add(tab, "%.2f ± %.2f%s", g->valuedouble, gsd->valuedouble, fewer);
        else if (fewer[0] && cJSON_IsNumber(g))
            report_table_add(tab, "%.2f%s", g->valuedouble, fewer);
        else
            report_table_add_metric(tab, g);
        if (with_subsets)
            report_table_add_metric(tab, cJSON_GetObjectItemCaseSensitive(
                                             cJSON_GetObjectItemCaseSensitive(m, "glue_with_subsets"), "glue_score"));
        add_number(tab, m, "train_seconds", format_seconds);
        add_number(tab, m, "eval_examples_per_sec", format_plain);
        add_number(tab, m, "num_params", format_count);
    }
    return tab;
}

ReportTable *report_compare_costs(const cJSON *compare) {
    static const char *const HEAD[] = {"Model", "Task", "Best epoch", "Train", "Eval ex/s", "Params", "Run"};
    ReportTable *tab = report_table_create(7);
    for (int c = 0; c < 7; c++) report_table_add(tab, "%s", HEAD[c]);
    const cJSON *models = cJSON_GetObjectItemCaseSensitive(compare, "models");
    for (const cJSON *m = models->child; m; m = m->next) {
        const cJSON *per = cJSON_GetObjectItemCaseSensitive(m, "tasks");
        for (const cJSON *t = per->child; t; t = t->next) {
            const cJSON *reused = cJSON_GetObjectItemCaseSensitive(t, "reused");
            char label[256];
            report_table_add(tab, "%s", compare_model_label(compare, m, label, sizeof label));
            const Task *known = task_find(t->string);   /* a user's dataset of an earlier compare: its name */
            report_table_add(tab, "%s", known ? known->display : t->string);
            add_number(tab, t, "best_epoch", format_plain);
            add_number(tab, t, "train_seconds", format_seconds);
            add_number(tab, t, "eval_examples_per_sec", format_plain);
            add_number(tab, t, "num_params", format_count);
            report_table_add(tab, "%s", !reused ? "computed" : cJSON_IsTrue(reused) ? "reused" : "trained");
        }
    }
    return tab;
}

static void markdown_task_list(FILE *f, const char *label, const cJSON *arr) {
    if (!cJSON_GetArraySize(arr)) return;
    fprintf(f, "%s", label);
    for (const cJSON *it = arr->child; it; it = it->next) {
        const Task *t = task_find(it->valuestring);
        fprintf(f, "%s%s", it == arr->child ? " " : ", ", t ? t->display : it->valuestring);
    }
    fprintf(f, ".\n");
}

/* 1 when every task of the list is GLUE's (an official task or a subset of one). */
static int tasks_all_glue(const cJSON *tasks) {
    for (const cJSON *it = tasks ? tasks->child : NULL; it; it = it->next) {
        const Task *t = cJSON_IsString(it) ? task_find(it->valuestring) : NULL;
        if (!t || t < TASKS || t >= TASKS + NUM_TASKS) {
            if (!t || t < SUBSET_TASKS || t >= SUBSET_TASKS + NUM_SUBSET_TASKS) return 0;
        }
    }
    return 1;
}

/* "by `command` (glue COMMIT, DATE, CPU)" of a made_by record, or what to say
 * of a record from before rows kept one. */
static void compare_print_maker(FILE *f, const cJSON *by) {
    const char *its = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(by, "command"));
    if (!its) {
        fprintf(f, "(made before rows recorded their command)");
        return;
    }
    const char *commit = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(by, "commit"));
    const char *date = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(by, "date"));
    const char *cpu = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(by, "cpu"));
    fprintf(f, "by `%s` (glue %s, %s, %s)", its, commit ? commit : "?", date ? date : "?", cpu ? cpu : "?");
}

/* The rows this table's command did not make (compare keeps the rows it does
 * not compute), each with what made it, then the cells a recomputed row took
 * from an earlier table ("cells_kept", compare_merge_previous), each with
 * what made it; a row from before rows recorded it (no "made_by") says so. */
static void compare_kept_rows(const cJSON *compare, FILE *f) {
    const char *command = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(compare, "command"));
    const char *when = cJSON_GetStringValue(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(compare, "provenance"), "date"));
    if (!command || !when) return;   /* a table from before tables said what made them */
    const cJSON *models = cJSON_GetObjectItemCaseSensitive(compare, "models");
    const char *sep = " Rows kept from earlier tables of this results folder (compare keeps the rows it does not "
                      "compute): ";
    int any = 0;
    for (const cJSON *m = models ? models->child : NULL; m; m = m->next) {
        const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "model"));
        if (!name || strcmp(name, "majority") == 0) continue;   /* always computed */
        const cJSON *by = cJSON_GetObjectItemCaseSensitive(m, "made_by");
        const char *its = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(by, "command"));
        const char *date = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(by, "date"));
        if (its && date && strcmp(its, command) == 0 && strcmp(date, when) == 0) continue;   /* made by this one */
        char label[256];
        fprintf(f, "%s%s ", sep, compare_model_label(compare, m, label, sizeof label));
        sep = "; ";
        any = 1;
        compare_print_maker(f, by);
    }
    if (any) fprintf(f, ".");
    sep = " Cells kept inside rows from earlier tables (a task the row's own command did not run): ";
    any = 0;
    for (const cJSON *m = models ? models->child : NULL; m; m = m->next) {
        const cJSON *cells = cJSON_GetObjectItemCaseSensitive(m, "cells_kept");
        for (const cJSON *c = cJSON_IsObject(cells) ? cells->child : NULL; c; c = c->next) {
            const Task *t = task_find(c->string);
            char label[256];
            fprintf(f, "%s%s on %s ", sep, compare_model_label(compare, m, label, sizeof label),
                    t ? t->display : c->string);
            sep = "; ";
            any = 1;
            compare_print_maker(f, c);
        }
    }
    if (any) fprintf(f, ".");
}

void report_compare_markdown(const cJSON *compare, FILE *f) {
    /* GoEmotions or a user's dataset is not GLUE: the title says dev sets only. */
    int glue = tasks_all_glue(cJSON_GetObjectItemCaseSensitive(compare, "tasks"));
    fprintf(f, "# Model comparison on %sdev sets\n\n", glue ? "GLUE " : "");
    const char *command = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(compare, "command"));
    if (command) fprintf(f, "Made by `%s`.\n", command);   /* tables written before it was kept have none */
    markdown_task_list(f, "Tasks run (dev split, metrics ×100):", cJSON_GetObjectItemCaseSensitive(compare, "tasks"));
    markdown_task_list(f, "Not run (data not present):", cJSON_GetObjectItemCaseSensitive(compare, "tasks_missing"));
    const cJSON *seeds = cJSON_GetObjectItemCaseSensitive(compare, "seeds");
    if (cJSON_GetArraySize(seeds) > 1) {
        fprintf(f, "Seeds");
        for (const cJSON *s = seeds->child; s; s = s->next) fprintf(f, "%s%.0f", s == seeds->child ? " " : ", ", s->valuedouble);
        fprintf(f, ": every cell is the mean over the seeds (each seed's best epoch on dev); GLUE: the mean of "
                   "the seeds' GLUE scores ± their standard deviation.");
    } else {
        fprintf(f, "Seed %.0f.", json_number(compare, "seed"));
    }
    fprintf(f, " GLUE score: mean of the task scores over the tasks run (a task's score is the mean "
               "of its metrics; MNLI m/mm count as one task).");
    const cJSON *tl = cJSON_GetObjectItemCaseSensitive(compare, "tasks");
    for (const cJSON *it = tl ? tl->child : NULL; it; it = it->next)
        if (strcmp(it->valuestring, "qnli-9k") == 0)
            fprintf(f, " GLUE+QNLI-9k: the same with the QNLI subset task (trained on 8,999 of QNLI's 104,743 "
                       "training pairs, scored on the official dev) counted as QNLI; the GLUE column leaves it out.");
    int test = 0;
    for (const cJSON *it = tl ? tl->child : NULL; it; it = it->next)
        test |= compare_has_test(cJSON_GetObjectItemCaseSensitive(compare, "models"), it->valuestring);
    if (test)
        fprintf(f, " A \"test\" column: the same runs scored on the task's test split (its labels are public), "
                   "each under its own prediction rule (thresholds chosen on dev, never on test)%s.",
                cJSON_GetArraySize(seeds) > 1 ? ", the mean over the seeds ± their standard deviation" : "");
    int kept = 0;
    for (const cJSON *m = cJSON_GetObjectItemCaseSensitive(compare, "models")->child; m; m = m->next)
        kept |= compare_row_seeds_differ(compare, m);
    if (kept)
        fprintf(f, " A row marked \"(N seeds)\": the mean of its own N seeds, kept from an earlier table of this "
                   "results folder (compare keeps the rows it does not compute).");
    compare_kept_rows(compare, f);
    fprintf(f, "\n\n");
    ReportTable *tab = report_compare_table(compare);
    report_table_print_markdown(tab, f);
    report_table_free(tab);
    report_compare_settings(compare, f, "\n");
    const cJSON *wnli = cJSON_GetObjectItemCaseSensitive(compare, "wnli_majority");
    if (wnli)
        fprintf(f, "\nWNLI: the majority class gets %.2f accuracy on dev (the GLUE baselines predict it, since "
                   "models trained on WNLI's adversarial train set score below it).\n",
                json_number(wnli, "accuracy"));
    fprintf(f, "\n## Cost per task\n\nTrain: wall-clock training time (without evaluation; a run through an "
               "intermediate task adds that stage's). Eval ex/s: dev examples predicted per second.\n\n");
    tab = report_compare_costs(compare);
    report_table_print_markdown(tab, f);
    report_table_free(tab);
}
