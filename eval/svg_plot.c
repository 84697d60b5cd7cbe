/* svg_plot.c — inline SVG charts for the HTML report (see svg_plot.h). */
#include "eval/svg_plot.h"

#include <math.h>
#include <string.h>

/* Okabe & Ito (2008), "Color Universal Design": distinguishable with every
 * common colour-vision deficiency. Yellow (#F0E442) is left out: it vanishes on
 * white paper. */
static const char *const PALETTE[] = {"#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000"};
#define NPALETTE ((int)(sizeof PALETTE / sizeof PALETTE[0]))
/* Dash patterns per series, so lines differ in grey print too. */
static const char *const DASHES[] = {"", "7 4", "2 3", "9 3 2 3", "4 2", "12 4", "1 2"};
#define NDASHES ((int)(sizeof DASHES / sizeof DASHES[0]))

/* Average glyph width of the 12 px sans-serif labels, for layout. */
#define CHAR_PX 6.8

const char *svg_series_colour(int i) { return PALETTE[(i % NPALETTE + NPALETTE) % NPALETTE]; }

static const char *series_dash(int i) { return DASHES[(i % NDASHES + NDASHES) % NDASHES]; }

void svg_escape(FILE *f, const char *s) {
    for (; s && *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&#39;", f); break;
        default: fputc(*s, f);
        }
    }
}

void svg_nice_range(double lo, double hi, int ticks, double *lo_out, double *hi_out, double *step) {
    if (!isfinite(lo) || !isfinite(hi)) lo = 0, hi = 1;
    if (hi < lo) { double t = lo; lo = hi; hi = t; }
    if (hi - lo < 1e-12 * (fabs(hi) + 1)) {   /* flat: give it a length */
        double pad = fabs(hi) > 0 ? fabs(hi) * 0.1 : 1;
        int nonneg = lo >= 0;
        lo -= pad, hi += pad;
        if (nonneg && lo < 0) lo = 0;   /* a count or a loss never reads as negative */
    }
    double raw = (hi - lo) / (ticks > 1 ? ticks : 1);
    double mag = pow(10, floor(log10(raw))), f = raw / mag;
    double s = (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * mag;
    *lo_out = floor(lo / s + 1e-9) * s;
    *hi_out = ceil(hi / s - 1e-9) * s;
    *step = s;
}

/* Decimals that show ticks `step` apart without rounding them together. */
static int tick_decimals(double step) {
    int d = (int)ceil(-log10(step) - 1e-9);
    return d < 0 ? 0 : d > 6 ? 6 : d;
}

/* A tick label: plain, or with a k/M/G suffix. */
static void tick_label(double v, double step, int si, char *out, size_t cap) {
    if (fabs(v) < step * 1e-6) {   /* no "-0", no "0M" */
        snprintf(out, cap, "0");
        return;
    }
    if (si) {
        static const struct { double div; const char *suffix; } U[] = {{1e9, "G"}, {1e6, "M"}, {1e3, "k"}};
        for (int i = 0; i < 3; i++)
            if (fabs(v) >= U[i].div || step >= U[i].div) {
                snprintf(out, cap, "%.*f%s", tick_decimals(step / U[i].div), v / U[i].div, U[i].suffix);
                return;
            }
    }
    snprintf(out, cap, "%.*f", tick_decimals(step), v);
}

/* A percentage axis ends at 100 when the data do: nice ticks of 0-102 or a
 * flat 100 would otherwise run to 110 or 120. 100 is a multiple of every
 * nice step below 100, so the last tick lands on it. */
static void percent_cap(double data_hi, double *hi_out) {
    if (data_hi <= 100 && *hi_out > 100) *hi_out = 100;
}

static double px(const SvgChart *c, double x) {
    return c->left + (x - c->x0) / (c->x1 - c->x0) * (c->width - c->left - c->right);
}
static double py(const SvgChart *c, double y) {
    return c->top + (c->y1 - y) / (c->y1 - c->y0) * (c->height - c->top - c->bottom);
}

static void svg_open(FILE *f, const char *id, const char *kind, const char *title, int width, int height) {
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"");
    svg_escape(f, id);
    fprintf(f, "\" class=\"chart %s\" viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" role=\"img\">\n<title>", kind,
            width, height, width, height);
    svg_escape(f, title);
    fprintf(f, "</title>\n");
}

static void svg_text(FILE *f, double x, double y, const char *anchor, const char *cls, const char *s) {
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" class=\"%s\">", x, y, anchor, cls);
    svg_escape(f, s);
    fprintf(f, "</text>\n");
}

static void chart_axes(SvgChart *c, const char *xlabel, const char *ylabel) {
    FILE *f = c->f;
    double xa = px(c, c->x0), xb = px(c, c->x1), ya = py(c, c->y0), yb = py(c, c->y1);
    char buf[64];
    fprintf(f, "<g class=\"gridlines\">\n");
    for (double v = c->y0; v <= c->y1 + c->ystep * 1e-6; v += c->ystep)
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", xa, py(c, v), xb, py(c, v));
    for (double v = c->x0; v <= c->x1 + c->xstep * 1e-6; v += c->xstep)
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", px(c, v), ya, px(c, v), yb);
    fprintf(f, "</g>\n<rect class=\"frame\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>\n", xa, yb,
            xb - xa, ya - yb);
    for (double v = c->y0; v <= c->y1 + c->ystep * 1e-6; v += c->ystep) {
        tick_label(v, c->ystep, 0, buf, sizeof buf);
        svg_text(f, xa - 6, py(c, v) + 4, "end", "tick", buf);
    }
    for (double v = c->x0; v <= c->x1 + c->xstep * 1e-6; v += c->xstep) {
        tick_label(v, c->xstep, c->flags & SVG_X_SI, buf, sizeof buf);
        svg_text(f, px(c, v), ya + 17, "middle", "tick", buf);
    }
    svg_text(f, (xa + xb) / 2, c->height - 8, "middle", "axis-title", xlabel);
    fprintf(f, "<text class=\"axis-title\" text-anchor=\"middle\" transform=\"translate(14 %.1f) rotate(-90)\">",
            (ya + yb) / 2);
    svg_escape(f, ylabel);
    fprintf(f, "</text>\n");
}

void svg_chart_begin(SvgChart *c, FILE *f, const char *id, const char *kind, const char *title, int width,
                     int height, double xlo, double xhi, double ylo, double yhi, const char *xlabel,
                     const char *ylabel, int flags) {
    *c = (SvgChart){.f = f, .width = width, .height = height, .left = 64, .right = 18, .top = 30, .bottom = 46,
                    .flags = flags};
    svg_nice_range(xlo, xhi, 6, &c->x0, &c->x1, &c->xstep);
    if ((flags & SVG_X_INTEGER) && c->xstep < 1) {   /* no epoch 1.5 */
        c->xstep = 1;
        c->x0 = floor(xlo);
        c->x1 = ceil(xhi) > c->x0 ? ceil(xhi) : c->x0 + 1;
    }
    svg_nice_range(ylo, yhi, 5, &c->y0, &c->y1, &c->ystep);
    if (flags & SVG_VALUE_PERCENT) percent_cap(yhi, &c->y1);
    svg_open(f, id, kind, title, width, height);
    chart_axes(c, xlabel, ylabel);
}

/* A marker of series style s centred on (x, y): circle, square, triangle,
 * diamond, ... in turn. */
static void marker(FILE *f, int s, double x, double y) {
    const double r = 3.5;
    switch (s % 4) {
    case 0: fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\"", x, y, r); break;
    case 1: fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"", x - r, y - r, 2 * r, 2 * r); break;
    case 2:
        fprintf(f, "<path d=\"M%.1f %.1fL%.1f %.1fL%.1f %.1fZ\"", x, y - r - 1, x + r + 1, y + r, x - r - 1, y + r);
        break;
    default: fprintf(f, "<path d=\"M%.1f %.1fL%.1f %.1fL%.1f %.1fL%.1f %.1fZ\"", x, y - r - 1, x + r + 1, y, x,
                     y + r + 1, x - r - 1, y);
    }
}

static int finite_pair(double x, double y) { return isfinite(x) && isfinite(y); }

void svg_chart_line(SvgChart *c, int s, const char *name, const double *x, const double *y, int n, int markers,
                    const char *xfmt, const char *yfmt) {
    FILE *f = c->f;
    const char *dash = series_dash(s);
    fprintf(f, "<g class=\"series s%d\" data-series=\"", s);
    svg_escape(f, name);
    fprintf(f, "\">\n<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s%s%s points=\"", svg_series_colour(s),
            *dash ? " stroke-dasharray=\"" : "", dash, *dash ? "\"" : "");
    for (int i = 0; i < n; i++)
        if (finite_pair(x[i], y[i])) fprintf(f, "%.1f,%.1f ", px(c, x[i]), py(c, y[i]));
    fprintf(f, "\"/>\n");
    for (int i = 0; markers && i < n; i++) {
        if (!finite_pair(x[i], y[i])) continue;
        marker(f, s, px(c, x[i]), py(c, y[i]));
        fprintf(f, " fill=\"%s\"><title>", svg_series_colour(s));
        svg_escape(f, name);
        char xs[64], ys[64];
        snprintf(xs, sizeof xs, xfmt, x[i]);
        snprintf(ys, sizeof ys, yfmt, y[i]);
        fprintf(f, ": %s, ", xs);
        svg_escape(f, ys);
        fprintf(f, "</title></%s>\n", s % 4 == 0 ? "circle" : s % 4 == 1 ? "rect" : "path");
    }
    fprintf(f, "</g>\n");
}

void svg_chart_points(SvgChart *c, int s, const double *x, const double *y, int n, double r, double opacity) {
    fprintf(c->f, "<g class=\"series s%d points\" fill=\"%s\" fill-opacity=\"%.2f\">\n", s, svg_series_colour(s),
            opacity);
    for (int i = 0; i < n; i++)
        if (finite_pair(x[i], y[i]))
            fprintf(c->f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\"/>\n", px(c, x[i]), py(c, y[i]), r);
    fprintf(c->f, "</g>\n");
}

void svg_chart_refline(SvgChart *c, double xa, double ya, double xb, double yb) {
    fprintf(c->f, "<line class=\"refline\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", px(c, xa), py(c, ya),
            px(c, xb), py(c, yb));
}

/* One legend entry at (x, y) (the sample's left end, baseline of the text);
 * returns its width in pixels. style < 0: the dashed reference line. */
static double legend_entry(FILE *f, double x, double y, int style, int kind, const char *name) {
    if (style < 0) {
        fprintf(f, "<line class=\"refline\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", x, y - 4, x + 24,
                y - 4);
    } else if (kind == SVG_LEGEND_POINT) {
        fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n", x + 12, y - 4, svg_series_colour(style));
    } else {
        const char *dash = series_dash(style);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"%s%s%s/>\n",
                x, y - 4, x + 24, y - 4, svg_series_colour(style), *dash ? " stroke-dasharray=\"" : "", dash,
                *dash ? "\"" : "");
        if (kind == SVG_LEGEND_LINE_MARKER) {
            marker(f, style, x + 12, y - 4);
            fprintf(f, " fill=\"%s\"/>\n", svg_series_colour(style));
        }
    }
    svg_text(f, x + 30, y, "start", "legend-text", name);
    return 30 + CHAR_PX * (double)strlen(name) + 18;
}

void svg_chart_legend(SvgChart *c, const char *const *names, const int *styles, const int *markers, int n) {
    fprintf(c->f, "<g class=\"legend\">\n");
    double x = c->left, y = 18;
    for (int i = 0; i < n; i++)
        x += legend_entry(c->f, x, y, styles[i], markers ? markers[i] : SVG_LEGEND_LINE_MARKER, names[i]);
    fprintf(c->f, "</g>\n");
}

void svg_chart_end(SvgChart *c) { fprintf(c->f, "</svg>\n"); }

/* ---- horizontal grouped bars ---- */

#define BAR_H 14
#define BAR_GAP 2
#define GROUP_GAP 12

void svg_hbars(FILE *f, const char *id, const char *title, const char *const *rows, int nrows,
               const char *const *series, int nseries, const double *value, const double *err,
               const char *xlabel, const char *legend_note, int flags) {
    double lo = 0, hi = 0, hi_value = 0;
    size_t longest = 0;
    for (int r = 0; r < nrows; r++) {
        if (strlen(rows[r]) > longest) longest = strlen(rows[r]);
        for (int s = 0; s < nseries; s++) {
            double v = value[r * nseries + s], e = err && isfinite(err[r * nseries + s]) ? err[r * nseries + s] : 0;
            if (!isfinite(v)) continue;
            if (v - e < lo) lo = v - e;
            if (v + e > hi) hi = v + e;
            if (v > hi_value) hi_value = v;
        }
    }
    /* A legend of several series and a note take a line each. */
    int two_lines = nseries > 1 && legend_note;
    SvgChart c = {.f = f, .left = (int)(CHAR_PX * (double)longest) + 16, .right = 60, .top = two_lines ? 44 : 30,
                  .bottom = 46};
    if (c.left > 300) c.left = 300;
    if (c.left < 80) c.left = 80;
    int group = nseries * (BAR_H + BAR_GAP) - BAR_GAP + GROUP_GAP;
    c.width = 620;
    c.height = c.top + c.bottom + (nrows ? nrows : 1) * group;
    svg_nice_range(lo, hi, 6, &c.x0, &c.x1, &c.xstep);
    if (flags & SVG_VALUE_PERCENT) percent_cap(hi_value, &c.x1);
    c.y0 = 0, c.y1 = 1, c.ystep = 2;   /* no horizontal grid lines */
    svg_open(f, id, "bars", title, c.width, c.height);
    double xa = px(&c, c.x0), xb = px(&c, c.x1), ya = c.height - c.bottom, yb = c.top;
    char buf[64];
    fprintf(f, "<g class=\"gridlines\">\n");
    for (double v = c.x0; v <= c.x1 + c.xstep * 1e-6; v += c.xstep)
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", px(&c, v), ya, px(&c, v), yb);
    fprintf(f, "</g>\n");
    for (double v = c.x0; v <= c.x1 + c.xstep * 1e-6; v += c.xstep) {
        tick_label(v, c.xstep, 0, buf, sizeof buf);
        svg_text(f, px(&c, v), ya + 17, "middle", "tick", buf);
    }
    svg_text(f, (xa + xb) / 2, c.height - 8, "middle", "axis-title", xlabel);
    for (int r = 0; r < nrows; r++) {
        double gy = c.top + GROUP_GAP / 2.0 + r * group;
        svg_text(f, c.left - 8, gy + (group - GROUP_GAP) / 2.0 + 4, "end", "row-label", rows[r]);
        for (int s = 0; s < nseries; s++) {
            double v = value[r * nseries + s], y = gy + s * (BAR_H + BAR_GAP);
            if (!isfinite(v)) {
                if (s == 0) svg_text(f, px(&c, 0) + 4, y + BAR_H - 3, "start", "no-value", "no value");
                continue;
            }
            double x0 = px(&c, v < 0 ? v : 0), x1 = px(&c, v < 0 ? 0 : v);
            fprintf(f, "<rect class=\"bar s%d\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" fill=\"%s\">"
                       "<title>", s, x0, y, x1 - x0, BAR_H, svg_series_colour(s));
            svg_escape(f, rows[r]);
            fprintf(f, ", ");
            svg_escape(f, series[s]);
            double e = err ? err[r * nseries + s] : NAN;
            fprintf(f, ": %.2f", v);
            if (isfinite(e)) fprintf(f, " &#177; %.2f", e);
            fprintf(f, "</title></rect>\n");
            double tip = px(&c, v);
            if (isfinite(e) && e > 0) {
                /* A whisker past the axis stops at its end, without the end's cap. */
                double a = px(&c, fmax(v - e, c.x0)), b = px(&c, fmin(v + e, c.x1)), m = y + BAR_H / 2.0;
                fprintf(f, "<path class=\"errbar\" d=\"M%.1f %.1fH%.1f", a, m, b);
                if (v - e >= c.x0) fprintf(f, "M%.1f %.1fV%.1f", a, m - 5, m + 5);
                if (v + e <= c.x1) fprintf(f, "M%.1f %.1fV%.1f", b, m - 5, m + 5);
                fprintf(f, "\"/>\n");
                tip = b > tip ? b : tip;
            }
            snprintf(buf, sizeof buf, "%.2f", v);
            svg_text(f, (v < 0 ? px(&c, 0) : tip) + 4, y + BAR_H - 3, "start", "bar-value", buf);
        }
    }
    fprintf(f, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", px(&c, 0), yb, px(&c, 0),
            ya);
    fprintf(f, "<g class=\"legend\">\n");
    double x = c.left;
    for (int s = 0; s < nseries && nseries > 1; s++) {
        fprintf(f, "<rect x=\"%.1f\" y=\"8\" width=\"14\" height=\"12\" fill=\"%s\"/>\n", x, svg_series_colour(s));
        svg_text(f, x + 19, 18, "start", "legend-text", series[s]);
        x += 19 + CHAR_PX * (double)strlen(series[s]) + 16;
    }
    if (legend_note) svg_text(f, c.width - c.right, two_lines ? 36 : 18, "end", "legend-note", legend_note);
    fprintf(f, "</g>\n</svg>\n");
}
