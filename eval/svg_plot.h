/* svg_plot.h — charts drawn as inline SVG for the HTML report (`glue report`).
 *
 * Two kinds, both with axes, tick labels, axis titles with units and a legend:
 *   - an XY chart (SvgChart): lines with markers (learning curves, pretraining
 *     curves) and point clouds (predicted against gold);
 *   - a horizontal grouped bar chart (svg_hbars): one group per row label (a
 *     model), one bar per series (a metric), optional error bars.
 * Series are told apart by colour (the Okabe-Ito palette, safe for the common
 * colour-vision deficiencies) AND by dash pattern and marker shape, so a chart
 * still reads in grey print. Every chart is an <svg> with an id and classes the
 * browser test looks for, a viewBox (it scales down to narrow windows) and a
 * <title> (its accessible name). Text is HTML-escaped here. */
#ifndef GLUE_SVG_PLOT_H
#define GLUE_SVG_PLOT_H

#include <stdio.h>

#define SVG_MAX_SERIES 8

/* Colour of series i (cycles through the palette). */
const char *svg_series_colour(int i);

/* Writes s with &, <, >, " and ' escaped (text and attribute values alike). */
void svg_escape(FILE *f, const char *s);

/* Round [lo, hi] out to "nice" tick marks (1, 2 or 5 times a power of ten),
 * about `ticks` of them; *step gets their spacing. A flat or empty range is
 * widened so that the axis still has a length (not below 0 when lo >= 0). */
void svg_nice_range(double lo, double hi, int ticks, double *lo_out, double *hi_out, double *step);

typedef struct SvgChart {
    FILE *f;
    int width, height;               /* pixels (the viewBox) */
    int left, right, top, bottom;    /* margins around the plot area */
    double x0, x1, xstep;            /* the x axis (after svg_nice_range) */
    double y0, y1, ystep;
    int flags;                       /* SVG_X_*, SVG_VALUE_PERCENT */
} SvgChart;

/* Axis options of svg_chart_begin (and svg_hbars: SVG_VALUE_PERCENT). */
#define SVG_X_SI 1            /* x tick labels as 40k, 1.2M, 3G */
#define SVG_X_INTEGER 2       /* x ticks on whole numbers only (epochs) */
#define SVG_VALUE_PERCENT 4   /* the value axis (y of a chart, x of bars) is a percentage (metrics ×100,
                                 accuracy): it ends at 100 however the ticks round, when the data do */

/* Opens <svg id=.. class="chart KIND"> with its <title>, and draws the frame,
 * grid, ticks and axis titles for data in [xlo, xhi] x [ylo, yhi] (widened to
 * nice ticks). kind is an extra class ("curve", "scatter"); flags: SVG_X_*,
 * SVG_VALUE_PERCENT. */
void svg_chart_begin(SvgChart *c, FILE *f, const char *id, const char *kind, const char *title, int width,
                     int height, double xlo, double xhi, double ylo, double yhi, const char *xlabel,
                     const char *ylabel, int flags);
/* A polyline through (x[i], y[i]) for the finite pairs, in series style s, with
 * markers when markers != 0; each marker's hover <title> is
 * "NAME: x_label X, VALUE" (x and y with the given printf formats). */
void svg_chart_line(SvgChart *c, int s, const char *name, const double *x, const double *y, int n, int markers,
                    const char *xfmt, const char *yfmt);
/* Unconnected points of radius r (finite pairs only), fill-opacity `opacity`. */
void svg_chart_points(SvgChart *c, int s, const double *x, const double *y, int n, double r, double opacity);
/* A dashed reference line from (xa, ya) to (xb, yb) in data units (e.g. y = x). */
void svg_chart_refline(SvgChart *c, double xa, double ya, double xb, double yb);
/* The legend above the plot area, one entry per series: a sample of the
 * series and its name. markers[i]: SVG_LEGEND_LINE, _LINE_MARKER (the
 * default, markers NULL) or _POINT; style -1: the dashed reference line. */
#define SVG_LEGEND_LINE 0
#define SVG_LEGEND_LINE_MARKER 1
#define SVG_LEGEND_POINT 2
void svg_chart_legend(SvgChart *c, const char *const *names, const int *styles, const int *markers, int n);
/* Closes the <svg>. */
void svg_chart_end(SvgChart *c);

/* Horizontal grouped bars. value and err are (rows, nseries) row-major; a NaN
 * value leaves that bar out (and says "no value" in the row); err may be NULL
 * or NaN per bar (no error bar), else the bar gets a whisker of +-err.
 * x runs from 0 (or the lowest negative value) to the largest value + err,
 * rounded; with SVG_VALUE_PERCENT (flags) at most to 100 (a whisker past it
 * stops at the axis' end). Each bar's hover <title> gives row, series and the
 * value (2 decimals) ± err. */
void svg_hbars(FILE *f, const char *id, const char *title, const char *const *rows, int nrows,
               const char *const *series, int nseries, const double *value, const double *err,
               const char *xlabel, const char *legend_note, int flags);

#endif
