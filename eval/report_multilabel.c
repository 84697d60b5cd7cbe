/* report_multilabel.c — per-label F1 bars and the threshold curve of a
 * multi-label run (see report_multilabel.h). */
#include "eval/report_multilabel.h"

#include "core/common.h"
#include "eval/svg_plot.h"
#include "metrics/multilabel.h"
#include "metrics/thresholds.h"
#include "train/decision.h"

#include <stdlib.h>

#define CURVE_W 560
#define CURVE_H 360
#define CURVE_MAX 32

/* Micro-F1 (×100) of one global threshold over the grid, as a curve. */
static void report_threshold_curve(ReportPage *p, const Task *t, const float *prob, const uint8_t *gold, int n,
                                   const char *id, const char *title) {
    float grid[CURVE_MAX];
    double f1[CURVE_MAX], x[CURVE_MAX];
    int ng = thresholds_grid(0.05, 0.95, 0.05, grid, CURVE_MAX);
    thresholds_micro_f1_curve(prob, gold, n, t->num_labels, grid, ng, f1);
    int best = 0;
    for (int i = 0; i < ng; i++) {
        x[i] = grid[i];
        f1[i] *= 100;
        if (f1[i] > f1[best]) best = i;
    }
    char cid[300], full[700];
    snprintf(cid, sizeof cid, "threshold-%s", id);
    snprintf(full, sizeof full, "%s: dev micro-F1 against one threshold for every label", title);
    SvgChart c;
    fprintf(p->f, "<figure class=\"chart-box\">\n");
    svg_chart_begin(&c, p->f, cid, "curve", full, CURVE_W, CURVE_H, 0, 1, 0, 100, "threshold (a label is predicted "
                    "when its probability reaches it)", "micro-F1 on dev (×100)", SVG_VALUE_PERCENT);
    svg_chart_line(&c, 0, "micro-F1", x, f1, ng, 1, "%.2f", "%.2f");
    svg_chart_end(&c);
    fprintf(p->f, "<figcaption>");
    report_page_text(p, full);
    fprintf(p->f, ": best ");
    report_page_num(p, f1[best], 2);
    fprintf(p->f, " at ");
    report_page_num(p, x[best], 2);
    fprintf(p->f, " (chosen on dev: an upper bound for test).</figcaption>\n</figure>\n");
}

void report_multilabel_dev(ReportPage *p, const Task *t, const Dataset *d, const float *prob, const Decision *rule,
                           const char *id, const char *title) {
    int n = d->n, K = t->num_labels;
    uint8_t *gold = decision_gold(d, K), *pred = xmalloc((size_t)(n ? n : 1) * (size_t)K);
    decision_apply(rule, prob, n, pred);
    LabelScore ls[TASK_MAX_LABELS];
    MultiLabelScores s;
    multilabel_score(pred, gold, n, K, &s, ls);
    const char *rows[TASK_MAX_LABELS];
    double value[TASK_MAX_LABELS];
    for (int k = 0; k < K; k++) rows[k] = task_label_name(t, k), value[k] = 100 * ls[k].f1;
    char bid[300], full[700];
    snprintf(bid, sizeof bid, "labels-%s", id);
    snprintf(full, sizeof full, "%s: dev F1 of each label (%s)", title,
             rule->rule == DECISION_TUNED ? "thresholds tuned on dev" : rule->rule == DECISION_TOP_K ? "top-k" : "one threshold");
    const char *series[1] = {"F1"};
    fprintf(p->f, "<figure class=\"chart-box\">\n");
    svg_hbars(p->f, bid, full, rows, K, series, 1, value, NULL, "F1 on dev (×100)", NULL, SVG_VALUE_PERCENT);
    fprintf(p->f, "<figcaption>");
    report_page_text(p, full);
    fprintf(p->f, ": macro-F1 ");
    report_page_num(p, 100 * s.macro.f1, 2);
    fprintf(p->f, ", micro-F1 ");
    report_page_num(p, 100 * s.micro.f1, 2);
    fprintf(p->f, ", %ld of %d rows with no label predicted.</figcaption>\n</figure>\n", s.empty_predictions, n);
    report_threshold_curve(p, t, prob, gold, n, id, title);
    free(gold);
    free(pred);
}
