/* report_dev.c — where each run goes right and wrong on dev: a confusion
 * matrix per classification run, predicted against gold similarity for STS-B,
 * per-label F1 bars and the threshold curve of a multi-label run
 * (report_multilabel.h).
 *
 * Runs do not store their dev predictions, so they are made here, at report
 * time, the way `glue eval` makes them: the run's model.ckpt is loaded and the
 * task's dev split (from $GLUE_DATA or data/glue) predicted through the
 * shared evaluation code (train/evaluate.h). The metrics of those
 * predictions are shown beside the ones results.json recorded, so a
 * checkpoint or data set that changed since training shows up as a
 * difference instead of passing silently. */
#include "eval/report_sections.h"

#include "core/common.h"
#include "core/files.h"
#include "eval/report_multilabel.h"
#include "eval/svg_plot.h"
#include "train/decision.h"
#include "train/evaluate.h"
#include "models/model.h"
#include "train/run_dir.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SCATTER_W 560
#define SCATTER_H 420

/* "metric X (results.json: Y)" for each metric of the fresh predictions. */
static void dev_metrics_line(ReportPage *p, const cJSON *fresh, const cJSON *recorded) {
    fprintf(p->f, "<p class=\"note\">From these predictions: ");
    int first = 1, differs = 0;
    for (const cJSON *m = fresh ? fresh->child : NULL; m; m = m->next, first = 0) {
        double r = report_num(recorded, m->string);
        fprintf(p->f, "%s", first ? "" : ", ");
        report_page_text(p, m->string);
        fprintf(p->f, " ");
        report_page_num(p, m->valuedouble, 2);
        if (isfinite(r)) {
            fprintf(p->f, " (results.json: ");
            report_page_num(p, r, 2);
            fprintf(p->f, ")");
            differs |= fabs(r - m->valuedouble) > 0.005;
        }
    }
    fprintf(p->f, ".%s</p>\n", differs ? " <strong class=\"warn\">These differ from what the run recorded: the "
                                         "checkpoint or the dev data changed since training.</strong>" : "");
}

static void confusion_table(ReportPage *p, const Task *t, const Dataset *d, const float *out, const char *id,
                            const char *caption) {
    int K = t->num_labels;
    long count[TASK_MAX_LABELS][TASK_MAX_LABELS] = {{0}}, row[TASK_MAX_LABELS] = {0};
    for (int i = 0; i < d->n; i++) {
        int g = d->ex[i].label, q = evaluate_argmax(out + (size_t)i * (size_t)K, K);
        if (g < 0 || g >= K) continue;
        count[g][q]++;
        row[g]++;
    }
    FILE *f = p->f;
    fprintf(f, "<figure class=\"chart-box\">\n<table class=\"confusion\" id=\"%s\">\n<caption>", id);
    report_page_text(p, caption);
    fprintf(f, "</caption>\n<thead><tr><th rowspan=\"2\" scope=\"col\">gold label</th><th colspan=\"%d\" "
               "scope=\"colgroup\">predicted label</th></tr>\n<tr>", K);
    for (int q = 0; q < K; q++) {
        fprintf(f, "<th scope=\"col\">");
        report_page_text(p, t->labels[q]);
        fprintf(f, "</th>");
    }
    fprintf(f, "</tr></thead>\n<tbody>\n");
    for (int g = 0; g < K; g++) {
        fprintf(f, "<tr><th scope=\"row\">");
        report_page_text(p, t->labels[g]);
        fprintf(f, " <span class=\"note\">(%ld)</span></th>", row[g]);
        for (int q = 0; q < K; q++) {
            double frac = row[g] ? (double)count[g][q] / (double)row[g] : 0;
            /* Shade by the share of the gold row: blue (#0072B2) at full strength. */
            fprintf(f, "<td class=\"%s\" style=\"background: rgba(0, 114, 178, %.2f); color: %s\" "
                       "title=\"gold %s, predicted %s: %ld of %ld (%.1f%%)\"><data value=\"%ld\">%ld</data>"
                       "<br><span class=\"share\">%.1f%%</span></td>",
                    g == q ? "diag" : "off", 0.08 + 0.8 * frac, frac > 0.55 ? "#fff" : "#000", t->labels[g],
                    t->labels[q], count[g][q], row[g], 100 * frac, count[g][q], count[g][q], 100 * frac);
        }
        fprintf(f, "</tr>\n");
    }
    fprintf(f, "</tbody>\n</table>\n<figcaption>Rows: gold label (examples); cells: count and share of the row. "
               "Darker: a larger share.</figcaption>\n</figure>\n");
}

static void stsb_scatter(ReportPage *p, const Dataset *d, const float *out, const char *id, const char *title) {
    double *gold = xmalloc(sizeof(double) * (size_t)(d->n ? d->n : 1));
    double *pred = xmalloc(sizeof(double) * (size_t)(d->n ? d->n : 1));
    double lo = 0, hi = 5;
    for (int i = 0; i < d->n; i++) {
        gold[i] = d->ex[i].score;
        pred[i] = out[i];
        if (pred[i] < lo) lo = pred[i];
        if (pred[i] > hi) hi = pred[i];
    }
    double r = metric_pearson(pred, gold, d->n);
    SvgChart c;
    fprintf(p->f, "<figure class=\"chart-box\">\n");
    char full[700];
    snprintf(full, sizeof full, "%s (Pearson r = %.4f)", title, r);
    svg_chart_begin(&c, p->f, id, "scatter", full, SCATTER_W, SCATTER_H, 0, 5, lo, hi,
                    "gold similarity (0-5, human rating)", "predicted similarity (0-5)", 0);
    svg_chart_refline(&c, 0, 0, 5, 5);
    svg_chart_points(&c, 0, gold, pred, d->n, 2.2, 0.35);
    const char *names[2] = {"one dev pair", "y = x (perfect prediction)"};
    int styles[2] = {0, -1}, kinds[2] = {SVG_LEGEND_POINT, SVG_LEGEND_LINE};
    svg_chart_legend(&c, names, styles, kinds, 2);
    svg_chart_end(&c);
    fprintf(p->f, "<figcaption>");
    report_page_text(p, title);
    fprintf(p->f, ": Pearson r = ");
    report_page_num(p, 100 * r, 2);
    fprintf(p->f, " (×100) over ");
    report_page_num(p, d->n, 0);
    fprintf(p->f, " pairs.</figcaption>\n</figure>\n");
    free(gold);
    free(pred);
}

/* Dev predictions of one run; a sentence saying why not when they cannot be made. */
static void run_dev(ReportPage *p, const ReportInput *in, int predict) {
    const cJSON *jt = cJSON_GetObjectItemCaseSensitive(in->json, "task");
    const cJSON *jm = cJSON_GetObjectItemCaseSensitive(in->json, "model");
    const Task *t = cJSON_IsString(jt) ? task_find(jt->valuestring) : NULL;
    if (!t) return;   /* translation runs and the like */
    const ModelOps *ops = cJSON_IsString(jm) ? model_find(jm->valuestring) : NULL;
    char why[1024] = "", ckpt[4096], datafile[4096];
    const TaskSplit *dev = task_dev_split(t);
    if (in->dir) file_join(in->dir, RUN_CKPT, ckpt, sizeof ckpt);
    if (!predict) snprintf(why, sizeof why, "not made (--no-predict)");
    else if (!in->dir) snprintf(why, sizeof why, "a results file without its run directory (no model.ckpt)");
    else if (!ops) snprintf(why, sizeof why, "model '%s' is not built into this binary",
                            cJSON_IsString(jm) ? jm->valuestring : "?");
    else if (!file_exists(ckpt)) snprintf(why, sizeof why, "%.900s does not exist", ckpt);
    else if (!dev || task_split_path(t, dev, task_data_root(), datafile, sizeof datafile) != 0)
        snprintf(why, sizeof why, "no %s dev data under %s (glue data fetch %s)", t->display, task_data_root(),
                 t->name);
    char slug[256], id[300], title[600];
    report_page_slug(in->name, slug, sizeof slug);
    snprintf(title, sizeof title, "%s dev, %s (%s)", t->display, ops ? ops->name : "?", in->name);
    report_page_sourced(p, "<div class=\"run\">\n<h3>", title, in->source);
    fprintf(p->f, "</h3>\n");
    Dataset d = {0};
    Model *m = NULL;
    float *out = NULL;
    if (!why[0] && task_load(t, dev->name, task_data_root(), 0, &d) != 0)
        snprintf(why, sizeof why, "%.900s could not be read (the error is above)", datafile);
    if (!why[0] && !(m = ops->load(ckpt, t))) snprintf(why, sizeof why, "%.900s could not be loaded", ckpt);
    if (!why[0] && !(out = evaluate_predict_dataset(ops, m, &d, EVALUATE_BATCH_DEFAULT, NULL)))
        snprintf(why, sizeof why, "the model could not encode %.900s", datafile);
    if (why[0]) {
        fprintf(p->f, "<p class=\"missing\">No dev predictions: ");
        report_page_text(p, why);
        fprintf(p->f, ".</p>\n");
        if (predict) report_page_missing(p, "%s: no dev predictions: %s", in->name, why);
    } else {
        Decision rule;   /* a multi-label run's rule, its tuned thresholds included */
        if (decision_of_run(&rule, t, in->dir) != 0) decision_default(&rule, t->num_labels);
        cJSON *fresh = evaluate_metrics_rule(t, &d, out, &rule);
        const cJSON *best = cJSON_GetObjectItemCaseSensitive(in->json, "best");
        dev_metrics_line(p, fresh, cJSON_GetObjectItemCaseSensitive(best, dev->name));
        cJSON_Delete(fresh);
        if (t->multi_label) {
            report_multilabel_dev(p, t, &d, out, &rule, slug, title);
        } else if (t->num_labels > 1) {
            snprintf(id, sizeof id, "confusion-%s", slug);
            char cap[64];
            snprintf(cap, sizeof cap, "%d dev examples", d.n);
            confusion_table(p, t, &d, out, id, cap);
        } else {
            snprintf(id, sizeof id, "scatter-%s", slug);
            stsb_scatter(p, &d, out, id, title);
        }
    }
    fprintf(p->f, "</div>\n");
    free(out);
    if (m) ops->free(m);
    dataset_free(&d);
}

void report_section_dev(ReportPage *p, const ReportInputs *in, int predict) {
    fprintf(p->f, "<section id=\"dev\">\n<h2>Dev predictions</h2>\n<p class=\"note\">Made now from each run's "
                  "model.ckpt and the task's dev split, as <code>glue eval</code> does.</p>\n<div class=\"grid\">\n");
    int n = 0;
    for (int i = 0; i < in->n; i++)
        if (in->in[i].kind == REPORT_IN_RUN && in->in[i].from_runs) {
            run_dev(p, &in->in[i], predict);
            n++;
        }
    if (!n)
        fprintf(p->f, "<p class=\"missing\">No run directories with a results.json in the runs directory: no "
                      "confusion matrices or STS-B scatter. <code>glue finetune TASK</code> makes one.</p>\n");
    fprintf(p->f, "</div>\n</section>\n");
}
