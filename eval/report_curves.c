/* report_curves.c — learning curves of the report.
 *
 * Fine-tuning and translation runs (results.json "epochs"): per epoch, the
 * training loss (and the dev loss where recorded) in one chart, the dev
 * metrics (or dev BLEU) in another. The trainer logs per epoch only; per-step
 * curves come from pretraining runs, whose log.jsonl has a record every
 * log_every steps (loss, mlm_acc, tokens) and a held-out record every
 * eval_every steps (eval_loss, eval_acc, same step): loss and accuracy
 * against tokens seen, training and held-out in one chart each; then the
 * pretraining screens' table (report_protocol.c). */
#include "eval/report_sections.h"

#include "core/common.h"
#include "core/lines.h"
#include "eval/svg_plot.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CURVE_W 560
#define CURVE_H 300
#define CURVE_MAX_SERIES 6

/* Series of a chart: names and (x, y) arrays of one length. */
typedef struct Curves {
    int n, ns;
    double *x;
    double *y[CURVE_MAX_SERIES];
    char name[CURVE_MAX_SERIES][64];
} Curves;

static void curves_init(Curves *c, int n) {
    *c = (Curves){.n = n, .x = xcalloc((size_t)(n ? n : 1), sizeof(double))};
}

/* Series named `name`, created (all NaN) when new; NULL when full. */
static double *curves_series(Curves *c, const char *name) {
    for (int s = 0; s < c->ns; s++)
        if (strcmp(c->name[s], name) == 0) return c->y[s];
    if (c->ns == CURVE_MAX_SERIES) return NULL;
    snprintf(c->name[c->ns], sizeof c->name[c->ns], "%s", name);
    double *y = xmalloc(sizeof(double) * (size_t)(c->n ? c->n : 1));
    for (int i = 0; i < c->n; i++) y[i] = NAN;
    return c->y[c->ns++] = y;
}

static void curves_free(Curves *c) {
    free(c->x);
    for (int s = 0; s < c->ns; s++) free(c->y[s]);
}

static void curves_range(const Curves *c, double *xlo, double *xhi, double *ylo, double *yhi) {
    *xlo = *ylo = INFINITY, *xhi = *yhi = -INFINITY;
    for (int s = 0; s < c->ns; s++)
        for (int i = 0; i < c->n; i++) {
            if (!isfinite(c->x[i]) || !isfinite(c->y[s][i])) continue;
            if (c->x[i] < *xlo) *xlo = c->x[i];
            if (c->x[i] > *xhi) *xhi = c->x[i];
            if (c->y[s][i] < *ylo) *ylo = c->y[s][i];
            if (c->y[s][i] > *yhi) *yhi = c->y[s][i];
        }
}

/* One chart of c, or a sentence saying there is nothing to draw. flags:
 * SVG_X_*, SVG_VALUE_PERCENT; markers: per-series flag (NULL: all). */
static void curves_chart(ReportPage *p, const Curves *c, const char *id, const char *title, const char *xlabel,
                         const char *ylabel, int flags, const int *markers, const char *xfmt, const char *yfmt) {
    double xlo, xhi, ylo, yhi;
    curves_range(c, &xlo, &xhi, &ylo, &yhi);
    fprintf(p->f, "<figure class=\"chart-box\">\n");
    if (!isfinite(xlo)) {
        fprintf(p->f, "<p class=\"missing\" id=\"%s\">", id);
        report_page_text(p, title);
        fprintf(p->f, ": no values recorded.</p>\n</figure>\n");
        return;
    }
    SvgChart ch;
    svg_chart_begin(&ch, p->f, id, "curve", title, CURVE_W, CURVE_H, xlo, xhi, ylo, yhi, xlabel, ylabel, flags);
    const char *names[CURVE_MAX_SERIES];
    int styles[CURVE_MAX_SERIES];
    for (int s = 0; s < c->ns; s++) {
        svg_chart_line(&ch, s, c->name[s], c->x, c->y[s], c->n, markers ? markers[s] : 1, xfmt, yfmt);
        names[s] = c->name[s];
        styles[s] = s;
    }
    svg_chart_legend(&ch, names, styles, markers, c->ns);
    svg_chart_end(&ch);
    fprintf(p->f, "<figcaption>");
    report_page_text(p, title);
    fprintf(p->f, "</figcaption>\n</figure>\n");
}

/* ---- fine-tuning and translation runs ---- */

/* Losses and dev metrics of a run's epochs. */
static void run_curves(const cJSON *epochs, Curves *loss, Curves *dev) {
    int n = cJSON_GetArraySize(epochs), i = 0;
    curves_init(loss, n);
    curves_init(dev, n);
    for (const cJSON *e = epochs ? epochs->child : NULL; e; e = e->next, i++) {
        loss->x[i] = dev->x[i] = report_num(e, "epoch");
        double l = report_num(e, "loss");
        if (!isfinite(l)) l = report_num(e, "train_loss");
        double *y;
        if (isfinite(l) && (y = curves_series(loss, "training loss"))) y[i] = l;
        if (isfinite(report_num(e, "dev_loss")) && (y = curves_series(loss, "dev loss"))) y[i] = report_num(e, "dev_loss");
        if (isfinite(report_num(e, "dev_bleu")) && (y = curves_series(dev, "dev BLEU"))) y[i] = report_num(e, "dev_bleu");
        for (const cJSON *split = report_members(e); split; split = split->next) {
            if (!cJSON_IsObject(split)) continue;
            for (const cJSON *m = split->child; m; m = m->next) {
                char name[64];
                snprintf(name, sizeof name, "%s %s", split->string, m->string);
                if (cJSON_IsNumber(m) && (y = curves_series(dev, name))) y[i] = m->valuedouble;
            }
        }
    }
}

static void run_figures(ReportPage *p, const ReportInput *in) {
    const cJSON *j = in->json;
    const cJSON *task = cJSON_GetObjectItemCaseSensitive(j, "task"), *model = cJSON_GetObjectItemCaseSensitive(j, "model");
    const char *tname = cJSON_IsString(task) ? task->valuestring : "?";
    const char *mname = cJSON_IsString(model) ? model->valuestring : strcmp(tname, "translation") ? "?" : "seq2seq";
    char slug[256], id[300], title[512];
    report_page_slug(in->name, slug, sizeof slug);
    fprintf(p->f, "<div class=\"run\">\n<h3>");
    report_page_printf(p, "%s, %s: %s", tname, mname, in->name);
    report_page_fnref(p, in->source);
    fprintf(p->f, "</h3>\n<p class=\"note\">");
    const cJSON *best = cJSON_GetObjectItemCaseSensitive(j, "best");
    double be = report_num(best, "epoch"), secs = report_num(j, "train_seconds");
    if (isfinite(be)) {
        fprintf(p->f, "Best epoch (the checkpoint kept): ");
        report_page_num(p, be, 0);
        fprintf(p->f, ". ");
    }
    if (isfinite(secs)) {
        fprintf(p->f, "Training time: ");
        report_page_num(p, secs, 1);
        fprintf(p->f, " s. ");
    }
    fprintf(p->f, "Selection: ");
    const cJSON *sel = cJSON_GetObjectItemCaseSensitive(j, "selection");
    report_page_text(p, cJSON_IsString(sel) ? sel->valuestring : "not recorded");
    fprintf(p->f, ".</p>\n<div class=\"grid\">\n");
    Curves loss, dev;
    run_curves(cJSON_GetObjectItemCaseSensitive(j, "epochs"), &loss, &dev);
    snprintf(id, sizeof id, "curve-loss-%s", slug);
    snprintf(title, sizeof title, "%s %s (%s): loss per epoch", tname, mname, in->name);
    curves_chart(p, &loss, id, title, "epoch", "loss (mean per example)", SVG_X_INTEGER, NULL, "epoch %.0f", "%.4f");
    snprintf(id, sizeof id, "curve-dev-%s", slug);
    snprintf(title, sizeof title, "%s %s (%s): dev metrics per epoch", tname, mname, in->name);
    int bleu = dev.ns > 0 && strcmp(dev.name[0], "dev BLEU") == 0;
    curves_chart(p, &dev, id, title, "epoch", bleu ? "BLEU (points)" : "dev metric (×100)",
                 SVG_X_INTEGER | SVG_VALUE_PERCENT, NULL, "epoch %.0f", "%.2f");
    fprintf(p->f, "</div>\n</div>\n");
    curves_free(&loss);
    curves_free(&dev);
}

/* fn for every input of a kind; returns how many there were. */
static int each_input(ReportPage *p, const ReportInputs *in, ReportInputKind kind,
                      void (*fn)(ReportPage *, const ReportInput *)) {
    int n = 0;
    for (int i = 0; i < in->n; i++)
        if (in->in[i].kind == kind) fn(p, &in->in[i]), n++;
    return n;
}

void report_section_curves(ReportPage *p, const ReportInputs *in) {
    fprintf(p->f, "<section id=\"curves\">\n<h2>Learning curves</h2>\n");
    if (!each_input(p, in, REPORT_IN_RUN, run_figures)) {
        fprintf(p->f, "<p class=\"missing\">No run results (results.json with epochs) in the runs or results "
                      "directory: no learning curves. <code>glue finetune TASK</code> makes one.</p>\n");
        report_page_missing(p, "no finished runs: no learning curves (glue finetune TASK makes one)");
    }
    fprintf(p->f, "</section>\n");
}

/* ---- pretraining ---- */

typedef struct PretrainLog {
    Curves loss, acc;
    long lines, bad;
} PretrainLog;

/* Tokens seen at `step`: the training record of that step, else the nearest
 * earlier one scaled by steps (held-out records carry no token count). */
static double tokens_at(const double *steps, const double *tokens, int n, double step) {
    int best = -1;
    for (int i = 0; i < n; i++)
        if (isfinite(tokens[i]) && steps[i] <= step && (best < 0 || steps[i] > steps[best])) best = i;
    if (best < 0) return NAN;
    return steps[best] == step || steps[best] <= 0 ? tokens[best] : tokens[best] * step / steps[best];
}

/* Reads the log into curves; -1 with why when it cannot be read at all. */
static int pretrain_read(const char *path, PretrainLog *lg, char *why, size_t cap) {
    LineReader r;
    lg->lines = lg->bad = 0;
    if (lines_open(&r, path) != LINES_OK) {
        snprintf(why, cap, "%s", r.err);
        curves_init(&lg->loss, 0);
        curves_init(&lg->acc, 0);
        lines_close(&r);
        return -1;
    }
    int cap_rec = 1024, n = 0;
    double *step = xmalloc(sizeof(double) * (size_t)cap_rec), *tok = xmalloc(sizeof(double) * (size_t)cap_rec);
    double *v[4];
    for (int k = 0; k < 4; k++) v[k] = xmalloc(sizeof(double) * (size_t)cap_rec);
    static const char *const KEYS[4] = {"loss", "mlm_acc", "eval_loss", "eval_acc"};
    char *line;
    size_t len;
    int rc, electra = 0;
    while ((rc = lines_next(&r, &line, &len)) == 1) {
        lg->lines++;
        cJSON *j = cJSON_Parse(line);
        if (!cJSON_IsObject(j) || !isfinite(report_num(j, "step"))) {
            lg->bad++;
            cJSON_Delete(j);
            continue;
        }
        if (n == cap_rec) {
            cap_rec *= 2;
            step = xrealloc(step, sizeof(double) * (size_t)cap_rec);
            tok = xrealloc(tok, sizeof(double) * (size_t)cap_rec);
            for (int k = 0; k < 4; k++) v[k] = xrealloc(v[k], sizeof(double) * (size_t)cap_rec);
        }
        step[n] = report_num(j, "step");
        tok[n] = report_num(j, "tokens");
        for (int k = 0; k < 4; k++) v[k][n] = report_num(j, KEYS[k]);
        /* ELECTRA: "loss" is generator + 50 x discriminator; the masked LM the
         * held-out numbers measure is the generator's. */
        double gen = report_num(j, "gen_loss");
        if (isfinite(gen)) {
            v[0][n] = gen;
            electra = 1;
        }
        n++;
        cJSON_Delete(j);
    }
    if (rc < 0) snprintf(why, cap, "%s", r.err);
    lines_close(&r);
    curves_init(&lg->loss, n);
    curves_init(&lg->acc, n);
    double *tl = NULL, *hl = NULL, *ta = NULL, *ha = NULL;
    const char *train = electra ? "training: the ELECTRA generator (per logged step)" : "training (per logged step)";
    for (int i = 0; i < n; i++) {
        lg->loss.x[i] = lg->acc.x[i] = isfinite(tok[i]) ? tok[i] : tokens_at(step, tok, n, step[i]);
        if (isfinite(v[0][i]) && (tl || (tl = curves_series(&lg->loss, train)))) tl[i] = v[0][i];
        if (isfinite(v[2][i]) && (hl || (hl = curves_series(&lg->loss, "held-out")))) hl[i] = v[2][i];
        if (isfinite(v[1][i]) && (ta || (ta = curves_series(&lg->acc, train)))) ta[i] = 100 * v[1][i];
        if (isfinite(v[3][i]) && (ha || (ha = curves_series(&lg->acc, "held-out")))) ha[i] = 100 * v[3][i];
    }
    free(step);
    free(tok);
    for (int k = 0; k < 4; k++) free(v[k]);
    return rc < 0 ? -1 : 0;
}

/* The last finite value of series `name` and its x; 0 when there is none. */
static int last_value(const Curves *c, const char *name, double *x, double *y) {
    for (int s = 0; s < c->ns; s++) {
        if (strcmp(c->name[s], name)) continue;
        for (int i = c->n - 1; i >= 0; i--)
            if (isfinite(c->y[s][i]) && isfinite(c->x[i])) { *x = c->x[i], *y = c->y[s][i]; return 1; }
    }
    return 0;
}

static void pretrain_figures(ReportPage *p, const ReportInput *in) {
    PretrainLog lg;
    char why[600] = "";
    int rc = pretrain_read(in->path, &lg, why, sizeof why);
    char slug[256], id[300], title[512];
    report_page_slug(in->name, slug, sizeof slug);
    report_page_sourced(p, "<div class=\"run\">\n<h3>Pretraining: ", in->name, in->source);
    fprintf(p->f, "</h3>\n");
    if (rc != 0 || lg.bad)
        report_page_missing(p, "%s: %s%s%ld of %ld lines unreadable", in->path, why, why[0] ? "; " : "", lg.bad,
                            lg.lines);
    if (rc != 0 || lg.bad) {
        fprintf(p->f, "<p class=\"missing\">");
        report_page_printf(p, "%s: %s%s%ld of %ld lines unreadable (left out).", in->path, why, why[0] ? "; " : "",
                           lg.bad, lg.lines);
        fprintf(p->f, "</p>\n");
    }
    double x, y;
    if (last_value(&lg.loss, "held-out", &x, &y)) {
        fprintf(p->f, "<p class=\"note\">Last held-out evaluation, after ");
        report_page_num(p, x / 1e6, 1);
        fprintf(p->f, "M tokens: MLM loss ");
        report_page_num(p, y, 3);
        if (last_value(&lg.acc, "held-out", &x, &y)) {
            fprintf(p->f, ", accuracy ");
            report_page_num(p, y, 2);
            fprintf(p->f, "%%");
        }
        fprintf(p->f, ".</p>\n");
    }
    fprintf(p->f, "<div class=\"grid\">\n");
    int markers[CURVE_MAX_SERIES];
    for (int s = 0; s < CURVE_MAX_SERIES; s++) markers[s] = s < lg.loss.ns && strcmp(lg.loss.name[s], "held-out") == 0;
    snprintf(id, sizeof id, "pretrain-loss-%s", slug);
    snprintf(title, sizeof title, "%s: masked-LM loss against tokens seen", in->name);
    curves_chart(p, &lg.loss, id, title, "tokens seen", "MLM loss (nats per masked token)", SVG_X_SI, markers,
                 "%.4g tokens", "%.4f");
    for (int s = 0; s < CURVE_MAX_SERIES; s++) markers[s] = s < lg.acc.ns && strcmp(lg.acc.name[s], "held-out") == 0;
    snprintf(id, sizeof id, "pretrain-acc-%s", slug);
    snprintf(title, sizeof title, "%s: masked-LM accuracy against tokens seen", in->name);
    curves_chart(p, &lg.acc, id, title, "tokens seen", "masked tokens predicted (%)", SVG_X_SI | SVG_VALUE_PERCENT,
                 markers, "%.4g tokens", "%.2f%%");
    fprintf(p->f, "</div>\n</div>\n");
    curves_free(&lg.loss);
    curves_free(&lg.acc);
}

void report_section_pretrain(ReportPage *p, const ReportInputs *in) {
    fprintf(p->f, "<section id=\"pretraining\">\n<h2>Pretraining</h2>\n");
    if (!each_input(p, in, REPORT_IN_PRETRAIN, pretrain_figures))
        fprintf(p->f, "<p class=\"missing\">No pretraining log (log.jsonl or log.jsonl.gz) found: no pretraining "
                      "curve. <code>glue pretrain</code> writes one into its run directory; "
                      "<code>--pretrain DIR</code> names a run to chart.</p>\n");
    report_screens(p, in);
    fprintf(p->f, "</section>\n");
}
